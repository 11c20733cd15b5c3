package teamserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/pgtest"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/pgstore"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/sqlitestore"
)

// The store is chosen by --db: none is SQLite in the data directory, a
// postgres:// or postgresql:// URL is PostgreSQL (nothing in the data
// directory), anything else is refused naming --db without the password.
func TestOpenStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	d, err := OpenDataDB(ctx, dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Store.(*sqlitestore.Store); !ok {
		t.Errorf("no --db: store %T, want SQLite", d.Store)
	}
	d.Close()
	if _, err := os.Stat(filepath.Join(dir, dbFile)); err != nil {
		t.Errorf("no --db: %v", err)
	}

	db := pgtest.DB(t)
	for _, u := range []string{db, "postgresql" + strings.TrimPrefix(db, "postgres")} {
		dir := t.TempDir()
		d, err := OpenDataDB(ctx, dir, u, nil)
		if err != nil {
			t.Fatalf("--db %s: %v", u, err)
		}
		if _, ok := d.Store.(*pgstore.Store); !ok {
			t.Errorf("--db %s: store %T, want PostgreSQL", u, d.Store)
		}
		d.Close()
		if _, err := os.Stat(filepath.Join(dir, dbFile)); !os.IsNotExist(err) {
			t.Errorf("--db %s: a SQLite file in the data directory (%v)", u, err)
		}
	}

	for _, u := range []string{"mysql://vault:s3cret@db/x", "team.db", "sqlite:///x/team.db"} {
		_, err := OpenDataDB(ctx, t.TempDir(), u, nil)
		if err == nil || !strings.Contains(err.Error(), "--db") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("--db %s: %v, want refused naming --db, without the password", u, err)
		}
	}
}
