package teamserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vault"
	"github.com/vaultmcp/vaultmcp/internal/writelock"
)

// A backup of a data directory (team-server backup) is itself a data
// directory: a server started on it serves what the original held when the
// backup was made. It is made while the server runs:
//  1. every vault kept here is held still: its write lock taken, as a write
//     takes it (a write under way is finished first; the next ones wait);
//  2. the database is copied in one read transaction (the SQLite store's
//     BackupTo) and each held vault's last commit read;
//  3. the locks are let go (writes go on), and each vault is cloned at the
//     commit read in step 2.
//
// So the database and the vaults are of one moment. A write records its
// idempotency record before it takes the vault's lock and commits under
// it: every commit in the backup's vaults has its record in the backup's
// database (answered, or running and settled from the commit when a
// server starts on the backup), and a record whose write is not in the
// backup's vault is dropped at that start, so that a retry of it against
// the restored server applies it once. Writes wait only while the
// database is copied (it holds no note text), never while the vaults are
// cloned. The vault of a project kept in a git remote is not copied: the
// remote is its storage of record, holding every write that was answered,
// and a server clones it again when the data directory has no clone. The
// index snapshots are not copied either (they are rebuilt).

// backuper is a store that can copy itself (SQLite; PostgreSQL has pg_dump).
type backuper interface {
	BackupTo(ctx context.Context, file string) error
}

// ErrBackupStore: the metadata store cannot be backed up by vaultmcp.
var ErrBackupStore = errors.New("the metadata is in PostgreSQL (--db): back it up with pg_dump; each project added with --remote keeps its vault in its git remote")

// BackupReport says what a backup holds.
type BackupReport struct {
	Vaults  []string // names of the projects whose vault was copied
	Remotes []string // names of the projects kept in a git remote (not copied)
	// Warnings: changes in a vault that were not committed (not copied).
	Warnings []string
	// WritesHeld is how long the vaults' writes waited for the backup:
	// from the first vault held to the last let go.
	WritesHeld time.Duration
}

// Backup copies the data directory to dest, a folder that must not exist
// or be empty. The copy is made in a folder beside dest and renamed to it
// once whole: a backup cut short (a vault that cannot be read, a full disk,
// the process killed) leaves no dest that looks like a backup. A folder
// so left by a killed backup is named dest.partial-*.
func (d *Data) Backup(ctx context.Context, dest string) (BackupReport, error) {
	var rep BackupReport
	b, ok := d.Store.(backuper)
	if !ok {
		return rep, ErrBackupStore
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		return rep, fmt.Errorf("--to %s: %w", dest, err)
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return rep, fmt.Errorf("--to %s: exists and is not an empty folder", dest)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return rep, fmt.Errorf("--to %s: %w", dest, err)
	}
	tmp := abs + ".partial-" + teamstore.NewID()[:8]
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return rep, fmt.Errorf("--to %s: %w", dest, err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	// (Told once the folder exists: the check resolves symbolic links. A
	// dest holding the data directory is not empty.)
	if within(tmp, d.Dir) {
		return rep, fmt.Errorf("--to %s: inside the data directory %s; give a folder outside it", dest, d.Dir)
	}
	if err := os.Mkdir(filepath.Join(tmp, vaultsDir), 0o700); err != nil {
		return rep, fmt.Errorf("--to %s: %w", dest, err)
	}
	cuts, err := d.copyAtOneMoment(ctx, b, filepath.Join(tmp, dbFile), &rep.WritesHeld)
	if err != nil {
		return rep, err
	}
	d.step("let go")
	// The projects are the copied database's: one added after it was
	// copied is in neither.
	copied, err := OpenStore(ctx, "", filepath.Join(tmp, dbFile), d.Now())
	if err != nil {
		return rep, fmt.Errorf("reading the copied database: %w", err)
	}
	ps, err := copied.Projects(ctx)
	if cerr := copied.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return rep, fmt.Errorf("reading the copied database: %w", err)
	}
	for _, p := range ps {
		if p.Remote != "" {
			rep.Remotes = append(rep.Remotes, p.Name)
			continue
		}
		c := cuts[p.ID]
		if err := gitx.CloneCommitted(ctx, d.VaultDir(p.ID), filepath.Join(tmp, vaultsDir, p.ID), c.head); err != nil {
			return rep, fmt.Errorf("project %s: copying its vault: %w", p.Name, err)
		}
		if c.uncommitted > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("project %s: %d uncommitted change(s) in its vault were not copied (only commits are)", p.Name, c.uncommitted))
		}
		rep.Vaults = append(rep.Vaults, p.Name)
	}
	// An empty dest is replaced (os.Remove takes only an empty folder);
	// its parent's entry made durable.
	if err := os.Remove(abs); err != nil && !errors.Is(err, os.ErrNotExist) {
		return rep, fmt.Errorf("--to %s: %w", dest, err)
	}
	if err := os.Rename(tmp, abs); err != nil {
		return rep, fmt.Errorf("--to %s: %w", dest, err)
	}
	if dir, err := os.Open(filepath.Dir(abs)); err == nil {
		dir.Sync()
		dir.Close()
	}
	if err := d.Store.AppendAudit(ctx, teamstore.AuditEntry{At: d.Now(), Operation: "backup", Result: "ok", Paths: []string{abs}}); err != nil {
		slog.Warn("the backup is made, but its line in the audit log could not be written", "err", err)
	}
	return rep, nil
}

// backupLockWait is how long a backup waits for a write under way in a
// vault before it gives up (a write holding its vault longer is stuck; a
// server lets the next write go ahead of it after as long).
const backupLockWait = time.Minute

// copyAtOneMoment copies the database to file while every vault kept in
// the data directory is held still (see the top of this file), and returns
// each held vault's state at that moment by project id, and in *waited how
// long the writes were held.
func (d *Data) copyAtOneMoment(ctx context.Context, b backuper, file string, waited *time.Duration) (map[string]vaultCut, error) {
	for attempt := 1; ; attempt++ {
		cuts, added, err := d.cut(ctx, b, file, waited)
		if err != nil || !added {
			return cuts, err
		}
		// A project was added while the vaults were taken: its vault was
		// not held, so the copy is made again with it held.
		if err := os.Remove(file); err != nil {
			return nil, err
		}
		if attempt == 3 {
			return nil, errors.New("projects were added while the backup was made, three times over; try again")
		}
	}
}

// cut is one attempt of copyAtOneMoment; added says a project was added
// after the vaults to hold were listed (the copy is then not of one moment).
func (d *Data) cut(ctx context.Context, b backuper, file string, waited *time.Duration) (cuts map[string]vaultCut, added bool, err error) {
	ps, err := d.Store.Projects(ctx)
	if err != nil {
		return nil, false, err
	}
	// One order for every backup (a server's write holds one vault at a
	// time, so no order of its own can cross this one).
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	type held struct {
		p   teamstore.Project
		dir string
	}
	var hold []held
	var releases []func()
	start := time.Now()
	defer func() {
		for _, release := range releases {
			release()
		}
	}()
	for _, p := range ps {
		if p.Remote != "" {
			continue
		}
		dir := d.VaultDir(p.ID)
		gd, err := gitx.Admin(ctx, dir, "rev-parse", "--absolute-git-dir")
		if err != nil {
			return nil, false, fmt.Errorf("project %s: its vault: %w", p.Name, err)
		}
		release, exclusive, err := writelock.New(vault.WriteLockFile(strings.TrimSpace(gd)), backupLockWait).Acquire(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("project %s: waiting for its writes: %w", p.Name, err)
		}
		releases = append(releases, release)
		if !exclusive {
			return nil, false, fmt.Errorf("project %s: a write has held its vault for over %s; no backup was made (try again; if it keeps happening, the server's log names the write)", p.Name, backupLockWait)
		}
		hold = append(hold, held{p, dir})
	}
	defer func() { *waited = time.Since(start) }()
	if err := b.BackupTo(ctx, file); err != nil {
		return nil, false, err
	}
	d.step("held")
	cuts = make(map[string]vaultCut, len(hold))
	for _, h := range hold {
		// Read while no write is under way: a change not committed then
		// is the user's (or a crashed write's), not a write's half-way.
		c := vaultCut{uncommitted: gitx.Uncommitted(ctx, h.dir)}
		if sha, err := gitx.Admin(ctx, h.dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err == nil {
			c.head = strings.TrimSpace(sha)
		}
		// Else no commit yet (rev-parse --verify fails quietly): the
		// clone is of an empty repository.
		cuts[h.p.ID] = c
	}
	now, err := d.Store.Projects(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, p := range now {
		if _, ok := cuts[p.ID]; !ok && p.Remote == "" {
			return nil, true, nil
		}
	}
	return cuts, false, nil
}

// vaultCut is a vault as a backup found it while it was held.
type vaultCut struct {
	head        string // its last commit ("" for none yet)
	uncommitted int    // changes in its work tree not committed
}

func (d *Data) step(name string) {
	if d.backupStep != nil {
		d.backupStep(name)
	}
}
