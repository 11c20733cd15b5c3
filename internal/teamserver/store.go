package teamserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/pgstore"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/sqlitestore"
)

// OpenStore opens the metadata store db names: "" for the SQLite file
// sqliteFile (in the data directory), a postgres:// or postgresql:// URL for
// PostgreSQL. Either is migrated at open.
func OpenStore(ctx context.Context, db, sqliteFile string, now time.Time) (teamstore.Store, error) {
	if db == "" {
		return sqlitestore.Open(ctx, sqliteFile, now)
	}
	scheme, _, _ := strings.Cut(db, "://")
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return pgstore.Open(ctx, db, now)
	}
	return nil, fmt.Errorf("--db %s: not a postgres:// URL (leave --db out for SQLite in the data directory)", pgstore.Redact(db))
}
