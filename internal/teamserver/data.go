package teamserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// Layout of a data directory.
const (
	dbFile    = "team.db"     // the SQLite metadata
	vaultsDir = "vaults"      // one git vault per project, named by project id
	cacheDir  = "cache"       // index snapshots of the vaults
	lockFile  = "server.lock" // held by the running server
)

// KeyPrefix starts every API key.
const KeyPrefix = "tv_"

// Data is an open data directory: the metadata store and the vault folders.
type Data struct {
	Dir   string
	Store teamstore.Store
	Now   func() time.Time

	// backupStep, when set (tests), is called by Backup at its steps:
	// "held" once the database is copied, the vaults still held; "let go"
	// once their locks are let go, before the vaults are cloned.
	backupStep func(step string)
}

// OpenData opens (creating if needed, mode 0700) the data directory and its
// database. now may be nil (time.Now).
func OpenData(ctx context.Context, dir string, now func() time.Time) (*Data, error) {
	return OpenDataDB(ctx, dir, "", now)
}

// OpenDataDB is OpenData with the metadata in the store db names (OpenStore:
// "" for SQLite in the data directory).
func OpenDataDB(ctx context.Context, dir, db string, now func() time.Time) (*Data, error) {
	if dir == "" {
		return nil, errors.New("--data: no data directory given")
	}
	if now == nil {
		now = time.Now
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--data %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, vaultsDir), 0o700); err != nil {
		return nil, fmt.Errorf("--data %s: %w", dir, err)
	}
	st, err := OpenStore(ctx, db, filepath.Join(abs, dbFile), now())
	if err != nil {
		return nil, err
	}
	return &Data{Dir: abs, Store: st, Now: now}, nil
}

// Close closes the database.
func (d *Data) Close() error { return d.Store.Close() }

// VaultDir is the folder of a project's vault.
func (d *Data) VaultDir(id string) string { return filepath.Join(d.Dir, vaultsDir, id) }

// CacheDir is the folder of the index snapshots.
func (d *Data) CacheDir() string { return filepath.Join(d.Dir, cacheDir) }

// lock takes the data directory's server lock: one server per directory.
func (d *Data) lock() (*flock.Flock, error) {
	l := flock.New(filepath.Join(d.Dir, lockFile))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking the data directory: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("another team-server is using the data directory %s", d.Dir)
	}
	return l, nil
}

// The patterns are compiled on first use: a process start does not pay for them.
var (
	projectName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })
	keyName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`) })
	uuidShape   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	})
)

// IsID reports whether s has the shape of a project or key id (a UUID).
func IsID(s string) bool { return uuidShape().MatchString(s) }

// ValidProjectName checks a project name: 1-64 letters, digits, '.', '_',
// '-', starting with a letter or digit, and not shaped like an id.
func ValidProjectName(name string) error {
	if !projectName().MatchString(name) || uuidShape().MatchString(name) {
		return fmt.Errorf("project name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (and not shaped like an id)", name)
	}
	return nil
}

// ValidKeyName checks a key name (it becomes the git author of the key's
// writes): 1-64 letters, digits, '.', '_', '@', '-', starting with a letter
// or digit.
func ValidKeyName(name string) error {
	if !keyName().MatchString(name) {
		return fmt.Errorf("key name %q: use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit", name)
	}
	return nil
}

// HashKey is how a key is stored: the SHA-256 of the whole key. Keys are 32
// random bytes, so a fast unsalted hash is safe: there is nothing to guess.
func HashKey(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// NewKeySecret returns a new API key: "tv_" and 32 random bytes in hex.
func NewKeySecret() string {
	var b [32]byte
	rand.Read(b[:])
	return KeyPrefix + hex.EncodeToString(b[:])
}

// AddKey creates an API key and returns its secret (shown once, never
// stored). projects are names or ids; none means every project.
func (d *Data) AddKey(ctx context.Context, name string, projects []string, readOnly bool) (string, teamstore.Key, error) {
	return d.AddKeyUntil(ctx, name, projects, readOnly, time.Time{})
}

// AddKeyUntil is AddKey for a key refused from expiresAt on (zero: never),
// which must be in the future.
func (d *Data) AddKeyUntil(ctx context.Context, name string, projects []string, readOnly bool, expiresAt time.Time) (string, teamstore.Key, error) {
	if !expiresAt.IsZero() && !expiresAt.After(d.Now()) {
		return "", teamstore.Key{}, fmt.Errorf("--expires %s: already past", expiresAt.Format(time.RFC3339))
	}
	if err := ValidKeyName(name); err != nil {
		return "", teamstore.Key{}, err
	}
	var ids []string
	for _, ref := range projects {
		p, err := d.Store.Project(ctx, ref)
		if err != nil {
			return "", teamstore.Key{}, fmt.Errorf("--project %s: %w", ref, err)
		}
		ids = append(ids, p.ID)
	}
	secret := NewKeySecret()
	k := teamstore.Key{ID: teamstore.NewID(), Name: name, Hash: HashKey(secret), ReadOnly: readOnly, Projects: ids, CreatedAt: d.Now(), ExpiresAt: expiresAt}
	if err := d.Store.AddKey(ctx, k); err != nil {
		if errors.Is(err, teamstore.ErrExists) {
			return "", k, fmt.Errorf("an active key named %q exists; revoke it first or choose another name", name)
		}
		return "", k, err
	}
	if err := d.Store.AppendAudit(ctx, teamstore.AuditEntry{At: d.Now(), KeyID: k.ID, KeyName: name, Operation: "key add", Result: "ok"}); err != nil {
		slog.Warn("the key was added, but its line in the audit log could not be written", "key", name, "err", err)
	}
	return secret, k, nil
}

// RevokeKey revokes the active key of that name.
func (d *Data) RevokeKey(ctx context.Context, name string) error {
	// The key's id, for the audit row (names are reused after a revoke).
	var id string
	if keys, err := d.Store.Keys(ctx); err == nil {
		for _, k := range keys {
			if k.Name == name && k.RevokedAt.IsZero() {
				id = k.ID
			}
		}
	}
	if err := d.Store.RevokeKey(ctx, name, d.Now()); err != nil {
		if errors.Is(err, teamstore.ErrNotFound) {
			return fmt.Errorf("no active key named %q", name)
		}
		return err
	}
	if err := d.Store.AppendAudit(ctx, teamstore.AuditEntry{At: d.Now(), KeyID: id, KeyName: name, Operation: "key revoke", Result: "ok"}); err != nil {
		slog.Warn("the key was revoked, but its line in the audit log could not be written", "key", name, "err", err)
	}
	return nil
}

// RotateKey gives the active key of that name a new secret, returned (shown
// once): the old secret is refused from the next request on, by a running
// server too; the key keeps its id, scope and access, so its audit rows
// and idempotency records stay its own. expiresAt is its new expiry (zero:
// never), nil to keep the one it has (refused when that is past).
func (d *Data) RotateKey(ctx context.Context, name string, expiresAt *time.Time) (string, teamstore.Key, error) {
	var until time.Time
	if expiresAt != nil {
		until = *expiresAt
		if !until.IsZero() && !until.After(d.Now()) {
			return "", teamstore.Key{}, fmt.Errorf("--expires %s: already past", until.Format(time.RFC3339))
		}
	} else {
		keys, err := d.Store.Keys(ctx)
		if err != nil {
			return "", teamstore.Key{}, err
		}
		for _, k := range keys {
			if k.Name == name && k.RevokedAt.IsZero() {
				until = k.ExpiresAt
			}
		}
		if !until.IsZero() && !until.After(d.Now()) {
			return "", teamstore.Key{}, fmt.Errorf("the key %q expired at %s: give its new expiry with --expires (never, a duration such as 90d, or a date)", name, until.Format(time.RFC3339))
		}
	}
	secret := NewKeySecret()
	if err := d.Store.RotateKey(ctx, name, HashKey(secret), until); err != nil {
		if errors.Is(err, teamstore.ErrNotFound) {
			return "", teamstore.Key{}, fmt.Errorf("no active key named %q", name)
		}
		return "", teamstore.Key{}, err
	}
	k, err := d.Store.KeyByHash(ctx, HashKey(secret))
	if err != nil {
		return "", k, fmt.Errorf("the key was rotated, but reading it back failed (its new secret is lost: rotate it again): %w", err)
	}
	if err := d.Store.AppendAudit(ctx, teamstore.AuditEntry{At: d.Now(), KeyID: k.ID, KeyName: name, Operation: "key rotate", Result: "ok"}); err != nil {
		slog.Warn("the key was rotated, but its line in the audit log could not be written", "key", name, "err", err)
	}
	return secret, k, nil
}

// removedDir holds the vaults of removed projects (RemoveProject).
const removedDir = "removed"

// RemoveProject removes a project (name or id) from the metadata — its file
// ids, versions, idempotency records and key scope rows; its audit rows
// stay — and moves its vault folder to removed/<name>-<id> in the data
// directory, returned ("" when it had none here): notes are never deleted
// by vaultmcp. No server may hold the project open meanwhile: it refuses
// while a team-server holds this data directory, and, on PostgreSQL, while
// any replica is alive. An active key limited to the project alone is a
// *teamstore.ScopedKeysError: revoke it first.
func (d *Data) RemoveProject(ctx context.Context, ref string) (teamstore.Project, string, error) {
	l, err := d.lock()
	if err != nil {
		return teamstore.Project{}, "", fmt.Errorf("%w: stop the server first (it holds the project open)", err)
	}
	defer l.Unlock()
	if leases, ok := d.Store.(teamstore.Leases); ok {
		reps, err := leases.Replicas(ctx, d.Now())
		if err != nil {
			return teamstore.Project{}, "", err
		}
		if len(reps) > 0 {
			return teamstore.Project{}, "", fmt.Errorf("%d replica(s) of this database are running: stop them first (they hold the project open)", len(reps))
		}
	}
	p, err := d.Store.Project(ctx, ref)
	if err != nil {
		return p, "", err
	}
	if err := d.Store.RemoveProject(ctx, p.ID); err != nil {
		return p, "", err
	}
	moved := ""
	dir := d.VaultDir(p.ID)
	if _, err := os.Stat(dir); err == nil {
		moved = filepath.Join(d.Dir, removedDir, p.Name+"-"+p.ID)
		if err := os.MkdirAll(filepath.Dir(moved), 0o700); err != nil {
			return p, "", fmt.Errorf("project %s is removed, but its vault stays at %s: %w", p.Name, dir, err)
		}
		if err := os.Rename(dir, moved); err != nil {
			return p, "", fmt.Errorf("project %s is removed, but its vault stays at %s: %w", p.Name, dir, err)
		}
	}
	var paths []string
	if moved != "" {
		paths = []string{moved}
	}
	if err := d.Store.AppendAudit(ctx, teamstore.AuditEntry{At: d.Now(), Project: p.ID, Operation: "project remove", Result: "ok", Paths: paths}); err != nil {
		slog.Warn("the project was removed, but its line in the audit log could not be written", "project", p.Name, "err", err)
	}
	return p, moved, nil
}

// AddProject creates a project and its vault: empty, or imported from the
// folder from. A folder at the top of a git work tree is cloned, so its
// history comes along; any other folder is copied and committed once. It
// returns the project and warnings for the operator.
func (d *Data) AddProject(ctx context.Context, name, from string) (teamstore.Project, []string, error) {
	return d.CreateProject(ctx, ProjectSpec{Name: name, From: from})
}

// ProjectSpec says how a new project's vault begins.
type ProjectSpec struct {
	Name string
	// From is a vault folder to import ("" for none).
	From string
	// Remote, when set, is the git remote that is the vault's storage of
	// record (project add --remote): a remote with commits on Branch is
	// cloned; an empty one (or one without Branch) gets the new vault
	// (empty, or From) pushed to it.
	Remote string
	// Branch is the remote's branch; "" is the remote's default branch,
	// else main.
	Branch string
}

// CreateProject creates a project and its vault as spec says.
func (d *Data) CreateProject(ctx context.Context, spec ProjectSpec) (teamstore.Project, []string, error) {
	var warnings []string
	name, from := spec.Name, spec.From
	if err := ValidProjectName(name); err != nil {
		return teamstore.Project{}, nil, err
	}
	if _, err := d.Store.Project(ctx, name); err == nil {
		return teamstore.Project{}, nil, fmt.Errorf("a project named %q exists", name)
	}
	p := teamstore.Project{ID: teamstore.NewID(), Name: name, CreatedAt: d.Now()}
	dir := d.VaultDir(p.ID)
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	switch {
	case spec.Remote != "":
		w, branch, err := d.remoteVault(ctx, spec, dir)
		if err != nil {
			return p, nil, err
		}
		// Two projects of one server on one branch would push their
		// writes onto each other's history, each follow the other's, and
		// keep two sets of file ids and versions for the same notes.
		if other, ok := d.projectOnBranch(ctx, spec.Remote, branch); ok {
			return p, nil, fmt.Errorf("--remote %s: its branch %s already keeps the vault of project %q; two projects on one branch would mix their notes (give another --branch, or use that project)", gitx.RedactURL(spec.Remote), branch, other)
		}
		warnings = append(warnings, w...)
		p.Remote, p.Branch = spec.Remote, branch
	case spec.Branch != "":
		return p, nil, errors.New("--branch goes with --remote")
	case from == "":
		if err := gitx.Init(ctx, dir); err != nil {
			return p, nil, err
		}
		if err := gitx.CommitAll(ctx, dir, "vaultmcp: new project "+name, true); err != nil {
			return p, nil, err
		}
	default:
		w, err := importVault(ctx, from, dir, name)
		if err != nil {
			return p, nil, err
		}
		warnings = append(warnings, w...)
	}
	if p.Remote == "" {
		if _, replicated := d.Store.(teamstore.Leases); replicated {
			warnings = append(warnings, "no --remote: this vault lives only in "+d.Dir+"; only a team-server with this data directory serves it, and no other replica can take it over")
		}
	}
	if err := d.Store.AddProject(ctx, p); err != nil {
		return p, nil, err
	}
	ok = true
	n, err := d.seedFiles(ctx, p, dir)
	if err != nil {
		return p, warnings, fmt.Errorf("recording the imported notes: %w", err)
	}
	if err := d.Store.AppendAudit(ctx, teamstore.AuditEntry{At: d.Now(), Project: p.ID, Operation: "project add", Result: "ok", Paths: []string{fmt.Sprintf("%d note(s)", n)}}); err != nil {
		warnings = append(warnings, fmt.Sprintf("the project was added, but its line in the audit log could not be written: %v", err))
	}
	return p, warnings, nil
}

// projectOnBranch names the project that keeps its vault on branch of
// remote, if one does.
func (d *Data) projectOnBranch(ctx context.Context, remote, branch string) (string, bool) {
	ps, err := d.Store.Projects(ctx)
	if err != nil {
		return "", false
	}
	for _, q := range ps {
		if q.Remote == remote && q.Branch == branch {
			return q.Name, true
		}
	}
	return "", false
}

// remoteVault fills dir with a clone of spec.Remote: the remote's branch
// when it has commits, else a new vault (empty, or imported from
// spec.From) pushed to it. It returns the branch.
func (d *Data) remoteVault(ctx context.Context, spec ProjectSpec, dir string) ([]string, string, error) {
	shown := gitx.RedactURL(spec.Remote)
	if err := gitx.CheckRemoteURL(spec.Remote); err != nil {
		return nil, "", fmt.Errorf("--remote %s: %w", shown, err)
	}
	if spec.Branch != "" {
		if err := gitx.CheckBranch(spec.Branch); err != nil {
			return nil, "", fmt.Errorf("--branch: %w", err)
		}
	}
	heads, head, err := gitx.RemoteHeads(ctx, spec.Remote)
	if err != nil {
		return nil, "", fmt.Errorf("--remote %s: git cannot read it (credentials come from git's credential helpers or SSH agent; nothing is prompted): %w", shown, gitx.RedactErr(err))
	}
	branch := spec.Branch
	if branch == "" {
		branch = head
		if branch == "" && len(heads) == 0 {
			// An empty remote: the branch its HEAD names (a bare
			// repository made with git's older default names master),
			// so that a clone of it checks the vault out.
			if unborn, err := gitx.RemoteUnbornHead(ctx, spec.Remote); err == nil {
				branch = unborn
			}
		}
		if branch == "" {
			// No default branch (a bare repository whose HEAD names a
			// branch nobody pushed, or an older git that does not say):
			// its only branch, else main.
			branch = "main"
			if _, ok := heads["main"]; !ok && len(heads) == 1 {
				for b := range heads {
					branch = b
				}
			} else if !ok && len(heads) > 1 {
				return nil, "", fmt.Errorf("--remote %s: its HEAD names no branch and it has several; choose one with --branch", shown)
			}
		}
	}
	if _, exists := heads[branch]; exists {
		if spec.From != "" {
			return nil, "", fmt.Errorf("--from: the branch %s of %s has commits already; --from imports only into an empty remote (or a new branch)", branch, shown)
		}
		if _, err := gitx.Clone(ctx, spec.Remote, branch, dir); err != nil {
			return nil, "", fmt.Errorf("--remote %s: cloning: %w", shown, gitx.RedactErr(err))
		}
		return nil, branch, nil
	}
	var warnings []string
	if spec.From != "" {
		if warnings, err = importVault(ctx, spec.From, dir, spec.Name); err != nil {
			return nil, "", err
		}
	} else {
		if err := gitx.Init(ctx, dir); err != nil {
			return nil, "", err
		}
		if err := gitx.CommitAll(ctx, dir, "vaultmcp: new project "+spec.Name, true); err != nil {
			return nil, "", err
		}
	}
	r, err := gitx.Open(ctx, dir)
	if err == nil {
		err = r.RenameBranch(ctx, branch)
	}
	if err == nil {
		err = r.SetOrigin(ctx, spec.Remote)
	}
	if err != nil {
		return nil, "", err
	}
	if err := r.PushTo(ctx, "HEAD", branch); err != nil {
		return nil, "", fmt.Errorf("--remote %s: pushing the new vault to its branch %s: %w", shown, branch, gitx.RedactErr(err))
	}
	return warnings, branch, nil
}

// importVault fills dir from the folder from.
func importVault(ctx context.Context, from, dir, name string) ([]string, error) {
	src, err := filepath.Abs(from)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--from %s: not a directory", from)
	}
	var warnings []string
	top, err := gitx.Admin(ctx, src, "rev-parse", "--show-toplevel")
	if err == nil && sameDir(strings.TrimSpace(top), src) {
		n := gitx.Uncommitted(ctx, src)
		if err := gitx.CloneCommitted(ctx, src, dir, ""); err != nil {
			return nil, fmt.Errorf("cloning %s: %w", from, err)
		}
		if n > 0 {
			warnings = append(warnings, fmt.Sprintf("%d uncommitted change(s) in %s were not imported (only commits are cloned)", n, from))
		}
		// A clone of an empty repository has no commit yet.
		if _, err := gitx.Admin(ctx, dir, "rev-parse", "--verify", "HEAD"); err != nil {
			if err := gitx.CommitAll(ctx, dir, "vaultmcp: new project "+name, true); err != nil {
				return nil, err
			}
		}
		return warnings, nil
	}
	// A copy of a folder that holds the vaults would walk into the vault
	// it writes (folder within folder until the names are too long) and
	// take the database and the other projects' notes with it.
	if vaults := filepath.Dir(dir); within(vaults, src) {
		return nil, fmt.Errorf("--from %s: it holds the data directory %s; import a folder outside it", from, filepath.Dir(vaults))
	}
	if err == nil {
		warnings = append(warnings, fmt.Sprintf("%s is inside a git repository but not at its top: imported without history", from))
	}
	skipped, err := copyTree(src, dir)
	if err != nil {
		return nil, fmt.Errorf("copying %s: %w", from, err)
	}
	if skipped > 0 {
		warnings = append(warnings, fmt.Sprintf("%d symbolic link(s) or special file(s) in %s were not imported", skipped, from))
	}
	if err := gitx.Init(ctx, dir); err != nil {
		return nil, err
	}
	if err := gitx.CommitAll(ctx, dir, "vaultmcp: import "+filepath.Base(src), true); err != nil {
		return nil, err
	}
	// The import's objects are packed at once (a clone's already are):
	// thousands of loose objects slow every git process that looks objects
	// up, and a shared repository's commits still go through git mktree,
	// which looks up every entry of the trees it writes (75 ms a commit in
	// a folder of 2,919 notes loose, 6 ms packed). git gc --auto would pack
	// them only past 6,700.
	if _, err := gitx.Admin(ctx, dir, "repack", "-a", "-d", "-q"); err != nil {
		return nil, err
	}
	return warnings, nil
}

// within reports whether the folder p is dir or inside it, symbolic links
// resolved.
func within(p, dir string) bool {
	rp, err1 := filepath.EvalSymlinks(p)
	rd, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(rd, rp)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// copyTree copies the regular files and folders of src into dst (created),
// through an os.Root so nothing outside src is read; symbolic links and
// special files are skipped and counted. .git folders are not copied. It
// is not a vault's write, so it does not go through vaultfs: the folder
// becomes a vault once copied, and the gatekeeper's rules for a write would
// refuse what an import keeps (.obsidian's settings, attachments).
func copyTree(src, dst string) (int, error) {
	root, err := os.OpenRoot(src)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, err
	}
	skipped := 0
	err = fsWalk(root, ".", func(rel string, mode os.FileMode) error {
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case mode.IsDir():
			return os.MkdirAll(target, 0o755)
		case mode.IsRegular():
			data, err := root.ReadFile(rel)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		skipped++
		return nil
	})
	return skipped, err
}

// fsWalk walks root from dir without following symbolic links.
func fsWalk(root *os.Root, dir string, fn func(rel string, mode os.FileMode) error) error {
	f, err := root.Open(dir)
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		rel := e.Name()
		if dir != "." {
			rel = dir + "/" + e.Name()
		}
		if e.IsDir() && e.Name() == ".git" {
			continue
		}
		if err := fn(rel, e.Type()); err != nil {
			return err
		}
		if e.IsDir() {
			if err := fsWalk(root, rel, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// seedFiles gives every note of a new project's vault a file id and a first
// version (the imported content at HEAD).
func (d *Data) seedFiles(ctx context.Context, p teamstore.Project, dir string) (int, error) {
	fsys, err := vaultfs.Open(dir)
	if err != nil {
		return 0, err
	}
	defer fsys.Close()
	head, err := gitx.Admin(ctx, dir, "rev-parse", "--verify", "HEAD")
	if err != nil {
		// Without it every first version would be recorded with no id.
		return 0, err
	}
	head = strings.TrimSpace(head)
	var paths, hashes []string
	err = fsys.Walk(ctx, func(fi vaultfs.FileInfo) error {
		if !fi.IsNote {
			return nil
		}
		data, _, err := fsys.ReadWalked(fi)
		if err != nil {
			return nil // not readable as a note (too large, ...): no id yet
		}
		paths = append(paths, fi.Path)
		hashes = append(hashes, sha256Hex(data))
		return nil
	}, nil)
	if err != nil {
		return 0, err
	}
	if len(paths) == 0 {
		return 0, nil
	}
	at := d.Now()
	files, err := d.Store.EnsureFiles(ctx, p.ID, paths, at)
	if err != nil {
		return 0, err
	}
	rec := teamstore.Record{Project: p.ID, At: at}
	for i, f := range files {
		rec.Versions = append(rec.Versions, teamstore.Version{FileID: f.ID, Path: f.Path, Hash: hashes[i], VersionID: head, Message: "imported"})
	}
	return len(files), d.Store.Record(ctx, rec)
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
