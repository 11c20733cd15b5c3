package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestFastCommitBlobsAndAttributes: a blob is made here only where no
// attribute can apply; wherever one could (a filter in .gitattributes, at
// the top or in a subfolder, in info/attributes or the global attributes
// file, core.autocrlf), the blob is git's. Either way the committed blob is
// what `git hash-object` makes of the file.
func TestFastCommitBlobsAndAttributes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("tr as a filter")
	}
	home := os.Getenv("XDG_CONFIG_HOME")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		path  string
		here  bool // the blob is made here
	}{
		{name: "no attributes", path: "d/x.md", here: true},
		{name: "comments only", path: "d/x.md", here: true, setup: func(t *testing.T, dir string) {
			writeFile(t, dir, ".gitattributes", "# nothing here\n\n   \n")
		}},
		{name: "filter at the top", path: "d/x.md", setup: func(t *testing.T, dir string) {
			writeFile(t, dir, ".gitattributes", "*.md filter=up\n")
		}},
		{name: "filter in the folder", path: "d/x.md", setup: func(t *testing.T, dir string) {
			writeFile(t, dir, "d/.gitattributes", "*.md filter=up\n")
		}},
		{name: "a blank first is a rule", path: "d/x.md", setup: func(t *testing.T, dir string) {
			writeFile(t, dir, "d/.gitattributes", " *.md filter=up\n")
		}},
		{name: "info/attributes", path: "d/x.md", setup: func(t *testing.T, dir string) {
			writeFile(t, dir, ".git/info/attributes", "*.md filter=up\n")
		}},
		{name: "global attributes", path: "d/x.md", setup: func(t *testing.T, dir string) {
			writeFile(t, home, "git/attributes", "*.md filter=up\n")
			t.Cleanup(func() { os.Remove(filepath.Join(home, "git", "attributes")) })
		}},
		{name: "core.attributesFile", path: "d/x.md", setup: func(t *testing.T, dir string) {
			f := filepath.Join(t.TempDir(), "attrs")
			writeFile(t, filepath.Dir(f), "attrs", "*.md filter=up\n")
			git(t, dir, "config", "core.attributesFile", f)
		}},
		{name: "core.autocrlf", path: "d/x.md", setup: func(t *testing.T, dir string) {
			git(t, dir, "config", "core.autocrlf", "true")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t, map[string]string{"a.md": "a\n"})
			git(t, dir, "config", "filter.up.clean", "tr a-z A-Z")
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			writeFile(t, dir, tc.path, "some text\r\nwith crlf\r\n")
			want := gitOut(t, dir, "hash-object", tc.path)
			made := blobsMade.Load()
			sha := commitOne(t, open(t, dir), tc.path)
			if got := gitOut(t, dir, "rev-parse", sha+":"+tc.path); got != want {
				t.Fatalf("committed blob %s, git hash-object %s", got, want)
			}
			if here := blobsMade.Load() > made; here != tc.here {
				t.Fatalf("blob made here: %v, want %v", here, tc.here)
			}
			whole(t, dir)
		})
	}
}

// TestFastCommitIgnoreRules: a new file excluded by any ignore source (a
// .gitignore at the top or in its folder, info/exclude, core.excludesFile,
// the global ignore file) is not committed, as by git commit; where no
// rule exists anywhere (comments only), git is not asked.
func TestFastCommitIgnoreRules(t *testing.T) {
	home := os.Getenv("XDG_CONFIG_HOME")
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string)
		ignored bool
	}{
		{name: "comments only", setup: func(t *testing.T, dir string) {
			writeFile(t, dir, ".gitignore", "# none\n")
		}},
		{name: "top .gitignore", ignored: true, setup: func(t *testing.T, dir string) {
			writeFile(t, dir, ".gitignore", "*.tmp.md\n")
		}},
		{name: "folder .gitignore", ignored: true, setup: func(t *testing.T, dir string) {
			writeFile(t, dir, "d/.gitignore", "*.tmp.md\n")
		}},
		{name: "info/exclude", ignored: true, setup: func(t *testing.T, dir string) {
			writeFile(t, dir, ".git/info/exclude", "*.tmp.md\n")
		}},
		{name: "core.excludesFile", ignored: true, setup: func(t *testing.T, dir string) {
			f := filepath.Join(t.TempDir(), "ignore")
			writeFile(t, filepath.Dir(f), "ignore", "*.tmp.md\n")
			git(t, dir, "config", "core.excludesFile", f)
		}},
		{name: "global ignore", ignored: true, setup: func(t *testing.T, dir string) {
			writeFile(t, home, "git/ignore", "*.tmp.md\n")
			t.Cleanup(func() { os.Remove(filepath.Join(home, "git", "ignore")) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t, map[string]string{"a.md": "a\n"})
			tc.setup(t, dir)
			writeFile(t, dir, "d/x.tmp.md", "scratch\n")
			asked := ignoreAsked.Load()
			_, err := open(t, dir).Commit(context.Background(), []string{"d/x.tmp.md"}, "add")
			if tc.ignored {
				if !errors.Is(err, ErrNothingToCommit) {
					t.Fatalf("an ignored file: %v, want ErrNothingToCommit", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := gitOut(t, dir, "show", "HEAD:d/x.tmp.md"); got != "scratch" {
				t.Fatalf("HEAD:d/x.tmp.md = %q", got)
			}
			if ignoreAsked.Load() != asked {
				t.Fatal("git was asked which files are ignored where no rule exists")
			}
		})
	}
}

// TestFastCommitWithoutReader: a Repo given no reader opens no file of the
// vault: git makes the blobs and, a rule file in the vault's folders being
// unread, is asked which new files are ignored.
func TestFastCommitWithoutReader(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "d/new.md", "new\n")
	made, asked, fast := blobsMade.Load(), ignoreAsked.Load(), usedFast.Load()
	sha := commitOne(t, r, "d/new.md")
	if blobsMade.Load() != made || ignoreAsked.Load() == asked || usedFast.Load() == fast {
		t.Fatalf("blobs made here %d, check-ignore asked %d, fast %d: want 0, 1, 1", blobsMade.Load()-made, ignoreAsked.Load()-asked, usedFast.Load()-fast)
	}
	if got := gitOut(t, dir, "show", sha+":d/new.md"); got != "new" {
		t.Fatalf("committed %q", got)
	}
}
