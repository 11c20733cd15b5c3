// Package teamstore is the metadata of the team server: projects, API keys,
// file ids and tombstones, version rows, idempotency records and the audit
// log. The vaults themselves (notes and their git history) live elsewhere;
// this holds what git does not know.
//
// # Guarantees every Store gives
//
//   - Every method is atomic: it happens completely or not at all, and
//     concurrent calls (from goroutines or from other processes sharing the
//     database) see each other's effects whole.
//   - A file id never changes while the file lives: a move keeps it, a delete
//     leaves a tombstone that keeps it, and EnsureFiles on a tombstoned path
//     revives the same id. At most one row (live or tombstone) holds a path.
//   - An idempotency record belongs to the API key that made it; BeginIdem
//     creates at most one live record per (key, idempotency key), and an
//     expired answered record counts as absent (a running one never
//     expires).
//   - The audit log is append-only: nothing updates or deletes a row.
//   - Times are stored with microsecond precision and returned in UTC; every
//     time comes from the caller, so tests drive the clock.
//
// Strings are valid UTF-8 without NUL bytes (the server validates what it
// stores; PostgreSQL refuses anything else).
//
// Implementations: sqlitestore (embedded, the default) and pgstore
// (PostgreSQL, shared by replicas; it also implements Leases). Both pass the
// suite of package storetest, run on one handle and on two handles sharing
// the database.
package teamstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors a Store returns (wrapped; test with errors.Is).
var (
	// ErrNotFound: no such project, key, file or record.
	ErrNotFound = errors.New("not found")
	// ErrExists: a project or active key of that name exists already.
	ErrExists = errors.New("already exists")
	// ErrNotRunning: an answer for an idempotency record that is not
	// running under its token (answered or released meanwhile); it wraps
	// ErrNotFound too.
	ErrNotRunning = errors.New("idempotency record not running")
)

// ScopedKeysError: the active keys limited to the one project a removal
// was asked for (RemoveProject).
type ScopedKeysError struct{ Keys []string }

func (e *ScopedKeysError) Error() string {
	return fmt.Sprintf("the active key(s) %s may use only this project: revoke them first (without it they would reach every project)", strings.Join(e.Keys, ", "))
}

// Store is the metadata of the team server.
type Store interface {
	// AddProject creates a project; ErrExists when the name is taken.
	AddProject(ctx context.Context, p Project) error
	// Project finds a project by id or by name.
	Project(ctx context.Context, ref string) (Project, error)
	// Projects lists every project by name.
	Projects(ctx context.Context) ([]Project, error)
	// RemoveProject removes a project (by id) with its file ids, versions,
	// idempotency records and the scope rows of keys (its audit rows stay);
	// ErrNotFound when there is none, *ScopedKeysError (nothing removed)
	// when an active key may use only this project: with its scope gone it
	// would reach every project.
	RemoveProject(ctx context.Context, id string) error

	// AddKey stores a new API key (only its hash); ErrExists when an active
	// key has that name.
	AddKey(ctx context.Context, k Key) error
	// KeyByHash finds the active (not revoked) key with that hash.
	KeyByHash(ctx context.Context, hash []byte) (Key, error)
	// Keys lists every key, revoked ones included, by name then creation.
	Keys(ctx context.Context) ([]Key, error)
	// RevokeKey revokes the active key of that name; ErrNotFound if none.
	RevokeKey(ctx context.Context, name string, at time.Time) error
	// RotateKey gives the active key of that name a new hash (a new
	// secret) and expiry (zero: never): the old secret is refused from then
	// on, the key keeps its id, scope and access; ErrNotFound if none.
	RotateKey(ctx context.Context, name string, hash []byte, expiresAt time.Time) error
	// TouchKey records that the key was used at a time.
	TouchKey(ctx context.Context, id string, at time.Time) error

	// File finds a file by id, live or tombstoned.
	File(ctx context.Context, project, id string) (File, error)
	// FileByPath finds the row holding a path, live or tombstoned.
	FileByPath(ctx context.Context, project, path string) (File, error)
	// LiveFiles lists the live files of a project by path.
	LiveFiles(ctx context.Context, project string) ([]File, error)
	// EnsureFiles returns the live file at each path, in order: the existing
	// one, the tombstone there revived (same id), or a new id.
	EnsureFiles(ctx context.Context, project string, paths []string, at time.Time) ([]File, error)
	// Versions lists the versions of a file, newest first.
	Versions(ctx context.Context, project, fileID string) ([]Version, error)

	// Record applies the bookkeeping of one write in one transaction:
	// moves, tombstones, new version rows, the audit row, and the stored
	// response of its idempotency record. With an Answer, nothing is applied
	// (ErrNotRunning) unless that record is still running under the
	// answer's token: a write is booked once, by whoever answers it first.
	Record(ctx context.Context, r Record) error

	// BeginIdem creates rec (state running) unless a live record exists for
	// (rec.KeyID, rec.Key): it returns the record now held and whether it
	// is rec. An expired answered record (ExpiresAt <= rec.CreatedAt) is
	// replaced. A running record never expires: its write may be in its
	// vault, and only settling it (ReleaseIdem, or Record with its answer)
	// says whether; replaced or purged unsettled, a retry could apply the
	// write twice (a crash's record in a project that stayed unopenable
	// for a day).
	BeginIdem(ctx context.Context, rec Idem) (Idem, bool, error)
	// ReleaseIdem deletes the running record (keyID, key) whose Token is
	// token, so that the request may run again; an answered record, or one
	// begun again since with another token, is left alone.
	ReleaseIdem(ctx context.Context, keyID, key, token string) error
	// RunningIdem lists the records still running, oldest first.
	RunningIdem(ctx context.Context) ([]Idem, error)
	// PurgeIdem deletes the answered records expired at a time and says how
	// many (running ones are settled, never purged: see BeginIdem).
	PurgeIdem(ctx context.Context, at time.Time) (int64, error)

	// Audit lists audit rows, newest first.
	Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error)
	// AppendAudit adds one audit row (for actions that are not vault writes:
	// key and project management).
	AppendAudit(ctx context.Context, e AuditEntry) error

	Close() error
}

// EnsureFile is EnsureFiles for one path.
func EnsureFile(ctx context.Context, s Store, project, path string, at time.Time) (File, error) {
	fs, err := s.EnsureFiles(ctx, project, []string{path}, at)
	if err != nil {
		return File{}, err
	}
	return fs[0], nil
}

// Project is one hosted vault.
type Project struct {
	ID   string
	Name string
	// Remote is the git remote that is the vault's storage of record (any
	// URL git takes, never with a password in it), and Branch its branch;
	// both empty for a vault kept only in the server's data directory.
	Remote    string
	Branch    string
	CreatedAt time.Time
}

// Key is an API key. The secret itself is never stored, only its SHA-256.
type Key struct {
	ID       string
	Name     string
	Hash     []byte
	ReadOnly bool
	// Projects are the project ids the key may use; empty means every
	// project.
	Projects   []string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero when never used
	RevokedAt  time.Time // zero when active
	// ExpiresAt is when the key stops being accepted (the server tells;
	// the store keeps finding it, so that it can be listed, rotated and
	// revoked); zero when it never expires.
	ExpiresAt time.Time
}

// Expired reports whether the key has expired at a time.
func (k Key) Expired(at time.Time) bool { return !k.ExpiresAt.IsZero() && !at.Before(k.ExpiresAt) }

// Allows says whether the key may use the project.
func (k Key) Allows(projectID string) bool {
	if len(k.Projects) == 0 {
		return true
	}
	for _, p := range k.Projects {
		if p == projectID {
			return true
		}
	}
	return false
}

// File is the identity of one note of a project.
type File struct {
	Project   string
	ID        string
	Path      string
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt time.Time // zero when live
}

// Live says the file is not a tombstone.
func (f File) Live() bool { return f.DeletedAt.IsZero() }

// Version is one version of a file made through the server.
type Version struct {
	FileID string
	// Number counts the file's versions from 1; Record assigns it.
	Number int
	Path   string // the file's path at that version
	Hash   string // hex SHA-256 of the content
	// VersionID is the backend's id of the write (a git commit).
	VersionID string
	Message   string
	CreatedAt time.Time
}

// Move is a file id that now lives at another path.
type Move struct {
	FileID string
	To     string
}

// Record is the bookkeeping of one write.
type Record struct {
	Project  string
	At       time.Time
	Moves    []Move
	Deletes  []string // file ids now tombstones
	Versions []Version
	// Audit is the write's audit row (nil: none).
	Audit *AuditEntry
	// Answer, when set, marks the idempotency record answered with its
	// response.
	Answer *IdemAnswer
}

// IdemState is the state of an idempotency record.
type IdemState string

const (
	IdemRunning IdemState = "running" // the request is being applied
	IdemDone    IdemState = "done"    // answered; Response holds the answer
)

// Idem is an idempotency record: the first request that came with an
// Idempotency-Key, and its answer once there is one.
type Idem struct {
	KeyID string // the API key that made it (records are scoped to it)
	Key   string // the Idempotency-Key header
	// Fingerprint identifies the request (method, route, body): the same
	// key with another fingerprint is a misuse.
	Fingerprint string
	Project     string
	Operation   string
	// Target is what the request is about (a file id or a path), so that
	// an answer can be rebuilt after a crash.
	Target string
	// Token is unique to this record; the write carries it into its commit,
	// so a record left running by a crash can be settled from git.
	Token     string
	State     IdemState
	Owner     string // the server instance running it
	CreatedAt time.Time
	ExpiresAt time.Time
	Response  *Response // set when State is IdemDone
}

// Response is a stored HTTP answer.
type Response struct {
	Status int
	Header map[string][]string
	Body   []byte
}

// IdemAnswer answers the record (KeyID, Key) begun with Token.
type IdemAnswer struct {
	KeyID, Key string
	// Token is the record's: an answer is stored only while the record it
	// answers is running, so that two replicas settling the same write (its
	// writer, late, and the vault's new holder) cannot both book it.
	Token    string
	Response Response
}

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	ID             int64 // assigned by the store, increasing
	At             time.Time
	KeyID          string
	KeyName        string
	Project        string
	Operation      string
	Paths          []string
	Version        string
	IdempotencyKey string
	// Result is "ok" or the stable code of the failure.
	Result string
}

// AuditQuery selects audit rows: those matching every field set.
type AuditQuery struct {
	Project string    // project id; "" for all
	KeyName string    // the name of the key that made them; "" for all
	Since   time.Time // at or after; zero for all
	Limit   int       // <= 0 for 100
}
