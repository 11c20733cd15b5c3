// Package pgstore is the teamstore.Store of a team server whose metadata
// lives in PostgreSQL (pgx v5, a pgxpool of connections), so that several
// replicas can share it; it also implements teamstore.Leases, the
// coordination of those replicas (vault leases, the replicas alive, and
// LISTEN/NOTIFY news of new versions).
//
// The schema is the numbered SQL files of migrations/, embedded in the
// binary and applied at Open in one transaction under an advisory lock, so
// replicas starting together migrate once.
//
// # How the guarantees of teamstore are kept
//
//   - Each method is one statement or one transaction at READ COMMITTED; a
//     write's bookkeeping (Record) is sent as one batch, BEGIN included, and
//     committed: two round trips whatever it holds.
//   - Writes to a project's files (EnsureFiles, Record) first take a
//     transaction-level advisory lock on the project, so they run one at a
//     time per project, as on SQLite, and version numbers are assigned
//     without a race; other projects are not held up.
//   - BeginIdem is one INSERT ... ON CONFLICT statement: of several replicas
//     racing on one (key, idempotency key), exactly one creates the record.
//   - Audit rows are inserted under a transaction-level advisory lock held
//     to the commit, so their ids increase in commit order: a reader never
//     sees a row appear below one it has already seen.
//   - Names, ids and paths compare byte by byte (COLLATE "C"), so every list
//     comes in the order the SQLite store gives, whatever the locale of the
//     database.
//   - The audit log refuses UPDATE, DELETE and TRUNCATE by triggers.
package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// Store is a teamstore.Store and teamstore.Leases in a PostgreSQL database.
type Store struct {
	pool *pgxpool.Pool
	// stop ends the listeners at Close; listeners counts them.
	stop      context.CancelFunc
	stopped   context.Context
	listeners sync.WaitGroup
}

var (
	_ teamstore.Store  = (*Store)(nil)
	_ teamstore.Leases = (*Store)(nil)
)

// Open connects to the database at dbURL (postgres://user:pass@host/db?...,
// every parameter pgx knows, pool_max_conns included) and migrates it. now
// is recorded as the time of any migration applied.
func Open(ctx context.Context, dbURL string, now time.Time) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", Redact(dbURL), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", Redact(dbURL), err)
	}
	ms, err := migrations()
	if err == nil {
		_, err = migrate(ctx, pool, ms, now)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", Redact(dbURL), err)
	}
	stopped, stop := context.WithCancel(context.Background())
	return &Store{pool: pool, stop: stop, stopped: stopped}, nil
}

// Redact returns a database URL, or a key=value connection string, without
// its password, for messages.
func Redact(dbURL string) string {
	if u, err := url.Parse(dbURL); err == nil && u.Scheme != "" && u.Opaque == "" {
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	if i := strings.Index(dbURL, "://"); i >= 0 {
		// A URL net/url cannot read (a bad escape, a broken host): what
		// lies from the first colon of its user info to its last '@' is
		// hidden (more than the password, never less).
		if at := strings.LastIndex(dbURL, "@"); at > i {
			if c := strings.Index(dbURL[i+3:at], ":"); c >= 0 {
				dbURL = dbURL[:i+3+c+1] + "xxxxx" + dbURL[at:]
			}
		}
	}
	return dsnPassword().ReplaceAllString(dbURL, "${1}xxxxx")
}

// dsnPassword is the password of a key=value connection string, quoted or
// not.
//
// (Compiled on first use: a process start does not pay for it.)
var dsnPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`) })

// SchemaVersion returns the version recorded in schema_migrations.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// Close ends the listeners and closes the connections.
func (s *Store) Close() error {
	s.stop()
	s.listeners.Wait()
	s.pool.Close()
	return nil
}

// Pool is the connection pool (tests use it to check invariants the
// interface does not expose).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Lock namespaces of the two-key advisory locks (the first key).
const (
	lockProject int32 = 1 // second key: hashtext(project id)
	lockAudit   int32 = 2 // second key: 0
)

// write runs fn in one transaction.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// lockProjectFiles serialises the transactions writing a project's files.
func lockProjectFiles(ctx context.Context, tx pgx.Tx, project string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockProject, project)
	return err
}

// nullTime is t for a nullable column: NULL when zero.
func nullTime(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

func fromNull(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// SQLSTATE codes told apart.
const (
	codeUnique     = "23505"
	codeForeignKey = "23503"
)

func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func notFound(what string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(what, args...), teamstore.ErrNotFound)
}

// --- projects

func (s *Store) RemoveProject(ctx context.Context, id string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := lockProjectFiles(ctx, tx, id); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM projects WHERE id = $1`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return notFound("project %q", id)
		}
		rows, _ := tx.Query(ctx, `SELECT k.name FROM api_keys k JOIN api_key_projects kp ON kp.key_id = k.id
			WHERE kp.project_id = $1 AND k.revoked_at IS NULL AND (SELECT COUNT(*) FROM api_key_projects o WHERE o.key_id = k.id) = 1
			ORDER BY k.name`, id)
		only, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(only) > 0 {
			return &teamstore.ScopedKeysError{Keys: only}
		}
		for _, q := range []string{
			`DELETE FROM idempotency WHERE project_id = $1`,
			`DELETE FROM versions WHERE project_id = $1`,
			`DELETE FROM files WHERE project_id = $1`,
			`DELETE FROM api_key_projects WHERE project_id = $1`,
			`DELETE FROM vault_leases WHERE project_id = $1`,
			`DELETE FROM projects WHERE id = $1`,
		} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) AddProject(ctx context.Context, p teamstore.Project) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO projects (id, name, remote, branch, created_at) VALUES ($1, $2, $3, $4, $5)`, p.ID, p.Name, p.Remote, p.Branch, p.CreatedAt)
	if pgCode(err) == codeUnique {
		return fmt.Errorf("project %q: %w", p.Name, teamstore.ErrExists)
	}
	return err
}

func (s *Store) Project(ctx context.Context, ref string) (teamstore.Project, error) {
	var p teamstore.Project
	err := s.pool.QueryRow(ctx, `SELECT id, name, remote, branch, created_at FROM projects WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`, ref).Scan(&p.ID, &p.Name, &p.Remote, &p.Branch, &p.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, notFound("project %q", ref)
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, err
}

func (s *Store) Projects(ctx context.Context) ([]teamstore.Project, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, name, remote, branch, created_at FROM projects ORDER BY name`)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.Project, error) {
		var p teamstore.Project
		err := r.Scan(&p.ID, &p.Name, &p.Remote, &p.Branch, &p.CreatedAt)
		p.CreatedAt = p.CreatedAt.UTC()
		return p, err
	})
}

// --- keys

func (s *Store) AddKey(ctx context.Context, k teamstore.Key) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, name, hash, read_only, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			k.ID, k.Name, k.Hash, k.ReadOnly, k.CreatedAt, nullTime(k.ExpiresAt))
		if pgCode(err) == codeUnique {
			return fmt.Errorf("key %q: %w", k.Name, teamstore.ErrExists)
		}
		if err != nil {
			return err
		}
		for _, p := range k.Projects {
			if _, err := tx.Exec(ctx, `INSERT INTO api_key_projects (key_id, project_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, k.ID, p); err != nil {
				return fmt.Errorf("key %q, project %q: %w", k.Name, p, err)
			}
		}
		return nil
	})
}

// keySelect reads a key with its scope (project ids in order) in one
// statement.
const keySelect = `SELECT k.id, k.name, k.hash, k.read_only, k.created_at, k.last_used_at, k.revoked_at, k.expires_at,
	COALESCE((SELECT array_agg(p.project_id ORDER BY p.project_id) FROM api_key_projects p WHERE p.key_id = k.id), '{}')
	FROM api_keys k`

func scanKey(r pgx.Row) (teamstore.Key, error) {
	var k teamstore.Key
	var used, revoked, expires pgtype.Timestamptz
	if err := r.Scan(&k.ID, &k.Name, &k.Hash, &k.ReadOnly, &k.CreatedAt, &used, &revoked, &expires, &k.Projects); err != nil {
		return k, err
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt, k.ExpiresAt = k.CreatedAt.UTC(), fromNull(used), fromNull(revoked), fromNull(expires)
	if len(k.Projects) == 0 {
		k.Projects = nil
	}
	return k, nil
}

func (s *Store) KeyByHash(ctx context.Context, hash []byte) (teamstore.Key, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, keySelect+` WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return k, notFound("key")
	}
	return k, err
}

func (s *Store) Keys(ctx context.Context) ([]teamstore.Key, error) {
	rows, _ := s.pool.Query(ctx, keySelect+` ORDER BY k.name, k.created_at`)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.Key, error) { return scanKey(r) })
}

func (s *Store) RevokeKey(ctx context.Context, name string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL`, at, name)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("active key %q", name)
	}
	return nil
}

func (s *Store) RotateKey(ctx context.Context, name string, hash []byte, expiresAt time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET hash = $1, expires_at = $2 WHERE name = $3 AND revoked_at IS NULL`, hash, nullTime(expiresAt), name)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("active key %q", name)
	}
	return nil
}

func (s *Store) TouchKey(ctx context.Context, id string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)`, at, id)
	return err
}

// --- files

const fileColumns = `project_id, id, path, created_at, updated_at, deleted_at`

func scanFile(r pgx.Row) (teamstore.File, error) {
	var f teamstore.File
	var deleted pgtype.Timestamptz
	if err := r.Scan(&f.Project, &f.ID, &f.Path, &f.CreatedAt, &f.UpdatedAt, &deleted); err != nil {
		return f, err
	}
	f.CreatedAt, f.UpdatedAt, f.DeletedAt = f.CreatedAt.UTC(), f.UpdatedAt.UTC(), fromNull(deleted)
	return f, nil
}

func (s *Store) File(ctx context.Context, project, id string) (teamstore.File, error) {
	f, err := scanFile(s.pool.QueryRow(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = $1 AND id = $2`, project, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return f, notFound("file %q", id)
	}
	return f, err
}

func (s *Store) FileByPath(ctx context.Context, project, path string) (teamstore.File, error) {
	f, err := scanFile(s.pool.QueryRow(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = $1 AND path = $2`, project, path))
	if errors.Is(err, pgx.ErrNoRows) {
		return f, notFound("file at %q", path)
	}
	return f, err
}

func (s *Store) LiveFiles(ctx context.Context, project string) ([]teamstore.File, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = $1 AND deleted_at IS NULL ORDER BY path`, project)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.File, error) { return scanFile(r) })
}

// EnsureFiles answers from one SELECT when every path is live (the common
// case: a write to existing notes). Otherwise, in one transaction holding
// the project's lock, it reads the rows at the paths, then revives the
// tombstones and inserts the new files in one batch: a few round trips
// whatever the number of paths (an import gives thousands).
func (s *Store) EnsureFiles(ctx context.Context, project string, paths []string, at time.Time) ([]teamstore.File, error) {
	if len(paths) == 0 {
		return []teamstore.File{}, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = $1 AND path = ANY($2) AND deleted_at IS NULL`, project, paths)
	live, err := filesByPath(rows)
	if err != nil {
		return nil, err
	}
	if out, ok := inOrder(live, paths); ok {
		return out, nil
	}
	var out []teamstore.File
	err = s.write(ctx, func(tx pgx.Tx) error {
		if err := lockProjectFiles(ctx, tx, project); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = $1 AND path = ANY($2)`, project, paths)
		held, err := filesByPath(rows)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		var queued []string
		for _, path := range paths {
			f, ok := held[path]
			switch {
			case ok && f.Live():
				continue
			case ok:
				b.Queue(`UPDATE files SET deleted_at = NULL, updated_at = $3 WHERE project_id = $1 AND id = $2 RETURNING `+fileColumns, project, f.ID, at)
			default:
				b.Queue(`INSERT INTO files (project_id, id, path, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) RETURNING `+fileColumns,
					project, teamstore.NewID(), path, at)
			}
			held[path] = teamstore.File{Path: path} // queued once, even when asked twice
			queued = append(queued, path)
		}
		br := tx.SendBatch(ctx, b)
		for _, path := range queued {
			f, err := scanFile(br.QueryRow())
			if err != nil {
				br.Close()
				return fmt.Errorf("file at %q: %w", path, err)
			}
			held[path] = f
		}
		if err := br.Close(); err != nil {
			return err
		}
		out, _ = inOrder(held, paths)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// filesByPath collects rows of files by their path.
func filesByPath(rows pgx.Rows) (map[string]teamstore.File, error) {
	fs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.File, error) { return scanFile(r) })
	if err != nil {
		return nil, err
	}
	m := make(map[string]teamstore.File, len(fs))
	for _, f := range fs {
		m[f.Path] = f
	}
	return m, nil
}

// inOrder lists the live files at paths, in order; false when one is not.
func inOrder(m map[string]teamstore.File, paths []string) ([]teamstore.File, bool) {
	out := make([]teamstore.File, 0, len(paths))
	for _, p := range paths {
		f, ok := m[p]
		if !ok || !f.Live() {
			return nil, false
		}
		out = append(out, f)
	}
	return out, true
}

func (s *Store) Versions(ctx context.Context, project, fileID string) ([]teamstore.Version, error) {
	rows, _ := s.pool.Query(ctx, `SELECT file_id, number, path, hash, version_id, message, created_at FROM versions WHERE project_id = $1 AND file_id = $2 ORDER BY number DESC`, project, fileID)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.Version, error) {
		var v teamstore.Version
		err := r.Scan(&v.FileID, &v.Number, &v.Path, &v.Hash, &v.VersionID, &v.Message, &v.CreatedAt)
		v.CreatedAt = v.CreatedAt.UTC()
		return v, err
	})
}

// --- the bookkeeping of a write

// step is one statement of a batch and the check of its result.
type step struct {
	sql   string
	args  []any
	check func(pgconn.CommandTag, error) error // nil: the error alone
}

// batchTx runs the steps in one transaction: BEGIN and every statement go
// in one round trip, the results are checked in order (the first failure
// rolls it all back), and COMMIT is the second round trip.
func (s *Store) batchTx(ctx context.Context, steps []step) error {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	for _, st := range steps {
		b.Queue(st.sql, st.args...)
	}
	br := s.pool.SendBatch(ctx, b)
	tx := br.Tx()
	if tx == nil { // the batch was not sent (no connection)
		err := br.Close()
		if err == nil {
			err = errors.New("the transaction did not begin")
		}
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := br.Exec(); err != nil { // BEGIN
		br.Close()
		return err
	}
	for _, st := range steps {
		tag, err := br.Exec()
		if st.check != nil {
			err = st.check(tag, err)
		}
		if err != nil {
			br.Close()
			return err
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Record is one batch: the project's lock, the moves, deletes and versions,
// the answer and the audit row (under the audit lock, last, so that lock is
// held for the shortest time), then the commit.
func (s *Store) Record(ctx context.Context, r teamstore.Record) error {
	var steps []step
	if len(r.Moves)+len(r.Deletes)+len(r.Versions) > 0 {
		steps = append(steps, step{sql: `SELECT pg_advisory_xact_lock($1, hashtext($2))`, args: []any{lockProject, r.Project}})
	}
	for _, m := range r.Moves {
		// Whatever row held the target (a tombstone) gives way.
		steps = append(steps,
			step{sql: `DELETE FROM files WHERE project_id = $1 AND path = $2 AND id <> $3`, args: []any{r.Project, m.To, m.FileID}},
			step{sql: `UPDATE files SET path = $1, updated_at = $2, deleted_at = NULL WHERE project_id = $3 AND id = $4`, args: []any{m.To, r.At, r.Project, m.FileID},
				check: func(tag pgconn.CommandTag, err error) error {
					if err == nil && tag.RowsAffected() == 0 {
						return notFound("file %q", m.FileID)
					}
					return err
				}})
	}
	for _, id := range r.Deletes {
		steps = append(steps, step{sql: `UPDATE files SET deleted_at = $1, updated_at = $1 WHERE project_id = $2 AND id = $3 AND deleted_at IS NULL`, args: []any{r.At, r.Project, id}})
	}
	for _, v := range r.Versions {
		created := r.At
		if !v.CreatedAt.IsZero() {
			created = v.CreatedAt
		}
		steps = append(steps,
			step{sql: `INSERT INTO versions (project_id, file_id, number, path, hash, version_id, message, created_at)
				SELECT $1, $2, COALESCE(MAX(number), 0) + 1, $3, $4, $5, $6, $7 FROM versions WHERE project_id = $1 AND file_id = $2`,
				args: []any{r.Project, v.FileID, v.Path, v.Hash, v.VersionID, v.Message, created},
				check: func(_ pgconn.CommandTag, err error) error {
					if err != nil {
						return fmt.Errorf("version of file %q: %w", v.FileID, err)
					}
					return nil
				}},
			step{sql: `UPDATE files SET updated_at = $1 WHERE project_id = $2 AND id = $3`, args: []any{created, r.Project, v.FileID}})
	}
	if a := r.Answer; a != nil {
		header, err := json.Marshal(a.Response.Header)
		if err != nil {
			return err
		}
		steps = append(steps, step{sql: `UPDATE idempotency SET state = 'done', status = $1, header = $2, body = $3
				WHERE key_id = $4 AND idem_key = $5 AND token = $6 AND state = 'running'`,
			args: []any{a.Response.Status, string(header), bodyBytes(a.Response.Body), a.KeyID, a.Key, a.Token},
			check: func(tag pgconn.CommandTag, err error) error {
				if err == nil && tag.RowsAffected() == 0 {
					return fmt.Errorf("idempotency record %q with token %q: %w: %w", a.Key, a.Token, teamstore.ErrNotRunning, teamstore.ErrNotFound)
				}
				return err
			}})
	}
	if r.Audit != nil {
		audit, err := auditSteps(*r.Audit)
		if err != nil {
			return err
		}
		steps = append(steps, audit...)
	}
	if len(steps) == 0 {
		return nil
	}
	return s.batchTx(ctx, steps)
}

// bodyBytes keeps an empty body distinct from none: an answered record
// always has a body.
func bodyBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// --- idempotency

const idemColumns = `key_id, idem_key, fingerprint, project_id, operation, target, token, state, owner, created_at, expires_at, status, header, body`

func scanIdem(r pgx.Row) (teamstore.Idem, error) {
	var rec teamstore.Idem
	var status pgtype.Int4
	var header pgtype.Text
	var body []byte
	var state string
	if err := r.Scan(&rec.KeyID, &rec.Key, &rec.Fingerprint, &rec.Project, &rec.Operation, &rec.Target, &rec.Token, &state, &rec.Owner, &rec.CreatedAt, &rec.ExpiresAt, &status, &header, &body); err != nil {
		return rec, err
	}
	rec.State = teamstore.IdemState(state)
	rec.CreatedAt, rec.ExpiresAt = rec.CreatedAt.UTC(), rec.ExpiresAt.UTC()
	if rec.State == teamstore.IdemDone {
		resp := &teamstore.Response{Status: int(status.Int32), Body: body}
		if header.Valid && header.String != "" {
			if err := json.Unmarshal([]byte(header.String), &resp.Header); err != nil {
				return rec, fmt.Errorf("idempotency record %q: stored header: %w", rec.Key, err)
			}
		}
		if resp.Body == nil {
			resp.Body = []byte{}
		}
		rec.Response = resp
	}
	return rec, nil
}

func (s *Store) BeginIdem(ctx context.Context, rec teamstore.Idem) (teamstore.Idem, bool, error) {
	for attempt := 0; ; attempt++ {
		// Inserted, or an expired answered record replaced: rec is held.
		held, err := scanIdem(s.pool.QueryRow(ctx, `INSERT INTO idempotency AS i (key_id, idem_key, fingerprint, project_id, operation, target, token, state, owner, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8, $9, $10)
			ON CONFLICT (key_id, idem_key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, project_id = EXCLUDED.project_id, operation = EXCLUDED.operation,
				target = EXCLUDED.target, token = EXCLUDED.token, state = 'running', owner = EXCLUDED.owner, created_at = EXCLUDED.created_at,
				expires_at = EXCLUDED.expires_at, status = NULL, header = NULL, body = NULL
			WHERE i.expires_at <= EXCLUDED.created_at AND i.state = 'done'
			RETURNING `+idemColumns,
			rec.KeyID, rec.Key, rec.Fingerprint, rec.Project, rec.Operation, rec.Target, rec.Token, rec.Owner, rec.CreatedAt, rec.ExpiresAt))
		if err == nil {
			return held, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return held, false, err
		}
		// A live record holds the key.
		held, err = scanIdem(s.pool.QueryRow(ctx, `SELECT `+idemColumns+` FROM idempotency WHERE key_id = $1 AND idem_key = $2`, rec.KeyID, rec.Key))
		if errors.Is(err, pgx.ErrNoRows) && attempt < 10 {
			continue // released or purged meanwhile: try again
		}
		return held, false, err
	}
}

func (s *Store) ReleaseIdem(ctx context.Context, keyID, key, token string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency WHERE key_id = $1 AND idem_key = $2 AND token = $3 AND state = 'running'`, keyID, key, token)
	return err
}

func (s *Store) RunningIdem(ctx context.Context) ([]teamstore.Idem, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+idemColumns+` FROM idempotency WHERE state = 'running' ORDER BY created_at, key_id, idem_key`)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.Idem, error) { return scanIdem(r) })
}

func (s *Store) PurgeIdem(ctx context.Context, at time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency WHERE expires_at <= $1 AND state = 'done'`, at)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// --- audit

// auditSteps insert one audit row; the lock taken first, held to the
// commit, makes ids follow the commit order.
func auditSteps(e teamstore.AuditEntry) ([]step, error) {
	paths := e.Paths
	if paths == nil {
		paths = []string{}
	}
	b, err := json.Marshal(paths)
	if err != nil {
		return nil, err
	}
	return []step{
		{sql: `SELECT pg_advisory_xact_lock($1, 0)`, args: []any{lockAudit}},
		{sql: `INSERT INTO audit (at, key_id, key_name, project_id, operation, paths, version, idem_key, result) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			args: []any{e.At, e.KeyID, e.KeyName, e.Project, e.Operation, string(b), e.Version, e.IdempotencyKey, e.Result}},
	}, nil
}

func (s *Store) AppendAudit(ctx context.Context, e teamstore.AuditEntry) error {
	steps, err := auditSteps(e)
	if err != nil {
		return err
	}
	return s.batchTx(ctx, steps)
}

func (s *Store) Audit(ctx context.Context, q teamstore.AuditQuery) ([]teamstore.AuditEntry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	var since *time.Time
	if !q.Since.IsZero() {
		since = &q.Since
	}
	rows, _ := s.pool.Query(ctx, `SELECT id, at, key_id, key_name, project_id, operation, paths, version, idem_key, result FROM audit
		WHERE ($1 = '' OR project_id = $1) AND ($2 = '' OR key_name = $2) AND ($3::timestamptz IS NULL OR at >= $3)
		ORDER BY id DESC LIMIT $4`, q.Project, q.KeyName, since, limit)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teamstore.AuditEntry, error) {
		var e teamstore.AuditEntry
		var paths string
		if err := r.Scan(&e.ID, &e.At, &e.KeyID, &e.KeyName, &e.Project, &e.Operation, &paths, &e.Version, &e.IdempotencyKey, &e.Result); err != nil {
			return e, err
		}
		e.At = e.At.UTC()
		if err := json.Unmarshal([]byte(paths), &e.Paths); err != nil {
			return e, fmt.Errorf("audit row %d: paths: %w", e.ID, err)
		}
		return e, nil
	})
}
