package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFindGitDirAgreesWithGit: for a vault at the top of a repository, in a
// subfolder, in a linked work tree, and outside any repository (a ceiling),
// FindGitDir finds what `git rev-parse --absolute-git-dir` says.
func TestFindGitDirAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	repo := filepath.Join(root, "repo")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(repo, "notes", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(repo, "init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "notes", "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(repo, "add", ".")
	run(repo, "commit", "-qm", "one")
	linked := filepath.Join(root, "linked")
	run(repo, "worktree", "add", "-q", linked)
	outside := filepath.Join(root, "plain")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", root)
	for _, dir := range []string{repo, filepath.Join(repo, "notes", "deep"), linked, filepath.Join(linked, "notes"), outside} {
		want := ""
		r, err := Open(context.Background(), dir)
		if err == nil {
			if want, err = r.GitDir(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		got, ok, err := FindGitDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (want != "") || got != want {
			t.Errorf("%s: FindGitDir = %q, %v; git says %q", dir, got, ok, want)
		}
	}
}
