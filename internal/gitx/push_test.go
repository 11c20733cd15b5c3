package gitx

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// pushRepo makes a bare "remote" and a clone tracking it, with one commit
// pushed; it returns the clone and the remote.
func pushRepo(t *testing.T) (clone, remote string) {
	t.Helper()
	base := t.TempDir()
	remote = filepath.Join(base, "remote.git")
	clone = filepath.Join(base, "clone")
	git(t, base, "init", "-q", "--bare", remote)
	git(t, base, "init", "-q", clone)
	writeFile(t, clone, "a.md", "a\n")
	git(t, clone, "add", "-A")
	git(t, clone, "commit", "-q", "-m", "initial")
	git(t, clone, "remote", "add", "origin", remote)
	git(t, clone, "push", "-q", "-u", "origin", "HEAD")
	return clone, remote
}

func pushKind(t *testing.T, err error) *PushError {
	t.Helper()
	var pe *PushError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want *PushError", err, err)
	}
	return pe
}

func TestPushSuccess(t *testing.T) {
	ctx := context.Background()
	clone, remote := pushRepo(t)
	r := open(t, clone)
	writeFile(t, clone, "a.md", "b\n")
	sha, err := r.Commit(ctx, []string{"a.md"}, "edit")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx); err != nil {
		t.Fatal(err)
	}
	branch := gitOut(t, clone, "symbolic-ref", "--short", "HEAD")
	if got := gitOut(t, remote, "rev-parse", branch); got != sha {
		t.Fatalf("remote %s = %s, want %s", branch, got, sha)
	}
	// Nothing new: still a success.
	if err := r.Push(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPushNoUpstream(t *testing.T) {
	ctx := context.Background()
	clone, _ := pushRepo(t)
	git(t, clone, "checkout", "-q", "-b", "topic")
	if pe := pushKind(t, open(t, clone).Push(ctx)); pe.Kind != PushNoUpstream {
		t.Fatalf("kind = %v (%s), want no upstream", pe.Kind, pe.Detail)
	}
	// No remote at all.
	lone := newRepo(t, map[string]string{"a.md": "a\n"})
	if pe := pushKind(t, open(t, lone).Push(ctx)); pe.Kind != PushNoUpstream {
		t.Fatalf("kind = %v (%s), want no upstream", pe.Kind, pe.Detail)
	}
}

func TestPushRejectedWhenRemoteAhead(t *testing.T) {
	ctx := context.Background()
	clone, remote := pushRepo(t)
	// Someone else pushes first.
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "-q", remote, other)
	writeFile(t, other, "b.md", "theirs\n")
	git(t, other, "add", "-A")
	git(t, other, "commit", "-q", "-m", "theirs")
	git(t, other, "push", "-q")

	r := open(t, clone)
	writeFile(t, clone, "a.md", "ours\n")
	if _, err := r.Commit(ctx, []string{"a.md"}, "ours"); err != nil {
		t.Fatal(err)
	}
	pe := pushKind(t, r.Push(ctx))
	if pe.Kind != PushRejected {
		t.Fatalf("kind = %v (%s), want rejected", pe.Kind, pe.Detail)
	}
	// Never pulled: the other commit is not in our history.
	if got := gitOut(t, clone, "rev-list", "--count", "HEAD"); got != "2" {
		t.Fatalf("%s commits in our history, want 2", got)
	}
}

// setUpstream points the current branch at remote URL url without pushing.
func setUpstream(t *testing.T, dir, url string) {
	t.Helper()
	branch := gitOut(t, dir, "symbolic-ref", "--short", "HEAD")
	git(t, dir, "remote", "add", "origin", url)
	git(t, dir, "config", "branch."+branch+".remote", "origin")
	git(t, dir, "config", "branch."+branch+".merge", "refs/heads/"+branch)
}

func TestPushAuthAndNetwork(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
	}))
	defer srv.Close()
	t.Run("auth without credentials never prompts", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		setUpstream(t, dir, srv.URL+"/vault.git")
		if pe := pushKind(t, open(t, dir).Push(ctx)); pe.Kind != PushAuth {
			t.Fatalf("kind = %v (%s), want auth", pe.Kind, pe.Detail)
		}
	})
	t.Run("auth with wrong credentials", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		// A token in the URL must never reach the detail.
		setUpstream(t, dir, strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)+"/vault.git")
		pe := pushKind(t, open(t, dir).Push(ctx))
		if pe.Kind != PushAuth {
			t.Fatalf("kind = %v (%s), want auth", pe.Kind, pe.Detail)
		}
		if strings.Contains(pe.Error(), "s3cret") {
			t.Fatalf("credentials leaked: %s", pe.Error())
		}
	})
	t.Run("network", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there any more: connection refused
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		setUpstream(t, dir, "http://"+addr+"/vault.git")
		if pe := pushKind(t, open(t, dir).Push(ctx)); pe.Kind != PushNetwork {
			t.Fatalf("kind = %v (%s), want network", pe.Kind, pe.Detail)
		}
	})
	t.Run("missing repository", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		setUpstream(t, dir, filepath.Join(t.TempDir(), "absent.git"))
		pe := pushKind(t, open(t, dir).Push(ctx))
		if pe.Kind != PushOther || !strings.Contains(pe.Detail, "does not appear to be a git repository") {
			t.Fatalf("kind = %v, detail %q", pe.Kind, pe.Detail)
		}
	})
}

func TestClassifyPush(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		kind         PushKind
		detail       string
	}{
		{"no upstream", "fatal: The current branch main has no upstream branch.\nTo push the current branch...", PushNoUpstream,
			"The current branch main has no upstream branch."},
		{"no destination", "fatal: No configured push destination.\nEither specify the URL", PushNoUpstream, "No configured push destination."},
		{"detached", "fatal: You are not currently on a branch.", PushNoUpstream, "You are not currently on a branch."},
		{"fetch first", "To github.com:o/r.git\n ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to 'github.com:o/r.git'\nhint: Updates were rejected because the remote contains work",
			PushRejected, "! [rejected]        main -> main (fetch first)"},
		{"non-fast-forward", " ! [rejected]        main -> main (non-fast-forward)", PushRejected, "! [rejected]        main -> main (non-fast-forward)"},
		{"https no prompt", "fatal: could not read Username for 'https://github.com': terminal prompts disabled", PushAuth,
			"could not read Username for 'https://github.com': terminal prompts disabled"},
		{"https bad token", "remote: Invalid username or token.\nfatal: Authentication failed for 'https://tok@github.com/o/r.git/'", PushAuth,
			"Invalid username or token."},
		{"auth failed with creds in url", "fatal: Authentication failed for 'https://bob:hunter2@example.com/r.git/'", PushAuth,
			"Authentication failed for 'https://example.com/r.git/'"},
		{"ssh key", "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.", PushAuth,
			"git@github.com: Permission denied (publickey)."},
		{"http 403", "fatal: unable to access 'https://example.com/r.git/': The requested URL returned error: 403", PushAuth,
			"unable to access 'https://example.com/r.git/': The requested URL returned error: 403"},
		{"host key", "Host key verification failed.\nfatal: Could not read from remote repository.", PushAuth, "Host key verification failed."},
		{"dns", "fatal: unable to access 'https://nohost.invalid/r.git/': Could not resolve host: nohost.invalid", PushNetwork,
			"unable to access 'https://nohost.invalid/r.git/': Could not resolve host: nohost.invalid"},
		{"ssh dns", "ssh: Could not resolve hostname nohost: Name or service not known\nfatal: Could not read from remote repository.", PushNetwork,
			"ssh: Could not resolve hostname nohost: Name or service not known"},
		{"refused", "ssh: connect to host example.com port 22: Connection refused", PushNetwork, "ssh: connect to host example.com port 22: Connection refused"},
		{"hung up", "fatal: the remote end hung up unexpectedly", PushNetwork, "the remote end hung up unexpectedly"},
		{"hook declined", " ! [remote rejected] main -> main (pre-receive hook declined)\nerror: failed to push some refs to 'x'", PushOther,
			"! [remote rejected] main -> main (pre-receive hook declined)"},
		{"unknown", "something odd\nmore", PushOther, "something odd"},
		{"empty", "", PushOther, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, detail := classifyPush(tc.stderr)
			if kind != tc.kind || detail != tc.detail {
				t.Fatalf("classifyPush = %v %q, want %v %q", kind, detail, tc.kind, tc.detail)
			}
		})
	}
}
