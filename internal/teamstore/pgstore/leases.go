package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

const leaseColumns = `project_id, owner, advertise, epoch, acquired_at, renewed_at, expires_at`

func scanLease(r pgx.Row) (teamstore.Lease, error) {
	var l teamstore.Lease
	err := r.Scan(&l.Project, &l.Owner, &l.Advertise, &l.Epoch, &l.AcquiredAt, &l.RenewedAt, &l.ExpiresAt)
	l.AcquiredAt, l.RenewedAt, l.ExpiresAt = l.AcquiredAt.UTC(), l.RenewedAt.UTC(), l.ExpiresAt.UTC()
	return l, err
}

func checkTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("lease ttl %v: must be positive", ttl)
	}
	return nil
}

// AcquireLease is one statement: the row is inserted, or updated when it is
// owner's or expired; a row held live by another owner is left alone and
// read back. The epoch is drawn from a sequence, so a new holder's epoch is
// larger than any before; owner keeping the lease keeps its epoch.
func (s *Store) AcquireLease(ctx context.Context, project, owner, advertise string, at time.Time, ttl time.Duration) (teamstore.Lease, bool, error) {
	if err := checkTTL(ttl); err != nil {
		return teamstore.Lease{}, false, err
	}
	if owner == "" {
		return teamstore.Lease{}, false, errors.New("lease owner: empty")
	}
	for attempt := 0; ; attempt++ {
		l, err := scanLease(s.pool.QueryRow(ctx, `INSERT INTO vault_leases AS l (`+leaseColumns+`)
			VALUES ($1, $2, $3, nextval('vault_lease_epoch'), $4, $4, $5)
			ON CONFLICT (project_id) DO UPDATE SET
				advertise   = EXCLUDED.advertise,
				epoch       = CASE WHEN l.owner = EXCLUDED.owner THEN l.epoch ELSE EXCLUDED.epoch END,
				acquired_at = CASE WHEN l.owner = EXCLUDED.owner THEN l.acquired_at ELSE EXCLUDED.acquired_at END,
				owner       = EXCLUDED.owner,
				renewed_at  = EXCLUDED.renewed_at,
				expires_at  = GREATEST(EXCLUDED.expires_at, CASE WHEN l.owner = EXCLUDED.owner THEN l.expires_at END)
			WHERE l.owner = EXCLUDED.owner OR l.expires_at <= EXCLUDED.acquired_at
			RETURNING `+leaseColumns, project, owner, advertise, at, at.Add(ttl)))
		if err == nil {
			return l, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			if pgCode(err) == codeForeignKey {
				return l, false, notFound("project %q", project)
			}
			return l, false, err
		}
		// Held by another owner: say who.
		l, err = s.Lease(ctx, project)
		if errors.Is(err, teamstore.ErrNotFound) && attempt < 10 {
			continue // released meanwhile: try again
		}
		return l, false, err
	}
}

func (s *Store) RenewLease(ctx context.Context, project, owner string, at time.Time, ttl time.Duration) (teamstore.Lease, error) {
	if err := checkTTL(ttl); err != nil {
		return teamstore.Lease{}, err
	}
	l, err := scanLease(s.pool.QueryRow(ctx, `UPDATE vault_leases SET renewed_at = $3, expires_at = GREATEST(expires_at, $4)
		WHERE project_id = $1 AND owner = $2 AND expires_at > $3 RETURNING `+leaseColumns, project, owner, at, at.Add(ttl)))
	if errors.Is(err, pgx.ErrNoRows) {
		return l, fmt.Errorf("lease of project %q for %q at %s: %w", project, owner, at.UTC().Format(time.RFC3339Nano), teamstore.ErrLeaseLost)
	}
	return l, err
}

func (s *Store) ReleaseLease(ctx context.Context, project, owner string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM vault_leases WHERE project_id = $1 AND owner = $2`, project, owner)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("lease of project %q for %q: %w", project, owner, teamstore.ErrLeaseLost)
	}
	return nil
}

func (s *Store) Lease(ctx context.Context, project string) (teamstore.Lease, error) {
	l, err := scanLease(s.pool.QueryRow(ctx, `SELECT `+leaseColumns+` FROM vault_leases WHERE project_id = $1`, project))
	if errors.Is(err, pgx.ErrNoRows) {
		return l, notFound("lease of project %q", project)
	}
	return l, err
}

func (s *Store) Leases(ctx context.Context) ([]teamstore.Lease, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+leaseColumns+` FROM vault_leases ORDER BY project_id`)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.Lease, error) { return scanLease(r) })
}

// --- replicas

func (s *Store) Heartbeat(ctx context.Context, replica, advertise string, at time.Time, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if replica == "" {
		return errors.New("replica id: empty")
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO replicas AS r (id, advertise, started_at, seen_at, expires_at) VALUES ($1, $2, $3, $3, $4)
		ON CONFLICT (id) DO UPDATE SET advertise = EXCLUDED.advertise, seen_at = GREATEST(r.seen_at, EXCLUDED.seen_at),
			expires_at = GREATEST(r.expires_at, EXCLUDED.expires_at)`, replica, advertise, at, at.Add(ttl))
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `DELETE FROM replicas WHERE expires_at < $1`, at.Add(-teamstore.ReplicaRowsKept))
	return err
}

func (s *Store) Replicas(ctx context.Context, at time.Time) ([]teamstore.Replica, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, advertise, started_at, seen_at, expires_at FROM replicas WHERE expires_at > $1 ORDER BY id`, at)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.Replica, error) {
		var p teamstore.Replica
		err := r.Scan(&p.ID, &p.Advertise, &p.StartedAt, &p.SeenAt, &p.ExpiresAt)
		p.StartedAt, p.SeenAt, p.ExpiresAt = p.StartedAt.UTC(), p.SeenAt.UTC(), p.ExpiresAt.UTC()
		return p, err
	})
}

func (s *Store) Leave(ctx context.Context, replica string) (int, error) {
	var released int
	err := s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM vault_leases WHERE owner = $1`, replica)
		if err != nil {
			return err
		}
		released = int(tag.RowsAffected())
		_, err = tx.Exec(ctx, `DELETE FROM replicas WHERE id = $1`, replica)
		return err
	})
	return released, err
}
