package teamserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/par"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// Defaults of the server.
const (
	DefaultRateLimit = 50  // requests per second per key
	DefaultRateBurst = 100 // requests a key may send at once
	// IdemTTL is how long an idempotency record is kept.
	IdemTTL = 24 * time.Hour
	// keyTouchEvery bounds how often a key's last use is written.
	keyTouchEvery = time.Minute
)

// Crash points of the test hook (Config.CrashAt): the server kills itself
// with SIGKILL there, to prove that a retry after a crash is applied once.
const (
	CrashBeforeApply = "before-apply" // after the idempotency record, before the write
	CrashAfterApply  = "after-apply"  // after the write, before its answer is recorded
)

// Config configures a Server.
type Config struct {
	Data *Data
	// Lang is the language of the MCP tools' output and of every vault's new
	// notes: en or pt. "" (as in local mode without VAULT_LANG): output in
	// English, each project's notes in its own vault's language (detected).
	Lang   string
	Logger *slog.Logger
	// Now is the clock (tests set it); nil means time.Now.
	Now func() time.Time
	// RateLimit is the sustained requests per second allowed per key (0:
	// no limit) and RateBurst how many may come at once.
	RateLimit float64
	RateBurst int
	// NoSnapshots turns the index snapshots of the vaults off.
	NoSnapshots bool
	// PublicURL is the server's address as clients reach it (behind a
	// proxy), for the protected-resource metadata; "" derives it from each
	// request.
	PublicURL string
	// OAuth, when set, also accepts JWT access tokens of an external
	// identity provider as Authorization: Bearer (resource-server mode):
	// vault:read for reads, vault:write for writes (it implies read). The
	// token's subject stands for a key with every project in scope.
	OAuth *oauth.Verifier
	// CrashAt is a test hook (see the Crash* constants); "" in production.
	CrashAt string

	// Replicas (a store that implements teamstore.Leases: PostgreSQL).
	// Advertise is the URL other replicas forward this one's requests to
	// (--advertise); "" makes Serve use the address it listens on.
	Advertise string
	// LeaseTTL is how long a vault lease lasts unless renewed (it is renewed
	// every third of it); 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
}

// Server is the team server: the REST API over the projects of a data
// directory.
type Server struct {
	// storeWaitTest and afterApply are the tests': a shorter storeWait, and
	// a call once a write is applied, before its answer is recorded.
	storeWaitTest time.Duration
	afterApply    func()

	cfg      Config
	store    teamstore.Store
	log      *slog.Logger
	now      func() time.Time
	instance string // this process, as the owner of idempotency records
	lock     *flock.Flock
	limiter  *limiter
	// searches admits the searches of every project that run at once, one
	// a core, the others waiting in order (par.Gate). `vaultmcp bench team
	// --clients 64` on the hub, the same build with and without the gate
	// alternated (4 pairs): search p99 46.8-56.6 ms against 53.4-61.8 ms,
	// slowest 83-100 ms against 100-119 ms, searches a second within the
	// noise (2,852-3,392 against 2,850-3,327).
	searches *par.Gate

	mu       sync.Mutex
	projects map[string]*project // by id
	// unopened are the projects whose vault could not be opened (its
	// folder missing or unreadable, its clone impossible): the server runs
	// without them, answers their requests 503, and tries again once
	// openRetry has passed (at a request, or in upkeep). By id, under mu.
	unopened map[string]openFailure

	touchMu sync.Mutex
	touched map[string]time.Time // key id -> last TouchKey
	// touchSweepAt is the size at which touched drops its old entries.
	touchSweepAt int

	// writes counts the writes in flight, so that Close waits for them
	// (inflightWrites is the same count, for the metrics).
	writes         sync.WaitGroup
	inflightWrites atomic.Int64

	mcp mcpHandlers
	// stopping is closed when a shutdown starts.
	stopping chan struct{}
	stopped  sync.Once

	// rep is the coordination with other replicas (nil on SQLite).
	rep *replication
	met *serverMetrics

	// runningTokens are the idempotency tokens of the writes in flight in
	// this process (settle.go leaves them alone).
	runMu         sync.Mutex
	runningTokens map[string]bool
	// stopBg ends the background work of a server without replicas.
	stopBg context.CancelFunc
	bgDone sync.WaitGroup
	// purgedAt is when the expired idempotency records were last removed.
	purgeMu  sync.Mutex
	purgedAt time.Time
}

func (s *Server) stopOnce() { s.stopped.Do(func() { close(s.stopping) }) }

// project is one open project: its vault service and the lock that keeps
// the API's bookkeeping of a write next to the write itself.
type project struct {
	meta teamstore.Project
	svc  *vault.Service
	dir  string
	// mu serialises the API's writes to this project, so that a check of
	// If-Match, the write and its bookkeeping happen as one step.
	mu sync.Mutex
	// book is held shared by each write of the server from before it is
	// applied until its bookkeeping is stored, and alone by a read that
	// gives a note found on disk its id (ensure): so that a read never
	// takes a note a write has just made, moved or deleted for one changed
	// outside the server. Taken before mu, never twice by one write.
	book   sync.RWMutex
	hashes hashCache
	git    *repo
	// hold is the lease this replica holds on the vault (replicas only):
	// nil when it holds none and keeps the clone as a standby.
	hold atomic.Pointer[heldLease]
	// refreshing coalesces the refreshes that news of a version asks for.
	refreshing, refreshAgain atomic.Bool
	// polled is when followRemote last fetched the vault's remote (Unix
	// nanoseconds, 0: never).
	polled atomic.Int64
}

// New opens every project of the data directory, takes the directory's
// server lock, and settles the idempotency records a crashed server left
// running.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Data == nil {
		return nil, errors.New("teamserver: no data directory")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l, err := cfg.Data.lock()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		store:    cfg.Data.Store,
		log:      cfg.Logger,
		now:      cfg.Now,
		instance: teamstore.NewID(),
		lock:     l,
		limiter:  newLimiter(cfg.RateLimit, cfg.RateBurst, cfg.Now),
		searches: par.NewGate(0),
		projects: make(map[string]*project),
		unopened: make(map[string]openFailure),
		touched:  make(map[string]time.Time),
		stopping: make(chan struct{}),
	}
	s.met = newServerMetrics(s)
	s.removeCloneLeftovers()
	s.moveRemovedVaults(ctx)
	if leases, ok := s.store.(teamstore.Leases); ok {
		// Replicas: vaults are opened as their leases are taken (replica.go),
		// and each settles the writes its previous owner left running.
		s.rep = newReplication(s, leases)
		s.purgedAt = s.now()
		if n, err := s.store.PurgeIdem(ctx, s.purgedAt); err == nil && n > 0 {
			s.log.Info("expired idempotency records removed", "count", n)
		}
		return s, nil
	}
	ps, err := s.store.Projects(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	for _, p := range ps {
		// One vault that cannot be opened does not keep the others from
		// being served (see unopened).
		if _, err := s.openOrMark(ctx, p); err != nil && ctx.Err() != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.recover(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("settling the writes a previous server left unanswered: %w", err)
	}
	s.purgedAt = s.now()
	if n, err := s.store.PurgeIdem(ctx, s.purgedAt); err == nil && n > 0 {
		s.log.Info("expired idempotency records removed", "count", n)
	}
	bg, stop := context.WithCancel(context.Background())
	s.stopBg = stop
	s.bgDone.Add(1)
	go func() {
		defer s.bgDone.Done()
		s.settleLoop(bg)
	}()
	return s, nil
}

// open starts the vault service of a project (once). A vault kept in a git
// remote is cloned first when this data directory has no clone yet, and the
// clone brought to the remote's branch.
func (s *Server) open(ctx context.Context, p teamstore.Project) (*project, error) {
	s.mu.Lock()
	pr, ok := s.projects[p.ID]
	s.mu.Unlock()
	if ok {
		return pr, nil
	}
	dir := s.cfg.Data.VaultDir(p.ID)
	if p.Remote != "" {
		if err := s.ensureClone(ctx, p); err != nil {
			return nil, fmt.Errorf("project %s: %w", p.Name, err)
		}
		if err := syncClone(ctx, s.log.With("project", p.Name), dir, p.Branch); err != nil {
			if s.rep != nil {
				return nil, fmt.Errorf("project %s: %w", p.Name, err)
			}
			// One server (SQLite): serve the clone as it is.
			s.log.Warn("the vault's git remote cannot be read; serving the clone as it is (writes fail until the remote answers)", "project", p.Name, "err", gitx.RedactURL(err.Error()))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr, ok := s.projects[p.ID]; ok {
		return pr, nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("project %s: its vault folder %s is missing", p.Name, dir)
	}
	opts := vault.Options{Dir: dir, Lang: s.cfg.Lang, Logger: s.log.With("project", p.Name), Watch: true, Now: s.now, SearchGate: s.searches}
	if !s.cfg.NoSnapshots {
		opts.CacheDir = s.cfg.Data.CacheDir()
	}
	svc, err := vault.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", p.Name, err)
	}
	g, err := openRepo(ctx, dir)
	if err != nil {
		svc.Close()
		return nil, fmt.Errorf("project %s: %w", p.Name, err)
	}
	pr = &project{meta: p, svc: svc, dir: dir, git: g}
	s.projects[p.ID] = pr
	s.log.Info("project open", "project", p.Name, "id", p.ID)
	return pr, nil
}

// project finds an open project by id or name, opening one added since the
// server started, or one that could not be opened once openRetry has
// passed (before that, its *UnopenedError again).
func (s *Server) project(ctx context.Context, ref string) (*project, error) {
	s.mu.Lock()
	for _, pr := range s.projects {
		if pr.meta.ID == ref || pr.meta.Name == ref {
			s.mu.Unlock()
			return pr, nil
		}
	}
	s.mu.Unlock()
	pctx, cancel := s.storeCtx(ctx)
	p, err := s.store.Project(pctx, ref)
	cancel()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	f, failed := s.unopened[p.ID]
	if failed && s.claimRetryLocked(p.ID, s.now()) {
		failed = false // this request tries again
	}
	s.mu.Unlock()
	if failed {
		return nil, &UnopenedError{Project: p.Name, Err: f.err}
	}
	return s.openOrMark(ctx, p)
}

// claimRetryLocked says whether the unopened project id is due to be tried
// again at now, and if so claims that attempt: the next is due openRetry
// after it, so while it runs the other requests (and the upkeep) are
// answered as before instead of each attempting the open (a clone) at
// once. With s.mu held.
func (s *Server) claimRetryLocked(id string, now time.Time) bool {
	f, failed := s.unopened[id]
	if !failed || now.Sub(f.at) < openRetry {
		return false
	}
	f.at = now
	s.unopened[id] = f
	return true
}

// openRetry is how long the requests of a project that could not be
// opened are answered 503 before it is tried again: a failed open can cost
// a clone attempt, and would otherwise be paid by every request.
const openRetry = 10 * time.Second

// openFailure is why and when a project could not be opened.
type openFailure struct {
	meta teamstore.Project
	at   time.Time
	err  error
}

// UnopenedError is the error of a project whose vault cannot be opened
// (its folder missing, unreadable or not a git repository; its remote not
// cloned): the server serves the others and tries it again.
type UnopenedError struct {
	Project string
	Err     error
}

func (e *UnopenedError) Error() string {
	return fmt.Sprintf("project %s cannot be opened: %v", e.Project, e.Err)
}

func (e *UnopenedError) Unwrap() error { return e.Err }

// openOrMark opens a project; when that fails for a reason of the vault
// (not ctx's end), the project is marked unopened (logged once, as an
// error, and counted in the metrics) and an *UnopenedError returned. A
// project that opens after failing first settles the writes that earlier
// processes left running in it, which the start could not.
func (s *Server) openOrMark(ctx context.Context, p teamstore.Project) (*project, error) {
	pr, err := s.open(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		s.mu.Lock()
		_, again := s.unopened[p.ID]
		s.unopened[p.ID] = openFailure{meta: p, at: s.now(), err: err}
		s.mu.Unlock()
		if !again {
			s.log.Error(fmt.Sprintf("a project cannot be opened: its requests are answered 503 (unavailable) and it is tried again every %s; the other projects are served", openRetry), "project", p.Name, "err", gitx.RedactURL(err.Error()))
		}
		return nil, &UnopenedError{Project: p.Name, Err: err}
	}
	s.mu.Lock()
	_, was := s.unopened[p.ID]
	delete(s.unopened, p.ID)
	s.mu.Unlock()
	if was {
		s.log.Info("a project that could not be opened is open now", "project", p.Name)
		// Finished even when the request that opened it goes away: the
		// project is no longer marked, so nothing would try again.
		s.recoverProject(context.WithoutCancel(ctx), pr)
	}
	return pr, nil
}

// retryUnopened tries again the projects that could not be opened, once
// openRetry has passed since their last attempt (upkeep).
func (s *Server) retryUnopened(ctx context.Context) {
	now := s.now()
	var due []teamstore.Project
	s.mu.Lock()
	for id, f := range s.unopened {
		if s.claimRetryLocked(id, now) {
			due = append(due, f.meta)
		}
	}
	s.mu.Unlock()
	for _, p := range due {
		if _, err := s.store.Project(ctx, p.ID); errors.Is(err, teamstore.ErrNotFound) {
			s.mu.Lock()
			delete(s.unopened, p.ID) // removed meanwhile
			s.mu.Unlock()
			continue
		}
		_, _ = s.openOrMark(ctx, p) // a failure is logged there
	}
}

// Close waits for the writes in flight, then closes every vault and lets
// the data directory go.
func (s *Server) Close() error {
	s.closeMCP()
	s.writes.Wait()
	if s.rep != nil {
		s.rep.stop()
	}
	if s.stopBg != nil {
		s.stopBg()
		s.bgDone.Wait()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for id, pr := range s.projects {
		if err := pr.svc.Close(); err != nil && first == nil {
			first = err
		}
		delete(s.projects, id)
	}
	if s.lock != nil {
		s.lock.Unlock()
	}
	return first
}

// Handler is the HTTP API.
func (s *Server) Handler() http.Handler {
	return s.routes()
}
