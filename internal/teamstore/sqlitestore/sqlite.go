// Package sqlitestore is the embedded teamstore.Store: one SQLite database
// file (modernc.org/sqlite, pure Go) in write-ahead-log mode, so readers never
// wait for the writer, with a busy timeout so that a management command and
// the running server can share it. The schema is the numbered SQL files of
// migrations/, embedded in the binary and applied at Open in one transaction.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// BusyTimeout is how long a statement waits for another process's write
// transaction before failing.
const BusyTimeout = 10 * time.Second

// Store is a teamstore.Store in one SQLite file.
type Store struct {
	db *sql.DB
	// keyByHash is prepared once: it runs on every request.
	keyByHash *sql.Stmt
	keys      *keyCache
	// wmu serialises this process's write transactions, so they queue in
	// Go instead of spinning in SQLite's busy handler; the busy timeout is
	// for other processes.
	wmu sync.Mutex
}

var _ teamstore.Store = (*Store)(nil)

// Open opens (creating if needed) the database file and migrates it. now is
// recorded as the time of any migration applied.
func Open(ctx context.Context, file string, now time.Time) (*Store, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	// The database holds what the vaults hold (stored answers with their
	// diffs, note paths, the audit log), so a new one is its owner's only,
	// whatever the folder's mode and the umask: SQLite gives the
	// write-ahead log and its index the database file's mode. An existing
	// file keeps the mode its administrator gave it.
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("database %s: %w", file, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if _, err := migrate(ctx, db, now); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", file, err)
	}
	st := &Store{db: db, keys: newKeyCache(abs)}
	// One query for the key and its scope (project ids joined by commas;
	// ids never contain one).
	st.keyByHash, err = db.PrepareContext(ctx, `SELECT `+keyColumns+`, (SELECT GROUP_CONCAT(project_id, ',') FROM (SELECT project_id FROM api_key_projects WHERE key_id = api_keys.id ORDER BY project_id))
		FROM api_keys WHERE hash = ? AND revoked_at IS NULL`)
	if err != nil {
		db.Close()
		return nil, err
	}
	return st, nil
}

// SchemaVersion returns the version recorded in schema_migrations.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// Close closes the database.
func (s *Store) Close() error {
	s.keyByHash.Close()
	return s.db.Close()
}

// DB is the database handle (tests use it to check invariants the interface
// does not expose).
func (s *Store) DB() *sql.DB { return s.db }

// write runs fn in one write transaction.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func micro(t time.Time) int64 { return t.UnixMicro() }

func fromMicro(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicro(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func fromNull(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicro(v.Int64)
}

// isUnique reports a UNIQUE or PRIMARY KEY constraint failure, by the
// extended result code the driver reports.
func isUnique(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func notFound(what string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(what, args...), teamstore.ErrNotFound)
}

// --- projects

func (s *Store) RemoveProject(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM projects WHERE id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return notFound("project %q", id)
		}
		rows, err := tx.QueryContext(ctx, `SELECT k.name FROM api_keys k JOIN api_key_projects kp ON kp.key_id = k.id
			WHERE kp.project_id = ? AND k.revoked_at IS NULL AND (SELECT COUNT(*) FROM api_key_projects o WHERE o.key_id = k.id) = 1
			ORDER BY k.name`, id)
		if err != nil {
			return err
		}
		var only []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return err
			}
			only = append(only, name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(only) > 0 {
			return &teamstore.ScopedKeysError{Keys: only}
		}
		for _, q := range []string{
			`DELETE FROM idempotency WHERE project_id = ?`,
			`DELETE FROM versions WHERE project_id = ?`,
			`DELETE FROM files WHERE project_id = ?`,
			`DELETE FROM api_key_projects WHERE project_id = ?`,
			`DELETE FROM projects WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) AddProject(ctx context.Context, p teamstore.Project) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (id, name, remote, branch, created_at) VALUES (?, ?, ?, ?, ?)`, p.ID, p.Name, p.Remote, p.Branch, micro(p.CreatedAt))
		if isUnique(err) {
			return fmt.Errorf("project %q: %w", p.Name, teamstore.ErrExists)
		}
		return err
	})
}

func (s *Store) Project(ctx context.Context, ref string) (teamstore.Project, error) {
	var p teamstore.Project
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT id, name, remote, branch, created_at FROM projects WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1`, ref, ref, ref).Scan(&p.ID, &p.Name, &p.Remote, &p.Branch, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return p, notFound("project %q", ref)
	}
	p.CreatedAt = fromMicro(created)
	return p, err
}

func (s *Store) Projects(ctx context.Context) ([]teamstore.Project, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, remote, branch, created_at FROM projects ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []teamstore.Project
	for rows.Next() {
		var p teamstore.Project
		var created int64
		if err := rows.Scan(&p.ID, &p.Name, &p.Remote, &p.Branch, &created); err != nil {
			return nil, err
		}
		p.CreatedAt = fromMicro(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// --- keys

func (s *Store) AddKey(ctx context.Context, k teamstore.Key) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, name, hash, read_only, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			k.ID, k.Name, k.Hash, k.ReadOnly, micro(k.CreatedAt), nullMicro(k.ExpiresAt))
		if isUnique(err) {
			return fmt.Errorf("key %q: %w", k.Name, teamstore.ErrExists)
		}
		if err != nil {
			return err
		}
		for _, p := range k.Projects {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO api_key_projects (key_id, project_id) VALUES (?, ?)`, k.ID, p); err != nil {
				return fmt.Errorf("key %q, project %q: %w", k.Name, p, err)
			}
		}
		return nil
	})
}

const keyColumns = `id, name, hash, read_only, created_at, last_used_at, revoked_at, expires_at`

func scanKey(sc interface{ Scan(...any) error }, extra ...any) (teamstore.Key, error) {
	var k teamstore.Key
	var created int64
	var used, revoked, expires sql.NullInt64
	if err := sc.Scan(append([]any{&k.ID, &k.Name, &k.Hash, &k.ReadOnly, &created, &used, &revoked, &expires}, extra...)...); err != nil {
		return k, err
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt, k.ExpiresAt = fromMicro(created), fromNull(used), fromNull(revoked), fromNull(expires)
	return k, nil
}

func (s *Store) keyProjects(ctx context.Context, id string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT project_id FROM api_key_projects WHERE key_id = ? ORDER BY project_id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *Store) KeyByHash(ctx context.Context, hash []byte) (teamstore.Key, error) {
	// The signature is taken before the lookup: a change committed after
	// it is seen by the next request.
	k, ok, sig := s.keys.get(hash)
	if ok {
		return k, nil
	}
	at := s.keys.now()
	k, err := s.lookupKey(ctx, hash)
	if err == nil {
		s.keys.put(hash, k, sig, at)
	}
	return k, err
}

func (s *Store) lookupKey(ctx context.Context, hash []byte) (teamstore.Key, error) {
	var scope sql.NullString
	k, err := scanKey(s.keyByHash.QueryRowContext(ctx, hash), &scope)
	if errors.Is(err, sql.ErrNoRows) {
		return k, notFound("key")
	}
	if err != nil {
		return k, err
	}
	if scope.Valid && scope.String != "" {
		k.Projects = strings.Split(scope.String, ",")
	}
	return k, nil
}

func (s *Store) Keys(ctx context.Context) ([]teamstore.Key, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY name, created_at`)
	if err != nil {
		return nil, err
	}
	var out []teamstore.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Projects, err = s.keyProjects(ctx, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Store) RevokeKey(ctx context.Context, name string, at time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL`, micro(at), name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("active key %q", name)
		}
		return nil
	})
}

func (s *Store) RotateKey(ctx context.Context, name string, hash []byte, expiresAt time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET hash = ?, expires_at = ? WHERE name = ? AND revoked_at IS NULL`, hash, nullMicro(expiresAt), name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("active key %q", name)
		}
		return nil
	})
}

func (s *Store) TouchKey(ctx context.Context, id string, at time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, micro(at), id, micro(at))
		return err
	})
}

// --- files

const fileColumns = `project_id, id, path, created_at, updated_at, deleted_at`

func scanFile(sc interface{ Scan(...any) error }) (teamstore.File, error) {
	var f teamstore.File
	var created, updated int64
	var deleted sql.NullInt64
	if err := sc.Scan(&f.Project, &f.ID, &f.Path, &created, &updated, &deleted); err != nil {
		return f, err
	}
	f.CreatedAt, f.UpdatedAt, f.DeletedAt = fromMicro(created), fromMicro(updated), fromNull(deleted)
	return f, nil
}

func (s *Store) File(ctx context.Context, project, id string) (teamstore.File, error) {
	f, err := scanFile(s.db.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = ? AND id = ?`, project, id))
	if errors.Is(err, sql.ErrNoRows) {
		return f, notFound("file %q", id)
	}
	return f, err
}

func (s *Store) FileByPath(ctx context.Context, project, path string) (teamstore.File, error) {
	f, err := scanFile(s.db.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = ? AND path = ?`, project, path))
	if errors.Is(err, sql.ErrNoRows) {
		return f, notFound("file at %q", path)
	}
	return f, err
}

func (s *Store) LiveFiles(ctx context.Context, project string) ([]teamstore.File, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = ? AND deleted_at IS NULL ORDER BY path`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []teamstore.File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

func (s *Store) EnsureFiles(ctx context.Context, project string, paths []string, at time.Time) ([]teamstore.File, error) {
	var out []teamstore.File
	err := s.write(ctx, func(tx *sql.Tx) error {
		out = make([]teamstore.File, 0, len(paths))
		for _, path := range paths {
			f, err := scanFile(tx.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE project_id = ? AND path = ?`, project, path))
			switch {
			case err == nil && f.Live():
			case err == nil:
				f.DeletedAt, f.UpdatedAt = time.Time{}, fromMicro(micro(at))
				if _, err := tx.ExecContext(ctx, `UPDATE files SET deleted_at = NULL, updated_at = ? WHERE project_id = ? AND id = ?`, micro(at), project, f.ID); err != nil {
					return err
				}
			case errors.Is(err, sql.ErrNoRows):
				t := fromMicro(micro(at))
				f = teamstore.File{Project: project, ID: teamstore.NewID(), Path: path, CreatedAt: t, UpdatedAt: t}
				if _, err := tx.ExecContext(ctx, `INSERT INTO files (project_id, id, path, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`, project, f.ID, path, micro(at), micro(at)); err != nil {
					return err
				}
			default:
				return err
			}
			out = append(out, f)
		}
		return nil
	})
	return out, err
}

func (s *Store) Versions(ctx context.Context, project, fileID string) ([]teamstore.Version, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT file_id, number, path, hash, version_id, message, created_at FROM versions WHERE project_id = ? AND file_id = ? ORDER BY number DESC`, project, fileID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []teamstore.Version
	for rows.Next() {
		var v teamstore.Version
		var created int64
		if err := rows.Scan(&v.FileID, &v.Number, &v.Path, &v.Hash, &v.VersionID, &v.Message, &created); err != nil {
			return nil, err
		}
		v.CreatedAt = fromMicro(created)
		out = append(out, v)
	}
	return out, rows.Err()
}

// --- the bookkeeping of a write

func (s *Store) Record(ctx context.Context, r teamstore.Record) error {
	at := micro(r.At)
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, m := range r.Moves {
			// Whatever row held the target (a tombstone) gives way.
			if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE project_id = ? AND path = ? AND id <> ?`, r.Project, m.To, m.FileID); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `UPDATE files SET path = ?, updated_at = ?, deleted_at = NULL WHERE project_id = ? AND id = ?`, m.To, at, r.Project, m.FileID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return notFound("file %q", m.FileID)
			}
		}
		for _, id := range r.Deletes {
			if _, err := tx.ExecContext(ctx, `UPDATE files SET deleted_at = ?, updated_at = ? WHERE project_id = ? AND id = ? AND deleted_at IS NULL`, at, at, r.Project, id); err != nil {
				return err
			}
		}
		for _, v := range r.Versions {
			var next int
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE project_id = ? AND file_id = ?`, r.Project, v.FileID).Scan(&next); err != nil {
				return err
			}
			created := at
			if !v.CreatedAt.IsZero() {
				created = micro(v.CreatedAt)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO versions (project_id, file_id, number, path, hash, version_id, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				r.Project, v.FileID, next, v.Path, v.Hash, v.VersionID, v.Message, created); err != nil {
				return fmt.Errorf("version of file %q: %w", v.FileID, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE files SET updated_at = ? WHERE project_id = ? AND id = ?`, created, r.Project, v.FileID); err != nil {
				return err
			}
		}
		if r.Audit != nil {
			if err := appendAudit(ctx, tx, *r.Audit); err != nil {
				return err
			}
		}
		if a := r.Answer; a != nil {
			header, err := json.Marshal(a.Response.Header)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `UPDATE idempotency SET state = 'done', status = ?, header = ?, body = ?
				WHERE key_id = ? AND idem_key = ? AND token = ? AND state = 'running'`,
				a.Response.Status, string(header), a.Response.Body, a.KeyID, a.Key, a.Token)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("idempotency record %q with token %q: %w: %w", a.Key, a.Token, teamstore.ErrNotRunning, teamstore.ErrNotFound)
			}
		}
		return nil
	})
}

// --- idempotency

const idemColumns = `key_id, idem_key, fingerprint, project_id, operation, target, token, state, owner, created_at, expires_at, status, header, body`

func scanIdem(sc interface{ Scan(...any) error }) (teamstore.Idem, error) {
	var r teamstore.Idem
	var created, expires int64
	var status sql.NullInt64
	var header sql.NullString
	var body []byte
	var state string
	if err := sc.Scan(&r.KeyID, &r.Key, &r.Fingerprint, &r.Project, &r.Operation, &r.Target, &r.Token, &state, &r.Owner, &created, &expires, &status, &header, &body); err != nil {
		return r, err
	}
	r.State = teamstore.IdemState(state)
	r.CreatedAt, r.ExpiresAt = fromMicro(created), fromMicro(expires)
	if r.State == teamstore.IdemDone {
		resp := &teamstore.Response{Status: int(status.Int64), Body: body}
		if header.Valid && header.String != "" {
			if err := json.Unmarshal([]byte(header.String), &resp.Header); err != nil {
				return r, fmt.Errorf("idempotency record %q: stored header: %w", r.Key, err)
			}
		}
		if resp.Body == nil {
			resp.Body = []byte{}
		}
		r.Response = resp
	}
	return r, nil
}

func (s *Store) BeginIdem(ctx context.Context, rec teamstore.Idem) (teamstore.Idem, bool, error) {
	var held teamstore.Idem
	created := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		held, err = scanIdem(tx.QueryRowContext(ctx, `SELECT `+idemColumns+` FROM idempotency WHERE key_id = ? AND idem_key = ?`, rec.KeyID, rec.Key))
		switch {
		case err == nil && (held.State == teamstore.IdemRunning || held.ExpiresAt.After(rec.CreatedAt)):
			return nil // live, or running (see Store.BeginIdem)
		case err == nil:
			if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE key_id = ? AND idem_key = ?`, rec.KeyID, rec.Key); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO idempotency (key_id, idem_key, fingerprint, project_id, operation, target, token, state, owner, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
			rec.KeyID, rec.Key, rec.Fingerprint, rec.Project, rec.Operation, rec.Target, rec.Token, rec.Owner, micro(rec.CreatedAt), micro(rec.ExpiresAt))
		if err != nil {
			return err
		}
		held = rec
		held.State = teamstore.IdemRunning
		held.Response = nil
		held.CreatedAt, held.ExpiresAt = fromMicro(micro(rec.CreatedAt)), fromMicro(micro(rec.ExpiresAt))
		created = true
		return nil
	})
	return held, created, err
}

func (s *Store) ReleaseIdem(ctx context.Context, keyID, key, token string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE key_id = ? AND idem_key = ? AND token = ? AND state = 'running'`, keyID, key, token)
		return err
	})
}

func (s *Store) RunningIdem(ctx context.Context) ([]teamstore.Idem, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+idemColumns+` FROM idempotency WHERE state = 'running' ORDER BY created_at, key_id, idem_key`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []teamstore.Idem
	for rows.Next() {
		r, err := scanIdem(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) PurgeIdem(ctx context.Context, at time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE expires_at <= ? AND state = 'done'`, micro(at))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// --- audit

func appendAudit(ctx context.Context, tx *sql.Tx, e teamstore.AuditEntry) error {
	paths := e.Paths
	if paths == nil {
		paths = []string{}
	}
	b, err := json.Marshal(paths)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit (at, key_id, key_name, project_id, operation, paths, version, idem_key, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		micro(e.At), e.KeyID, e.KeyName, e.Project, e.Operation, string(b), e.Version, e.IdempotencyKey, e.Result)
	return err
}

func (s *Store) AppendAudit(ctx context.Context, e teamstore.AuditEntry) error {
	return s.write(ctx, func(tx *sql.Tx) error { return appendAudit(ctx, tx, e) })
}

func (s *Store) Audit(ctx context.Context, q teamstore.AuditQuery) ([]teamstore.AuditEntry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	since := int64(math.MinInt64)
	if !q.Since.IsZero() {
		since = micro(q.Since)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, key_id, key_name, project_id, operation, paths, version, idem_key, result FROM audit
		WHERE (? = '' OR project_id = ?) AND (? = '' OR key_name = ?) AND at >= ? ORDER BY id DESC LIMIT ?`,
		q.Project, q.Project, q.KeyName, q.KeyName, since, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []teamstore.AuditEntry
	for rows.Next() {
		var e teamstore.AuditEntry
		var at int64
		var paths string
		if err := rows.Scan(&e.ID, &at, &e.KeyID, &e.KeyName, &e.Project, &e.Operation, &paths, &e.Version, &e.IdempotencyKey, &e.Result); err != nil {
			return nil, err
		}
		e.At = fromMicro(at)
		if err := json.Unmarshal([]byte(paths), &e.Paths); err != nil {
			return nil, fmt.Errorf("audit row %d: paths: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// BackupTo writes a consistent copy of the database to file, which must
// not exist (VACUUM INTO: one read transaction, so writes made meanwhile
// by a running server are wholly in it or wholly out). The copy is its
// owner's only, as the database is.
func (s *Store) BackupTo(ctx context.Context, file string) error {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, file); err != nil {
		os.Remove(file)
		return fmt.Errorf("copying the database: %w", err)
	}
	return nil
}
