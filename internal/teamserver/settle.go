package teamserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// Settling the writes nobody will answer any more (their process died, or
// the fate of their push is unknown), from the vault's storage of record:
// the remote's history for a vault with a git remote.

// settleEvery is how often a server without replicas looks for its own
// writes whose push ended in doubt (replicas do it at each lease renewal).
const settleEvery = 10 * time.Second

// settleLoop runs settleStale over the vaults until ctx ends (one server,
// no replicas): with a git remote, the writes whose push ended in doubt;
// without, the writes applied whose bookkeeping could not be stored (their
// records would otherwise stay running, and every retry be told 409
// idempotency_key_in_use, until the next start).
func (s *Server) settleLoop(ctx context.Context) {
	t := time.NewTicker(settleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.upkeep(ctx)
	}
}

// storeWait bounds a database call of the background work (listing the
// records to settle, purging) and a write's bookkeeping: a database that
// hangs fails the call, and the work is tried again at its next round (a
// write's bookkeeping by the settler, from its commit), instead of holding
// up every round after it, or the request until the kernel gives up on the
// connection (about 15 minutes).
const storeWait = 10 * time.Second

// storeBound is storeWait, or the tests' shorter bound.
func (s *Server) storeBound() time.Duration {
	if s.storeWaitTest > 0 {
		return s.storeWaitTest
	}
	return storeWait
}

// storeCtx bounds a database call by storeBound: the background work's
// (see storeWait), and the calls a request makes beyond its key's lookup
// (keyLookupTimeout): finding a project, a vault's lease (on a replica
// that does not serve it), listing projects and files, a file's row and
// versions, the audit row of a refused write (and, a millisecond a note
// longer, the ids a read gives new notes: see ensure). A database that
// hangs then makes the request 503 unavailable, which clients retry,
// rather than holding it until the client gives up — and holding the
// project's bookkeeping lock (ensure), which the writes wait for, as long.
// A request whose key was checked without the database (an OAuth token)
// meets the hang here first.
func (s *Server) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.storeBound())
}

// storeCtxFor is storeCtx for database work on n notes at once (ids, a
// write's versions): a millisecond a note more, so that thousands of notes
// (pushed to a vault's remote from outside, a move rewriting links in
// thousands) are not cut short on a slow database every time they are
// tried.
func (s *Server) storeCtxFor(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.storeBound()+time.Duration(n)*time.Millisecond)
}

// purgeEvery is how often a running server drops the idempotency records
// whose 24 hours are over (at its start too).
const purgeEvery = time.Hour

// upkeep is one round of settleLoop.
func (s *Server) upkeep(ctx context.Context) {
	s.purgeExpired(ctx)
	s.retryUnopened(ctx)
	s.mu.Lock()
	var prs []*project
	for _, pr := range s.projects {
		prs = append(prs, pr)
	}
	s.mu.Unlock()
	for _, pr := range prs {
		s.settleStale(ctx, pr)
		s.followRemote(ctx, pr)
	}
}

// purgeExpired drops the expired idempotency records, at most once per
// purgeEvery (upkeep and a replica's heartbeat call it), so that the
// stored answers (a learn's or a large note's diff) do not pile up in the
// database of a server that runs for months.
func (s *Server) purgeExpired(ctx context.Context) {
	s.purgeMu.Lock()
	now := s.now()
	due := now.Sub(s.purgedAt) >= purgeEvery
	if due {
		s.purgedAt = now
	}
	s.purgeMu.Unlock()
	if due {
		ctx, cancel := s.storeCtx(ctx)
		defer cancel()
		if n, err := s.store.PurgeIdem(ctx, now); err != nil {
			s.log.Warn("removing expired idempotency records", "err", err)
		} else if n > 0 {
			s.log.Info("expired idempotency records removed", "count", n)
		}
	}
}

// running marks an idempotency token as being applied in this process.
func (s *Server) running(token string, on bool) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.runningTokens == nil {
		s.runningTokens = make(map[string]bool)
	}
	if on {
		s.runningTokens[token] = true
	} else {
		delete(s.runningTokens, token)
	}
}

func (s *Server) isRunning(token string) bool {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	return s.runningTokens[token]
}

// settleStale settles the idempotency records of the vault that nobody is
// applying any more: those of replicas no longer alive, and this replica's
// own that are not in flight (a push whose fate was unknown). A record
// whose token is in the remote's history was applied: its bookkeeping is
// done and its answer stored. The others were not; before they are
// released (so a retry applies them), a fencing commit is pushed on top of
// the remote's branch, so that a push of theirs still on its way is refused.
func (s *Server) settleStale(ctx context.Context, pr *project) {
	lctx, cancel := s.storeCtx(ctx)
	defer cancel()
	recs, err := s.store.RunningIdem(lctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("listing the running idempotency records", "err", err)
		}
		return
	}
	var mine []teamstore.Idem
	for _, rec := range recs {
		if rec.Project == pr.meta.ID {
			mine = append(mine, rec)
		}
	}
	if len(mine) == 0 {
		return
	}
	// One server (no replicas): records of earlier processes were settled
	// at start (recover.go); only this one's own are left.
	alive := map[string]bool{}
	if s.rep != nil {
		reps, err := s.rep.leases.Replicas(lctx, s.now())
		if err != nil {
			return
		}
		for _, rp := range reps {
			alive[rp.ID] = true
		}
	}
	// Another replica's record is stale when that replica is dead, or when
	// it began the record before this replica took the vault's lease: it
	// lost the lease meanwhile (it may be alive again), so nobody else
	// would ever settle it. Were it still pushing, the fence refuses that
	// push, or the push lands first and the record is found applied.
	var since time.Time
	if h := pr.hold.Load(); h != nil {
		since = h.get().AcquiredAt
	}
	var stale []teamstore.Idem
	for _, rec := range mine {
		switch {
		case rec.Owner == s.instance:
			if !s.isRunning(rec.Token) {
				stale = append(stale, rec)
			}
		case s.rep != nil:
			if !alive[rec.Owner] || !since.IsZero() && rec.CreatedAt.Before(since) {
				stale = append(stale, rec)
			}
		}
	}
	if len(stale) == 0 {
		return
	}
	pr.book.RLock()
	defer pr.book.RUnlock()
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if s.rep != nil && pr.hold.Load() == nil {
		return
	}
	remote := pr.meta.Remote != ""
	if remote {
		if _, err := s.syncFromRemote(ctx, pr); err != nil {
			s.log.Warn("settling unanswered writes: the remote cannot be read; retrying later", "project", pr.meta.Name, "err", gitx.RedactURL(err.Error()))
			return
		}
	}
	open := s.settleFound(ctx, pr, stale)
	if len(open) == 0 {
		return
	}
	if remote && !s.fence(ctx, pr, &open) {
		return
	}
	for _, rec := range open {
		if err := s.store.ReleaseIdem(ctx, rec.KeyID, rec.Key, rec.Token); err != nil {
			s.log.Warn("releasing an unanswered write", "err", err)
			continue
		}
		s.log.Info("a write its replica left unanswered was not applied; a retry will apply it", "project", pr.meta.Name, "op", rec.Operation, "idempotency_key", rec.Key)
	}
}

// settleFound settles the records whose token is in the clone's history
// and returns the others. The caller holds pr.mu.
func (s *Server) settleFound(ctx context.Context, pr *project, recs []teamstore.Idem) []teamstore.Idem {
	var open []teamstore.Idem
	for _, rec := range recs {
		sha, err := pr.git.commitWithToken(ctx, rec.Token)
		if err != nil {
			s.log.Warn("looking for an unanswered write's commit", "err", err)
			continue // neither settled nor released: next time
		}
		if sha == "" {
			open = append(open, rec)
			continue
		}
		if _, err := s.settleLocked(ctx, s.keyOf(ctx, rec.KeyID), pr, rec, sha); err != nil {
			s.log.Warn("settling an unanswered write", "err", err)
			continue
		}
		s.log.Info("a write its replica left unanswered was applied; its answer is stored for the retry", "project", pr.meta.Name, "op", rec.Operation, "version", sha, "idempotency_key", rec.Key)
	}
	return open
}

// fence pushes an empty commit on top of the remote's branch, so that any
// push based on an older tip (a replica that lost the lease without
// knowing) is refused from now on; records found in the remote meanwhile
// are settled and dropped from open. It says whether the fence stands.
func (s *Server) fence(ctx context.Context, pr *project, open *[]teamstore.Idem) bool {
	g := pr.git.r
	for try := 0; try < 3; try++ {
		if try > 0 {
			if _, err := s.syncFromRemote(ctx, pr); err != nil {
				return false
			}
			if *open = s.settleFound(ctx, pr, *open); len(*open) == 0 {
				return false
			}
		}
		if err := s.confirmLease(ctx, pr); err != nil {
			return false
		}
		tip, err := g.Tracking(ctx, pr.meta.Branch)
		if err != nil {
			return false
		}
		var epoch int64
		if h := pr.hold.Load(); h != nil {
			epoch = h.get().Epoch
		} else if s.rep != nil {
			return false
		}
		msg := fmt.Sprintf("vaultmcp: fence (replica %s holds the vault, lease epoch %d)\n\n%d write(s) left unanswered are settled as not applied; a push of theirs based on an older tip is refused from here.",
			s.instance, epoch, len(*open))
		f, err := g.EmptyCommit(ctx, tip, msg)
		if err != nil {
			s.log.Warn("making a fencing commit", "err", err)
			return false
		}
		err = g.PushTo(ctx, f, pr.meta.Branch)
		if err == nil {
			if err := s.resetTo(ctx, pr, f); err != nil {
				s.log.Warn("moving the clone to the fencing commit", "err", err)
			}
			s.notifyVersion(pr, f)
			return true
		}
		var pe *gitx.PushError
		if !errors.As(err, &pe) || pe.Kind != gitx.PushRejected {
			s.log.Warn("pushing a fencing commit", "project", pr.meta.Name, "err", gitx.RedactURL(err.Error()))
			return false
		}
	}
	return false
}
