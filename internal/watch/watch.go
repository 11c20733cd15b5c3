// Package watch reports changes under a directory tree, recursively, in
// debounced batches of vault-relative paths.
//
// It is built on fsnotify, which watches single directories: the watcher adds
// a watch for every directory that is not ignored, adds watches for
// directories as they appear (listing each new directory after its watch is
// in place, so files created before that are not missed) and drops the
// watches of directories that disappear or move away.
//
// What a batch means to the caller: every path in Event.Paths was created,
// written, removed or renamed (from or to) since the previous batch. The
// caller re-stats each path: a missing path means "remove it and everything
// under it" (a removed or renamed directory is reported as the directory path
// only); a new directory is reported along with every file and directory in
// it. Attribute changes (chmod, touch) are reported too: a note that could
// not be read (permission denied) must be read again once it can be, and
// nothing else tells of that.
// Event.Rescan says events were lost (the kernel queue overflowed): the
// caller must rescan everything.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/vaultmcp/vaultmcp/internal/vpath"
)

// Event is one debounced batch of changes.
type Event struct {
	// Paths are vault-relative, '/'-separated, deduplicated and sorted:
	// anything created, changed, removed or renamed (old and new names).
	Paths []string
	// Rescan is set when the watcher lost events (overflow): the caller
	// must rescan everything; Paths may then be incomplete.
	Rescan bool
}

// maxDelayFactor bounds a batch: it is delivered at most this many debounce
// periods after its first event, even if events keep coming.
const maxDelayFactor = 10

// ErrRunning is returned by Run when the watcher is already running.
var ErrRunning = errors.New("watch: Run called while already running")

// Watcher watches a directory tree. Create it with New, call Run once, and
// Close it when done.
type Watcher struct {
	dir      string // absolute, cleaned
	ignore   func(rel string) bool
	debounce time.Duration
	fw       *fsnotify.Watcher

	mu   sync.Mutex
	dirs map[string]struct{} // watched directories, relative ("" is the root)

	// root is the directory watched at dir. rootLost is set (by the loop
	// alone) when it was removed or moved away, until a directory is at
	// its path again (see checkRoot).
	root     os.FileInfo
	rootLost bool

	log       *slog.Logger // slog.Default() unless SetLogger
	running   atomic.Bool
	closeOnce sync.Once
	closeErr  error
	newTimer  func() timer // replaced in tests
}

// New watches dir recursively: every directory under it that ignore does not
// skip. ignore(rel) receives '/'-separated paths relative to dir (files and
// directories) and says which to skip entirely; nil skips nothing. A
// debounce below one millisecond is raised to one millisecond.
func New(dir string, ignore func(rel string) bool, debounce time.Duration) (*Watcher, error) {
	w, err := Open(dir, ignore, debounce)
	if err != nil {
		return nil, err
	}
	w.addTree("", nil)
	w.log.Debug("watching directory tree", "dir", w.dir, "directories", w.watchedCount())
	return w, nil
}

// Open is New for a caller that lists the tree itself: it watches dir
// alone, and the caller adds each directory below it with AddFolder before
// it lists that directory, so that nothing changed in a directory after its
// listing is missed. Directories that appear later are added by the watcher
// itself, as with New. (The vault's first walk does this: listing every
// directory once for the watcher and once more for the index was, on the
// Obsidian hub, 22-25 ms before the walk could start, and 190 ms at 100k
// notes.)
func Open(dir string, ignore func(rel string) bool, debounce time.Duration) (*Watcher, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("watch: stat <vault>: %w", unwrapPath(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("watch: <vault> is not a directory")
	}
	if ignore == nil {
		ignore = func(string) bool { return false }
	}
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{
		dir:      filepath.Clean(abs),
		ignore:   ignore,
		debounce: max(debounce, time.Millisecond),
		fw:       fw,
		dirs:     make(map[string]struct{}),
		root:     st,
		log:      slog.Default(),
		newTimer: newRealTimer,
	}
	if err := w.fw.Add(w.dir); err != nil {
		fw.Close()
		return nil, fmt.Errorf("watch: watching <vault>: %w", unwrapPath(err))
	}
	w.dirs[""] = struct{}{}
	return w, nil
}

// SetLogger makes the watcher log to l (the server's logger, with its
// level and format) instead of slog.Default(). Call it after Open and
// before anything else.
func (w *Watcher) SetLogger(l *slog.Logger) {
	if l != nil {
		w.log = l
	}
}

// AddFolder watches the directory rel ('/'-separated, relative to the
// watched root; "" is the root, always watched) without listing it: see
// Open. An ignored directory is not watched. A directory that cannot be
// watched is logged, as New logs it: changes in it will not be seen.
func (w *Watcher) AddFolder(rel string) {
	if rel == "" || w.ignore(rel) {
		return
	}
	w.mu.Lock()
	_, ok := w.dirs[rel]
	w.mu.Unlock()
	if !ok {
		w.watchDir(rel)
	}
}

// watchDir adds the watch of the directory rel (not the root) and records
// it; false, logged, when it cannot be watched.
func (w *Watcher) watchDir(rel string) bool {
	if err := w.fw.Add(w.abs(rel)); err != nil {
		w.log.Warn("watch: cannot watch directory; changes in it will not be seen", "path", rel, "err", w.scrub(err))
		return false
	}
	w.mu.Lock()
	w.dirs[rel] = struct{}{}
	w.mu.Unlock()
	return true
}

// Run delivers debounced batches to fn until ctx ends or the watcher is
// closed; it returns nil then. Events that arrive while fn runs are kept for
// the next batch. A batch still pending when ctx ends is dropped.
func (w *Watcher) Run(ctx context.Context, fn func(Event)) error {
	if !w.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer w.running.Store(false)
	return w.loop(ctx, w.fw.Events, w.fw.Errors, fn)
}

// Close stops watching; a running Run returns. It is safe to call more than
// once.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		if err := w.fw.Close(); err != nil {
			w.closeErr = fmt.Errorf("watch: close: %w", err)
		}
	})
	return w.closeErr
}

// batch accumulates one Event.
type batch struct {
	paths  map[string]struct{}
	rescan bool
}

func (b *batch) add(rel string) {
	if b == nil {
		return
	}
	if b.paths == nil {
		b.paths = make(map[string]struct{})
	}
	b.paths[rel] = struct{}{}
}

func (b *batch) empty() bool { return len(b.paths) == 0 && !b.rescan }

func (b *batch) event() Event {
	ev := Event{Rescan: b.rescan, Paths: make([]string, 0, len(b.paths))}
	for p := range b.paths {
		ev.Paths = append(ev.Paths, p)
	}
	slices.Sort(ev.Paths)
	return ev
}

func (w *Watcher) loop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error, fn func(Event)) error {
	quiet, limit := w.newTimer(), w.newTimer()
	defer quiet.Stop()
	defer limit.Stop()
	b := &batch{}
	flush := func() {
		quiet.Stop()
		limit.Stop()
		if b.empty() {
			return
		}
		ev := b.event()
		b = &batch{}
		fn(ev)
	}
	poll := time.NewTicker(rootCheck)
	defer poll.Stop()
	lost := false
	for {
		if lost != w.rootLost {
			lost = w.rootLost
			if lost {
				poll.Reset(rootPoll)
			} else {
				poll.Reset(rootCheck)
			}
		}
		wasEmpty := b.empty()
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
			if !w.rootLost && w.rootInPlace() {
				continue
			}
			if !w.rootLost {
				w.log.Warn("the watched vault directory was removed or replaced; waiting for a directory at its path")
				b.rescan = true
				w.loseRoot()
			}
			w.checkRoot(b)
			if b.empty() {
				continue
			}
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			w.handle(ev, b)
		case err, ok := <-errs:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file watcher lost events (queue overflow); a full rescan is needed")
				b.rescan = true
				w.resync()
			} else {
				w.log.Warn("file watcher error", "err", w.scrub(err))
				continue
			}
		case <-quiet.C():
			flush()
			continue
		case <-limit.C():
			flush()
			continue
		}
		if b.empty() {
			continue // nothing to deliver: an ignored path
		}
		if wasEmpty {
			limit.Reset(maxDelayFactor * w.debounce)
		}
		quiet.Reset(w.debounce)
	}
}

// handle records one fsnotify event in b, adding or dropping watches as
// directories appear and disappear.
func (w *Watcher) handle(ev fsnotify.Event, b *batch) {
	rel, ok := w.rel(ev.Name)
	if !ok {
		return
	}
	if rel == "" {
		// The watched root itself was removed or moved away.
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.log.Warn("the watched vault directory was removed or renamed; waiting for a directory at its path")
			b.rescan = true
			w.loseRoot()
			w.checkRoot(b) // already replaced (a rename over it)?
		}
		return
	}
	if w.rootLost {
		return // a late event of the old tree
	}
	if w.ignore(rel) {
		return
	}
	switch {
	case ev.Has(fsnotify.Create):
		b.add(rel)
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			w.addTree(rel, b)
		}
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		b.add(rel)
		w.dropTree(rel)
	case ev.Has(fsnotify.Write), ev.Has(fsnotify.Chmod):
		b.add(rel)
	}
}

// addTree watches the directory rel and every directory below it that is not
// ignored. With a batch, it also reports everything found below rel: files
// created there before the watch was in place would otherwise be missed.
func (w *Watcher) addTree(rel string, b *batch) {
	root := w.abs(rel)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		r, ok := w.rel(p)
		if !ok {
			return nil
		}
		if err != nil {
			// Unreadable or vanished meanwhile: whoever removed it causes an event.
			w.log.Debug("watch: cannot read directory", "path", r, "err", w.scrub(err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if r != rel && w.ignore(r) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if r != rel {
			b.add(r)
		}
		if !d.IsDir() {
			return nil
		}
		// The root's watch is added by Open.
		if r != "" && !w.watchDir(r) {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		w.log.Debug("watch: walking directory", "path", rel, "err", w.scrub(err))
	}
}

// dropTree forgets the watches of the directory rel and everything below it
// (it was removed or moved away: a watch left in place would report later
// events under the old name).
func (w *Watcher) dropTree(rel string) {
	w.mu.Lock()
	var gone []string
	for d := range w.dirs {
		if vpath.Within(d, rel) {
			gone = append(gone, d)
			delete(w.dirs, d)
		}
	}
	w.mu.Unlock()
	for _, d := range gone {
		// The kernel may have dropped the watch already; that error is expected.
		if err := w.fw.Remove(w.abs(d)); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
			w.log.Debug("watch: removing watch", "path", d, "err", w.scrub(err))
		}
	}
}

// resync brings the watches in line with the disk after lost events:
// directories that vanished are dropped, new ones are watched.
func (w *Watcher) resync() {
	w.mu.Lock()
	var dirs []string
	for d := range w.dirs {
		dirs = append(dirs, d)
	}
	w.mu.Unlock()
	for _, d := range dirs {
		if fi, err := os.Lstat(w.abs(d)); d != "" && (err != nil || !fi.IsDir()) {
			w.dropTree(d)
		}
	}
	w.addTree("", nil)
}

// rootPoll is how often the watcher looks for a directory at the watched
// path while the one it watched is gone, and rootCheck how often it looks
// whether the one it watches is still there. Nothing tells of a directory
// that appears there short of watching the parent, which may be anything
// (the home folder); and the removal of the watched directory itself is
// told only once nothing holds it open, which the vault does (os.Root).
// A stat of one path is cheap.
const (
	rootPoll  = 100 * time.Millisecond
	rootCheck = time.Second
)

// rootInPlace reports whether the directory at the watched path is still
// the one watched.
func (w *Watcher) rootInPlace() bool {
	st, err := os.Stat(w.dir)
	return err == nil && os.SameFile(st, w.root)
}

// loseRoot drops every watch: the watched directory was removed or moved
// away, and the watches left on a moved tree would report its later
// changes under the old names.
func (w *Watcher) loseRoot() {
	w.mu.Lock()
	dirs := w.dirs
	w.dirs = make(map[string]struct{})
	w.mu.Unlock()
	for d := range dirs {
		if err := w.fw.Remove(w.abs(d)); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
			w.log.Debug("watch: removing watch", "path", d, "err", w.scrub(err))
		}
	}
	w.rootLost = true
}

// checkRoot watches the directory now at the watched path, when the one
// watched was lost and a directory is there again (a fresh clone, a
// restored backup, a folder renamed into place, the same one moved back),
// and asks b for a full rescan. It reports whether it did.
func (w *Watcher) checkRoot(b *batch) bool {
	if !w.rootLost {
		return false
	}
	st, err := os.Stat(w.dir)
	if err != nil || !st.IsDir() {
		return false
	}
	if err := w.fw.Add(w.dir); err != nil {
		w.log.Warn("watch: cannot watch the new vault directory", "err", w.scrub(err))
		return false
	}
	w.mu.Lock()
	w.dirs[""] = struct{}{}
	w.mu.Unlock()
	w.root, w.rootLost = st, false
	w.addTree("", nil)
	w.log.Warn("a new vault directory is in place; watching it and rescanning")
	b.rescan = true
	return true
}

func (w *Watcher) watchedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.dirs)
}

// rel converts an absolute path under the root to its '/'-separated relative
// form ("" for the root itself).
func (w *Watcher) rel(p string) (string, bool) {
	if p == w.dir {
		return "", true
	}
	r, ok := strings.CutPrefix(p, w.dir+string(filepath.Separator))
	if !ok {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func (w *Watcher) abs(rel string) string {
	if rel == "" {
		return w.dir
	}
	return filepath.Join(w.dir, filepath.FromSlash(rel))
}

// scrub renders an error without the root's absolute path.
func (w *Watcher) scrub(err error) string {
	return strings.ReplaceAll(err.Error(), w.dir, "<vault>")
}

// unwrapPath drops the path from an *fs.PathError so that the absolute
// directory never appears in messages.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// timer is the part of *time.Timer the loop uses, replaceable in tests.
type timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

type realTimer struct{ t *time.Timer }

func newRealTimer() timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return realTimer{t}
}

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }
func (r realTimer) Stop()                 { r.t.Stop() }
