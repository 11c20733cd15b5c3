package teamserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// A backup of a data directory (team-server backup) is itself a data
// directory: a server started on it serves what the original held when the
// backup was made. It is made while the server runs, in two steps:
//  1. the database, in one read transaction (the SQLite store's BackupTo);
//  2. then each project's vault, cloned from the committed history (a
//     clone reads the branch once: a write committing meanwhile is wholly
//     in or out).
//
// The database goes first so that every version it names is in the vaults
// copied after it; a write committed between the two steps is in a vault
// and not in the database, which a server takes as a change made outside
// it (its notes keep or get their ids at the first read). The vault of a
// project kept in a git remote is not copied: the remote is its storage of
// record, holding every write that was answered, and a server clones it
// again when the data directory has no clone. The index snapshots are not
// copied either (they are rebuilt).

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
	// The projects are the copied database's: one added after it was
	// copied is in neither.
	if err := b.BackupTo(ctx, filepath.Join(tmp, dbFile)); err != nil {
		return rep, err
	}
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
		w, err := backupVault(ctx, p, d.VaultDir(p.ID), filepath.Join(tmp, vaultsDir, p.ID))
		if err != nil {
			return rep, fmt.Errorf("project %s: %w", p.Name, err)
		}
		rep.Warnings = append(rep.Warnings, w...)
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

// backupVault clones a project's vault from its committed history.
func backupVault(ctx context.Context, p teamstore.Project, src, dst string) ([]string, error) {
	n, err := cloneCommitted(ctx, src, dst)
	if err != nil {
		return nil, fmt.Errorf("copying its vault: %w", err)
	}
	if n > 0 {
		return []string{fmt.Sprintf("project %s: %d uncommitted change(s) in its vault were not copied (only commits are)", p.Name, n)}, nil
	}
	return nil, nil
}
