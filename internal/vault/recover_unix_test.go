//go:build unix

package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
)

// TestRecoverClearsCrashedGitLocks: git lock files that a vaultmcp killed
// while committing left (listed in its ledger, see gitx) are removed when
// the vault is next opened, so commits work again; a lock the ledger does
// not list is left to its owner.
func TestRecoverClearsCrashedGitLocks(t *testing.T) {
	dir := writeVault(t, testVault)
	gitInit(t, dir)
	gitDir := filepath.Join(dir, ".git")
	lock := filepath.Join(gitDir, "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(lock, &st); err != nil {
		t.Fatal(err)
	}
	// The ledger of a process (not this one) that died holding the lock.
	ledger := filepath.Join(gitDir, gitx.LockLedgerPrefix+"999999999")
	if err := os.WriteFile(ledger, []byte(fmt.Sprintf("? 0 %s\n+ %d %s\n", lock, st.Ino, lock)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.WriteNote(context.Background(), api.WriteRequest{Path: "02-wiki/go/after-crash.md", Content: "# After\n\nzanzibar\n"})
	if err != nil || !res.Committed {
		t.Fatalf("write after the crash: %+v %v", res, err)
	}
	for _, p := range []string{lock, ledger} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
}
