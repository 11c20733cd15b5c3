//go:build unix

package teamserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
)

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
