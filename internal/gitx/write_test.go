package gitx

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// gitCmd is git in dir as the test's "user".
func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "core.quotepath=off"}, args...)...)
	cmd.Env = append(Env(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	return cmd
}

// gitOut runs git in dir as the test's "user" and returns its trimmed stdout.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitCmd(dir, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return strings.TrimRight(string(out), "\n")
}

func writeFile(t testing.TB, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with the given files committed by the user
// (no identity configured in the repository itself).
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	if len(files) > 0 {
		for name, body := range files {
			writeFile(t, dir, name, body)
		}
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", "user: initial")
	}
	return dir
}

func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	r.SetReader(osReader(dir))
	return r
}

// cleanAndWhole checks that git status shows nothing in dir and that
// fsck finds the repository whole.
func cleanAndWhole(t *testing.T, dir string) {
	t.Helper()
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status = %q", st)
	}
	whole(t, dir)
}

// whole checks that fsck finds the repository of dir whole.
func whole(t *testing.T, dir string) {
	t.Helper()
	if out, err := gitCmd(dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
}

// osReader reads the files of the folder dir as a vault's gatekeeper would
// give them (the tests' vaults hold no symbolic links to judge).
func osReader(dir string) FileReader {
	return func(rel string) ([]byte, bool, error) {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return data, err == nil, err
	}
}

// changedFiles lists "STATUS\tpath" of a commit, sorted.
func changedFiles(t *testing.T, dir, commit string) []string {
	t.Helper()
	out := gitOut(t, dir, "show", "--format=", "--name-status", "--no-renames", commit)
	lines := strings.Split(out, "\n")
	sort.Strings(lines)
	return lines
}

func TestCommitOnlyGivenPathsLeavesUserChanges(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{
		"a.md": "a\n", "b.md": "b\n", "c.md": "c\n", "d.md": "d\n",
	})
	// The user's own work in progress.
	writeFile(t, dir, "b.md", "b staged\n")
	git(t, dir, "add", "b.md")
	writeFile(t, dir, "b.md", "b staged then edited\n")
	writeFile(t, dir, "c.md", "c unstaged\n")
	writeFile(t, dir, "s.md", "new staged\n")
	git(t, dir, "add", "s.md")
	writeFile(t, dir, "u.md", "untracked\n")
	statusBefore := gitOut(t, dir, "status", "--porcelain")
	stagedB := gitOut(t, dir, "show", ":b.md")

	// Our write: modify a, create n, delete d.
	writeFile(t, dir, "a.md", "a changed\n")
	writeFile(t, dir, "n.md", "new note\n")
	if err := os.Remove(filepath.Join(dir, "d.md")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	sha, err := r.Commit(ctx, []string{"a.md", "n.md", "d.md"}, "docs(vault): three changes")
	if err != nil {
		t.Fatal(err)
	}
	if head := gitOut(t, dir, "rev-parse", "HEAD"); sha != head || len(sha) != 40 {
		t.Fatalf("Commit returned %q, HEAD is %q", sha, head)
	}
	if got, want := changedFiles(t, dir, sha), []string{"A\tn.md", "D\td.md", "M\ta.md"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("commit changed %q, want %q", got, want)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != statusBefore {
		t.Fatalf("user's status changed:\nbefore:\n%s\nafter:\n%s", statusBefore, got)
	}
	if got := gitOut(t, dir, "show", ":b.md"); got != stagedB {
		t.Fatalf("staged b.md = %q, want %q", got, stagedB)
	}
	msg := gitOut(t, dir, "log", "-1", "--format=%B")
	if msg != "docs(vault): three changes\n\nVaultmcp-Commit: yes" {
		t.Fatalf("message = %q", msg)
	}
	if ours, err := r.IsOurs(ctx, sha[:8]); err != nil || !ours {
		t.Fatalf("IsOurs(short) = %v, %v", ours, err)
	}
	// The user's commit of their staged work still works and holds only theirs.
	git(t, dir, "commit", "-q", "-m", "user: staged work")
	if got, want := changedFiles(t, dir, "HEAD"), []string{"A\ts.md", "M\tb.md"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("user's commit changed %q, want %q", got, want)
	}
}

func TestCommitInitialAndNothingToCommit(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, nil)
	writeFile(t, dir, "first.md", "first\n")
	writeFile(t, dir, "other.md", "not ours\n")
	writeFile(t, dir, ".gitignore", "ignored.md\n")
	writeFile(t, dir, "ignored.md", "ignored\n")
	r := open(t, dir)
	sha, err := r.Commit(ctx, []string{"first.md", "./first.md"}, "first")
	if err != nil {
		t.Fatal(err)
	}
	if got := changedFiles(t, dir, sha); !reflect.DeepEqual(got, []string{"A\tfirst.md"}) {
		t.Fatalf("initial commit changed %q", got)
	}
	for _, tc := range []struct {
		name  string
		paths []string
	}{
		{"unchanged", []string{"first.md"}},
		{"missing and unknown", []string{"never.md"}},
		{"ignored", []string{"ignored.md"}},
		{"none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := r.Commit(ctx, tc.paths, "x"); !errors.Is(err, ErrNothingToCommit) {
				t.Fatalf("err = %v, want ErrNothingToCommit", err)
			}
		})
	}
	for _, bad := range []string{"../x.md", "/abs.md", "a/../../x.md"} {
		if _, err := r.Commit(ctx, []string{bad}, "x"); err == nil || errors.Is(err, ErrNothingToCommit) {
			t.Errorf("Commit(%q) err = %v, want a path error", bad, err)
		}
	}
	if n := gitOut(t, dir, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("%s commits, want 1", n)
	}
}

func TestCommitSpacesUnicodeAndGlobCharacters(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"keep.md": "k\n"})
	names := []string{"dir with space/ñandú café.md", "日本語/メモ.md", "glob[1]*.md"}
	for _, n := range names {
		writeFile(t, dir, n, "content of "+n+"\n")
	}
	// Would match the pattern glob[1]*.md if it were taken as a glob.
	writeFile(t, dir, "glob1-other.md", "must stay uncommitted\n")
	r := open(t, dir)
	sha, err := r.Commit(ctx, names, "unicode")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A\tdir with space/ñandú café.md", "A\tglob[1]*.md", "A\t日本語/メモ.md"}
	sort.Strings(want)
	if got := changedFiles(t, dir, sha); !reflect.DeepEqual(got, want) {
		t.Fatalf("changed %q, want %q", got, want)
	}
	for _, n := range names {
		ok, err := r.Committed(ctx, n)
		if err != nil || !ok {
			t.Errorf("Committed(%q) = %v, %v", n, ok, err)
		}
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "?? glob1-other.md" {
		t.Fatalf("status = %q", got)
	}
}

func TestVaultInSubfolder(t *testing.T) {
	ctx := context.Background()
	top := newRepo(t, map[string]string{"README.md": "top\n", "notes/vault/old.md": "old\n"})
	vault := filepath.Join(top, "notes", "vault")
	writeFile(t, top, "notes/vault/sub/new.md", "new\n")
	writeFile(t, top, "outside.md", "outside, uncommitted\n")
	r := open(t, vault)
	sha, err := r.Commit(ctx, []string{"sub/new.md"}, "in a subfolder")
	if err != nil {
		t.Fatal(err)
	}
	if got := changedFiles(t, top, sha); !reflect.DeepEqual(got, []string{"A\tnotes/vault/sub/new.md"}) {
		t.Fatalf("changed %q", got)
	}
	if ok, err := r.Committed(ctx, "sub/new.md"); err != nil || !ok {
		t.Fatalf("Committed = %v, %v", ok, err)
	}
	if ok, err := r.Committed(ctx, "old.md"); err != nil || !ok {
		t.Fatalf("Committed(old.md) = %v, %v", ok, err)
	}
	_, paths, err := r.Revert(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(paths, []string{"sub/new.md"}) {
		t.Fatalf("revert paths = %q", paths)
	}
	gd, err := r.GitDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	realTop, _ := filepath.EvalSymlinks(top)
	if realGD, _ := filepath.EvalSymlinks(gd); realGD != filepath.Join(realTop, ".git") {
		t.Fatalf("GitDir = %q, want %q", gd, filepath.Join(realTop, ".git"))
	}
}

func TestCommitIdentity(t *testing.T) {
	ctx := context.Background()
	t.Run("none configured", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		writeFile(t, dir, "a.md", "b\n")
		sha, err := open(t, dir).Commit(ctx, []string{"a.md"}, "edit")
		if err != nil {
			t.Fatal(err)
		}
		if got := gitOut(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", sha); got != "vaultmcp <vaultmcp@localhost>|vaultmcp <vaultmcp@localhost>" {
			t.Fatalf("identity = %q", got)
		}
	})
	t.Run("configured", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		git(t, dir, "config", "user.name", "Ada Lovelace")
		git(t, dir, "config", "user.email", "ada@example.org")
		writeFile(t, dir, "a.md", "b\n")
		sha, err := open(t, dir).Commit(ctx, []string{"a.md"}, "edit")
		if err != nil {
			t.Fatal(err)
		}
		if got := gitOut(t, dir, "log", "-1", "--format=%an <%ae>", sha); got != "Ada Lovelace <ada@example.org>" {
			t.Fatalf("identity = %q", got)
		}
	})
	t.Run("only a name configured", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		git(t, dir, "config", "user.name", "Ada")
		writeFile(t, dir, "a.md", "b\n")
		sha, err := open(t, dir).Commit(ctx, []string{"a.md"}, "edit")
		if err != nil {
			t.Fatal(err)
		}
		if got := gitOut(t, dir, "log", "-1", "--format=%an <%ae>", sha); got != "Ada <vaultmcp@localhost>" {
			t.Fatalf("identity = %q", got)
		}
	})
}

func TestCommitIndexLock(t *testing.T) {
	ctx := context.Background()
	t.Run("held briefly", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		writeFile(t, dir, "a.md", "b\n")
		writeFile(t, dir, "new.md", "new\n")
		lock := filepath.Join(dir, ".git", "index.lock")
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(300 * time.Millisecond)
			os.Remove(lock)
		}()
		sha, err := open(t, dir).Commit(ctx, []string{"a.md", "new.md"}, "while locked")
		<-done
		if err != nil {
			t.Fatal(err)
		}
		if got := changedFiles(t, dir, sha); !reflect.DeepEqual(got, []string{"A\tnew.md", "M\ta.md"}) {
			t.Fatalf("changed %q", got)
		}
	})
	t.Run("held forever", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		writeFile(t, dir, "a.md", "b\n")
		if err := os.WriteFile(filepath.Join(dir, ".git", "index.lock"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r := open(t, dir)
		r.lockWait = 20 * time.Millisecond
		_, err := r.Commit(ctx, []string{"a.md"}, "never")
		if !errors.Is(err, ErrIndexLocked) || !strings.Contains(err.Error(), "index.lock") {
			t.Fatalf("err = %v, want ErrIndexLocked naming index.lock", err)
		}
		if strings.Contains(err.Error(), dir) {
			t.Fatalf("error shows an absolute path: %v", err)
		}
		if n := gitOut(t, dir, "rev-list", "--count", "HEAD"); n != "1" {
			t.Fatalf("%s commits, want 1", n)
		}
	})
}

func TestTrailer(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"subject", "subject\n\nVaultmcp-Commit: yes\n"},
		{"subject\n\nbody line\n\n\n", "subject\n\nbody line\n\nVaultmcp-Commit: yes\n"},
		{"subject\r\n\r\nCo-authored-by: A <a@b>", "subject\n\nCo-authored-by: A <a@b>\nVaultmcp-Commit: yes\n"},
		{"subject: with colon", "subject: with colon\n\nVaultmcp-Commit: yes\n"},
		{"", "vaultmcp change\n\nVaultmcp-Commit: yes\n"},
	} {
		got := withTrailer(tc.in, CommitOptions{})
		if got != tc.want {
			t.Errorf("withTrailer(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !hasTrailer(got) {
			t.Errorf("hasTrailer(%q) = false", got)
		}
	}
	for _, msg := range []string{
		"Vaultmcp-Commit: yes",                         // a subject is not a trailer
		"subject\n\nVaultmcp-Commit: yes\n\nmore text", // not the last paragraph
		"subject\n\nVaultmcp-Commit: no",
		"subject\n\nsays Vaultmcp-Commit: yes inside",
	} {
		if hasTrailer(msg) {
			t.Errorf("hasTrailer(%q) = true", msg)
		}
	}
}

func TestCommitted(t *testing.T) {
	ctx := context.Background()
	empty := open(t, newRepo(t, nil))
	writeFile(t, empty.Dir(), "a.md", "a\n")
	if ok, err := empty.Committed(ctx, "a.md"); err != nil || ok {
		t.Fatalf("no HEAD: Committed = %v, %v", ok, err)
	}

	dir := newRepo(t, map[string]string{"same.md": "same\n", "mod.md": "v1\n", "gone.md": "g\n", "staged.md": "s\n"})
	writeFile(t, dir, "mod.md", "v2\n")
	writeFile(t, dir, "new.md", "new\n")
	os.Remove(filepath.Join(dir, "gone.md"))
	// Staged change undone in the work tree: the work tree equals HEAD.
	writeFile(t, dir, "staged.md", "s2\n")
	git(t, dir, "add", "staged.md")
	writeFile(t, dir, "staged.md", "s\n")
	r := open(t, dir)
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"same.md", true}, {"staged.md", true}, {"mod.md", false}, {"new.md", false}, {"gone.md", false}, {"never.md", false},
	} {
		got, err := r.Committed(ctx, tc.path)
		if err != nil || got != tc.want {
			t.Errorf("Committed(%q) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
}

// TestHeadHolds: whether HEAD holds given bytes at a path is told in
// process, also in a vault that is a folder of the repository and after a
// commit of this server (HEAD's trees from the cache); a repository
// without HEAD is not told (ok false).
func TestHeadHolds(t *testing.T) {
	ctx := context.Background()
	if _, ok := open(t, newRepo(t, nil)).HeadHolds(ctx, map[string][]byte{"a.md": []byte("a\n")}); ok {
		t.Fatal("no HEAD: HeadHolds told")
	}
	dir := newRepo(t, map[string]string{"v/same.md": "same\n", "v/d/deep.md": "deep\n", "top.md": "top\n"})
	r := open(t, filepath.Join(dir, "v"))
	check := func(files map[string][]byte, want map[string]bool) {
		t.Helper()
		got, ok := r.HeadHolds(ctx, files)
		if !ok {
			t.Fatal("HeadHolds not told")
		}
		for p, w := range want {
			if got[p] != w {
				t.Errorf("HeadHolds(%q) = %v, want %v", p, got[p], w)
			}
		}
	}
	files := map[string][]byte{
		"same.md": []byte("same\n"), "d/deep.md": []byte("deep\n"), "d/other.md": []byte("deep\n"),
		"top.md": []byte("top\n"), "gone.md": nil, "d/deep2.md": nil,
	}
	check(files, map[string]bool{"same.md": true, "d/deep.md": true, "d/other.md": false, "top.md": false, "gone.md": true, "d/deep2.md": true})
	check(map[string][]byte{"same.md": []byte("same\r\n"), "d/deep.md": nil}, map[string]bool{"same.md": false, "d/deep.md": false})
	// After a commit of ours, from the tree cache.
	writeFile(t, dir, "v/same.md", "changed\n")
	if _, err := r.Commit(ctx, []string{"same.md"}, "ours"); err != nil {
		t.Fatal(err)
	}
	check(map[string][]byte{"same.md": []byte("changed\n"), "d/deep.md": []byte("deep\n")}, map[string]bool{"same.md": true, "d/deep.md": true})
	check(map[string][]byte{"same.md": []byte("same\n")}, map[string]bool{"same.md": false})
}

func TestOpenWithoutGit(t *testing.T) {
	dir := newRepo(t, nil)
	t.Setenv("PATH", t.TempDir())
	if _, err := Open(context.Background(), dir); !errors.Is(err, ErrNoGit) {
		t.Fatalf("err = %v, want ErrNoGit", err)
	}
}

func TestCommitHookFailureLeavesIndexAsItWas(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell hook")
	}
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	writeFile(t, dir, "b.md", "b staged\n")
	git(t, dir, "add", "b.md")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'lint failed' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.md", "a2\n")
	writeFile(t, dir, "new.md", "new\n")
	_, err := open(t, dir).Commit(ctx, []string{"a.md", "new.md"}, "blocked by the hook")
	if err == nil || !strings.Contains(err.Error(), "lint failed") {
		t.Fatalf("err = %v, want the hook's message", err)
	}
	if got := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); got != " M a.md\nM  b.md\n?? new.md" {
		t.Fatalf("status = %q", got)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("%s commits, want 1", n)
	}
}
