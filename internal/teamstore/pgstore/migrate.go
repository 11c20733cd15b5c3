package pgstore

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations lists the embedded migrations in order.
func migrations() ([]teamstore.Migration, error) {
	return teamstore.ReadMigrations(migrationFiles, "migrations")
}

// migrationLock is the key of the advisory lock held while migrating
// ("vaultmcp" in ASCII). Only the migration uses a single-key advisory
// lock; the store's own locks use the two-key form, a separate key space.
const migrationLock int64 = 0x7661756c746d6370

// migrate brings the schema up to date in one transaction, under a
// transaction-level advisory lock: replicas opening the database together
// queue on the lock, the first applies what is missing, and the others find
// nothing left to do once it commits. Each newer migration is applied and
// recorded in schema_migrations; PostgreSQL's DDL is transactional, so a
// failed migration leaves the schema as it was. A database newer than this
// program is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool, ms []teamstore.Migration, now time.Time) (applied int, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("waiting for the migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at TIMESTAMPTZ NOT NULL
		)`); err != nil {
			return fmt.Errorf("creating schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return err
		}
		if current > len(ms) {
			return fmt.Errorf("the database has schema version %d, newer than this vaultmcp knows (%d): use a newer vaultmcp", current, len(ms))
		}
		for _, m := range ms[current:] {
			// No arguments: the simple protocol, which runs every
			// statement of the file.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, m.Version, m.Name, now); err != nil {
				return err
			}
			applied++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return applied, nil
}
