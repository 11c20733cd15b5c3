package teamserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// A project added with --remote keeps its vault in that git remote: the
// server's folder is a clone, and a write is answered as done only once its
// commit is in the remote.
//
//   - Every write commits in the clone, then pushes that commit to the
//     remote's branch, fast-forward only, before its answer: a write
//     answered as done is in the remote, which only ever moves forward.
//   - A push refused (the remote moved: another replica wrote to it) or
//     failed puts the clone back to what the remote holds, and the write is
//     answered 503, not applied; a retry applies it again. When the remote
//     cannot even be read after a failed push, the answer says the write may
//     or may not have been applied, and its idempotency record stays
//     running until it is settled from the remote's history (replica.go).
//   - The clone never holds a commit the remote does not: what it holds
//     beyond the remote (a write a crash interrupted, finished by the
//     vault's journal at the next start) is dropped when it is next brought
//     to the remote, since it was never answered.

// ensureClone makes the data directory's folder of p a clone of its remote,
// cloning it when there is none yet (into a temporary folder renamed into
// place, so a half-made clone is never taken for one).
func (s *Server) ensureClone(ctx context.Context, p teamstore.Project) error {
	dir := s.cfg.Data.VaultDir(p.ID)
	if _, err := os.Stat(dir); err == nil {
		r, err := gitx.Open(ctx, dir)
		if err != nil {
			return err
		}
		return r.SetOrigin(ctx, p.Remote)
	}
	tmp := dir + ".clone-" + teamstore.NewID()[:8]
	defer os.RemoveAll(tmp)
	start := time.Now()
	if _, err := gitx.Clone(ctx, p.Remote, p.Branch, tmp); err != nil {
		return fmt.Errorf("cloning its git remote %s: %w", gitx.RedactURL(p.Remote), gitx.RedactErr(err))
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			return nil // cloned by another request meanwhile
		}
		return err
	}
	s.log.Info("vault cloned from its git remote", "project", p.Name, "ms", time.Since(start).Milliseconds())
	return nil
}

// removeCloneLeftovers removes the temporary folders of clones a killed
// server left half-made (ensureClone removes its own otherwise). Only a
// server clones, and it holds the data directory's lock, so whatever
// folder of that shape is there when the lock is taken is nobody's.
func (s *Server) removeCloneLeftovers() {
	dir := filepath.Join(s.cfg.Data.Dir, vaultsDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // no vault yet
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.Contains(e.Name(), ".clone-") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			s.log.Warn("a half-made clone left by a stopped server could not be removed", "folder", e.Name(), "err", err)
			continue
		}
		s.log.Info("half-made clone left by a stopped server removed", "folder", e.Name())
	}
}

// moveRemovedVaults moves aside the vault folders of projects removed
// while this server was stopped by a project remove run elsewhere (on
// PostgreSQL, another replica's data directory holds their clones): a
// folder named by a project id the database no longer has, whose removal
// the audit log records, goes to removed/<id> as project remove does
// (never deleted). A folder the audit log does not account for is left
// and named in the log.
func (s *Server) moveRemovedVaults(ctx context.Context) {
	dir := filepath.Join(s.cfg.Data.Dir, vaultsDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // no vault yet
	}
	var known map[string]bool
	for _, e := range ents {
		if !e.IsDir() || !IsID(e.Name()) {
			continue
		}
		if known == nil {
			ps, err := s.store.Projects(ctx)
			if err != nil {
				s.log.Warn("listing the projects to find the vaults of removed ones", "err", err)
				return
			}
			known = make(map[string]bool, len(ps))
			for _, p := range ps {
				known[p.ID] = true
			}
		}
		id := e.Name()
		if known[id] {
			continue
		}
		rows, err := s.store.Audit(ctx, teamstore.AuditQuery{Project: id, Limit: 1}) // newest first: a removal is the last row
		if err != nil {
			s.log.Warn("reading the audit log to find the vaults of removed projects", "err", err)
			return
		}
		if len(rows) == 0 || rows[0].Operation != "project remove" {
			s.log.Warn("a vault folder belongs to no project, and the audit log does not say it was removed: left where it is", "folder", filepath.Join(dir, id))
			continue
		}
		to := filepath.Join(s.cfg.Data.Dir, removedDir, id)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err == nil {
			err = os.Rename(filepath.Join(dir, id), to)
		}
		if err != nil {
			s.log.Warn("the vault of a removed project could not be moved aside", "folder", filepath.Join(dir, id), "err", err)
			continue
		}
		s.log.Info("the vault of a project removed meanwhile moved aside", "project_id", id, "to", to)
	}
}

// syncClone brings a clone no service has open yet to the remote's branch.
func syncClone(ctx context.Context, log *slog.Logger, dir, branch string) error {
	r, err := gitx.Open(ctx, dir)
	if err != nil {
		return err
	}
	// git's lock files that a server killed while committing left (gitx's
	// lock ledger): git refuses the reset below while they are there, and
	// the vault's own recovery, which clears them too, runs only once the
	// clone is synced. No other server uses this data directory (its lock),
	// so no other ledger is a live process's.
	if removed, err := r.ClearCrashedLocks(); len(removed) > 0 || err != nil {
		log.Warn("clearing the git lock files an interrupted commit left in the clone", "removed", len(removed), "err", err)
	}
	tip, err := r.Fetch(ctx, branch)
	if err != nil {
		return fmt.Errorf("fetching from its git remote: %w", gitx.RedactErr(err))
	}
	if head, err := r.Head(ctx); err == nil && head == tip && r.CurrentBranch(ctx) == branch {
		if clean, err := r.Clean(ctx); err == nil && clean {
			return nil
		}
	}
	if r.CurrentBranch(ctx) != branch {
		if _, err := r.Run(ctx, "checkout", "--quiet", "--force", "-B", branch, tip); err != nil {
			return err
		}
	}
	return r.ResetHard(ctx, tip)
}

// syncFromRemote fetches the remote's branch and, when the clone is not at
// its tip, puts it there (refreshing the index of what changed). The caller
// holds pr.mu. It returns the tip.
func (s *Server) syncFromRemote(ctx context.Context, pr *project) (string, error) {
	g := pr.git.r
	now := s.now()
	tip, err := g.Fetch(ctx, pr.meta.Branch)
	if err != nil {
		return "", fmt.Errorf("fetching from the vault's git remote: %w", gitx.RedactErr(err))
	}
	pr.polled.Store(now.UnixNano()) // what followRemote would have fetched
	head, err := g.Head(ctx)
	if err != nil {
		return "", err
	}
	if head == tip {
		return tip, nil
	}
	return tip, s.resetTo(ctx, pr, tip)
}

// remotePollEvery is how often the server serving a vault kept in a git
// remote fetches it (counted from its last fetch: the one that opened the
// vault, a refresh on news of another replica's write, or this poll), so that what someone pushed to it outside the server
// (a colleague's own clone, a sync plugin) is served, and searched, within
// about that time rather than from the next write on. (The replicas tell
// each other of their own writes at once, with LISTEN/NOTIFY.)
const remotePollEvery = 30 * time.Second

// followRemote fetches pr's remote when remotePollEvery has passed since
// it last did (by the server's clock), and puts the clone and the index at
// the remote's tip when it moved: the clone never holds a commit the remote
// lacks, so this loses nothing. A write in progress (pr.mu held) puts it
// off to the next round: the write fetches anyway.
func (s *Server) followRemote(ctx context.Context, pr *project) {
	if pr.meta.Remote == "" {
		return
	}
	now := s.now()
	switch last := pr.polled.Load(); {
	case last == 0:
		// The vault was opened from the remote: the count starts now.
		pr.polled.CompareAndSwap(0, now.UnixNano())
		return
	case now.Sub(time.Unix(0, last)) < remotePollEvery:
		return
	}
	if !pr.mu.TryLock() {
		return
	}
	defer pr.mu.Unlock()
	pr.polled.Store(now.UnixNano()) // a failed fetch waits its turn too
	before, _ := pr.git.r.Head(ctx)
	tip, err := s.syncFromRemote(ctx, pr)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.log.Warn("following the vault's git remote", "project", pr.meta.Name, "err", err)
		}
	case tip != before:
		s.log.Info("the vault's git remote moved outside the server; the clone and the index follow it", "project", pr.meta.Name, "version", tip)
	}
}

// resetTo puts the clone at rev and refreshes the index and the hash cache
// of every path that differs. The caller holds pr.mu.
func (s *Server) resetTo(ctx context.Context, pr *project, rev string) error {
	g := pr.git.r
	head, _ := g.Head(ctx)
	if err := g.ResetHard(ctx, rev); err != nil {
		return err
	}
	if head == "" || head == rev {
		return nil
	}
	paths, err := g.ChangedPaths(ctx, head, rev)
	if err != nil {
		return err
	}
	pr.hashes.forget(paths...)
	for _, p := range paths {
		pr.svc.Refresh(p)
	}
	return nil
}

// pushOutcome says what became of the push of a write.
type pushOutcome int

const (
	pushed       pushOutcome = iota // in the remote (or nothing to push)
	pushRefused                     // not in the remote; the clone is back to it
	pushDoubtful                    // cannot tell; the clone is back to the last known remote
)

// publish pushes the commit of a write that the vault service made, before
// the write is answered; a failure is the write's answer (503). It runs
// under pr.mu, right after the vault write.
func (s *Server) publish(ctx context.Context, pr *project, res *api.WriteResult) *outcome {
	if pr.meta.Remote == "" {
		return nil
	}
	g := pr.git.r
	branch := pr.meta.Branch
	base, err := g.Tracking(ctx, branch)
	if err != nil {
		return s.unpublished(ctx, pr, "", pushDoubtful, fmt.Errorf("reading the remote's branch: %w", err))
	}
	head := res.Version // the commit the write made, at HEAD
	if !res.Committed || head == "" {
		if head, err = g.Head(ctx); err != nil {
			return s.unpublished(ctx, pr, base, pushRefused, err)
		}
	}
	if !res.Committed {
		clean, cerr := g.Clean(ctx)
		if head == base && cerr == nil && clean {
			return nil // nothing changed
		}
		return s.unpublished(ctx, pr, base, pushRefused, errors.New("the change could not be committed"))
	}
	if head == base {
		return nil
	}
	if err := s.confirmLease(ctx, pr); err != nil {
		return s.unpublished(ctx, pr, base, pushRefused, err)
	}
	start := time.Now()
	err = g.PushTo(ctx, head, branch)
	s.met.pushSeconds.Observe(time.Since(start).Seconds())
	if err == nil {
		s.met.pushes.Inc("ok")
		yes := true
		res.Pushed = &yes
		s.notifyVersion(pr, head)
		return nil
	}
	var pe *gitx.PushError
	rejected := errors.As(err, &pe) && pe.Kind == gitx.PushRejected
	tip, ferr := g.Fetch(ctx, branch)
	if ferr == nil {
		if in, _ := g.IsAncestor(ctx, head, tip); in {
			// The push failed to say so, but the commit is in the remote.
			s.met.pushes.Inc("ok")
			if tip != head {
				_ = s.resetTo(ctx, pr, tip)
			}
			yes := true
			res.Pushed = &yes
			s.notifyVersion(pr, head)
			return nil
		}
		if rejected {
			s.met.pushes.Inc("rejected")
			return s.unpublished(ctx, pr, tip, pushRefused, errors.New("the remote has commits this replica did not have: pushed by another replica or from outside the server; the vault now includes them"))
		}
		s.met.pushes.Inc("failed")
		return s.unpublished(ctx, pr, tip, pushRefused, err)
	}
	s.met.pushes.Inc("failed")
	return s.unpublished(ctx, pr, base, pushDoubtful, err)
}

// unpublished puts the clone back at rev (when known) and builds the answer
// of a write whose commit is not (or not surely) in the remote.
func (s *Server) unpublished(ctx context.Context, pr *project, rev string, how pushOutcome, cause error) *outcome {
	if rev != "" {
		if err := s.resetTo(ctx, pr, rev); err != nil {
			s.log.Error("putting the clone back to the remote after a failed push", "project", pr.meta.Name, "err", err)
		}
	}
	why := gitx.RedactURL(cause.Error())
	s.log.Warn("a write was not pushed to the vault's git remote", "project", pr.meta.Name, "why", why, "doubtful", how == pushDoubtful)
	if how == pushDoubtful {
		resp := errResponse(http.StatusServiceUnavailable, teamapi.ErrorDetail{Code: teamapi.CodeUnavailable, Uncertain: true,
			Message: "the change may or may not be in the vault's git remote (" + why + "); read the note before trying again"})
		return &outcome{resp: resp, result: teamapi.CodeUnavailable, uncertain: true, unsettled: true}
	}
	resp := errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "the change was not applied: it could not be pushed to the vault's git remote (%s); retry", why)
	return &outcome{resp: resp, result: teamapi.CodeUnavailable}
}
