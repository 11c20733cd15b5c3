package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	if out, err := gitCmd(dir, args...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestLogFollowsRenames(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	writeFile(t, dir, "a.md", "# A\n\nfirst version of a long enough body to follow\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "add a")
	writeFile(t, dir, "a.md", "# A\n\nsecond version of a long enough body to follow\n")
	git(t, dir, "commit", "-q", "-am", "edit a")
	git(t, dir, "mv", "a.md", "dir-b.md")
	git(t, dir, "commit", "-q", "-m", "rename a")

	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Log(context.Background(), "dir-b.md", 10)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, c := range got {
		subjects = append(subjects, c.Subject)
		if len(c.Hash) != 40 || c.Date.IsZero() || c.Author != "t" {
			t.Errorf("bad commit %+v", c)
		}
	}
	want := []string{"rename a", "edit a", "add a"}
	if len(subjects) != len(want) {
		t.Fatalf("subjects = %q, want %q", subjects, want)
	}
	for i := range want {
		if subjects[i] != want[i] {
			t.Fatalf("subjects = %q, want %q", subjects, want)
		}
	}
	limited, err := r.Log(context.Background(), "dir-b.md", 1)
	if err != nil || len(limited) != 1 {
		t.Fatalf("limit 1: %v %v", limited, err)
	}
	none, err := r.Log(context.Background(), "never.md", 10)
	if err != nil || len(none) != 0 {
		t.Fatalf("unknown path: %v %v", none, err)
	}
}

// TestLogLiteralPath: the path of Log is a note's name, never a pathspec: a
// name with '*', '?' or '[' names only itself, not every note it matches as a
// glob (whose commits, hidden folders' included, would otherwise be listed).
func TestLogLiteralPath(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "# A\n", ".trash/secret.md": "# S\n"})
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "unrelated")
	writeFile(t, dir, "[a].md", "# literal\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "add [a]")
	r := open(t, dir)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"*.md", nil},
		{"?.md", nil},
		{"*/secret.md", nil},
		{"[a].md", []string{"add [a]"}},
	} {
		got, err := r.Log(context.Background(), tc.path, 10)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		var subjects []string
		for _, c := range got {
			subjects = append(subjects, c.Subject)
		}
		if fmt.Sprint(subjects) != fmt.Sprint(tc.want) {
			t.Errorf("Log(%q) = %q, want %q", tc.path, subjects, tc.want)
		}
	}
}

// TestLogSeparatorsInMessage: a commit subject holding the characters Log
// once split its output on (U+001E, U+001F) is given back whole, and cannot
// make up a version of the note that no commit made.
func TestLogSeparatorsInMessage(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "# A\n"})
	fake := "1111111111111111111111111111111111111111\x1f2001-01-01T00:00:00Z\x1fadmin\x1fforged version"
	writeFile(t, dir, "a.md", "# A\n\nmore\n")
	git(t, dir, "commit", "-q", "-am", "real\x1e"+fake)
	writeFile(t, dir, "a.md", "# A\n\neven more\n")
	git(t, dir, "commit", "-q", "-am", "unit\x1fseparator")
	got, err := open(t, dir).Log(context.Background(), "a.md", 10)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, c := range got {
		subjects = append(subjects, c.Subject)
		if len(c.Hash) != 40 || c.Author != "t" {
			t.Errorf("bad commit %+v", c)
		}
	}
	want := []string{"unit\x1fseparator", "real\x1e" + fake, "user: initial"}
	if fmt.Sprintf("%q", subjects) != fmt.Sprintf("%q", want) {
		t.Fatalf("subjects = %q, want %q", subjects, want)
	}
}

// TestLogBefore: the history of a path before a commit leaves that commit
// and later ones out, and takes only a commit id.
func TestLogBefore(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "# A\n"})
	writeFile(t, dir, "a.md", "# A\n\nsecond\n")
	git(t, dir, "commit", "-q", "-am", "second")
	writeFile(t, dir, "a.md", "# A\n\nthird\n")
	git(t, dir, "commit", "-q", "-am", "third")
	r := open(t, dir)
	all, err := r.Log(context.Background(), "a.md", 10)
	if err != nil || len(all) != 3 {
		t.Fatalf("log: %v %v", all, err)
	}
	got, err := r.LogBefore(context.Background(), all[1].Hash, "a.md", 10)
	if err != nil || len(got) != 1 || got[0].Subject != "user: initial" {
		t.Fatalf("before %q: %+v %v", all[1].Subject, got, err)
	}
	for _, bad := range []string{"HEAD", "--all", all[0].Hash + "^", "abc"} {
		if _, err := r.LogBefore(context.Background(), bad, "a.md", 10); err == nil {
			t.Errorf("LogBefore(%q) accepted", bad)
		}
	}
}

func TestOpenNotRepo(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, err := Open(context.Background(), dir)
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("err = %v, want ErrNotRepo", err)
	}
	// GIT_DIR names a repository for a folder with no .git: git is asked.
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
	t.Setenv("GIT_WORK_TREE", dir)
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("with GIT_DIR: %v", err)
	}
	if gd, _ := r.GitDir(context.Background()); gd != filepath.Join(repo, ".git") {
		t.Fatalf("git dir %q", gd)
	}
}

// TestOpenGitDir: Open tells the git directory (the write lock's place)
// as rev-parse does, from the top of the work tree or a folder below it.
func TestOpenGitDir(t *testing.T) {
	top := t.TempDir()
	git(t, top, "init", "-q")
	sub := filepath.Join(top, "notes", "vault")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	want := gitOut(t, top, "rev-parse", "--absolute-git-dir")
	for _, dir := range []string{top, sub} {
		r, err := Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if r.gitDir != want {
			t.Fatalf("%s: git dir %q, want %q", dir, r.gitDir, want)
		}
	}
}

func TestEmptyRepoHasNoHistory(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Log(context.Background(), "a.md", 5)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
}
