package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRevertOurs(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "1\n2\n3\n", "x.md": "x\n", "gone.md": "g\n"})
	r := open(t, dir)
	writeFile(t, dir, "a.md", "1\nTWO\n3\n")
	writeFile(t, dir, "n.md", "new\n")
	os.Remove(filepath.Join(dir, "gone.md"))
	ours, err := r.Commit(ctx, []string{"a.md", "n.md", "gone.md"}, "docs(vault): change")
	if err != nil {
		t.Fatal(err)
	}
	// Unrelated local changes of the user do not stop an undo.
	writeFile(t, dir, "x.md", "x edited\n")
	writeFile(t, dir, "u.md", "untracked\n")

	sha, paths, err := r.Revert(ctx, ours[:10])
	if err != nil {
		t.Fatal(err)
	}
	if head := gitOut(t, dir, "rev-parse", "HEAD"); sha != head {
		t.Fatalf("Revert returned %q, HEAD %q", sha, head)
	}
	if want := []string{"a.md", "gone.md", "n.md"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("paths = %q, want %q", paths, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "1\n2\n3\n" {
		t.Fatalf("a.md = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "n.md")); !os.IsNotExist(err) {
		t.Fatalf("n.md still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "gone.md")); string(b) != "g\n" {
		t.Fatalf("gone.md = %q", b)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != " M x.md\n?? u.md" {
		t.Fatalf("status = %q", got)
	}
	msg := gitOut(t, dir, "log", "-1", "--format=%B")
	if !strings.HasPrefix(msg, `Revert "docs(vault): change"`) || !strings.HasSuffix(msg, "\n\nVaultmcp-Commit: yes") {
		t.Fatalf("revert message = %q", msg)
	}
	if ok, err := r.IsOurs(ctx, "HEAD"); err != nil || !ok {
		t.Fatalf("IsOurs(revert) = %v, %v", ok, err)
	}
	// Reverting the same commit again has nothing left to do.
	if _, _, err := r.Revert(ctx, ours); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("second revert err = %v, want ErrNothingToCommit", err)
	}
	if head := gitOut(t, dir, "rev-parse", "HEAD"); head != sha {
		t.Fatalf("HEAD moved to %s", head)
	}
	// The undo itself can be undone.
	sha2, _, err := r.Revert(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "1\nTWO\n3\n" || sha2 == sha {
		t.Fatalf("after redo a.md = %q", b)
	}
}

func TestRevertRefusals(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	r := open(t, dir)
	user := gitOut(t, dir, "rev-parse", "HEAD")
	if ok, err := r.IsOurs(ctx, user); err != nil || ok {
		t.Fatalf("IsOurs(user commit) = %v, %v", ok, err)
	}
	if _, _, err := r.Revert(ctx, user); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("err = %v, want ErrNotOurs", err)
	}
	// A user commit that merely mentions the trailer in its body is not ours.
	writeFile(t, dir, "a.md", "b\n")
	git(t, dir, "commit", "-qam", "user\n\nVaultmcp-Commit: yes was written here\n\nby hand")
	if ok, _ := r.IsOurs(ctx, "HEAD"); ok {
		t.Fatal("IsOurs(trailer not last) = true")
	}
	for _, rev := range []string{"0123456789abcdef", "--all", "-n1", "HEAD HEAD", "", "no-such-branch"} {
		if ok, err := r.IsOurs(ctx, rev); ok || !errors.Is(err, ErrUnknownCommit) {
			t.Errorf("IsOurs(%q) = %v, %v; want ErrUnknownCommit", rev, ok, err)
		}
		if _, _, err := r.Revert(ctx, rev); !errors.Is(err, ErrUnknownCommit) {
			t.Errorf("Revert(%q) err = %v, want ErrUnknownCommit", rev, err)
		}
	}
	full, err := r.ResolveCommit(ctx, user[:7])
	if err != nil || full != user {
		t.Fatalf("ResolveCommit(short) = %q, %v", full, err)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "HEAD"); n != "2" {
		t.Fatalf("%s commits, want 2", n)
	}
}

func TestRevertConflictIsAborted(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "1\n2\n3\n", "x.md": "x\n"})
	r := open(t, dir)
	writeFile(t, dir, "a.md", "1\nTWO\n3\n")
	ours, err := r.Commit(ctx, []string{"a.md"}, "ours")
	if err != nil {
		t.Fatal(err)
	}
	// The user changes the same line later, and has other local changes.
	writeFile(t, dir, "a.md", "1\nZWEI\n3\n")
	git(t, dir, "commit", "-qam", "user: later")
	writeFile(t, dir, "x.md", "x local\n")
	writeFile(t, dir, "u.md", "untracked\n")
	head := gitOut(t, dir, "rev-parse", "HEAD")
	status := gitOut(t, dir, "status", "--porcelain")

	if _, _, err := r.Revert(ctx, ours); !errors.Is(err, ErrRevertConflict) {
		t.Fatalf("err = %v, want ErrRevertConflict", err)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD moved: %s", got)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != status {
		t.Fatalf("status after abort = %q, want %q", got, status)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "1\nZWEI\n3\n" {
		t.Fatalf("a.md = %q", b)
	}
	if r.inProgress(ctx) {
		t.Fatal("a revert is still in progress")
	}
}

func TestRevertBlockedByStagedChanges(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	r := open(t, dir)
	writeFile(t, dir, "a.md", "a2\n")
	ours, err := r.Commit(ctx, []string{"a.md"}, "ours")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "b.md", "b staged\n")
	git(t, dir, "add", "b.md")
	if _, _, err := r.Revert(ctx, ours); !errors.Is(err, ErrLocalChanges) {
		t.Fatalf("err = %v, want ErrLocalChanges", err)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "M  b.md" {
		t.Fatalf("status = %q", got)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != ours {
		t.Fatalf("HEAD moved")
	}
}

func TestRevertLeavesUsersRevertAlone(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "1\n2\n3\n"})
	r := open(t, dir)
	writeFile(t, dir, "a.md", "1\nTWO\n3\n")
	ours, err := r.Commit(ctx, []string{"a.md"}, "ours")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.md", "1\nZWEI\n3\n")
	git(t, dir, "commit", "-qam", "user: later")
	// The user starts a revert that conflicts and leaves it to resolve.
	cmd := gitCmd(dir, "revert", "--no-edit", ours)
	if err := cmd.Run(); err == nil {
		t.Fatal("expected the user's revert to conflict")
	}
	if _, _, err := r.Revert(ctx, ours); !errors.Is(err, ErrInProgress) {
		t.Fatalf("err = %v, want ErrInProgress", err)
	}
	if !r.inProgress(ctx) {
		t.Fatal("the user's revert was aborted")
	}
}

// TestChangesOfRootCommit: the first commit of a new repository (a new
// vault's first write) has no parent; its changes are every file it added,
// so that it can be undone like any other.
func TestChangesOfRootCommit(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, nil)
	r := open(t, dir)
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "sub/b.md", "b\n")
	first, err := r.Commit(ctx, []string{"a.md", "sub/b.md"}, "docs(vault): first")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := r.Changes(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{{Path: "a.md", After: []byte("a\n")}, {Path: "sub/b.md", After: []byte("b\n")}}
	if !reflect.DeepEqual(changes, want) {
		t.Fatalf("changes = %+v, want %+v", changes, want)
	}
}
