package teamserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// rebuiltWarning tells a client that its answer was rebuilt from the
// write's commit: after a crash, or when the write's outcome was in doubt
// (its push, or its bookkeeping) and was settled later from git.
const rebuiltWarning = "the server applied this request but could not answer it then (it stopped, or the outcome was in doubt until git said); this answer was rebuilt from the commit, without the diff"

// recover settles the idempotency records a previous server left running:
// the write whose commit carries the record's token was applied (its
// bookkeeping is done now and an answer stored, so a retry gets it); a
// write with no such commit was not, and the record is dropped so that a
// retry applies it. Every record running at start belongs to a dead
// process: one server at a time holds the data directory.
func (s *Server) recover(ctx context.Context) error {
	recs, err := s.store.RunningIdem(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		pr, err := s.project(ctx, rec.Project)
		if errors.Is(err, teamstore.ErrNotFound) {
			if err := s.store.ReleaseIdem(ctx, rec.KeyID, rec.Key, rec.Token); err != nil {
				return err
			}
			continue
		}
		if uerr := (*UnopenedError)(nil); errors.As(err, &uerr) {
			// Settled when the project opens (openOrMark); until then its
			// requests, a retry of this write included, get 503.
			s.log.Warn("a write interrupted by a crash waits for its project to open to be settled", "project", uerr.Project, "op", rec.Operation, "idempotency_key", rec.Key)
			continue
		}
		if err != nil {
			return err
		}
		if err := s.recoverRecord(ctx, pr, rec); err != nil {
			return err
		}
	}
	return nil
}

// recoverProject settles the records that earlier processes left running
// in a project that could not be opened at the start (see recover); a
// failure is logged, and the record left for the next start.
func (s *Server) recoverProject(ctx context.Context, pr *project) {
	recs, err := s.store.RunningIdem(ctx)
	if err != nil {
		s.log.Warn("listing the running idempotency records", "err", err)
		return
	}
	for _, rec := range recs {
		// One server holds the data directory: a record of another owner
		// belongs to a dead process.
		if rec.Project != pr.meta.ID || rec.Owner == s.instance {
			continue
		}
		if err := s.recoverRecord(ctx, pr, rec); err != nil {
			s.log.Warn("settling a write interrupted by a crash", "project", pr.meta.Name, "idempotency_key", rec.Key, "err", err)
		}
	}
}

// recoverRecord settles one record a dead process left running in pr.
func (s *Server) recoverRecord(ctx context.Context, pr *project, rec teamstore.Idem) error {
	// The vault finishes (or rolls back) an interrupted write when it
	// opens; wait for that before asking git.
	if err := pr.svc.Ready(ctx); err != nil {
		return err
	}
	sha, err := pr.git.commitWithToken(ctx, rec.Token)
	if err != nil {
		return err
	}
	if sha == "" {
		s.log.Info("a write interrupted by a crash was not applied; a retry will apply it", "project", pr.meta.Name, "op", rec.Operation, "idempotency_key", rec.Key)
		return s.store.ReleaseIdem(ctx, rec.KeyID, rec.Key, rec.Token)
	}
	if _, err := s.settle(ctx, s.keyOf(ctx, rec.KeyID), pr, rec, sha); err != nil {
		return err
	}
	s.log.Info("a write interrupted by a crash was applied; its answer is stored for the retry", "project", pr.meta.Name, "op", rec.Operation, "version", sha, "idempotency_key", rec.Key)
	return nil
}

// keyOf is the key of an id (revoked ones included), for the authorship of
// a settled write; a key no longer listed is named by its id only.
func (s *Server) keyOf(ctx context.Context, id string) *teamstore.Key {
	if keys, err := s.store.Keys(ctx); err == nil {
		for _, k := range keys {
			if k.ID == id {
				return &k
			}
		}
	}
	return &teamstore.Key{ID: id}
}

// settle does the bookkeeping of a write found applied in git (commit sha)
// and stores the answer its retry gets.
func (s *Server) settle(ctx context.Context, k *teamstore.Key, pr *project, rec teamstore.Idem, sha string) (*response, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return s.settleLocked(ctx, k, pr, rec, sha)
}

// settleLocked is settle with pr.mu held.
func (s *Server) settleLocked(ctx context.Context, k *teamstore.Key, pr *project, rec teamstore.Idem, sha string) (*response, error) {
	changes, err := pr.git.changes(ctx, sha)
	if err != nil {
		return nil, err
	}
	res := &api.WriteResult{Committed: true, Files: []string{}, Warnings: []string{rebuiltWarning}}
	setVersion(res, sha)
	for _, c := range changes {
		if !vaultfs.IsNoteName(c.Path) {
			continue
		}
		switch c.Status {
		case "R":
			res.Action, res.From, res.Path = api.ActionMoved, c.From, c.Path
			res.Files = append(res.Files, c.From, c.Path)
		case "D":
			if res.Path == "" {
				res.Action, res.Path = api.ActionDeleted, c.Path
			}
			res.Files = append(res.Files, c.Path)
		default:
			if res.Path == "" {
				res.Action, res.Path = api.ActionEdited, c.Path
				if c.Status == "A" {
					res.Action = api.ActionCreated
				}
			}
			res.Files = append(res.Files, c.Path)
		}
	}
	var size int64
	if res.Path != "" && res.Action != api.ActionDeleted {
		// The note's hash as the write left it (the ETag, the sha256 a
		// client writes against next).
		h, n, err := pr.git.blobHash(ctx, sha, res.Path)
		switch {
		case err == nil:
			res.SHA256, size = h, n
		case rec.Operation == "create" || rec.Operation == "update":
			// Their answer is the note they wrote: without it no answer
			// is made, nothing is booked, and the record stays running
			// for the next settle.
			return nil, fmt.Errorf("reading the note a settled write wrote: %w", err)
		}
	}
	if res.Action == api.ActionMoved {
		// What the move did to links is in its commit's trailers.
		if t, err := pr.git.trailers(ctx, sha); err == nil {
			res.LinksRewritten, _ = strconv.Atoi(t[gitx.LinksRewrittenTrailer])
			res.NotesRewritten, _ = strconv.Atoi(t[gitx.NotesRewrittenTrailer])
		}
	}
	op := writeOp{pr: pr, op: rec.Operation, target: rec.Target}
	var rebuildErr error
	out := s.recorded(ctx, pr, res, rec.Operation+" "+res.Path+" (settled after a restart)", func(at time.Time, files map[string]teamstore.File) *response {
		resp, err := s.rebuiltAnswer(ctx, pr, rec, res, size, at, files)
		if err != nil {
			rebuildErr = err
			return vaultError(err)
		}
		return resp
	})
	if out.unbooked != nil {
		// Nothing to store yet: the record stays running for next time.
		return nil, fmt.Errorf("booking a settled write: %w", out.unbooked)
	}
	if rebuildErr != nil {
		// The answer could not be made (the store failing as the note's
		// record was read): nothing is booked or stored, and the record
		// stays running for next time, as an unbooked write's; an error
		// stored would be replayed to every retry of a write that was
		// applied.
		return nil, fmt.Errorf("rebuilding the answer of a settled write: %w", rebuildErr)
	}
	out.result = "ok (settled after a restart)"
	answer := &teamstore.IdemAnswer{KeyID: rec.KeyID, Key: rec.Key, Token: rec.Token, Response: teamstore.Response{Status: out.resp.status, Header: out.resp.header, Body: out.resp.body}}
	if err := s.finish(ctx, k, op, out, rec.Key, answer); err != nil {
		return nil, err
	}
	return out.resp, nil
}

// rebuiltAnswer is the answer of a settled write, as its operation answers,
// made from its commit (res, and size: the note's as the write left it) and
// its bookkeeping (files), not from the vault as it is now: by the time a
// write is settled (at the next start, or by the vault's next holder) the
// note may have changed or gone, and the retry must still learn that its
// write was applied, and what it wrote. An error is the store's, failing.
func (s *Server) rebuiltAnswer(ctx context.Context, pr *project, rec teamstore.Idem, res *api.WriteResult, size int64, at time.Time, files map[string]teamstore.File) (*response, error) {
	switch rec.Operation {
	case "create", "update":
		status := http.StatusOK
		if rec.Operation == "create" {
			status = http.StatusCreated
		}
		f, err := s.settledFile(ctx, pr, rec, res.Path, at, files)
		if err != nil {
			return nil, err
		}
		wf := wireFile(f, vaultfs.FileInfo{Size: size}, res.SHA256)
		return withETag(jsonResponse(status, teamapi.FileAnswer{File: wf, Warnings: res.Warnings}), wf.ContentHash), nil
	case "move":
		ans := teamapi.MoveAnswer{File: teamapi.MovedFile{ID: rec.Target, Path: res.Path}, LinksRewritten: res.LinksRewritten, NotesRewritten: res.NotesRewritten, Warnings: res.Warnings}
		return withETag(jsonResponse(http.StatusOK, ans), res.SHA256), nil
	case "delete":
		return jsonResponse(http.StatusOK, teamapi.DeleteAnswer{Success: true, Warnings: res.Warnings}), nil
	}
	return jsonResponse(http.StatusOK, res), nil
}

// settledFile is the record of the note a settled create or update wrote
// at path: the one its bookkeeping just wrote, else the store's for the path
// or (an update) for its id, else, when the store has none any more, one
// naming what is known (the path, and the id an update was sent to). A
// store that fails otherwise is the error.
func (s *Server) settledFile(ctx context.Context, pr *project, rec teamstore.Idem, path string, at time.Time, files map[string]teamstore.File) (teamstore.File, error) {
	if f, ok := files[path]; ok {
		f.UpdatedAt = at
		return f, nil
	}
	fctx, cancel := s.storeCtx(ctx)
	defer cancel()
	f, err := s.store.FileByPath(fctx, pr.meta.ID, path)
	if errors.Is(err, teamstore.ErrNotFound) && rec.Operation == "update" {
		f, err = s.store.File(fctx, pr.meta.ID, rec.Target)
	}
	switch {
	case errors.Is(err, teamstore.ErrNotFound):
		f = teamstore.File{Project: pr.meta.ID, CreatedAt: at, UpdatedAt: at}
		if rec.Operation == "update" {
			f.ID = rec.Target
		}
	case err != nil:
		return teamstore.File{}, err
	}
	f.Path = path
	return f, nil
}
