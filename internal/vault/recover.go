package vault

import (
	"context"
	"errors"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/journal"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// recover finishes the writes that a crash interrupted past their commit
// record (see tx.go): each is rolled forward and committed, and its record
// removed. It runs with the write lock held exclusively, at start and
// before every write (another process on the same vault may have died).
func (s *Service) recover(ctx context.Context) {
	if s.git != nil {
		// git's lock files that a vaultmcp killed while committing left
		// (gitx's lock ledger): git would refuse every commit until removed.
		removed, err := s.git.ClearCrashedLocks()
		if len(removed) > 0 {
			s.log.Warn("removed the git lock files an interrupted commit left", "files", len(removed))
		}
		if err != nil {
			s.log.Warn("could not clear the git lock files an interrupted commit left", "err", s.fs.Redact(err.Error()))
		}
	}
	for _, j := range []*journal.Dir{s.oldJournal, s.journal} {
		if j == nil {
			continue
		}
		recs, bad, err := j.Pending()
		if err != nil {
			s.log.Error("the write journal could not be read; interrupted writes are not finished", "err", err)
			continue
		}
		for _, b := range bad {
			s.log.Error("a write journal record could not be read; it was left in place for inspection", "file", b.File, "err", b.Err)
		}
		for _, rec := range recs {
			s.rollForward(ctx, j, rec)
		}
	}
}

// rollForward publishes what rec did not publish yet, removes what it
// removes, commits, and removes the record. A file someone changed since the
// crash is left as they made it (logged).
func (s *Service) rollForward(ctx context.Context, j *journal.Dir, rec *journal.Record) {
	published, conflicts := 0, 0
	for _, op := range rec.Ops {
		switch op.Kind {
		case journal.OpPut:
			expect := op.Before
			if op.Create {
				expect = ""
			}
			err := s.fs.PublishTemp(op.Temp, op.Path, expect, op.Create)
			var late *vaultfs.LateEdit
			switch code := vaultfs.CodeOf(err); {
			case err == nil:
				published++
			case errors.As(err, &late):
				// Someone wrote to the note as it was replaced: their
				// version is put back, and this file of the write left out.
				conflicts++
				mode, _ := s.fs.Mode(op.Path)
				s.giveBack(op.Path, vaultfs.Move, mode, op.After, late.Now)
			case code == vaultfs.CodeNotFound:
				// Published before the crash.
			default:
				if h, herr := s.fs.HashOf(op.Path); herr == nil && h == op.After {
					// Published (linked) before the crash; only the
					// temporary name was left.
				} else {
					conflicts++
					s.log.Warn("an interrupted write could not be finished for one file; the file was left as it is", "path", op.Path, "err", err)
				}
				if rerr := s.fs.RemoveTemp(op.Temp); rerr != nil {
					s.log.Warn("could not remove a temporary file", "temp", op.Temp, "err", rerr)
				}
			}
		case journal.OpRemove:
			h, err := s.fs.HashOf(op.Path)
			switch {
			case err != nil:
				conflicts++
				s.log.Warn("an interrupted write could not remove a file", "path", op.Path, "err", err)
			case h == "":
				// Removed before the crash.
			case h == op.Before:
				if err := s.fs.RemoveIf(op.Path, op.Before); err != nil {
					conflicts++
					s.log.Warn("an interrupted write could not remove a file", "path", op.Path, "err", err)
				} else {
					published++
				}
			default:
				conflicts++
				s.log.Warn("an interrupted write would remove a file that changed since; it was left as it is", "path", op.Path)
			}
		}
	}
	paths := rec.Paths()
	s.fs.SyncDirs(paths)
	select {
	case <-s.ready:
		for _, p := range paths {
			s.Refresh(p)
		}
	default:
		// At start, before the first build: the build reads them.
	}
	committed := false
	if rec.Commit && s.git != nil {
		_, err := s.git.CommitWith(ctx, paths, rec.Message, gitx.CommitOptions{AuthorName: rec.Author, AuthorEmail: rec.Email, IdempotencyKey: rec.IdempotencyKey})
		switch {
		case err == nil:
			committed = true
		case errors.Is(err, gitx.ErrNothingToCommit):
			// Committed before the crash; the index may be the one
			// before the commit (killed between the two): its entries of
			// the write's paths are set to the commit's.
			if err := s.git.ResetIndex(ctx, paths); err != nil {
				s.log.Warn("could not bring the git index in line with an interrupted write's commit", "err", s.fs.Redact(err.Error()))
			}
		default:
			s.log.Warn("an interrupted write was finished but could not be committed", "err", s.fs.Redact(err.Error()))
		}
	}
	if err := j.Remove(rec.ID); err != nil {
		s.log.Warn("could not remove a finished journal record", "err", err)
	}
	s.log.Info("rolled forward a write interrupted by a crash", "message", rec.Message, "files", len(paths),
		"published", published, "committed", committed, "left_alone", conflicts)
}
