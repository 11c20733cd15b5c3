package gitx

import (
	"context"
	"errors"
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

func TestOpenNotRepo(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, err := Open(context.Background(), dir)
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("err = %v, want ErrNotRepo", err)
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
