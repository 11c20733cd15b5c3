package teamserver

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// A backup that fails half-way (the second vault cannot be read, after the
// database and the first vault are copied) leaves neither its folder nor
// the one it was made in; a backup into an empty folder replaces it.
func TestBackupCutShortLeavesNothing(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	parent := t.TempDir()
	dest := filepath.Join(parent, "backup")
	other := e.vaultDir(e.other)
	if err := os.Rename(other, other+".aside"); err != nil {
		t.Fatal(err)
	}
	_, err := e.data.Backup(ctx, dest)
	if err == nil || !strings.Contains(err.Error(), "project other") {
		t.Fatalf("backup with a vault missing: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a backup cut short left %v", entries)
	}
	if err := os.Rename(other+".aside", other); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := e.data.Backup(ctx, dest)
	if err != nil || len(rep.Vaults) != 2 {
		t.Fatalf("backup into an empty folder: %+v %v", rep, err)
	}
	for _, p := range []string{"team.db", "vaults/" + e.ex.ID + "/.git", "vaults/" + e.other.ID + "/.git"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("the backup has no %s: %v", p, err)
		}
	}
	if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the backup's folder: %v %v, want mode 0700", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("beside the backup: %v", entries)
	}
}

// A backup is of one moment: while it copies the database every vault is
// held (a write waits), and a write committed once the vaults are let go,
// before they are cloned, is in neither the copied database nor the
// copied vault. A retry of that write against a server started on the
// backup applies it once (with the vault cloned at its branch's end, the
// write was in the backup's vault without its idempotency record, and the
// retry applied it a second time).
func TestBackupIsOfOneMoment(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	dest := filepath.Join(t.TempDir(), "backup")
	const key, path = "during-the-backup", "during.md"
	var during answer
	var heldSeen bool
	e.data.backupStep = func(step string) {
		switch step {
		case "held":
			heldSeen = true
			for _, p := range []teamstore.Project{e.ex, e.other} {
				lock := flock.New(vault.WriteLockFile(filepath.Join(e.vaultDir(p), ".git")))
				if ok, err := lock.TryLock(); err != nil || ok {
					lock.Unlock()
					t.Errorf("project %s: its write lock was free while the database was copied (%v)", p.Name, err)
				}
			}
		case "let go":
			during = e.create(e.rw, "ex", path, "# During\n\nwritten while the backup ran\n", "Idempotency-Key", key)
		}
	}
	if _, err := e.data.Backup(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if !heldSeen {
		t.Fatal("the backup never reached its held step")
	}
	wantStatus(t, "a write while the backup ran", during, 201, "")
	if _, err := os.Stat(filepath.Join(dest, "vaults", e.ex.ID, path)); !os.IsNotExist(err) {
		t.Errorf("the write made after the database was copied is in the backup's vault: %v", err)
	}
	if st, err := execGit(filepath.Join(dest, "vaults", e.ex.ID), "status", "--porcelain"); err != nil || st != "" {
		t.Errorf("the backup's vault is not clean: %q %v", st, err)
	}
	e.stop()

	restored, err := OpenData(ctx, dest, e.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	srv, err := New(ctx, Config{Data: restored, Now: e.clock.Now, NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	e.http = httptest.NewServer(srv.Handler()) // closed by the env's cleanup
	retry := e.create(e.rw, "ex", path, "# During\n\nwritten while the backup ran\n", "Idempotency-Key", key)
	wantStatus(t, "the retry against the restored server", retry, 201, "")
	log, err := execGit(filepath.Join(dest, "vaults", e.ex.ID), "log", "--format=%s", "--", path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(log), "\n"); len(lines) != 1 || lines[0] == "" {
		t.Errorf("the restored vault's commits of %s: %q, want one", path, log)
	}
	again := e.create(e.rw, "ex", path, "# During\n\nwritten while the backup ran\n", "Idempotency-Key", key)
	if again.status != 201 || string(again.body) != string(retry.body) {
		t.Errorf("a second retry: %d %s, want the stored answer %s", again.status, again.body, retry.body)
	}
}

// A backup waits for a write holding a vault (here the vault's lock taken
// by the test): given up by its context, it leaves nothing behind and lets
// go of the vaults it held.
func TestBackupWaitsForAHeldVault(t *testing.T) {
	e := newEnv(t, envOpts{})
	parent := t.TempDir()
	held := e.ex
	if e.other.ID < e.ex.ID {
		held = e.other // the second in the backup's order: the first is held meanwhile
	}
	lock := flock.New(vault.WriteLockFile(filepath.Join(e.vaultDir(held), ".git")))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := e.data.Backup(ctx, filepath.Join(parent, "backup"))
	if err == nil || !strings.Contains(err.Error(), "project "+held.Name+": waiting for its writes") {
		t.Fatalf("backup of a held vault: %v", err)
	}
	lock.Unlock()
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a backup given up left %v", entries)
	}
	wantStatus(t, "a write once the backup gave up", e.create(e.rw, "ex", "after.md", "# After\n"), 201, "")
	wantStatus(t, "a write once the backup gave up", e.create(e.rw, "other", "after.md", "# After\n"), 201, "")
}

// A project added while a backup holds the vaults (so its own vault is not
// held) makes the backup copy the database again with it held.
func TestBackupOfAProjectAddedMeanwhile(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	helds := 0
	e.data.backupStep = func(step string) {
		if step != "held" {
			return
		}
		if helds++; helds == 1 {
			if _, _, err := e.data.AddProject(ctx, "late", ""); err != nil {
				t.Error(err)
			}
		}
	}
	rep, err := e.data.Backup(ctx, filepath.Join(t.TempDir(), "backup"))
	if err != nil {
		t.Fatal(err)
	}
	if helds != 2 || len(rep.Vaults) != 3 {
		t.Errorf("the database copied %d times, vaults %v; want twice and 3 vaults", helds, rep.Vaults)
	}
}
