package pgstore

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaultmcp/vaultmcp/internal/pgtest"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var now = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func open(t testing.TB, dbURL string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, dbURL, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bg(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// The shared suite of every teamstore.Store.
func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) teamstore.Store { return open(t, pgtest.DB(t)) })
}

// The store calls of every request, on the test server (VAULTMCP_TEST_PG or
// one started on loopback).
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) teamstore.Store { return open(b, pgtest.DB(b)) })
}

// The same through a proxy that delays each direction by at least 0.5 ms,
// as between machines: what a request pays for its round trips to the
// store (on a loaded machine the proxy's sleeps overshoot; compare with a
// ping through pgtest.WithLatency).
func BenchmarkStoreRemote(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) teamstore.Store {
		return open(b, pgtest.WithLatency(b, pgtest.DB(b), 500*time.Microsecond))
	})
}

// The same suite over two handles on one database, as two replicas.
func TestSuiteTwoHandles(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (teamstore.Store, teamstore.Store) {
		db := pgtest.DB(t)
		return open(t, db), open(t, db)
	})
}

// The suite of teamstore.Leases, over two handles on one database.
func TestLeases(t *testing.T) {
	storetest.RunLeases(t, func(t *testing.T) (storetest.LeaseStore, storetest.LeaseStore) {
		db := pgtest.DB(t)
		return open(t, db), open(t, db)
	})
}

// Migrations are applied once: a reopened database keeps its data and its
// schema version, and every embedded migration is recorded.
func TestMigrationsAppliedOnce(t *testing.T) {
	db := pgtest.DB(t)
	ctx := bg(t)
	s := open(t, db)
	if err := s.AddProject(ctx, teamstore.Project{ID: "p1", Name: "one", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != len(ms) || v < 2 {
		t.Fatalf("schema version %d (%v), want %d", v, err, len(ms))
	}
	s.Close()
	s = open(t, db)
	defer s.Close()
	var rows int
	if err := s.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&rows); err != nil || rows != len(ms) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", rows, err, len(ms))
	}
	if _, err := s.Project(ctx, "one"); err != nil {
		t.Errorf("the project did not survive a reopen: %v", err)
	}
}

// Replicas migrating one new database at the same moment: every one
// succeeds, and each migration is applied by exactly one of them.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	db := pgtest.DB(t)
	ctx := bg(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	const replicas = 6
	pools := make([]*pgxpool.Pool, replicas)
	for i := range pools {
		if pools[i], err = pgxpool.New(ctx, db); err != nil {
			t.Fatal(err)
		}
		defer pools[i].Close()
		if err := pools[i].Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	applied := make([]int, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	for i := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			applied[i], errs[i] = migrate(ctx, pools[i], ms, now)
		}()
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range pools {
		if errs[i] != nil {
			t.Errorf("replica %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	if total != len(ms) {
		t.Errorf("%d migrations applied in all, want %d (once each): %v", total, len(ms), applied)
	}
}

// A replica starting while another migrates waits on the advisory lock (it
// is seen waiting in pg_locks) and goes on once the lock is free.
func TestOpenWaitsForTheMigrationLock(t *testing.T) {
	db := pgtest.DB(t)
	ctx := bg(t)
	holder, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		s, err := Open(ctx, db, now)
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("Open finished while the migration lock was held: %v", err)
		case <-ctx.Done():
			t.Fatal("Open was never seen waiting for the lock")
		case <-time.After(10 * time.Millisecond):
		}
		// objid is the low 32 bits of a single bigint key.
		err := holder.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
			AND objid = ($1::bigint & 4294967295)::oid)`, migrationLock).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Open after the lock was freed: %v", err)
	}
}

// A database written by a newer vaultmcp (a higher schema version) is
// refused, not modified.
func TestNewerSchemaRefused(t *testing.T) {
	db := pgtest.DB(t)
	ctx := bg(t)
	s := open(t, db)
	if _, err := s.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', now())`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(ctx, db, now)
	if err == nil || !strings.Contains(err.Error(), "schema version 999") {
		t.Fatalf("Open of a newer database: %v", err)
	}
}

// A migration that fails leaves the schema as it was: the migrations
// before it in the same run are undone too, and nothing is recorded.
func TestFailedMigrationChangesNothing(t *testing.T) {
	db := pgtest.DB(t)
	ctx := bg(t)
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ms := []teamstore.Migration{
		{Version: 1, Name: "good", SQL: `CREATE TABLE good (x int); INSERT INTO good VALUES (1);`},
		{Version: 2, Name: "bad", SQL: `CREATE TABLE bad (x int); SELECT no_such_function();`},
	}
	_, err = migrate(ctx, pool, ms, now)
	if err == nil || !strings.Contains(err.Error(), "migration 0002_bad") {
		t.Fatalf("migrate with a failing migration: %v", err)
	}
	var tables []string
	rows, _ := pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
	tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) != 0 {
		t.Errorf("tables left by a failed migration: %v (%v)", tables, err)
	}
}

// The audit log refuses updates, deletes and truncation at the database
// itself.
func TestAuditAppendOnly(t *testing.T) {
	s := open(t, pgtest.DB(t))
	defer s.Close()
	ctx := bg(t)
	if err := s.AppendAudit(ctx, teamstore.AuditEntry{At: now, Operation: "create", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE audit SET result = 'forged'`, `DELETE FROM audit`, `TRUNCATE audit`} {
		if _, err := s.Pool().Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refused", q, err)
		}
	}
	rows, err := s.Audit(ctx, teamstore.AuditQuery{})
	if err != nil || len(rows) != 1 || rows[0].Result != "ok" {
		t.Errorf("audit after the attempts: %+v (%v)", rows, err)
	}
}

// A listener whose connection is killed connects again, says it may have
// missed notes, and then delivers the notes sent after.
func TestListenerReconnects(t *testing.T) {
	db := pgtest.DB(t)
	a, b := open(t, db), open(t, db)
	defer a.Close()
	defer b.Close()
	ctx := bg(t)
	notes, err := a.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var killed int
	if err := b.Pool().QueryRow(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN `+versionChannel+`'`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listening session(s) (%v), want 1", killed, err)
	}
	next := func() teamstore.VersionNote {
		t.Helper()
		select {
		case n, ok := <-notes:
			if !ok {
				t.Fatal("the listener closed its channel")
			}
			return n
		case <-ctx.Done():
			t.Fatal("no note came")
		}
		return teamstore.VersionNote{}
	}
	if n := next(); !n.Missed {
		t.Fatalf("first note after the kill = %+v, want Missed", n)
	}
	want := teamstore.VersionNote{Project: "p", Version: "c9", From: "r2"}
	if err := b.Notify(ctx, want); err != nil {
		t.Fatal(err)
	}
	if n := next(); n != want {
		t.Errorf("note after the reconnection = %+v, want %+v", n, want)
	}
}

// Closing the store ends its listeners.
func TestCloseEndsListeners(t *testing.T) {
	s := open(t, pgtest.DB(t))
	notes, err := s.Listen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, ok := <-notes; ok {
		t.Error("a note came after Close")
	}
}

// A note too large for PostgreSQL is refused before it is sent, naming the
// limit.
func TestNotifyTooLarge(t *testing.T) {
	s := open(t, pgtest.DB(t))
	defer s.Close()
	err := s.Notify(bg(t), teamstore.VersionNote{Project: "p", Version: strings.Repeat("x", 8000)})
	if err == nil || !strings.Contains(err.Error(), "7999") {
		t.Errorf("Notify of 8000 bytes: %v", err)
	}
}

// Open refuses what it cannot use with the URL in the message, never its
// password.
func TestOpenErrors(t *testing.T) {
	ctx := bg(t)
	for _, u := range []string{
		"postgres://vault:s3cret@127.0.0.1:1/db?connect_timeout=5",
		"postgres://vault@127.0.0.1:1/db?password=s3cret&connect_timeout=5",
		"postgres://vault:s3cret@127.0.0.1:5432/db?pool_max_conns=many",
	} {
		_, err := Open(ctx, u, now)
		if err == nil {
			t.Errorf("Open(%s) succeeded", u)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("Open(%s): %v, want the host and no password", u, err)
		}
	}
}

// Redact hides the password of a URL (user info or query) and of a
// key=value string, and keeps the rest.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://vault:s3cret@db:5432/team?sslmode=require": "postgres://vault:xxxxx@db:5432/team?sslmode=require",
		"postgresql://vault@db/team?password=s3cret":           "postgresql://vault@db/team?password=xxxxx",
		"postgres://db/team":                                   "postgres://db/team",
		"mysql://vault:s3cret@db/x":                            "mysql://vault:xxxxx@db/x",
		"host=db user=vault password=s3cret dbname=team":       "host=db user=vault password=xxxxx dbname=team",
		"host=db password = 's3 cr\\'et' dbname=team":          "host=db password = xxxxx dbname=team",
		// URLs net/url cannot read (a bad escape, a broken host): the
		// password is hidden all the same.
		"postgres://vault:s3c%zzret@db:5432/team":          "postgres://vault:xxxxx@db:5432/team",
		"postgres://vault:s3cret@[::1/team":                "postgres://vault:xxxxx@[::1/team",
		"postgres://vault:s3c%zz@ret@db/team":              "postgres://vault:xxxxx@db/team",
		"postgres://vault@[::1/team?password=s3cret&x=%zz": "postgres://vault@[::1/team?password=xxxxx",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// Unique violations are told apart by SQLSTATE, not by message text.
func TestPgCode(t *testing.T) {
	s := open(t, pgtest.DB(t))
	defer s.Close()
	_, err := s.Pool().Exec(bg(t), `INSERT INTO projects (id, name, created_at) VALUES ('a', 'x', now()), ('b', 'x', now())`)
	if pgCode(err) != codeUnique {
		t.Errorf("pgCode(%v) = %q", err, pgCode(err))
	}
	if pgCode(errors.New("duplicate key value violates unique constraint")) != "" {
		t.Error("pgCode read message text")
	}
}
