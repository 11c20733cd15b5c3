package teamserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// Several team-server replicas share one PostgreSQL database (a store that
// implements teamstore.Leases); each has a data directory of its own for
// its clones. Any replica answers any request:
//
//   - A vault is served by the one replica holding its lease: it keeps the
//     clone and the index, and makes the vault's writes (one at a time,
//     pushed to the vault's git remote before they are answered, remote.go).
//     The lease is taken by the first replica a request for a free vault
//     reaches, so vaults spread over the replicas as requests come.
//   - The lease is renewed every third of its TTL. A replica that cannot
//     renew it (another holds it, or the database cannot be reached until
//     the lease runs out) stops serving the vault; before each push it
//     confirms the lease, and re-taking an expired lease counts only with
//     its epoch unchanged (nobody held it in between).
//   - A request for a vault leased elsewhere is forwarded once to the
//     holder's --advertise URL (forward.go); a forwarded request is never
//     forwarded again. When the holder cannot be reached, the request waits
//     until its lease expires, and the replica takes the vault over: it
//     clones or fetches, puts its clone at the remote's tip, and settles the
//     idempotency records the dead holder left running from the remote's
//     history (a write whose commit is in the remote was applied; one that is
//     not was not, once a fencing commit pushed on top makes sure a late
//     push of the old holder can never land).
//   - A new version is announced with NOTIFY; a replica keeping a clone of
//     the vault as a standby (it held it before) fetches it, so a later
//     takeover has little to catch up, and drops its cached hashes.
//   - A clean stop releases every lease at once (Leave), so the vaults move
//     without waiting for an expiry.

// DefaultLeaseTTL is how long a vault lease lasts without renewal: the
// longest a vault is unanswered after its replica dies.
const DefaultLeaseTTL = 10 * time.Second

// takeoverTimeout bounds taking a vault over (a clone and a first index).
const takeoverTimeout = 5 * time.Minute

// heldLease is a lease this replica holds, as last acquired or renewed.
type heldLease struct {
	mu sync.Mutex
	l  teamstore.Lease
}

func (h *heldLease) get() teamstore.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.l
}

func (h *heldLease) set(l teamstore.Lease) {
	h.mu.Lock()
	h.l = l
	h.mu.Unlock()
}

// replication is a Server's part in a set of replicas.
type replication struct {
	s      *Server
	leases teamstore.Leases
	ttl    time.Duration
	fwd    *forwarder

	// wrongAdvertise is the replica that answered at this one's advertised
	// URL, when another (advertise.go).
	wrongAdvertise atomic.Pointer[string]
	// pause, when set (tests), stands for the timer of the advertised
	// URL's check between its attempts (wait).
	pause func(ctx context.Context, d time.Duration) bool
	// roundWait, when set (tests), is roundBound.
	roundWait time.Duration

	mu        sync.Mutex
	advertise string
	started   bool
	held      map[string]*heldLease // by project id
	takeovers map[string]*takeover  // by project id
	metas     map[string]teamstore.Project

	// versions carries the new versions to announce to the other
	// replicas (notifyVersion) to the loop that sends them (announce), so
	// that a write never waits for its announcement: a database that hung
	// held every write's answer for the announcement's 5 s.
	versions chan teamstore.VersionNote

	bg     context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// pendingVersions is how many announcements may wait to be sent; more are
// dropped (and logged): the other replicas see those versions at their
// next fetch.
const pendingVersions = 64

type takeover struct {
	done chan struct{}
	pr   *project
	err  error
}

// heldElsewhere: another replica took the lease first.
type heldElsewhere struct{ l teamstore.Lease }

func (e *heldElsewhere) Error() string { return "the vault's lease is held by replica " + e.l.Owner }

// errCannotHost: the vault has no git remote and its folder is not here.
var errCannotHost = errors.New("the vault has no git remote and its folder is not in this replica's data directory")

// errNotOwner: this replica does not hold the vault's lease (any more).
var errNotOwner = errors.New("this replica does not hold the vault's lease")

func newReplication(s *Server, leases teamstore.Leases) *replication {
	ttl := s.cfg.LeaseTTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	bg, cancel := context.WithCancel(context.Background())
	return &replication{s: s, leases: leases, ttl: ttl, fwd: newForwarder(s),
		held: make(map[string]*heldLease), takeovers: make(map[string]*takeover), metas: make(map[string]teamstore.Project),
		versions: make(chan teamstore.VersionNote, pendingVersions), bg: bg, cancel: cancel}
}

// margin is how close to its expiry a lease is confirmed again before a
// write relies on it.
func (r *replication) margin() time.Duration { return r.ttl / 4 }

// roundBound bounds a round of renewals (the heartbeat and every held
// lease): a database that hangs (a stuck server, a network dropping
// packets without closing the connection) fails the round once a third of
// the lease's life is spent, so that the leases running out are let go
// and the next round finds a connection that answers; unbounded, a call
// waited for the kernel to give up on its connection (about 15 minutes),
// and this replica renewed nothing meanwhile. roundWait overrides it
// (tests).
func (r *replication) roundBound() time.Duration {
	if r.roundWait > 0 {
		return r.roundWait
	}
	return r.ttl / 3
}

func (r *replication) advertised() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.advertise
}

// start begins the replica's life at advertise: its heartbeat and lease
// renewals, the news of versions, and the vaults only this data directory
// holds (no remote), taken at once.
func (r *replication) start(advertise string) {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return
	}
	r.started, r.advertise = true, advertise
	r.mu.Unlock()
	s := r.s
	s.log.Info("replica started", "replica", s.instance, "advertise", advertise, "lease_ttl", r.ttl.String())
	r.tick(r.bg)
	// The renewals and the vaults' upkeep run on loops of their own: a
	// remote that hangs (a fetch waits for git's timeout) must not hold up
	// the renewal of every lease this replica holds until they run out.
	every := func(f func(context.Context)) {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			t := time.NewTicker(r.ttl / 3)
			defer t.Stop()
			for {
				select {
				case <-r.bg.Done():
					return
				case <-t.C:
					f(r.bg)
				}
			}
		}()
	}
	every(r.renew)
	every(r.upkeep)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.checkAdvertise(r.bg, advertise)
	}()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.listen(r.bg)
	}()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.announce(r.bg)
	}()
	ps, err := s.store.Projects(r.bg)
	if err != nil {
		s.log.Warn("listing the projects", "err", err)
		return
	}
	for _, p := range ps {
		if p.Remote != "" || !r.canHost(p) {
			continue
		}
		r.cacheMeta(p)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if _, err := r.takeover(r.bg, p); err != nil && !errors.As(err, new(*heldElsewhere)) {
				s.log.Warn("taking the lease of a vault kept in this data directory", "project", p.Name, "err", err)
			}
		}()
	}
}

// stop ends the loops and leaves the set: every lease is released, so that
// other replicas take the vaults over at once.
func (r *replication) stop() {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if !started {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := r.leases.Leave(ctx, r.s.instance)
	if err != nil {
		r.s.log.Warn("leaving the replicas: the leases will expire instead", "err", err)
		return
	}
	r.s.log.Info("replica stopped: leases released", "replica", r.s.instance, "leases", n)
}

// tick is one round of renew and upkeep.
func (r *replication) tick(ctx context.Context) {
	r.renew(ctx)
	r.upkeep(ctx)
}

// renew is the heartbeat: the replica is alive, and its leases are renewed
// (or given up).
func (r *replication) renew(bg context.Context) {
	s := r.s
	ctx, cancel := context.WithTimeout(bg, r.roundBound())
	defer cancel()
	now := s.now()
	adv := r.advertised()
	if err := r.leases.Heartbeat(ctx, s.instance, adv, now, r.ttl); err != nil && bg.Err() == nil {
		s.log.Warn("replica heartbeat", "err", err)
	}
	r.mu.Lock()
	held := make(map[string]*heldLease, len(r.held))
	for id, h := range r.held {
		held[id] = h
	}
	r.mu.Unlock()
	for id, h := range held {
		l, err := r.leases.RenewLease(ctx, id, s.instance, now, r.ttl)
		switch {
		case err == nil:
			h.set(l)
		case errors.Is(err, teamstore.ErrLeaseLost):
			r.release(id, h, "the lease could not be renewed: "+err.Error())
		case bg.Err() != nil:
			return
		default:
			// The database failed or did not answer within the round
			// (then every lease left is told at once): by the clock as it
			// is now, not as the round began.
			if !s.now().Before(h.get().ExpiresAt.Add(-r.margin())) {
				r.release(id, h, "the database cannot be reached to renew the lease: "+err.Error())
			} else {
				s.log.Warn("renewing a lease failed; retrying at the next tick", "project", id, "err", err)
			}
		}
	}
}

// upkeep settles the records of writes dead replicas left running, and
// follows the remotes, of the vaults this replica serves.
func (r *replication) upkeep(ctx context.Context) {
	s := r.s
	for _, pr := range r.owned() {
		s.settleStale(ctx, pr)
		s.followRemote(ctx, pr)
	}
	s.purgeExpired(ctx)
}

// owned lists the open projects this replica serves.
func (r *replication) owned() []*project {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*project
	for _, pr := range s.projects {
		if pr.hold.Load() != nil {
			out = append(out, pr)
		}
	}
	return out
}

// release stops serving a vault whose lease this replica lost: its MCP
// sessions end (their clients reconnect to the new holder) and the clone
// stays open as a standby.
func (r *replication) release(id string, h *heldLease, why string) {
	s := r.s
	r.mu.Lock()
	if r.held[id] == h {
		delete(r.held, id)
	}
	r.mu.Unlock()
	s.mu.Lock()
	pr := s.projects[id]
	s.mu.Unlock()
	if pr != nil {
		pr.hold.CompareAndSwap(h, nil)
		// Not inline: a write of one of those sessions may be what found
		// the lease lost, and closing a session waits for its calls.
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			s.dropMCP(id)
		}()
	}
	s.met.leaseLosses.Inc()
	s.log.Warn("vault lease given up; the vault is served by another replica from now on", "project", id, "why", why)
}

// serving is the project when this replica serves it now.
func (r *replication) serving(id string) *project {
	s := r.s
	s.mu.Lock()
	pr := s.projects[id]
	s.mu.Unlock()
	if pr == nil {
		return nil
	}
	h := pr.hold.Load()
	if h == nil || !h.get().ExpiresAt.After(s.now()) {
		return nil
	}
	return pr
}

// canHost says whether this replica can serve the vault.
func (r *replication) canHost(p teamstore.Project) bool {
	if p.Remote != "" {
		return true
	}
	fi, err := os.Stat(r.s.cfg.Data.VaultDir(p.ID))
	return err == nil && fi.IsDir()
}

func (r *replication) cacheMeta(p teamstore.Project) {
	r.mu.Lock()
	r.metas[p.ID], r.metas[p.Name] = p, p
	r.mu.Unlock()
}

// projectMeta finds a project by id or name (projects are never renamed or
// removed, so what was found once is kept).
func (r *replication) projectMeta(ctx context.Context, ref string) (teamstore.Project, error) {
	r.mu.Lock()
	p, ok := r.metas[ref]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	ctx, cancel := r.s.storeCtx(ctx)
	defer cancel()
	p, err := r.s.store.Project(ctx, ref)
	if err != nil {
		return p, err
	}
	r.cacheMeta(p)
	return p, nil
}

// route finds who serves the vault: this replica (the project, taking the
// lease when it is free) or another (its lease).
func (r *replication) route(ctx context.Context, meta teamstore.Project) (*project, teamstore.Lease, error) {
	s := r.s
	for attempt := 0; attempt < 5; attempt++ {
		if pr := r.serving(meta.ID); pr != nil {
			return pr, teamstore.Lease{}, nil
		}
		lctx, cancel := s.storeCtx(ctx)
		l, err := r.leases.Lease(lctx, meta.ID)
		cancel()
		switch {
		case err == nil && l.Live(s.now()) && l.Owner != s.instance:
			return nil, l, nil
		case err != nil && !errors.Is(err, teamstore.ErrNotFound):
			return nil, l, err
		}
		if !r.canHost(meta) {
			return nil, l, errCannotHost
		}
		pr, err := r.takeover(ctx, meta)
		if errors.As(err, new(*heldElsewhere)) {
			continue
		}
		return pr, teamstore.Lease{}, err
	}
	return nil, teamstore.Lease{}, errors.New("the vault's lease kept changing hands")
}

// takeover takes the vault's lease and opens the vault to serve it, once
// however many requests ask at the same time; the caller waits as long as
// its ctx lets it.
func (r *replication) takeover(ctx context.Context, meta teamstore.Project) (*project, error) {
	r.mu.Lock()
	t, ok := r.takeovers[meta.ID]
	if !ok {
		t = &takeover{done: make(chan struct{})}
		r.takeovers[meta.ID] = t
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			t.pr, t.err = r.take(meta)
			r.mu.Lock()
			delete(r.takeovers, meta.ID)
			r.mu.Unlock()
			close(t.done)
		}()
	}
	r.mu.Unlock()
	select {
	case <-t.done:
		return t.pr, t.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// take acquires the lease and makes the vault ready to serve.
func (r *replication) take(meta teamstore.Project) (*project, error) {
	s := r.s
	ctx, cancel := context.WithTimeout(r.bg, takeoverTimeout)
	defer cancel()
	start := time.Now()
	l, got, err := r.leases.AcquireLease(ctx, meta.ID, s.instance, r.advertised(), s.now(), r.ttl)
	if err != nil {
		return nil, err
	}
	if !got {
		return nil, &heldElsewhere{l}
	}
	hold := &heldLease{l: l}
	r.mu.Lock()
	r.held[meta.ID] = hold // renewed from now on, however long the opening takes
	r.mu.Unlock()
	pr, err := r.openHeld(ctx, meta)
	if err != nil {
		r.mu.Lock()
		if r.held[meta.ID] == hold {
			delete(r.held, meta.ID)
		}
		r.mu.Unlock()
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = r.leases.ReleaseLease(rctx, meta.ID, s.instance)
		rcancel()
		s.met.takeovers.Inc("failed")
		s.log.Error("taking a vault over failed; its lease is released", "project", meta.Name, "err", gitx.RedactURL(err.Error()))
		return nil, err
	}
	pr.hold.Store(hold)
	took := time.Since(start)
	s.met.takeovers.Inc("ok")
	s.met.takeoverSeconds.Observe(took.Seconds())
	s.log.Info("vault lease taken", "project", meta.Name, "epoch", l.Epoch, "ms", took.Milliseconds())
	s.settleStale(ctx, pr)
	return pr, nil
}

// openHeld opens (or brings up to date) the clone of a vault whose lease
// was just taken, and waits for its index.
func (r *replication) openHeld(ctx context.Context, meta teamstore.Project) (*project, error) {
	s := r.s
	s.mu.Lock()
	pr := s.projects[meta.ID]
	s.mu.Unlock()
	var err error
	if pr == nil {
		if pr, err = s.open(ctx, meta); err != nil {
			return nil, err
		}
	} else if meta.Remote != "" {
		pr.mu.Lock()
		_, err = s.syncFromRemote(ctx, pr)
		pr.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	if err := pr.svc.Ready(ctx); err != nil {
		return nil, err
	}
	if meta.Remote != "" {
		// Opening the vault finishes a write a crash interrupted, committing
		// it in the clone; it was never answered nor pushed: drop it.
		pr.mu.Lock()
		defer pr.mu.Unlock()
		tip, err := pr.git.r.Tracking(ctx, meta.Branch)
		if err != nil {
			return nil, err
		}
		if head, _ := pr.git.r.Head(ctx); head != tip {
			if err := s.resetTo(ctx, pr, tip); err != nil {
				return nil, err
			}
		}
	}
	return pr, nil
}

// confirmLease makes sure this replica still holds the vault's lease before
// a write relies on it: renewed when close to its expiry; re-taken after
// it expired only if nobody held it in between (the same epoch).
func (s *Server) confirmLease(ctx context.Context, pr *project) error {
	r := s.rep
	if r == nil {
		return nil
	}
	h := pr.hold.Load()
	if h == nil {
		return errNotOwner
	}
	l := h.get()
	now := s.now()
	if now.Before(l.ExpiresAt.Add(-r.margin())) {
		return nil
	}
	// Bounded (storeWait): the caller holds the vault's write lock, which
	// every other write waits for; a database that hangs must not keep it.
	ctx, cancel := s.storeCtx(ctx)
	defer cancel()
	nl, got, err := r.leases.AcquireLease(ctx, pr.meta.ID, s.instance, r.advertised(), now, r.ttl)
	if err != nil {
		// The time after the wait: a lease that ran out meanwhile is not
		// held.
		if s.now().Before(l.ExpiresAt) {
			return nil // still held; the next tick retries the renewal
		}
		return fmt.Errorf("the lease ran out and cannot be confirmed: %w", err)
	}
	if !got || nl.Epoch != l.Epoch {
		r.release(pr.meta.ID, h, "another replica held the lease meanwhile")
		if got {
			// Ours again, but someone else may have written since: let go,
			// so the next request takes it over properly (fetch first).
			_ = r.leases.ReleaseLease(ctx, pr.meta.ID, s.instance)
		}
		return errNotOwner
	}
	h.set(nl)
	return nil
}

// notServing is the answer of a write on a vault this replica no longer
// serves: nothing was done, and a retry goes to the replica that does.
func notServing(pr *project, err error) *response {
	return errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "nothing was changed: this replica no longer serves project %s (%v); retry, the request goes to the replica that does", pr.meta.Name, err)
}

// notifyVersion has the other replicas told of a new version of a vault,
// without waiting for it (see replication.versions).
func (s *Server) notifyVersion(pr *project, sha string) {
	r := s.rep
	if r == nil {
		return
	}
	select {
	case r.versions <- teamstore.VersionNote{Project: pr.meta.ID, Version: sha, From: s.instance}:
	default:
		s.met.notes.Inc("dropped")
		s.log.Warn("a new version is not announced: too many announcements wait (the database is slow); the other replicas see it at their next fetch", "project", pr.meta.Name, "version", sha)
	}
}

// announce sends the announcements notifyVersion queues, one at a time,
// each bounded by 5 s, until ctx ends.
func (r *replication) announce(ctx context.Context) {
	s := r.s
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-r.versions:
			nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := r.leases.Notify(nctx, n)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("announcing a new version", "project", n.Project, "version", n.Version, "err", err)
				}
				continue
			}
			s.met.notes.Inc("sent")
		}
	}
}

// listen follows the news of versions until ctx ends: a clone this replica
// keeps is refreshed when another replica made a version of it (or when
// news may have been missed).
func (r *replication) listen(ctx context.Context) {
	s := r.s
	for ctx.Err() == nil {
		ch, err := r.leases.Listen(ctx)
		if err != nil {
			s.log.Warn("listening for new versions; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for n := range ch {
			switch {
			case n.Missed:
				s.met.notes.Inc("missed")
				s.mu.Lock()
				for _, pr := range s.projects {
					r.refresh(pr)
				}
				s.mu.Unlock()
			case n.From != s.instance:
				s.met.notes.Inc("received")
				s.mu.Lock()
				pr := s.projects[n.Project]
				s.mu.Unlock()
				if pr != nil {
					r.refresh(pr)
				}
			}
		}
	}
}

// refresh brings a clone to its remote's tip in the background, once for
// any number of notes that come meanwhile.
func (r *replication) refresh(pr *project) {
	if pr.meta.Remote == "" {
		return
	}
	pr.refreshAgain.Store(true)
	if !pr.refreshing.CompareAndSwap(false, true) {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			for pr.refreshAgain.Swap(false) {
				ctx, cancel := context.WithTimeout(r.bg, time.Minute)
				pr.mu.Lock()
				before, _ := pr.git.r.Head(ctx)
				tip, err := r.s.syncFromRemote(ctx, pr)
				pr.mu.Unlock()
				cancel()
				switch {
				case err != nil:
					if r.bg.Err() == nil {
						r.s.log.Warn("refreshing a clone after news of a version", "project", pr.meta.Name, "err", gitx.RedactURL(err.Error()))
					}
				case tip != before && pr.hold.Load() != nil:
					r.s.log.Warn("the remote of a vault this replica serves moved under it (a push of a former holder); the clone follows it", "project", pr.meta.Name, "version", tip)
				}
			}
			pr.refreshing.Store(false)
			if !pr.refreshAgain.Load() || !pr.refreshing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// leasesHeld counts the leases this replica holds.
func (r *replication) leasesHeld() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.held)
}

// taking counts the vaults whose lease is held but which are not served
// yet (being taken over).
func (r *replication) taking() int {
	r.mu.Lock()
	ids := make([]string, 0, len(r.held))
	for id := range r.held {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	n := 0
	for _, id := range ids {
		r.s.mu.Lock()
		pr := r.s.projects[id]
		r.s.mu.Unlock()
		if pr == nil || pr.hold.Load() == nil {
			n++
		}
	}
	return n
}
