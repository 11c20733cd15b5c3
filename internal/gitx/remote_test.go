package gitx

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckRemoteURL(t *testing.T) {
	for _, ok := range []string{
		"https://git.example.com/team/vault.git", "ssh://git@git.example.com/team/vault.git", "git@github.com:team/vault.git",
		"git://git.example.com/vault", "file:///srv/git/vault.git", "/srv/git/vault.git", "https://token-user@git.example.com/v.git",
	} {
		if err := CheckRemoteURL(ok); err != nil {
			t.Errorf("CheckRemoteURL(%q) = %v, want accepted", ok, err)
		}
	}
	for bad, says := range map[string]string{
		"":                                 "empty",
		"--upload-pack=touch /tmp/x":       "'-'",
		"ext::sh -c touch% /tmp/pwned":     "spaces",
		"ext::sh":                          "transport helpers",
		"https://bob:s3cret@git.example/v": "password",
		"ftp://git.example/v.git":          "scheme",
		"https:///nohost":                  "no host",
		"relative/path.git":                "scheme",
		"https://git.example/v.git\nfoo":   "control",
	} {
		err := CheckRemoteURL(bad)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("CheckRemoteURL(%q) = %v, want refused saying %q", bad, err, says)
		}
	}
	if got := RedactURL("https://bob:s3cret@git.example/v.git"); strings.Contains(got, "s3cret") || strings.Contains(got, "bob") {
		t.Errorf("RedactURL = %q", got)
	}
}

// The life of a replica's clone: listed heads, cloned, pushed fast-forward
// only (a push behind the remote is rejected and leaves the remote alone),
// fetched, reset to the remote, an empty fencing commit, and a commit found
// by its idempotency trailer.
func TestRemoteClone(t *testing.T) {
	ctx := context.Background()
	seed, remote := pushRepo(t)
	branch := gitOut(t, seed, "symbolic-ref", "--short", "HEAD")
	heads, head, err := RemoteHeads(ctx, remote)
	if err != nil || head != branch || heads[branch] != gitOut(t, seed, "rev-parse", "HEAD") {
		t.Fatalf("RemoteHeads = %v %q (%v), want %s at the seed's HEAD", heads, head, err, branch)
	}
	emptyRemote := filepath.Join(t.TempDir(), "empty.git")
	git(t, t.TempDir(), "init", "-q", "--bare", emptyRemote)
	if heads, head, err := RemoteHeads(ctx, emptyRemote); err != nil || len(heads) != 0 || head != "" {
		t.Errorf("RemoteHeads of an empty remote = %v %q (%v)", heads, head, err)
	}
	if _, _, err := RemoteHeads(ctx, filepath.Join(t.TempDir(), "missing.git")); err == nil {
		t.Error("RemoteHeads of a missing remote: no error")
	}
	// An empty remote's HEAD is not listed, but a clone learns it.
	for _, b := range []string{"master", "trunk", "team/notes"} {
		empty := filepath.Join(t.TempDir(), "empty.git")
		git(t, t.TempDir(), "init", "-q", "--bare", "-b", b, empty)
		if head, err := RemoteUnbornHead(ctx, empty); err != nil || head != b {
			t.Errorf("RemoteUnbornHead of an empty remote whose HEAD names %s = %q (%v)", b, head, err)
		}
		if head, err := RemoteUnbornHead(ctx, "file://"+empty); err != nil || head != b {
			t.Errorf("RemoteUnbornHead of file:// to an empty remote whose HEAD names %s = %q (%v)", b, head, err)
		}
	}
	if _, err := RemoteUnbornHead(ctx, filepath.Join(t.TempDir(), "missing.git")); err == nil {
		t.Error("RemoteUnbornHead of a missing remote: no error")
	}

	base := t.TempDir()
	a, err := Clone(ctx, remote, branch, filepath.Join(base, "a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Clone(ctx, remote, branch, filepath.Join(base, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if a.CurrentBranch(ctx) != branch {
		t.Errorf("clone on %q, want %q", a.CurrentBranch(ctx), branch)
	}
	writeFile(t, a.Dir(), "a.md", "from a\n")
	shaA, err := a.CommitWith(ctx, []string{"a.md"}, "a", CommitOptions{IdempotencyKey: "token-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PushTo(ctx, "HEAD", branch); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, remote, "rev-parse", branch); got != shaA {
		t.Fatalf("remote at %s, want %s", got, shaA)
	}
	if tr, _ := a.Tracking(ctx, branch); tr != shaA {
		t.Errorf("tracking ref after the push = %s, want %s", tr, shaA)
	}

	// b is behind: its own commit cannot be pushed over a's.
	writeFile(t, b.Dir(), "b.md", "from b\n")
	shaB, err := b.Commit(ctx, []string{"b.md"}, "b")
	if err != nil {
		t.Fatal(err)
	}
	err = b.PushTo(ctx, "HEAD", branch)
	if pe := pushKind(t, err); pe.Kind != PushRejected {
		t.Fatalf("push behind the remote: %v, want rejected", err)
	}
	if got := gitOut(t, remote, "rev-parse", branch); got != shaA {
		t.Fatalf("a rejected push moved the remote to %s", got)
	}
	tip, err := b.Fetch(ctx, branch)
	if err != nil || tip != shaA {
		t.Fatalf("Fetch = %s (%v), want %s", tip, err, shaA)
	}
	if ok, err := b.IsAncestor(ctx, shaB, tip); err != nil || ok {
		t.Errorf("IsAncestor(b's commit, the remote) = %v (%v), want false", ok, err)
	}
	if paths, err := b.ChangedPaths(ctx, shaB, tip); err != nil || strings.Join(paths, ",") != "a.md,b.md" {
		t.Errorf("ChangedPaths(b's commit, the remote) = %v (%v), want a.md and b.md", paths, err)
	}
	if err := b.ResetHard(ctx, tip); err != nil {
		t.Fatal(err)
	}
	if h, _ := b.Head(ctx); h != shaA {
		t.Errorf("HEAD after the reset = %s, want %s", h, shaA)
	}
	if clean, err := b.Clean(ctx); err != nil || !clean {
		t.Errorf("Clean after the reset = %v (%v)", clean, err)
	}
	writeFile(t, b.Dir(), "a.md", "edited\n")
	if clean, _ := b.Clean(ctx); clean {
		t.Error("Clean with an edited tracked file = true")
	}
	if err := b.ResetHard(ctx, tip); err != nil {
		t.Fatal(err)
	}

	// The fence: an empty commit pushed on top makes a's older base stale.
	fence, err := b.EmptyCommit(ctx, tip, "vaultmcp: fence")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PushTo(ctx, fence, branch); err != nil {
		t.Fatal(err)
	}
	if h, _ := b.Head(ctx); h != shaA {
		t.Errorf("EmptyCommit moved HEAD to %s", h)
	}
	if out := gitOut(t, remote, "diff", "--name-only", shaA, fence); out != "" {
		t.Errorf("the fence changed files: %q", out)
	}
	writeFile(t, a.Dir(), "late.md", "late\n")
	if _, err := a.Commit(ctx, []string{"late.md"}, "late"); err != nil {
		t.Fatal(err)
	}
	if pe := pushKind(t, a.PushTo(ctx, "HEAD", branch)); pe.Kind != PushRejected {
		t.Errorf("a push from before the fence: %v, want rejected", pe)
	}

	if got, err := b.CommitWithTrailer(ctx, trackingRef(branch), "token-a"); err != nil || got != shaA {
		t.Errorf("CommitWithTrailer(token-a) = %q (%v), want %s", got, err, shaA)
	}
	if got, err := b.CommitWithTrailer(ctx, trackingRef(branch), "token-z"); err != nil || got != "" {
		t.Errorf("CommitWithTrailer(token-z) = %q (%v), want none", got, err)
	}
}

// A new vault pushed to an empty remote on a branch of our choosing.
func TestRenameBranchAndFirstPush(t *testing.T) {
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "r.git")
	git(t, t.TempDir(), "init", "-q", "--bare", remote)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	r := open(t, dir)
	if err := r.RenameBranch(ctx, "trunk"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "n.md", "n\n")
	if _, err := r.Commit(ctx, []string{"n.md"}, "first"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetOrigin(ctx, remote); err != nil {
		t.Fatal(err)
	}
	if err := r.SetOrigin(ctx, remote); err != nil {
		t.Fatalf("SetOrigin again: %v", err)
	}
	if err := r.PushTo(ctx, "HEAD", "trunk"); err != nil {
		t.Fatal(err)
	}
	if heads, _, err := RemoteHeads(ctx, remote); err != nil || heads["trunk"] == "" {
		t.Errorf("remote heads after the first push: %v (%v)", heads, err)
	}
	if err := r.RenameBranch(ctx, "second"); err != nil || r.CurrentBranch(ctx) != "second" {
		t.Errorf("RenameBranch of a born branch: %v, on %q", err, r.CurrentBranch(ctx))
	}
	if err := r.RenameBranch(ctx, "bad..name"); err == nil {
		t.Error("RenameBranch(bad..name): no error")
	}
}

// TestRemoteUnbornHeadUnknown: over a protocol that cannot tell an unborn
// HEAD (git's version 0, as an older git speaks), the answer is "", not
// this side's default branch.
func TestRemoteUnbornHeadUnknown(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.git")
	git(t, t.TempDir(), "init", "-q", "--bare", "-b", "trunk", empty)
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "protocol.version")
	t.Setenv("GIT_CONFIG_VALUE_0", "0")
	if head, err := RemoteUnbornHead(context.Background(), "file://"+empty); err != nil || head != "" {
		t.Errorf("RemoteUnbornHead over protocol 0 = %q (%v), want \"\"", head, err)
	}
}

// RedactErr hides a URL's credentials in the message and keeps what the
// error wraps within reach of errors.Is and errors.As.
func TestRedactErrKeepsTheChain(t *testing.T) {
	push := &PushError{Kind: PushRejected, Detail: "https://bob:s3cret@example.com/v.git rejected", Err: context.DeadlineExceeded}
	err := fmt.Errorf("pushing: %w", RedactErr(push))
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "bob") {
		t.Errorf("message shows the credentials: %q", err)
	}
	if !strings.Contains(err.Error(), "https://example.com/v.git rejected") {
		t.Errorf("message lost the rest: %q", err)
	}
	var pe *PushError
	if !errors.As(err, &pe) || pe.Kind != PushRejected {
		t.Errorf("errors.As *PushError: %v", pe)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("errors.Is DeadlineExceeded: false")
	}
	if RedactErr(nil) != nil {
		t.Error("RedactErr(nil) is not nil")
	}
}
