package sqlitestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/storetest"
)

var now = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func open(t testing.TB, file string) *Store {
	t.Helper()
	s, err := Open(context.Background(), file, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The shared suite of every teamstore.Store.
func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) teamstore.Store {
		return open(t, filepath.Join(t.TempDir(), "team.db"))
	})
}

// The store calls of every request, on a file in a temporary folder.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) teamstore.Store { return open(b, filepath.Join(b.TempDir(), "team.db")) })
}

// The same suite over two handles on one file, as the server and a
// management command.
func TestSuiteTwoHandles(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (teamstore.Store, teamstore.Store) {
		file := filepath.Join(t.TempDir(), "team.db")
		return open(t, file), open(t, file)
	})
}

// Migrations are applied once: a reopened database keeps its data and its
// schema version, and every embedded migration is recorded.
func TestMigrationsAppliedOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "team.db")
	s := open(t, file)
	ctx := context.Background()
	if err := s.AddProject(ctx, teamstore.Project{ID: "p1", Name: "one", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != len(ms) || v < 1 {
		t.Fatalf("schema version %d (%v), want %d", v, err, len(ms))
	}
	s.Close()
	s = open(t, file)
	defer s.Close()
	var rows int
	if err := s.DB().QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&rows); err != nil || rows != len(ms) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", rows, err, len(ms))
	}
	if _, err := s.Project(ctx, "one"); err != nil {
		t.Errorf("the project did not survive a reopen: %v", err)
	}
}

// A database written by a newer vaultmcp (a higher schema version) is
// refused, not modified.
func TestNewerSchemaRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "team.db")
	s := open(t, file)
	if _, err := s.DB().Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(context.Background(), file, now)
	if err == nil || !strings.Contains(err.Error(), "schema version 999") {
		t.Fatalf("Open of a newer database: %v", err)
	}
}

// The database runs in WAL mode with foreign keys on.
func TestPragmas(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "team.db"))
	defer s.Close()
	var mode string
	var fk int
	if err := s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v)", mode, err)
	}
	if err := s.DB().QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d (%v)", fk, err)
	}
}

// The audit log refuses updates and deletes at the database itself.
func TestAuditAppendOnly(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "team.db"))
	defer s.Close()
	ctx := context.Background()
	if err := s.AppendAudit(ctx, teamstore.AuditEntry{At: now, Operation: "create", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE audit SET result = 'forged'`, `DELETE FROM audit`} {
		if _, err := s.DB().Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refused", q, err)
		}
	}
	rows, err := s.Audit(ctx, teamstore.AuditQuery{})
	if err != nil || len(rows) != 1 || rows[0].Result != "ok" {
		t.Errorf("audit after the attempts: %+v (%v)", rows, err)
	}
}

// Two handles on one file (the server and a management command) write
// concurrently without losing anything: the busy timeout makes them wait.
func TestTwoHandlesShareTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "team.db")
	a, b := open(t, file), open(t, file)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	if err := a.AddProject(ctx, teamstore.Project{ID: "p", Name: "p", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i, s := range []*Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				f, err := teamstore.EnsureFile(ctx, s, "p", filepath.Join("d", string(rune('a'+i)), string(rune('a'+j%26))+".md"), now)
				if err != nil {
					errs <- err
					return
				}
				err = s.Record(ctx, teamstore.Record{Project: "p", At: now, Versions: []teamstore.Version{{FileID: f.ID, Path: f.Path, Hash: "h", VersionID: "v", Message: "m"}},
					Audit: &teamstore.AuditEntry{At: now, Project: "p", Operation: "write", Result: "ok"}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rows, err := a.Audit(ctx, teamstore.AuditQuery{Limit: 1000})
	if err != nil || len(rows) != 100 {
		t.Errorf("audit rows = %d (%v), want 100", len(rows), err)
	}
}

// Constraint failures are told apart by the driver's result code.
func TestIsUnique(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "team.db"))
	defer s.Close()
	_, err := s.DB().Exec(`INSERT INTO projects (id, name, created_at) VALUES ('a', 'x', 0), ('b', 'x', 0)`)
	if !isUnique(err) {
		t.Errorf("isUnique(%v) = false", err)
	}
	if isUnique(errors.New("UNIQUE constraint failed")) {
		t.Error("isUnique matched message text")
	}
}

// The database holds what the vaults hold (stored answers with diffs, note
// paths, the audit log): a new one, and its write-ahead log, are readable by
// their owner only, whatever the folder's mode and the umask.
func TestNewDatabaseIsPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "team.db")
	s := open(t, file)
	defer s.Close()
	if err := s.AddProject(context.Background(), teamstore.Project{ID: "p1", Name: "one", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, file + "-wal", file + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m&0o077 != 0 {
			t.Errorf("%s: mode %v, want no access for group and others", filepath.Base(f), m)
		}
	}
}
