package gitx

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// commitOne commits path through the fast path and fails the test on error.
func commitOne(t *testing.T, r *Repo, paths ...string) string {
	t.Helper()
	sha, err := r.Commit(context.Background(), paths, "vault: edit")
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// TestIndexRacyEntrySmudged: an entry whose file changed within the index
// file's timestamp (same size, same modification time) stays seen as
// changed once the fast commit rewrote the index, as it is after git
// rewrites it: the entry's size is zeroed, so git compares the content.
func TestIndexRacyEntrySmudged(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n", "user.md": "aaaa\n"})
	git(t, dir, "config", "core.trustctime", "false")
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	user := filepath.Join(dir, "user.md")
	writeFile(t, dir, "user.md", "bbbb\n")
	os.Chtimes(user, past, past)
	git(t, dir, "add", "user.md")
	// The index is as old as the entry: racy. The user edits the file
	// within that second, keeping its size and time.
	os.Chtimes(filepath.Join(dir, ".git", "index"), past, past)
	writeFile(t, dir, "user.md", "cccc\n")
	os.Chtimes(user, past, past)

	written := indexWritten.Load()
	r := open(t, dir)
	writeFile(t, dir, "a.md", "ours\n")
	commitOne(t, r, "a.md")
	if indexWritten.Load() == written {
		t.Fatal("the index was not written by the fast commit")
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "MM user.md" {
		t.Fatalf("status = %q, want the user's unstaged edit seen (MM user.md)", st)
	}
}

// TestIndexLeftToGit: the indexes and commits the fast commit leaves to
// git update-index come out as git makes them.
func TestIndexLeftToGit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"untracked cache", func(t *testing.T, dir string) {
			git(t, dir, "config", "core.untrackedCache", "true")
			git(t, dir, "update-index", "--untracked-cache")
			git(t, dir, "status", "--porcelain")
		}},
		{"shared repository", func(t *testing.T, dir string) {
			git(t, dir, "config", "core.sharedRepository", "group")
		}},
		{"an index that is a symbolic link", func(t *testing.T, dir string) {
			ix := filepath.Join(dir, ".git", "index")
			if err := os.Rename(ix, ix+"-real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("index-real", ix); err != nil {
				t.Skip("no symbolic links here")
			}
		}},
		{"conflict stages", func(t *testing.T, dir string) {
			// a.md in conflict: stages 1-3 of it in the index.
			blob := gitOut(t, dir, "rev-parse", "HEAD:a.md")
			in := "0 " + strings.Repeat("0", 40) + "\ta.md\n" +
				"100644 " + blob + " 1\ta.md\n100644 " + blob + " 2\ta.md\n100644 " + blob + " 3\ta.md\n"
			cmd := gitCmd(dir, "update-index", "--index-info")
			cmd.Stdin = strings.NewReader(in)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("update-index: %v\n%s", err, out)
			}
		}},
		{"a file where the index has a folder", func(t *testing.T, dir string) {
			writeFile(t, dir, "sub/x.md", "x\n")
			git(t, dir, "add", "sub/x.md")
			os.RemoveAll(filepath.Join(dir, "sub"))
			writeFile(t, dir, "sub", "now a file\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t, map[string]string{"a.md": "a\n", "b.md": "b\n"})
			tc.setup(t, dir)
			toGit := indexToGit.Load()
			r := open(t, dir)
			paths := []string{"a.md"}
			if tc.name == "a file where the index has a folder" {
				paths = []string{"sub"}
			}
			writeFile(t, dir, "a.md", "ours\n")
			sha := commitOne(t, r, paths...)
			if indexToGit.Load() == toGit {
				t.Fatal("the index was not left to git update-index")
			}
			if fi, err := os.Lstat(filepath.Join(dir, ".git", "index")); tc.name == "an index that is a symbolic link" && (err != nil || fi.Mode()&os.ModeSymlink == 0) {
				t.Fatalf("the index link was replaced: %v %v", fi.Mode(), err)
			}
			if tc.name == "shared repository" {
				if fi, err := os.Stat(filepath.Join(dir, ".git", "index")); err != nil || fi.Mode().Perm()&0o060 != 0o060 {
					t.Fatalf("index mode %v (%v), want group read and write as git sets it", fi.Mode(), err)
				}
			}
			for _, p := range paths {
				// ls-tree: "<mode> blob <id>\t<path>"; ls-files -s: "<mode> <id> 0\t<path>".
				f := strings.Fields(gitOut(t, dir, "ls-tree", sha, "--", p))
				if got, want := gitOut(t, dir, "ls-files", "-s", "--", p), f[0]+" "+f[2]+" 0\t"+p; got != want {
					t.Fatalf("index of %s: %q, want the commit's %q", p, got, want)
				}
			}
		})
	}
}

// TestIndexWriteFails: the index cannot be written (a full disk): the
// commit stands, no lock is left behind, and git update-index sets the
// entries instead.
func TestIndexWriteFails(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	testHookIndexWrite = func() error { return errors.New("no space left on device") }
	defer func() { testHookIndexWrite = nil }()
	toGit := indexToGit.Load()
	writeFile(t, dir, "a.md", "ours\n")
	commitOne(t, open(t, dir), "a.md")
	if indexToGit.Load() == toGit {
		t.Fatal("git update-index did not take over")
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("index.lock left behind: %v", err)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status = %q", st)
	}
}

// TestIndexLockHeldAtUpdate: another program takes index.lock as the
// commit is made (after the fast commit checked it was free, before it
// takes it for the new index) and releases it soon: the index is updated
// after it.
// Held through every retry, the commit stands and the index is left as it
// was (git status shows the path as changed, as with update-index).
func TestIndexLockHeldAtUpdate(t *testing.T) {
	for _, forever := range []bool{false, true} {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		lock := filepath.Join(dir, ".git", "index.lock")
		testHookBeforeIndexLock = func() {
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Error(err)
			}
			if !forever {
				time.AfterFunc(100*time.Millisecond, func() { os.Remove(lock) })
			}
		}
		r := open(t, dir)
		r.lockWait = 50 * time.Millisecond
		writeFile(t, dir, "a.md", "ours\n")
		sha := commitOne(t, r, "a.md")
		testHookBeforeIndexLock = nil
		if got := gitOut(t, dir, "show", sha+":a.md"); got != "ours" {
			t.Fatalf("committed %q", got)
		}
		if forever {
			if _, err := os.Lstat(lock); err != nil {
				t.Fatalf("the other program's lock was taken away: %v", err)
			}
			os.Remove(lock)
			if st := gitOut(t, dir, "diff", "--cached", "--name-only"); st != "a.md" {
				t.Fatalf("staged = %q, want the index as it was (a.md differing from HEAD)", st)
			}
			continue
		}
		if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
			t.Fatalf("status = %q", st)
		}
	}
}

// TestIndexFileEnv: with GIT_INDEX_FILE naming another index, git keeps
// updating it.
func TestIndexFileEnv(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	other := filepath.Join(t.TempDir(), "other-index")
	cmd := gitCmd(dir, "read-tree", "HEAD")
	cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+other)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Setenv("GIT_INDEX_FILE", other)
	written := indexWritten.Load()
	writeFile(t, dir, "a.md", "ours\n")
	commitOne(t, open(t, dir), "a.md")
	if indexWritten.Load() != written {
		t.Fatal("the index was written here despite GIT_INDEX_FILE")
	}
	cmd = gitCmd(dir, "diff", "--cached", "--name-only")
	cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+other)
	if out, err := cmd.Output(); err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Fatalf("the other index: %q %v", out, err)
	}
}

// TestParseIndexRejects: damaged or unknown indexes are left to git.
func TestParseIndexRejects(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n", "d/b.md": "b\n"})
	good, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseIndex(good, false); err != nil {
		t.Fatalf("a good index: %v", err)
	}
	flip := func(at int) []byte {
		b := append([]byte(nil), good...)
		b[at] ^= 0xff
		return b
	}
	for name, data := range map[string][]byte{
		"empty":       nil,
		"truncated":   good[:len(good)-1],
		"checksum":    flip(len(good) - 1),
		"entry bytes": flip(20),
		"version":     append(append([]byte("DIRC\x00\x00\x00\x05"), good[8:len(good)-20]...), make([]byte, 20)...),
	} {
		if _, err := parseIndex(data, false); !errors.Is(err, errIndexUnsupported) {
			t.Errorf("%s: err = %v, want errIndexUnsupported", name, err)
		}
	}
}

// TestVarint: git's offset varint, both ways.
func TestVarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 255, 16383, 16384, 1 << 20, 1<<31 - 1} {
		b := varintAppend(nil, v)
		got, n := varintDecode(b)
		if uint64(got) != v || n != len(b) {
			t.Errorf("%d: encoded % x, decoded %d (%d bytes)", v, b, got, n)
		}
	}
	// git's own encoding of 128 is 0x80 0x00.
	if b := varintAppend(nil, 128); string(b) != "\x80\x00" {
		t.Errorf("128 = % x", b)
	}
}

// TestIndexReused: the next commit takes the index this Repo wrote instead
// of reading it, unless another program wrote it meanwhile; the user's
// staged change made between two commits is kept either way.
func TestIndexReused(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n", "u.md": "u\n"})
	r := open(t, dir)
	writeFile(t, dir, "a.md", "1\n")
	commitOne(t, r, "a.md")
	reused := indexReused.Load()
	writeFile(t, dir, "a.md", "2\n")
	commitOne(t, r, "a.md")
	if indexReused.Load() != reused+1 {
		t.Fatal("the index written by the last commit was read again")
	}
	// The user stages a change: the file is not the one written any more.
	writeFile(t, dir, "u.md", "staged by the user\n")
	git(t, dir, "add", "u.md")
	writeFile(t, dir, "a.md", "3\n")
	commitOne(t, r, "a.md")
	if indexReused.Load() != reused+1 {
		t.Fatal("an index another program wrote was taken for the one kept")
	}
	writeFile(t, dir, "a.md", "4\n")
	commitOne(t, r, "a.md")
	if indexReused.Load() != reused+2 {
		t.Fatal("the index was not reused after the user's change was read")
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "M  u.md" {
		t.Fatalf("status = %q, want the user's staged change (M  u.md)", st)
	}
}

// TestIndexRoundTrip: an index git wrote, decoded and encoded again with no
// change (and no entry taken as racy), is byte for byte git's file, in
// every version the fast commit writes, with the entries and extensions
// it keeps: executable files, a symbolic link, a submodule, an
// assume-unchanged entry, a skip-worktree and an intent-to-add entry (extended
// flags, version 3 and up), a path longer than the flags can say (4,095 bytes
// and more), the cache tree and a resolve-undo record.
func TestIndexRoundTrip(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := newRepo(t, map[string]string{"a.md": "a\n", "d/b.md": "b\n", "d/e/c.md": "c\n", "x.md": "x\n"})
			long := ""
			for len(long) < 4200 {
				long += strings.Repeat("l", 200) + "/"
			}
			writeFile(t, dir, "run.sh", "#!/bin/sh\n")
			os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
			if err := os.Symlink("a.md", filepath.Join(dir, "link.md")); err != nil {
				t.Skip("no symbolic links here")
			}
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-qm", "more")
			head := gitOut(t, dir, "rev-parse", "HEAD")
			git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
			// Longer than a path the file system takes: an entry only.
			git(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+gitOut(t, dir, "rev-parse", "HEAD:x.md")+","+long+"deep.md")
			git(t, dir, "update-index", "--assume-unchanged", "x.md")
			if version != "2" { // an extended flag: version 3 at least
				git(t, dir, "update-index", "--skip-worktree", "d/b.md")
			}
			// A conflict on a.md, resolved: git records a resolve-undo entry.
			blob := gitOut(t, dir, "rev-parse", "HEAD:a.md")
			cmd := gitCmd(dir, "update-index", "--index-info")
			cmd.Stdin = strings.NewReader("0 " + strings.Repeat("0", 40) + "\ta.md\n100644 " + blob + " 1\ta.md\n100644 " + blob + " 2\ta.md\n100644 " + blob + " 3\ta.md\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			git(t, dir, "add", "a.md")
			if version == "3" {
				writeFile(t, dir, "ita.md", "intent\n")
				git(t, dir, "add", "-N", "ita.md")
			} else {
				git(t, dir, "update-index", "--index-version", version)
			}
			git(t, dir, "write-tree") // the cache tree, whole
			data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			ix, err := parseIndex(data, false)
			if err != nil {
				t.Fatal(err)
			}
			if ix.version != uint32(version[0]-'0') || ix.tree == nil || ix.reuc == nil {
				t.Fatalf("version %d, tree %v, reuc %v: the repository is not what the test needs", ix.version, ix.tree != nil, ix.reuc != nil)
			}
			if !ix.tracked(long+"deep.md") || !ix.tracked("sub") {
				t.Fatal("an entry was not decoded")
			}
			const never = 1 << 62
			if got := ix.encode(never); !bytes.Equal(got, data) {
				t.Fatalf("encoded %d bytes differ from git's %d", len(got), len(data))
			}
			// Encoding again from the bytes it now lives in gives the same.
			if got := ix.encode(never); !bytes.Equal(got, data) {
				t.Fatal("the second encoding differs")
			}
		})
	}
}

// TestIndexReuseChecksChecksum: an index of the same size, time and inode
// as the one written (a coarse-grained file system) but other bytes is
// read again, not taken for the one kept.
func TestIndexReuseChecksChecksum(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	r := open(t, dir)
	writeFile(t, dir, "a.md", "1\n")
	commitOne(t, r, "a.md")
	path := filepath.Join(dir, ".git", "index")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Another entry's stat data changed in place: same size, same inode,
	// the time put back; the checksum is made right for the new bytes.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := parseIndex(data, false)
	if err != nil {
		t.Fatal(err)
	}
	ix.entries[len(ix.entries)-1].fixed[0] ^= 1 // b.md's ctime
	ix.spare = nil
	changed := ix.encode(1 << 62)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(changed, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	if got := r.index.take(path); got != nil {
		t.Fatal("an index with other bytes was taken for the one kept")
	}
}

// TestPostIndexChangeHook: with a post-index-change hook installed, the
// fast commit leaves the index to git update-index, which runs the hook.
func TestPostIndexChangeHook(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell hook")
	}
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	hook := filepath.Join(dir, ".git", "hooks", "post-index-change")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/index-hook\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	written, toGit, fast := indexWritten.Load(), indexToGit.Load(), usedFast.Load()
	writeFile(t, dir, "a.md", "b\n")
	commitOne(t, open(t, dir), "a.md")
	if usedFast.Load() == fast || indexWritten.Load() != written || indexToGit.Load() == toGit {
		t.Fatalf("fast %d, index written here %d, by git %d: want 1, 0, 1", usedFast.Load()-fast, indexWritten.Load()-written, indexToGit.Load()-toGit)
	}
	if got := readOr(filepath.Join(dir, ".git", "index-hook")); got != "ran\n" {
		t.Fatalf("the hook did not run once: %q", got)
	}
	cleanAndWhole(t, dir)
}
