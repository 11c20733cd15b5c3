package gitx

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fast commit takes git's own lock files (index.lock, HEAD.lock, the
// branch's .lock) in this process. A process killed while it holds them
// leaves them behind, and git then refuses every commit ("index.lock
// exists") until a person removes them. So the locks this process holds are
// listed, while it holds them, in its ledger, a file of its own in the git
// directory (vaultmcp-locks-<pid>), appended to, never rewritten (a process
// killed while rewriting it would leave it empty): "? 0 path" before a lock
// is made, "+ inode path" once it is, "- 0 path" once it is gone, the file
// removed when the process holds none. A process that finds another's
// ledger while holding the vault's write lock (so no other vaultmcp is
// committing) knows that process died holding the locks it lists, and
// removes them, each only if it is still the very file (same inode; for a
// lock made but not recorded yet, one made right after the intent): a lock
// git took since is not touched. The ledger is written without fsync: it is
// for a killed process, whose writes the kernel keeps; after a power loss
// git's lock files need a person's look anyway.

// intentSlack is how far from the ledger's last write a lock whose inode
// was not recorded yet may have been made to be taken for the one intended.
const intentSlack = time.Second

// LockLedgerPrefix starts the ledgers' file names in the git directory
// (the process id follows).
const LockLedgerPrefix = "vaultmcp-locks-"

type lockLedger struct {
	mu   sync.Mutex
	path string
	held map[string]uint64 // lock path -> inode
}

// ledger returns the Repo's ledger, in its git directory (as Open found it,
// else dir); nil when neither is known (its methods then do nothing).
func (r *Repo) ledger(dir string) *lockLedger {
	if r.gitDir != "" {
		dir = r.gitDir
	}
	if dir == "" {
		return nil
	}
	r.ledgerOnce.Do(func() {
		r.locks = &lockLedger{path: filepath.Join(dir, LockLedgerPrefix+strconv.Itoa(os.Getpid())), held: map[string]uint64{}}
	})
	return r.locks
}

// ClearCrashedLocks is the package's ClearCrashedLocks for the Repo's git
// directory (nothing when it is not known).
func (r *Repo) ClearCrashedLocks() ([]string, error) {
	if r.gitDir == "" {
		return nil, nil
	}
	return ClearCrashedLocks(r.gitDir)
}

// intend records that the lock file at p is about to be created: a process
// killed between the creation and took leaves an entry without an inode
// (see ClearCrashedLocks).
func (l *lockLedger) intend(p string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[p]; !ok {
		l.held[p] = 0
		l.record('?', 0, p)
	}
}

// took records the lock file at p, just created (O_EXCL) as f.
func (l *lockLedger) took(p string, f *os.File) {
	if l == nil {
		return
	}
	fi, err := f.Stat()
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held[p] = inodeOf(fi)
	l.record('+', l.held[p], p)
}

// released forgets the lock file at p: renamed into place, removed, or not
// made after all (another program held it).
func (l *lockLedger) released(p string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[p]; !ok {
		return
	}
	delete(l.held, p)
	l.record('-', 0, p)
}

// record appends one event to the ledger, or removes the ledger when no
// lock is held any more. Best effort: without the ledger a crash leaves the
// locks as before.
func (l *lockLedger) record(op byte, ino uint64, p string) {
	if len(l.held) == 0 {
		os.Remove(l.path)
		return
	}
	writtenLedgers.Store(filepath.Clean(l.path), true)
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	f.WriteString(string(op) + " " + strconv.FormatUint(ino, 10) + " " + p + "\n") // one write: whole or none
	f.Close()
}

// writtenLedgers holds the ledgers this process wrote (cleaned paths).
var writtenLedgers sync.Map

// wroteLedger says whether this process wrote the ledger at path, however
// the path is spelled (the same file as one it wrote).
func wroteLedger(path string) bool {
	if _, ok := writtenLedgers.Load(filepath.Clean(path)); ok {
		return true
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	mine := false
	writtenLedgers.Range(func(k, _ any) bool {
		if o, err := os.Stat(k.(string)); err == nil && os.SameFile(o, fi) {
			mine = true
		}
		return !mine
	})
	return mine
}

// ClearCrashedLocks removes the git lock files that vaultmcp processes
// killed while committing left in the git directory gitDir (see the ledger
// above), each only if it is still the file that process took, and then
// their ledgers. The caller holds the vault's write lock, so no other
// vaultmcp process is committing. It returns the paths removed.
func ClearCrashedLocks(gitDir string) ([]string, error) {
	ledgers, err := filepath.Glob(filepath.Join(gitDir, LockLedgerPrefix+"*"))
	if err != nil {
		return nil, err
	}
	own := LockLedgerPrefix + strconv.Itoa(os.Getpid())
	var removed []string
	var firstErr error
	for _, path := range ledgers {
		if filepath.Base(path) == own && wroteLedger(path) {
			// This process's: it is between commits, or in one. A ledger
			// with this process's id that it never wrote is a dead one's
			// whose id came round again (a server run as a container's
			// first process has the same id at every start).
			continue
		}
		data, err := os.ReadFile(path)
		var written time.Time
		if fi, serr := os.Stat(path); serr == nil {
			written = fi.ModTime()
		}
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		held := map[string]uint64{}
		var order []string
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.SplitN(line, " ", 3)
			if len(f) != 3 || len(f[0]) != 1 || !strings.HasSuffix(f[2], ".lock") || !filepath.IsAbs(f[2]) {
				continue // not a line this package wrote
			}
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				continue
			}
			switch p := f[2]; f[0] {
			case "?", "+":
				if _, ok := held[p]; !ok {
					order = append(order, p)
				}
				held[p] = n
			case "-":
				delete(held, p)
			}
		}
		for _, p := range order {
			n, ok := held[p]
			if !ok {
				continue
			}
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue // gone
			}
			// A lock the process made is no newer than the ledger's last
			// write (give or take the writing of its content): one made
			// later is another program's, whatever its inode (a freed
			// inode's number is given again).
			if written.IsZero() || fi.ModTime().Sub(written) > intentSlack {
				continue
			}
			if n == 0 {
				// The process died between writing the intent and
				// recording the lock's inode: the lock is its own when it
				// was made right after the intent (the ledger's last write).
				if fi.ModTime().Sub(written) < -intentSlack {
					continue
				}
			} else if inodeOf(fi) != n {
				continue // another program's lock since
			}
			if err := os.Remove(p); err == nil {
				removed = append(removed, p)
			}
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
			firstErr = err
		}
	}
	return removed, firstErr
}

// ResetIndex sets the index entries of paths to HEAD's (git reset -q --
// paths): after a commit that landed but whose index was not put in place
// (the process was killed between the two), git status would show the
// committed paths as changed and staged backwards.
func (r *Repo) ResetIndex(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := r.runLocked(ctx, runOpts{env: literal}, append([]string{"reset", "-q", "--"}, paths...)...)
	return err
}
