package teamserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// A database that stops answering (its connections kept open) does not
// stop a replica's renewals: a round gives up within its bound, a lease
// that still has life is kept, one that runs out meanwhile is let go
// (the vault is another replica's to serve), and once the database answers
// again the replica renews and serves as before.
func TestRenewalsOutliveAHangingDatabase(t *testing.T) {
	c := newCluster(t, 1)
	px, db := newCutProxy(t, c.db)
	c.roundWait = 300 * time.Millisecond
	b := c.startWith("", db)
	held := func() bool {
		b.srv.rep.mu.Lock()
		defer b.srv.rep.mu.Unlock()
		_, ok := b.srv.rep.held[c.p.ID]
		return ok
	}
	round := func(what string) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			b.srv.rep.renew(b.srv.rep.bg)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: a round of renewals waits for the hanging database", what)
		}
	}
	wantStatus(t, "a request that takes the vault's lease", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	if !held() {
		t.Fatal("the replica that served the request holds no lease")
	}

	px.stall()
	stalled := true
	defer func() {
		if stalled { // a failure below: let the cleanup's calls through
			px.resume()
		}
	}()
	round("with the lease's life ahead")
	if !held() {
		t.Error("a lease with most of its life ahead was let go at the first failed round")
	}
	c.clock.Advance(testTTL)
	round("with the lease run out")
	if held() {
		t.Error("a lease that ran out while the database hung is still held")
	}

	px.resume()
	stalled = false
	round("once the database answers")
	wantStatus(t, "a request once the database answers", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	if !held() {
		t.Error("the replica did not take the lease again")
	}
}

// A replica killed while committing leaves git's lock files in its clone,
// listed in its lock ledger. Started again on its data directory once the
// remote has moved on, it clears them before it brings the clone to the
// remote's branch (git's reset refused while index.lock stood, and the
// vault was never served again by any replica that had been killed so).
func TestReplicaRestartsAfterAKilledCommit(t *testing.T) {
	c := newCluster(t, 1)
	a := c.reps[0]
	wantStatus(t, "a search: the replica takes the vault", c.do(a, "POST", "/api/projects/team/search", []byte(`{"query":"retry"}`)), 200, "")
	a.kill()
	a.srv.Close()
	gitDir := filepath.Join(a.data.VaultDir(c.p.ID), ".git")
	lock := filepath.Join(gitDir, "index.lock")
	index, err := os.ReadFile(filepath.Join(gitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, index, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(lock)
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	ledger := filepath.Join(gitDir, gitx.LockLedgerPrefix+"999999999") // the killed process's
	if err := os.WriteFile(ledger, []byte(fmt.Sprintf("? 0 %s\n+ %d %s\n", lock, ino, lock)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The remote moves on meanwhile (another replica's write).
	work := filepath.Join(t.TempDir(), "w")
	for _, args := range [][]string{
		{"clone", "-q", c.bare, work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "elsewhere"},
		{"-C", work, "push", "-q", "origin", "HEAD"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	b := c.serve(a.data, "", "", nil)
	wantStatus(t, "a search once restarted", c.do(b, "POST", "/api/projects/team/search", []byte(`{"query":"retry"}`)), 200, "")
	for _, p := range []string{lock, ledger} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
	body, ct := multipartBody(t, "after-restart.md", "# After the restart\n")
	wantStatus(t, "a write once restarted", c.do(b, "POST", "/api/projects/team/files", body, "Content-Type", ct), 201, "")
}

// A store call that fails because the database is gone (its connections
// cut, new ones refused) is answered 503 unavailable, which clients retry,
// not 500: a key checked just before the database went away let an update
// reach its file lookup, answered "internal error" (found by restarting
// PostgreSQL under writes).
func TestStoreGoneIsUnavailable(t *testing.T) {
	c := newCluster(t, 1)
	px, db := newCutProxy(t, c.db)
	b := c.startWith("", db)
	wantStatus(t, "a request while the database answers", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	px.close()
	defer px.restore()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := b.srv.store.File(ctx, c.p.ID, teamstore.NewID())
	if err == nil || !teamstore.Unavailable(err) {
		t.Fatalf("a file lookup with the database gone: %v, want an unavailable store", err)
	}
	if resp := vaultError(err); resp.status != 503 || !strings.Contains(string(resp.body), `"code":"unavailable"`) {
		t.Errorf("its answer: %d %s", resp.status, resp.body)
	}
}
