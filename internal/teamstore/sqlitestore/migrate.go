package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations lists the embedded migrations in order.
func migrations() ([]teamstore.Migration, error) {
	return teamstore.ReadMigrations(migrationFiles, "migrations")
}

// migrate brings the schema up to date in one transaction: it creates the
// version table, applies every migration newer than the recorded version and
// records each. A database newer than this program is refused.
func migrate(ctx context.Context, db *sql.DB, now time.Time) (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return 0, fmt.Errorf("creating schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return 0, err
	}
	if current > len(ms) {
		return 0, fmt.Errorf("the database has schema version %d, newer than this vaultmcp knows (%d): use a newer vaultmcp", current, len(ms))
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return 0, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, m.Version, m.Name, now.UnixMicro()); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return len(ms), nil
}
