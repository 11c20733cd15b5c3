// Package vault is the vault service: it owns the index, the link graph and
// the note metadata of one vault folder, keeps them fresh, and answers the
// operations of api.Backend. It knows nothing of MCP; every byte it reads goes
// through internal/vaultfs.
package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gcpause"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/hugeheap"
	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/journal"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/msgcat"
	"github.com/vaultmcp/vaultmcp/internal/par"
	"github.com/vaultmcp/vaultmcp/internal/strarena"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
	"github.com/vaultmcp/vaultmcp/internal/watch"
	"github.com/vaultmcp/vaultmcp/internal/writelock"
)

// Options configure a Service.
type Options struct {
	Dir    string
	Lang   string // profile language: "en" or "pt"
	Logger *slog.Logger
	// Watch keeps the index fresh with a recursive file watcher.
	Watch bool
	// Debounce of watcher events; 0 means 50 ms.
	Debounce time.Duration
	// Index tunes the search engine (zero values: measured defaults).
	Index index.Options
	// ReadOnly refuses every write (the MCP server also registers no write
	// tool) and leaves the vault untouched, temporary files included.
	ReadOnly bool
	// AutoPush runs `git push` after every commit (VAULT_AUTO_PUSH=1).
	AutoPush bool
	// StuckAfter is how long a write may hold the write queue before the
	// next write goes ahead with a warning; 0 means 60 s.
	StuckAfter time.Duration
	// Now is the clock (tests set it); nil means time.Now.
	Now func() time.Time
	// CacheDir is the folder of the index snapshot (see snapshot.go); ""
	// means no snapshot.
	CacheDir string
	// CacheReadOnly uses the snapshot but never writes it (a one-off
	// command that exits as soon as it has answered).
	CacheReadOnly bool
	// CacheWriteOnClose writes the snapshot, when the first build changed
	// it, in Close instead of in the background after the first answer: a
	// one-off command answers first, then leaves the snapshot for the next.
	CacheWriteOnClose bool
	// PauseGC, when above 0, runs the first build with the collector's
	// pacing paused within this memory limit (see package gcpause), until
	// the first search is answered, and readies the heap of the first
	// build and of the snapshot's decoding in huge pages (see package
	// hugeheap): for a process that serves one vault (the collector's
	// settings, like the heap's advice, are the process's). A team server
	// keeps the kernel's defaults: it reuses its heap for many vaults and
	// is judged on its steady state (64 clients on the hub, alternated
	// runs: with the heap readied, search p99 48-49 ms against 44-45).
	PauseGC int64
	// SearchGate, when not nil, admits the searches that run at once
	// (see par.Gate): a server with many clients shares one, sized to the
	// cores, among all its vaults. A search waits for the index to be
	// ready before it takes its place.
	SearchGate *par.Gate
	// StateDir is the folder of the write journal of a vault in no git
	// repository (a repository keeps it in its git directory), so that a
	// write a crash or a power loss cut short is finished at the next
	// start, after a reboot too; "" means the system's temporary folder,
	// which a reboot may empty.
	StateDir string
}

// noteInfo is what the service remembers of an indexed note.
type noteInfo struct {
	title  string
	typ    string
	status string
	tags   []string
	chunks []chunkSpan
	// file is what the gatekeeper saw when the note was read: size, mtime
	// and the identity that lets a hit be re-read without the full checks.
	file vaultfs.FileInfo
}

type chunkSpan struct {
	headings   []string
	start, end int
}

// Service implements api.Backend over a local vault folder.
type Service struct {
	fs   *vaultfs.Vault
	git  *gitx.Repo // nil when the vault is not in a git work tree
	log  *slog.Logger
	opts Options
	// msg holds the texts of the vault's warnings and refusals, in the
	// language of opts.Lang (see messages.go).
	msg *texts

	mu        sync.RWMutex // guards notes, unindexed and compound updates of ix+graph
	notes     map[string]*noteInfo
	unindexed map[string]string // path -> reason
	ix        *index.Index
	an        *index.Analyzer
	graph     *links.Graph

	ready     chan struct{}
	buildErr  error
	progMu    sync.Mutex
	progDone  int
	progTotal int

	// hits keeps the bytes of recently quoted notes (hitcache.go).
	hits *hitCache

	// lock serialises writes (in the process and across processes);
	// journal holds their commit records (tx.go). Both live in the git
	// directory, decided once when the vault is opened.
	lock *writelock.Lock
	// lockPath is the write lock's file: in the repository's git directory,
	// or in the temporary folder for a vault in no repository.
	lockPath string
	journal  *journal.Dir
	// snapMarked is when (Options.Now, in Unix nanoseconds) a search last
	// marked the snapshot used (markSnapshotUsed); 0 before the first.
	snapMarked atomic.Int64
	// oldJournal is where an earlier vaultmcp kept the journal of a vault
	// in no repository (the temporary folder), when it is not journal:
	// its records are finished too, none is added.
	oldJournal *journal.Dir

	// prof is the profile detected from the vault (profile.go); gen counts
	// the changes of indexed notes, so that an undecided detection is tried
	// again once notes have changed.
	prof atomic.Pointer[profileChoice]
	gen  atomic.Int64
	// signMemo holds what each sampled note said of its language, while
	// it is unchanged (profile.go).
	signMu    sync.Mutex
	signMemo  map[string]signMemo
	signReads int // notes read for their signs (tests)

	closeMu  sync.Mutex
	closing  bool
	inflight sync.WaitGroup // writes in progress; Close waits for them

	cancel context.CancelFunc
	wg     sync.WaitGroup
	// snapshotDue says the first build changed what the snapshot holds and
	// Close is to write it (Options.CacheWriteOnClose).
	snapshotDue atomic.Bool
	// answered is closed when the first search after the first build has
	// been answered (or Close began): the work that can wait for it (the
	// snapshot, the collector's pause) waits for it. closed is closed when
	// Close begins.
	answered     chan struct{}
	answeredOnce sync.Once
	closed       chan struct{}
	// settled is closed when the work put off until that answer is done
	// (see Settled).
	settled chan struct{}

	subs subscribers // told of the notes the watcher sees change (notify.go)

	snapc chan *loaded // the snapshot read beside the walk, for the first build
}

var _ api.Backend = (*Service)(nil)

// Open opens the vault folder and starts indexing it in the background; it
// returns at once. Use Ready or any operation (which waits) to use the index.
func Open(ctx context.Context, opts Options) (*Service, error) {
	fsys, err := vaultfs.Open(opts.Dir, vaultfs.ReadOnly(opts.ReadOnly))
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	if opts.StuckAfter <= 0 {
		opts.StuckAfter = 60 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Index.Lang == "" {
		opts.Index.Lang = opts.Lang
	}
	s := &Service{
		fs:        fsys,
		log:       opts.Logger,
		opts:      opts,
		msg:       catalogue.For(opts.Lang),
		notes:     make(map[string]*noteInfo),
		unindexed: make(map[string]string),
		ix:        index.New(opts.Index),
		an:        index.NewAnalyzer(opts.Index.Lang),
		graph:     links.NewGraph(),
		ready:     make(chan struct{}),
		answered:  make(chan struct{}),
		closed:    make(chan struct{}),
		settled:   make(chan struct{}),
		hits:      newHitCache(hitCacheBytes),
		snapc:     make(chan *loaded, 1),
	}
	if repo, err := gitx.Open(ctx, fsys.Dir()); err == nil {
		s.git = repo
		// The commit reads what it commits (and the vault's .gitignore and
		// .gitattributes) through the gatekeeper, as every read here is.
		repo.SetReader(func(rel string) ([]byte, bool, error) {
			var data []byte
			var err error
			if dir, name := path.Split(rel); strings.HasPrefix(name, ".") {
				data, err = fsys.ReadDotFile(strings.TrimSuffix(dir, "/"), name, gitx.ReadLimit)
			} else {
				data, err = fsys.ReadFile(rel, gitx.ReadLimit)
			}
			if vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
				return nil, false, nil
			}
			return data, err == nil, err
		})
	} else {
		s.log.Debug("vault is not in a git work tree", "err", err)
	}
	if err := s.openWriteState(ctx); err != nil {
		fsys.Close()
		return nil, err
	}
	bg, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// The watcher starts before the first walk so that no change made
		// during indexing is missed (its events are applied after the
		// build): the walk watches each folder before it lists it
		// (watch.Open), instead of the watcher listing every folder first.
		// It is set up here, not in Open, so that the MCP handshake does
		// not wait for it.
		var w *watch.Watcher
		var onFolder func(rel string)
		if opts.Watch {
			var err error
			w, err = watch.Open(fsys.Dir(), vaultfs.IsIgnored, opts.Debounce)
			if err != nil {
				s.log.Warn("file watcher unavailable; changes are picked up when a hit is re-validated", "err", fsys.Redact(err.Error()))
				w = nil
			} else {
				defer w.Close()
				w.SetLogger(s.log)
				onFolder = w.AddFolder
			}
		}
		// The first build starts here (see build): the collector's pause,
		// and the snapshot (if any) read from now on, as nothing before
		// the walk's end needs it and, with the link graph filled from it,
		// it is most of a start from it. (Not before the watcher is set
		// up: on two cores, a decode beside the watcher's listing and the
		// MCP handshake made the handshake slower, 22 to 40 ms at the
		// median on the hub, for 6 ms less to the first answer.)
		pause := gcpause.Start(opts.PauseGC)
		peek := s.peekSnapshot()
		// The heap readied while the process started (see package
		// earlyheap), if any, is the snapshot's for a start from one, the
		// build's otherwise; it is over with the build (which waits for
		// the snapshot), ended once ready.
		var early, snapEarly, buildEarly *hugeheap.Early
		if opts.PauseGC > 0 {
			early = hugeheap.TakeEarly()
		}
		if peek.usable() {
			snapEarly = early
		} else {
			buildEarly = early
		}
		go func() { s.snapc <- s.readSnapshot(pause, peek, snapEarly) }()
		s.build(bg, pause, peek.usable(), onFolder, buildEarly)
		if early != nil {
			go func() { early.Wait().End() }()
		}
		if w != nil {
			if err := w.Run(bg, func(ev watch.Event) { s.apply(bg, ev) }); err != nil && bg.Err() == nil {
				s.log.Warn("file watcher stopped", "err", fsys.Redact(err.Error()))
			}
		}
	}()
	return s, nil
}

// repoStateBase names the write lock and the journal in a repository's git
// directory (vaultmcp.lock, vaultmcp-journal).
const repoStateBase = "vaultmcp"

// WriteLockFile is the write lock's file of a vault in a repository whose
// git directory is gitDir: a process holding it (internal/writelock) keeps
// every server's writes to that vault waiting, so that it sees the vault
// still (a backup).
func WriteLockFile(gitDir string) string {
	return filepath.Join(gitDir, repoStateBase+".lock")
}

// openWriteState decides where the write lock and the journal live: in the
// git directory when the vault is in a repository (DESIGN:
// .git/vaultmcp.lock), else keyed by the vault's path outside it, so that
// a vault that is not a repository gets no stray file: the lock in the
// system's temporary folder (where every vaultmcp since the first looks
// for it, so that an older one and a newer one exclude each other), the
// journal in Options.StateDir when set (it must outlive a reboot). It is
// decided once, here: a failure is an error of Open, never a silent
// fallback that would let two servers stop excluding each other.
func (s *Service) openWriteState(ctx context.Context) error {
	var dir, base string
	// jdir is the journal's folder when it is not beside the lock; old is
	// where versions before Options.StateDir kept it then.
	var jdir, old string
	if s.git != nil {
		gd, err := s.git.GitDir(ctx)
		if err != nil {
			return fmt.Errorf("locating the git directory for the write lock: %w", err)
		}
		dir, base = gd, repoStateBase
	} else if gd, ok, err := gitx.FindGitDir(s.fs.Dir()); err != nil {
		return fmt.Errorf("locating the git directory for the write lock: %w", err)
	} else if ok {
		// In a repository, but git cannot run (not installed, not on
		// PATH): the lock and the journal are still the repository's, the
		// ones a server that can run git uses on this vault.
		dir, base = gd, repoStateBase
	} else {
		sum := sha256.Sum256([]byte(s.fs.Dir()))
		dir, base = os.TempDir(), "vaultmcp-"+hex.EncodeToString(sum[:8])
		if s.opts.StateDir != "" {
			jdir, old = filepath.Join(s.opts.StateDir, base+"-journal"), filepath.Join(dir, base+"-journal")
		}
	}
	s.lockPath = filepath.Join(dir, base+".lock") // WriteLockFile in a repository
	s.lock = writelock.New(s.lockPath, s.opts.StuckAfter)
	if s.opts.ReadOnly {
		return nil
	}
	if jdir == "" {
		jdir = filepath.Join(dir, base+"-journal")
	}
	if old != "" {
		if fi, err := os.Stat(old); err == nil && fi.IsDir() {
			if s.oldJournal, err = journal.Open(old); err != nil {
				return fmt.Errorf("opening the write journal an earlier vaultmcp kept: %w", err)
			}
		}
	}
	j, err := journal.Open(jdir)
	if err != nil {
		return fmt.Errorf("opening the write journal: %w", err)
	}
	s.journal = j
	return nil
}

// beginWrite counts a write in progress, unless the service is closing.
func (s *Service) beginWrite() bool {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closing {
		return false
	}
	s.inflight.Add(1)
	return true
}

// Close waits for the writes in progress to finish (a started write is
// always finished and committed), stops the watcher and releases the vault.
func (s *Service) Close() error {
	s.closeMu.Lock()
	if !s.closing {
		close(s.closed)
	}
	s.closing = true
	s.closeMu.Unlock()
	s.firstAnswered()
	s.inflight.Wait()
	if s.snapshotDue.Swap(false) {
		s.writeSnapshot(context.Background())
	}
	s.cancel()
	s.wg.Wait()
	return s.fs.Close()
}

// FS returns the gatekeeper of this vault.
func (s *Service) FS() *vaultfs.Vault { return s.fs }

// Ready waits until the first index build is complete, reporting progress to
// the ctx's progress reporter (api.WithProgress) while it waits.
func (s *Service) Ready(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.buildErr
	default:
	}
	report := api.Progress(ctx)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if report != nil {
			done, total := s.progress()
			report(done, total, "indexing the vault")
		}
		select {
		case <-s.ready:
			if report != nil {
				_, total := s.progress()
				report(total, total, "index ready")
			}
			return s.buildErr
		case <-ctx.Done():
			return &api.Error{Code: api.CodeUnavailable, Message: s.texts(ctx).Get(eStillIndexing), Err: ctx.Err()}
		case <-tick.C:
		}
	}
}

func (s *Service) progress() (int, int) {
	s.progMu.Lock()
	defer s.progMu.Unlock()
	return s.progDone, s.progTotal
}

func (s *Service) setProgress(done, total int) {
	s.progMu.Lock()
	s.progDone, s.progTotal = done, total
	s.progMu.Unlock()
}

// startupRecovery finishes the writes a crash interrupted past their
// commit record (rolled forward), under the write lock, and returns what
// rolls back those that stopped before it: given the temporary files the
// first build's walk found (they are hidden, never indexed; finding them
// there spares a second walk of the vault), it removes them and releases
// the lock, so no write starts before. nil when the lock was not had
// exclusively (another server finishes its own writes).
func (s *Service) startupRecovery(ctx context.Context) (rollBack func(temps []string)) {
	release, exclusive, err := s.lock.Acquire(ctx)
	if err != nil {
		// Closed before the lock was had (a client that hung up at once,
		// a server that could not listen): nothing went wrong to warn of.
		if ctx.Err() == nil {
			s.log.Warn("could not take the write lock at start; interrupted writes will be finished before the next write", "err", s.fs.Redact(err.Error()))
		}
		return nil
	}
	if !exclusive {
		release()
		return nil
	}
	s.recover(ctx)
	return func(temps []string) {
		defer release()
		if n, err := s.fs.RemoveTemps(temps); err == nil && n > 0 {
			s.log.Info("rolled back writes interrupted by a crash before their commit record: removed their temporary files", "count", n)
		}
	}
}

// Stats describes the index.
type Stats struct {
	Notes, Files, Unindexed int
}

// Stats returns counts of the index (waiting for the first build).
func (s *Service) Stats(ctx context.Context) (Stats, error) {
	if err := s.Ready(ctx); err != nil {
		return Stats{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Stats{Notes: len(s.notes), Files: s.graph.Resolver().Len(), Unindexed: len(s.unindexed)}, nil
}

// parsed is one note read and parsed, ready to be put in the index.
type parsed struct {
	path string
	note *markdown.Note
	info vaultfs.FileInfo
	err  error
}

// testHookBuildStart, when set, runs before the first build starts.
var testHookBuildStart func()

// build walks the vault, parses the notes on every core and fills the
// index. pause is the collector's pause started with it: build ends it, or
// hands it to the work that waits for the first answer. onFolder, if not
// nil, is called with each folder the walk enters, before it is listed
// (the file watcher's AddFolder). early, if not nil, is the heap readied
// while the process started, for the build (its caller ends it).
func (s *Service) build(ctx context.Context, pause *gcpause.Pause, fromSnapshot bool, onFolder func(rel string), early *hugeheap.Early) {
	defer close(s.ready)
	handedOff := false // the work after the first answer closes settled
	defer func() {
		if !handedOff {
			close(s.settled)
		}
	}()
	if testHookBuildStart != nil {
		testHookBuildStart()
	}
	start := time.Now()
	defer func() { pause.End() }() // unless the work after the first answer took it over
	ph := phaseTimer{last: start}
	var rollBack func([]string)
	if !s.opts.ReadOnly { // never touch a read-only vault
		rollBack = s.startupRecovery(ctx)
		ph.done("recovery")
	}
	var files []vaultfs.FileInfo
	var temps []string
	skipped := make(map[string]string)
	snapc := s.snapc // being read
	var onTemp func(string)
	if rollBack != nil {
		onTemp = func(rel string) { temps = append(temps, rel) }
	}
	// The heap the notes will take is readied in huge pages (see
	// hugeheap: one fault for 2 MiB instead of 512) beside the walk, once
	// it has seen enough notes to make that worth a collection, unless
	// the notes will come from a snapshot (which readies its own), or it
	// was readied while the process started (early: then it is waited for
	// from that point on).
	// The burst is over when the build is.
	var readied <-chan struct{}
	var burst *hugeheap.Burst
	defer func() {
		if readied != nil {
			<-readied
			burst.End()
		}
	}()
	var walked int64
	readyAt := int64(-1)
	if s.opts.PauseGC > 0 && !fromSnapshot {
		readyAt = hugeheap.MinReady / buildHeapPerByte
	}
	// A heap readied early stands for the one the walk would ready: it is
	// waited for where that one is (not after a walk that found too few
	// notes for it to be worth the wait).
	err := s.fs.WalkWith(ctx, func(fi vaultfs.FileInfo) error {
		// Doubled when full: append grows a long slice by a quarter
		// (the hub's 6,570 files: 16 growths, 1.9 MB allocated and 1.4 MB
		// copied; doubled, 4, 1.7 MB and 0.7 MB), and before the heap is
		// readied each new 4 KiB of it is a page fault.
		if len(files) == cap(files) {
			files = slices.Grow(files, max(len(files), 1024))
		}
		files = append(files, fi)
		if fi.IsNote && readied == nil && readyAt >= 0 {
			size := fi.Size
			if size == 0 && fi.ModTime.IsZero() {
				size = unstattedNoteBytes // the walk did not stat it
			}
			switch walked += size; {
			case walked < readyAt:
			case early != nil:
				readied = early.Done()
			default:
				done := make(chan struct{})
				readied = done
				go func() {
					defer close(done)
					if burst = hugeheap.Ready(buildHeapMax); burst != nil {
						s.log.Debug("heap readied in huge pages", "bytes", burst.Bytes())
					}
				}()
			}
		}
		return nil
	}, func(rel string, err error) {
		s.log.Warn("skipped while indexing", "path", rel, "err", s.fs.Redact(err.Error()))
		skipped[rel] = s.fs.Redact(err.Error())
	}, vaultfs.WalkHooks{Temp: onTemp, Folder: onFolder, Unstatted: !fromSnapshot})
	if rollBack != nil {
		rollBack(temps) // what the walk saw, also of a walk cut short
	}
	if err != nil {
		<-snapc // its goroutines are done
		s.buildErr = &api.Error{Code: api.CodeInternal, Message: s.texts(ctx).Get(eIndexFailed, s.fs.Redact(err.Error())), Err: err}
		return
	}
	ph.done("walk")
	notes := make([]vaultfs.FileInfo, 0, len(files))
	for _, fi := range files {
		if fi.IsNote {
			notes = append(notes, fi)
		}
	}
	pause.Check()
	// The vault's language is detected from a sample of the notes walked,
	// while they are indexed (profile.go).
	var profc chan *profileChoice
	if s.opts.Lang == "" {
		profc = make(chan *profileChoice, 1)
		walked := slices.Clone(notes)
		go func() {
			profc <- s.detectProfile(func(yield func(string) bool) {
				for _, fi := range walked {
					if !yield(fi.Path) {
						return
					}
				}
			})
		}()
	}
	s.mu.Lock()
	for rel, reason := range skipped {
		s.unindexed[rel] = reason
	}
	// Every note's link texts are taken once the graph is filled: the
	// changes on the way need no record. Every file is known to the
	// resolver before any link is resolved, so each link is resolved once
	// instead of again for each file added. Notes unchanged since the
	// snapshot come from it (useSnapshot gives their links too); the others
	// are read. The graph is given the files (and those links) while the
	// first notes are read and analyzed, which do not need it: the graph
	// of a batch waits for graphFilled.
	snap := <-snapc
	ph.done("snapshot wait")
	changed, linkTextsKept, snapKept := true, false, false
	var fill func()
	if snap != nil {
		// The snapshot's link texts hold while no note and no file changed
		// (a new file can change what links resolve to: then a new
		// snapshot).
		notes, changed, linkTextsKept, snapKept, fill = s.useSnapshot(snap, files, notes)
		changed = changed || !linkTextsKept
	} else {
		g, paths := s.graph, pathsOf(files)
		fill = func() { fillGraph(g, paths, nil) }
	}
	graphFilled := make(chan struct{})
	if fill == nil {
		close(graphFilled)
	} else {
		go func() {
			defer close(graphFilled)
			fill()
		}()
	}
	s.mu.Unlock()
	ph.done("snapshot")
	s.setProgress(0, len(notes))
	if readied != nil {
		<-readied
		ph.done("heap")
		if early != nil && readied == early.Done() {
			if b := early.Wait(); b != nil {
				s.log.Debug("heap readied in huge pages", "bytes", b.Bytes(), "while_starting", true)
			}
		}
	}
	// Notes are read, parsed and indexed in batches, so that only one batch
	// of parsed notes (which hold their file's bytes) is alive at a time.
	// Each note is read and parsed on the index worker that analyzes it
	// (index.AddFunc), and the link graph (one lock, one core) is filled
	// while the index merges the batch; after the last batch's, the link
	// texts of every note are taken from it, still during the merge.
	var texts []index.LinkItem
	textsTaken := linkTextsKept
	indexed := 0
	var done atomic.Int64
	rd := s.fs.DirReader()
	defer rd.Close()
	bld := s.ix.NewBuild(len(notes)) // its batches take the memory of the one before
	for lo := 0; lo < len(notes) && ctx.Err() == nil; lo += buildBatch {
		batch := notes[lo:min(lo+buildBatch, len(notes))]
		last := lo+buildBatch >= len(notes)
		results := make([]parsed, len(batch))
		infos := make([]*noteInfo, len(batch))
		analyzed := make(chan struct{})
		graphDone := make(chan struct{})
		go func() {
			defer close(graphDone)
			<-analyzed
			<-graphFilled
			nl := make([]links.NoteLinks, 0, len(results))
			for i := range results {
				if r := &results[i]; r.err == nil && r.note != nil {
					nl = append(nl, links.NoteLinks{Path: r.path, Links: r.note.Links})
				}
			}
			s.graph.SetNotes(nl)
			// The build holds s.mu until this goroutine is done.
			for i, r := range results {
				if r.err == nil && r.note != nil {
					s.notes[r.path] = infos[i]
				}
			}
			if last && !textsTaken && ctx.Err() == nil {
				texts, textsTaken = s.linkTextItems(), true
			}
		}()
		if last {
			// The notes' term lists (for a removal) are encoded once the
			// first search is answered (index.DeferTermLists): that work
			// waits below, with the snapshot.
			s.ix.DeferTermLists()
		}
		s.mu.Lock()
		bld.AddFunc(len(batch), func(i int) (index.Item, bool) {
			if ctx.Err() != nil {
				return index.Item{}, false
			}
			r := s.readParseWith(rd.ReadWalked, batch[i])
			results[i] = r
			if d := done.Add(1); d%256 == 0 {
				s.setProgress(int(d), len(notes))
			}
			if r.err != nil {
				return index.Item{}, false
			}
			infos[i] = infoOf(r.note, r.info)
			return index.Item{Path: r.path, Note: r.note}, true
		}, func() { close(analyzed); ph.done("analysis") })
		ph.done("merge")
		<-graphDone
		ph.done("graph")
		for _, r := range results {
			switch {
			case r.err != nil:
				s.unindexed[r.path] = s.fs.Redact(r.err.Error())
			case r.note != nil:
				indexed++
			}
		}
		s.mu.Unlock()
		pause.Check()
	}
	bld.Done()
	s.setProgress(len(notes), len(notes))
	<-graphFilled // with no note to read, no batch waited for it
	s.mu.Lock()
	s.graph.TrackTextChanges(true)
	if !linkTextsKept {
		if !textsTaken {
			texts = s.linkTextItems()
		}
		s.setLinkTexts(texts)
	}
	s.mu.Unlock()
	ph.done("link texts")
	s.mu.RLock()
	notesN, unindexedN := len(s.notes), len(s.unindexed)
	s.mu.RUnlock()
	s.log.Debug("first build phases", ph.attrs...)
	took := time.Since(start).Round(time.Millisecond)
	// The profile (the vault's language, for the notes it writes) is not
	// needed by a search: the index is ready without waiting for its
	// detection (from a snapshot, reading its sample of notes was 5-10 ms
	// of a start of 100), and the line saying the vault is indexed, with
	// the profile, comes once it is decided. A write that needs it first
	// detects it itself (profileChoice), with the same answer.
	logIndexed := func(c *profileChoice) {
		if ctx.Err() != nil {
			// The service closed during the build (a server stopping
			// at start): what was read is not the vault's index.
			s.log.Info("first index stopped: the service is closing", "read", indexed, "files", len(files), "took", took)
			return
		}
		lang, why := c.said()
		s.log.Info("vault indexed", "notes", notesN, "read", indexed, "files", len(files), "unindexed", unindexedN, "took", took,
			"profile", lang, "profile_from", why)
	}
	if profc == nil {
		logIndexed(s.profileChoice())
	}
	// Notes the snapshot did not hold that could not be indexed now either
	// (a note over the size limit, an unreadable one) leave it as right as
	// it was: rewriting it at every start for them cost a whole snapshot's
	// encoding and writing (254 MB at 100k notes) to say the same.
	if snapKept && indexed == 0 {
		changed = false
	}
	writeSnap := s.opts.CacheDir != "" && !s.opts.CacheReadOnly && changed && ctx.Err() == nil
	if writeSnap && s.opts.CacheWriteOnClose {
		s.snapshotDue.Store(true)
		writeSnap = false
	}
	// What can wait is done once the first search is answered: encoding
	// the snapshot and the collections the pause put off would only delay
	// that answer on a machine with two cores.
	s.wg.Add(1)
	handedOff = true
	go func(pause *gcpause.Pause) {
		defer s.wg.Done()
		defer close(s.settled)
		// Once the work put off is done, the heap the build and the
		// snapshot grew is given back to the system: the runtime's own
		// scavenger keeps it (the heap was readied in huge pages, which it
		// does not break up), and a server lives for a whole agent
		// session. Measured here, 40 s after the first search: the
		// generated 10k-note vault's server held 423 MB after a first
		// build (121 MB after a start from the snapshot), the Obsidian
		// hub's 165 MB. Only for a build with the collector's pause
		// (PauseGC: a process serving this one vault, whose heap was
		// readied for it), not in a team server's projects (a collection
		// of the whole process each), and not when the service is closing
		// (vaultmcp search, a server stopping): the process gives it all
		// back as it ends.
		defer func() {
			select {
			case <-s.closed:
				return
			default:
			}
			if s.opts.PauseGC > 0 {
				t0 := time.Now()
				debug.FreeOSMemory()
				heapGivenBack.Add(1)
				s.log.Debug("heap given back after the first build", "took", time.Since(t0))
			}
		}()
		if profc != nil {
			// gen 0: an undecided profile is detected again after a change.
			// The line logs what the build detected: asking Profile here
			// would detect again, beside the first writes (the notes may
			// have changed since), for a log line.
			c := <-profc
			s.prof.CompareAndSwap(nil, c)
			logIndexed(c)
		}
		t := time.NewTimer(afterBuildWait)
		defer t.Stop()
		wctx := ctx
		select {
		case <-s.answered:
			// The answer is made; let it be written out first.
			grace := time.NewTimer(afterAnswerGrace)
			select {
			case <-grace.C:
			case <-s.closed:
				wctx = context.WithoutCancel(ctx)
			}
			grace.Stop()
		case <-t.C:
		}
		// The lists' slack goes first, before the term lists and the
		// snapshot allocate (a few lists at a time: searches go on).
		s.ix.Trim()
		s.ix.Settle()
		// A build large enough to be in the collector's lean pacing (see
		// gcpause.Check) keeps it while the snapshot is written: ended
		// before, GOGC alone let the heap grow by half what is live (the
		// generated 100k-note vault's peak, 900 MiB during the build,
		// reached 974-1,003 MiB while its snapshot was written). A smaller
		// one ends the pause now, which would otherwise let the writing
		// allocate up to the pause's limit without a collection.
		if writeSnap && pause.Lean() {
			pause.Check() // the limit from what is live now
			defer pause.End()
		} else {
			pause.End()
		}
		select {
		case <-s.closed:
			// A process that exits right after its first answer still
			// leaves the snapshot for the next start: Close waits for it
			// (a write already under way when Close comes is stopped, as
			// it always was).
			wctx = context.WithoutCancel(ctx)
		default:
		}
		if writeSnap {
			s.writeSnapshot(wctx)
		}
	}(pause)
	pause = &gcpause.Pause{} // the goroutine ends it
}

// heapGivenBack counts the heaps given back after a first build (tests).
var heapGivenBack atomic.Int64

// afterBuildWait is how long the work put off until the first answer
// waits for one at most, and afterAnswerGrace how long after the answer is
// made (it is still to be encoded and written out).
// (Variables for the tests.)
var (
	afterBuildWait   = 500 * time.Millisecond
	afterAnswerGrace = 20 * time.Millisecond
)

// Settled waits until the work the first build put off until its first
// search was answered (trimming the posting lists, encoding the notes'
// term lists, writing the snapshot) is done, or ctx ends: for measuring
// what the index keeps once it settles (vaultmcp bench). Nothing else needs
// to wait for it.
func (s *Service) Settled(ctx context.Context) error {
	select {
	case <-s.settled:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// firstAnswered says the first answer after the build has been given.
func (s *Service) firstAnswered() {
	s.answeredOnce.Do(func() { close(s.answered) })
}

// phaseTimer times the steps of the first build, for a debug log line.
type phaseTimer struct {
	last  time.Time
	attrs []any
}

// done ends the step called name (a step run once per batch adds up).
func (p *phaseTimer) done(name string) {
	now := time.Now()
	d := now.Sub(p.last)
	p.last = now
	for i := 0; i < len(p.attrs); i += 2 {
		if p.attrs[i] == name {
			p.attrs[i+1] = p.attrs[i+1].(time.Duration) + d
			return
		}
	}
	p.attrs = append(p.attrs, name, d)
}

// buildHeapPerByte is about what the first build allocates for each byte
// of the notes it reads, with the collector paused: 140 MB for the hub's
// 14 MB (the file, its parse, the analysis's raw postings, the merge).
// Its heap is readied in huge pages once the walk has seen notes that will
// take hugeheap.MinReady.
const buildHeapPerByte = 10

// buildHeapMax is the heap the first build readies in huge pages: the
// collector's pause (gcpause.DefaultLimit), past which the build's
// collections reuse the memory already taken. Address space only, until
// used. (Readying 1.2 GB for the generated 100k-note vault made its first
// build no faster: alternated runs 17.5 and 17.7 s against 17.5 and 16.0
// s.)
const buildHeapMax = 512 << 20

// unstattedNoteBytes is what a note the first build's walk did not stat
// (vaultfs.WalkHooks.Unstatted: every note is read, and statted then) is
// taken to hold, for when to ready the heap: the Obsidian hub's notes
// average 2.1 KiB, the generated vaults' 3.2 KiB.
const unstattedNoteBytes = 2 << 10

// buildBatch is how many notes the first build parses and indexes at once.
const buildBatch = 8192

// parseAll reads and parses notes with one worker per CPU, keeping order.
func (s *Service) parseAll(ctx context.Context, files []vaultfs.FileInfo) []parsed {
	out := make([]parsed, len(files))
	workers := runtime.GOMAXPROCS(0)
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if int(i) >= len(files) || ctx.Err() != nil {
					return
				}
				out[i] = s.readParseWalked(files[i])
			}
		}()
	}
	wg.Wait()
	return out
}

func (s *Service) readParse(rel string) parsed {
	data, info, err := s.fs.ReadNote(rel)
	if vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
		// A note being replaced (temp file renamed over it) can look missing
		// for an instant: look once more before forgetting it.
		data, info, err = s.fs.ReadNote(rel)
	}
	if err != nil {
		return parsed{path: rel, err: err}
	}
	return parsed{path: rel, note: markdown.ParseOwned(path.Base(rel), data), info: info} // data is not kept
}

// readParseWalked is readParse for a file Walk just listed (fast path).
func (s *Service) readParseWalked(fi vaultfs.FileInfo) parsed {
	return s.readParseWith(s.fs.ReadWalked, fi)
}

// readParseWith is readParseWalked through read (a vaultfs.DirReader's).
func (s *Service) readParseWith(read func(vaultfs.FileInfo) ([]byte, vaultfs.FileInfo, error), fi vaultfs.FileInfo) parsed {
	data, info, err := read(fi)
	if err != nil {
		return parsed{path: fi.Path, err: err}
	}
	return parsed{path: fi.Path, note: markdown.ParseOwned(path.Base(fi.Path), data), info: info} // data is not kept
}

// infoOf keeps what the service needs of a parsed note. Every string is
// cloned: the parser's strings are slices of the file's bytes, and keeping one
// would keep the whole file in memory.
func infoOf(n *markdown.Note, fi vaultfs.FileInfo) *noteInfo {
	// The strings are copied into one string for the note, and the chunks'
	// headings share one array: a note's are replaced all together, and a
	// copy of each string and an array for each chunk were a third of the
	// objects the collector marked again at every cycle of the generated
	// 100k-note vault's first build.
	size := len(n.Title) + len(n.Type) + len(n.Status)
	nstr := len(n.Tags)
	for _, t := range n.Tags {
		size += len(t)
	}
	for i := range n.Chunks {
		nstr += len(n.Chunks[i].Headings)
		for _, h := range n.Chunks[i].Headings {
			size += len(h)
		}
	}
	a := strarena.New(size)
	strs := make([]string, 0, nstr)
	copyAll := func(in []string) []string {
		if len(in) == 0 {
			return nil
		}
		lo := len(strs)
		for _, s := range in {
			strs = append(strs, a.Copy(s))
		}
		return strs[lo:len(strs):len(strs)]
	}
	ni := &noteInfo{
		title:  a.Copy(n.Title),
		typ:    a.Copy(n.Type),
		status: a.Copy(n.Status),
		tags:   copyAll(n.Tags),
		file:   fi,
	}
	ni.chunks = make([]chunkSpan, len(n.Chunks))
	for i, c := range n.Chunks {
		ni.chunks[i] = chunkSpan{headings: copyAll(c.Headings), start: c.StartLine, end: c.EndLine}
	}
	return ni
}

// put replaces the indexed state of one note. Caller holds s.mu.
func (s *Service) put(r parsed) {
	if r.err != nil {
		s.putFailedLocked(r)
		s.syncLinkTexts()
		return
	}
	delete(s.unindexed, r.path)
	s.gen.Add(1)
	s.ix.Add(r.path, r.note)
	s.notes[r.path] = infoOf(r.note, r.info)
	s.graph.SetNote(r.path, r.note.Links)
	s.syncLinkTexts(r.path)
}

// putFailedLocked is put's part for a file that could not be read or
// parsed: it is forgotten as a note, and kept as an unindexed file unless
// it is gone. The link texts are the caller's to update. Caller holds s.mu.
func (s *Service) putFailedLocked(r parsed) {
	s.forgetLocked(r.path)
	if vaultfs.CodeOf(r.err) != vaultfs.CodeNotFound {
		s.unindexed[r.path] = s.fs.Redact(r.err.Error())
		s.graph.AddFile(r.path)
	}
}

// dropLocked forgets one file. Caller holds s.mu.
func (s *Service) dropLocked(rel string) {
	s.forgetLocked(rel)
	s.syncLinkTexts()
}

// forgetLocked is dropLocked without the link-text update, for callers that
// forget many files and update the link texts once at the end: a note that
// many of them link to (a folder's MOC) would otherwise have its link texts
// gathered again after each one, and a removed folder of n notes cost n
// times the vault. Caller holds s.mu.
func (s *Service) forgetLocked(rel string) {
	if _, ok := s.notes[rel]; ok {
		s.ix.Remove(rel)
		delete(s.notes, rel)
	}
	delete(s.unindexed, rel)
	s.graph.Remove(rel)
}

// Refresh re-reads one path (a note or attachment) and updates the index and
// graph: used after writes and by the watcher.
func (s *Service) Refresh(rel string) {
	fi, err := s.fs.Stat(rel)
	switch {
	case vaultfs.CodeOf(err) == vaultfs.CodeNotANote:
		// The file became a folder (or a FIFO, ...): forget the file
		// alone. The notes now in that folder are the watcher's to add;
		// dropping the tree here would forget them.
		s.mu.Lock()
		s.dropLocked(rel)
		s.mu.Unlock()
	case err != nil:
		s.mu.Lock()
		s.dropTreeLocked(rel)
		s.mu.Unlock()
	case fi.IsNote:
		r := s.readParse(rel)
		s.mu.Lock()
		s.put(r)
		s.mu.Unlock()
	default:
		s.mu.Lock()
		s.graph.AddFile(rel)
		s.syncLinkTexts()
		s.mu.Unlock()
	}
}

// dropTreeLocked forgets rel and everything under rel/ (a removed folder).
func (s *Service) dropTreeLocked(rel string) {
	s.forgetTreeLocked(rel)
	s.syncLinkTexts()
}

// forgetTreeLocked is dropTreeLocked without the link-text update (see
// forgetLocked). Caller holds s.mu.
func (s *Service) forgetTreeLocked(rel string) {
	s.forgetLocked(rel)
	for _, p := range s.graph.RemoveTree(rel) {
		s.forgetLocked(p)
	}
	for p := range s.unindexed {
		if vpath.Below(p, rel) {
			delete(s.unindexed, p)
		}
	}
}

// apply handles one batch of watcher events, then tells the subscribers
// which notes changed (notify.go).
func (s *Service) apply(ctx context.Context, ev watch.Event) {
	if ev.Rescan {
		// The watcher asks for a rescan after lost events and when the
		// vault's folder was replaced: then the folder at the vault's path
		// is opened again first, or every read would still go to the old
		// one (see vaultfs.Reopen).
		if switched, err := s.fs.Reopen(); switched {
			s.log.Warn("the vault folder was replaced; reading the new one")
		} else if err != nil {
			s.log.Warn("the vault folder is gone", "err", s.fs.Redact(err.Error()))
		}
		s.notify(s.rescan(ctx))
		return
	}
	var changed, files []string
	defer func() { s.notify(changed) }()
	for _, p := range ev.Paths {
		if ctx.Err() != nil {
			return
		}
		rel, err := vaultfs.Clean(p)
		if err != nil || vaultfs.IsIgnored(rel) {
			continue
		}
		if s.isDir(rel) {
			// A folder appeared (or was renamed into place): pick up what it
			// holds. Only that folder is walked (a write that makes a folder
			// would otherwise cost a walk of the whole vault); where a renamed
			// folder came from has an event of its own, which drops its tree.
			changed = append(changed, s.rescanUnder(ctx, rel)...)
			continue
		}
		if !vaultfs.IsNoteName(rel) {
			changed = append(changed, s.notesUnder(rel)...) // a folder may have gone
		}
		files = append(files, rel)
		changed = append(changed, rel)
	}
	// The files of a batch are read on every core and put in the index
	// at once: a git checkout or a removed folder brings thousands in one
	// batch, and one at a time they took seconds to tens of seconds.
	s.refreshMany(files)
}

func (s *Service) isDir(rel string) bool {
	_, err := s.fs.Stat(rel)
	return err != nil && vaultfs.CodeOf(err) == vaultfs.CodeNotANote
}

// rescan walks the whole vault and reconciles the index with the disk:
// changed files are re-read, vanished ones removed, new ones added. It
// returns the paths it re-read or removed.
func (s *Service) rescan(ctx context.Context) []string { return s.rescanUnder(ctx, "") }

// rescanUnder is rescan for the files under the folder dir ("" for all).
func (s *Service) rescanUnder(ctx context.Context, dir string) (touched []string) {
	// A file at dir itself is gone too: dir is a folder now (a note
	// replaced by a folder of its name).
	under := func(p string) bool { return vpath.Within(p, dir) }
	seen := make(map[string]bool)
	var changed []vaultfs.FileInfo
	err := s.fs.WalkUnder(ctx, dir, func(fi vaultfs.FileInfo) error {
		seen[fi.Path] = true
		s.mu.RLock()
		ni, known := s.notes[fi.Path]
		hasFile := s.graph.Resolver().Has(fi.Path)
		_, bad := s.unindexed[fi.Path]
		s.mu.RUnlock()
		switch {
		case fi.IsNote && (!known || !sameVersion(ni.file, fi)):
			changed = append(changed, fi)
		case fi.IsNote && bad:
			changed = append(changed, fi)
		case !fi.IsNote && !hasFile:
			s.mu.Lock()
			s.graph.AddFile(fi.Path)
			s.syncLinkTexts()
			s.mu.Unlock()
		}
		return nil
	}, nil)
	if err != nil {
		s.log.Warn("rescan failed", "err", s.fs.Redact(err.Error()))
		return nil
	}
	results := s.parseAll(ctx, changed)
	if ctx.Err() != nil {
		return nil // parseAll stopped part way: its results are incomplete
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for _, p := range s.graph.Resolver().Files() {
		if !seen[p] && under(p) {
			gone = append(gone, p)
		}
	}
	s.graph.RemoveFiles(gone) // at once: see links.Graph.RemoveFiles
	for _, p := range gone {
		s.forgetLocked(p)
		touched = append(touched, p)
	}
	s.putManyLocked(results)
	for _, r := range results {
		touched = append(touched, r.path)
	}
	for p := range s.unindexed {
		if !seen[p] && under(p) {
			delete(s.unindexed, p)
		}
	}
	return touched
}

// sameVersion reports whether two reads saw the same version of a file.
func sameVersion(a, b vaultfs.FileInfo) bool {
	return a.Size == b.Size && a.ModTime.Equal(b.ModTime)
}

// readHit reads an indexed note to quote it, and re-validates the index
// against it: when the file changed or vanished since it was indexed, the
// index is updated and changed is true; ok is false when it could not be
// read.
func (s *Service) readHit(rel string) (text string, ok, changed bool) {
	s.mu.RLock()
	ni, known := s.notes[rel]
	s.mu.RUnlock()
	if !known {
		return "", false, true
	}
	if text, read, hit := s.hits.get(rel, ni.file); hit && s.fs.Unchanged(read) {
		return text, true, false
	}
	data, fi, err := s.fs.ReadWalked(ni.file)
	if err != nil {
		s.hits.drop(rel)
		s.Refresh(rel)
		return "", false, true
	}
	if !sameVersion(ni.file, fi) {
		s.hits.drop(rel)
		r := parsed{path: rel, note: markdown.Parse(path.Base(rel), data), info: fi}
		s.mu.Lock()
		s.put(r)
		s.mu.Unlock()
		return string(data), true, true
	}
	text = string(data)
	s.hits.put(rel, fi, text)
	return text, true, false
}

// resolveNote resolves a client path for reading. A path that names no
// file but differs from a note's only in letter case or Unicode
// normalisation, or whose name a wiki-link would resolve to a note
// elsewhere ("context.md" for 02-wiki/go/context.md), is refused with
// NOT_FOUND naming that note: an agent often spells a path from a link it
// read, and links ignore both. A path the gatekeeper refuses is refused at
// once; any other is resolved again once the first build is done (a call
// made earlier waits for it, as its caller would): the build first
// finishes or undoes a write a crash interrupted, which moves, creates and
// removes notes (a note a rolled-forward move created was NOT_FOUND to a
// call made while the start finished the move).
func (s *Service) resolveNote(ctx context.Context, field, p string) (string, error) {
	rel, err := s.fs.Resolve(p, vaultfs.Read)
	if err == nil || vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
		select {
		case <-s.ready:
		default:
			if s.Ready(ctx) == nil { // else the caller tells why it cannot wait
				rel, err = s.fs.Resolve(p, vaultfs.Read)
			}
		}
	}
	if err == nil {
		return rel, nil
	}
	var ve *vaultfs.Error
	if !errors.As(err, &ve) || ve.Code != vaultfs.CodeNotFound {
		return "", fieldErr(field, err)
	}
	asked, cerr := vaultfs.Clean(p)
	if cerr != nil || s.Ready(ctx) != nil {
		return "", fieldErr(field, err)
	}
	s.mu.RLock()
	r := s.graph.Resolver()
	near := r.SameName(asked)
	if near == "" {
		name := path.Base(asked)
		if to, ok := r.Resolve(asked, strings.TrimSuffix(name, path.Ext(name))); ok && to != asked && vaultfs.IsNoteName(to) {
			near = to
		}
	}
	s.mu.RUnlock()
	if near == "" {
		return "", fieldErr(field, err)
	}
	return "", &api.Error{Code: string(ve.Code), Field: field, Message: s.texts(ctx).Get(eNotFoundNear, ve.Detail(), vaultfs.QuotePath(near)), Err: err}
}

// textsByLang holds the texts of every language of the catalogue, for a
// call whose context names the language its caller reads (api.WithLang: a
// team server's client).
var textsByLang = sync.OnceValue(catalogue.All)

// Languages lists the languages the vault's warnings and refusals are
// worded in (see api.WithLang), sorted; one slice for every caller (a team
// server asks at each request), not to be modified.
var Languages = sync.OnceValue(func() []string { return slices.Sorted(maps.Keys(catalogue)) })

// texts are the texts of the language ctx names (api.WithLang), when the
// catalogue has it; the vault's own (Options.Lang) otherwise.
func (s *Service) texts(ctx context.Context) *texts {
	if lang := api.LangFrom(ctx); lang != "" {
		if t, ok := textsByLang()[msgcat.Base(lang)]; ok {
			return t
		}
	}
	return s.msg
}

// writePath resolves the path a write names (field: the argument's name)
// to the path it lands at: through a symbolic link inside the vault, the
// path the link leads to, which the write then names throughout (the
// commit, the index, the answer: git refuses a path beyond a symbolic link,
// so the commit would miss the file). via says so, for the answer ("" when
// p names the note itself).
func (s *Service) writePath(m *texts, field, p string, acc vaultfs.Access) (rel, via string, err error) {
	return s.resolveWrite(m, field, p, acc, s.fs.Resolve)
}

// newPath is writePath for a write that may create the note under a name
// the client chose (vault_write_note, vault_move's to): the files and
// folders it would create must have portable names (vaultfs.ResolveNew).
func (s *Service) newPath(m *texts, field, p string, acc vaultfs.Access) (rel, via string, err error) {
	return s.resolveWrite(m, field, p, acc, s.fs.ResolveNew)
}

func (s *Service) resolveWrite(m *texts, field, p string, acc vaultfs.Access, resolve func(string, vaultfs.Access) (string, error)) (rel, via string, err error) {
	rel, err = resolve(p, acc)
	if err != nil {
		return "", "", fieldErr(field, err)
	}
	if c, cerr := vaultfs.Clean(p); cerr == nil && c != rel {
		via = m.Get(wThroughLink, c, rel)
	}
	return rel, via, nil
}

// fieldErr names the input field in a gatekeeper error.
func fieldErr(field string, err error) error {
	var ve *vaultfs.Error
	if errors.As(err, &ve) {
		return &api.Error{Code: string(ve.Code), Field: field, Message: ve.Detail(), Err: err}
	}
	return err
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// errorf builds an internal error with the vault path redacted.
func (s *Service) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &api.Error{Code: api.CodeInternal, Message: s.fs.Redact(err.Error()), Err: err}
}

// refreshMany is Refresh for the many paths of one write (a large move
// rewrites thousands) or of one batch of the watcher (a git checkout): the
// notes are read and parsed on every core and put in the index as one
// batch. Keep in step with Refresh.
func (s *Service) refreshMany(rels []string) {
	if len(rels) < refreshBatchMin {
		for _, rel := range rels {
			s.Refresh(rel)
		}
		return
	}
	type item struct {
		rel  string
		fi   vaultfs.FileInfo
		err  error
		note parsed
	}
	items := make([]item, len(rels))
	parallel(len(rels), func(i int) {
		it := &items[i]
		it.rel = rels[i]
		it.fi, it.err = s.fs.Stat(it.rel)
		if it.err == nil && it.fi.IsNote {
			it.note = s.readParse(it.rel)
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	var notes []parsed
	var gone []string
	for _, it := range items {
		switch {
		case vaultfs.CodeOf(it.err) == vaultfs.CodeNotANote:
			s.forgetLocked(it.rel) // a folder now: see Refresh
		case it.err != nil:
			gone = append(gone, it.rel)
		case !it.fi.IsNote:
			s.graph.AddFile(it.rel)
		default:
			notes = append(notes, it.note)
		}
	}
	s.forgetTreesLocked(gone)
	s.putManyLocked(notes)
}

// forgetTreesLocked is forgetTreeLocked for many paths, in one pass over the
// files known: each forgetTreeLocked looks at every file of the vault, and
// a git checkout that removes thousands of notes spent seconds on it.
// Caller holds s.mu.
func (s *Service) forgetTreesLocked(rels []string) {
	if len(rels) == 0 {
		return
	}
	gone := make(map[string]bool, len(rels))
	for _, r := range rels {
		gone[r] = true
	}
	// under reports whether p or one of its folders is gone.
	under := func(p string) bool {
		for {
			if gone[p] {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				return false
			}
			p = p[:i]
		}
	}
	var files []string
	for _, p := range s.graph.Resolver().Files() {
		if under(p) {
			files = append(files, p)
		}
	}
	s.graph.RemoveFiles(files) // at once: see links.Graph.RemoveFiles
	for _, p := range files {
		s.forgetLocked(p)
	}
	for _, r := range rels {
		s.forgetLocked(r) // a note the graph does not hold as a file
	}
	for p := range s.unindexed {
		if under(p) {
			delete(s.unindexed, p)
		}
	}
}

// putManyLocked is put for many notes at once: one index merge, and one
// link-text update for all of them (with those of the files forgotten
// before it: see forgetLocked). Keep in step with put. Caller holds s.mu
// for writing.
func (s *Service) putManyLocked(rs []parsed) {
	var batch []index.Item
	for _, r := range rs {
		if r.err != nil {
			s.putFailedLocked(r)
			continue
		}
		batch = append(batch, index.Item{Path: r.path, Note: r.note})
	}
	if len(batch) > 0 {
		s.gen.Add(1)
		s.ix.AddBatch(batch)
	}
	put := make([]string, 0, len(batch))
	withLinks := make([]links.NoteLinks, 0, len(batch))
	for _, r := range rs {
		if r.err == nil {
			delete(s.unindexed, r.path)
			s.notes[r.path] = infoOf(r.note, r.info)
			withLinks = append(withLinks, links.NoteLinks{Path: r.path, Links: r.note.Links})
			put = append(put, r.path)
		}
	}
	s.graph.SetNotes(withLinks) // at once: see links.Graph.RemoveFiles
	s.syncLinkTexts(put...)
}

// refreshBatchMin is the number of paths from which refreshMany batches.
const refreshBatchMin = 16

// parallel runs f(0..n-1) on every core.
func parallel(n int, f func(i int)) {
	workers := min(n, max(2, runtime.GOMAXPROCS(0)))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
