package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/journal"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// A write is a transaction over the vault's files, all-or-nothing:
//
//  1. plan: the write's function reads notes and stages every new content
//     as a hidden temporary file beside its note (vaultfs.Stage); nothing
//     visible changes, and an error or a cancellation here discards the
//     staged files: the vault is as before;
//  2. verify: every file is compared with what the write read. One that
//     someone changed meanwhile (in Obsidian, say) is re-planned: its edit
//     is merged with theirs when they touch different lines, else the whole
//     write is planned again from the files as they are now (a link rewrite,
//     an edit, a learning can be; a replacement with a stale
//     expected_sha256 then refuses with CONFLICT). No edit made by anyone
//     else is overwritten;
//  3. the staged files are fsynced together, and the journal's commit
//     record is written (internal/journal): from here the write is finished
//     whatever happens, even if its caller cancels or disconnects;
//  4. publish: each file replaces its note only if the note is still what
//     was verified (checked again just before the rename); folders fsynced;
//  5. the index is refreshed, the git commit made (one commit of exactly the
//     touched paths), the journal record removed.
//
// Killed between 3 and 5, the next start (or the next write) finds the
// record and rolls the write forward: it publishes what was not published
// and commits. Killed before 3, there is no record and the temporary files
// are removed (rolled back).

// maxPlans is how many times a write is planned when files keep changing
// under it before it gives up with CONFLICT.
const maxPlans = 3

// change is one file a write touches: its bytes before and after (nil when
// the file did not exist / no longer exists).
type change struct {
	path          string
	from          string // for a rename: the old path, removed
	before, after []byte
	// exact: the after bytes must replace exactly the before bytes (a
	// replacement with expected_sha256), so a change made meanwhile is
	// never merged into it.
	exact  bool
	acc    vaultfs.Access
	mode   fs.FileMode
	staged *vaultfs.Staged
	done   bool // published (or removed)
}

// tx is one write in progress.
type tx struct {
	s        *Service
	msg      *texts // the language of its warnings and refusals (Service.texts)
	changes  []*change
	byPath   map[string]*change
	warnings []string
	staged   bool // a temporary file was written
	nstaged  int
	// pruneDirs removes the folders that removals leave empty (an undo
	// takes back the folders a write created, as git revert does).
	pruneDirs bool
}

// warn adds the warning id (see messages.go), formatted with args.
func (t *tx) warn(id msgID, args ...any) {
	t.warnings = append(t.warnings, t.msg.Get(id, args...))
}

// create reports whether c publishes a note where none was.
func (c *change) create() bool { return c.before == nil || c.from != "" }

// writeFile plans path to go from before (nil: no note) to after (nil:
// removed), staging the new content at once so that a path that cannot be
// written fails here, while the write can still choose another. A file
// whose bytes would not change is not written.
func (t *tx) writeFile(path string, before, after []byte, acc vaultfs.Access) error {
	return t.put(path, before, after, acc, false)
}

// planned is one file of writeFiles.
type planned struct {
	path          string
	before, after []byte
}

// writeFiles is writeFile for many new files or replacements at once (a
// move's link rewrites): they are staged on every core. On an error nothing
// of the batch is kept, and the error names its file.
func (t *tx) writeFiles(files []planned, acc vaultfs.Access) error {
	var fresh []planned
	for _, f := range files {
		if _, ok := t.byPath[f.path]; ok || len(files) < refreshBatchMin {
			if err := t.writeFile(f.path, f.before, f.after, acc); err != nil {
				return err
			}
			continue
		}
		if f.before != nil && string(f.before) == string(f.after) {
			continue
		}
		fresh = append(fresh, f)
	}
	staged := make([]*vaultfs.Staged, len(fresh))
	errs := make([]error, len(fresh))
	parallel(len(fresh), func(i int) {
		staged[i], errs[i] = t.s.fs.Stage(fresh[i].path, fresh[i].after, acc, fresh[i].before == nil, 0)
	})
	if err := errors.Join(errs...); err != nil {
		for _, st := range staged {
			if st != nil {
				t.s.fs.Discard(st)
			}
		}
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
	}
	for i, f := range fresh {
		c := &change{path: f.path, before: f.before, after: f.after, acc: acc, staged: staged[i]}
		t.byPath[f.path] = c
		t.changes = append(t.changes, c)
		t.staged = true
		t.nstaged++
		if testHookStaged != nil {
			testHookStaged(t.nstaged)
		}
	}
	return nil
}

// replaceExact is writeFile for a replacement that must not be merged with
// a change made meanwhile.
func (t *tx) replaceExact(path string, before, after []byte) error {
	return t.put(path, before, after, vaultfs.Write, true)
}

func (t *tx) put(path string, before, after []byte, acc vaultfs.Access, exact bool) error {
	c, ok := t.byPath[path]
	if !ok && before != nil && after != nil && string(before) == string(after) {
		return nil
	}
	if ok {
		before = c.before
	}
	var st *vaultfs.Staged
	if after != nil {
		var err error
		create := before == nil || (ok && c.from != "")
		st, err = t.s.fs.Stage(path, after, acc, create, t.modeFor(c))
		if err != nil {
			return err
		}
		t.staged = true
		t.nstaged++
		if testHookStaged != nil {
			testHookStaged(t.nstaged)
		}
	}
	if ok {
		if c.staged != nil {
			t.s.fs.Discard(c.staged)
		}
		c.after, c.staged = after, st
		c.exact = c.exact || exact
		return nil
	}
	c = &change{path: path, before: before, after: after, acc: acc, staged: st, exact: exact}
	t.byPath[path] = c
	t.changes = append(t.changes, c)
	return nil
}

func (t *tx) modeFor(c *change) fs.FileMode {
	if c != nil {
		return c.mode
	}
	return 0
}

// remove plans the removal of path, whose bytes are before.
func (t *tx) remove(path string, before []byte) error {
	return t.put(path, before, nil, vaultfs.Write, false)
}

// rename plans the move of from (bytes before) to to, with content after
// (before with the note's own links rewritten). The note is published at to
// exclusively (a move never overwrites) and from is removed if unchanged.
func (t *tx) rename(from, to string, before, after []byte, mode fs.FileMode) error {
	st, err := t.s.fs.Stage(to, after, vaultfs.Move, true, mode)
	if err != nil {
		return err
	}
	t.staged = true
	c := &change{path: to, from: from, before: before, after: after, acc: vaultfs.Move, mode: mode, staged: st}
	t.byPath[to] = c
	t.changes = append(t.changes, c)
	return nil
}

// warnVia adds writePath's note on a path through a symbolic link, if any.
func (t *tx) warnVia(via string) {
	if via != "" {
		t.warnings = append(t.warnings, via)
	}
}

// current returns the bytes of path as this write has left them so far, or
// as they are on disk.
func (t *tx) current(path string) ([]byte, error) {
	if c, ok := t.byPath[path]; ok {
		return c.after, nil
	}
	return t.s.readCurrent(path)
}

// discard removes every staged file: nothing of the write is published.
func (t *tx) discard() {
	for _, c := range t.changes {
		if c.staged != nil && !c.done {
			t.s.fs.Discard(c.staged)
			c.staged = nil
		}
	}
}

// txFunc is the work of one write: it plans files through t and returns the
// result and the commit message. It may run more than once (when files
// change under the write), each time on a fresh tx.
type txFunc func(ctx context.Context, t *tx) (res *api.WriteResult, message string, err error)

// errReplan: a file changed under the write in a way that cannot be merged;
// the write is planned again.
var errReplan = errors.New("files changed while the write was planned")

// lockErr is the answer when the write lock could not be taken: nothing was
// written, so it is not uncertain.
func (s *Service) lockErr(m *texts, err error) error {
	return &api.Error{Code: api.CodeBusy, Message: m.Get(eLockFailed, s.fs.Redact(err.Error())), Err: err}
}

// write runs fn under the write lock as one transaction (see above).
func (s *Service) write(ctx context.Context, fn txFunc) (*api.WriteResult, error) {
	m := s.texts(ctx)
	if s.opts.ReadOnly {
		return nil, &api.Error{Code: api.CodeReadOnly, Message: m.Get(eReadOnly)}
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	if !s.beginWrite() {
		return nil, &api.Error{Code: api.CodeUnavailable, Message: m.Get(eShuttingDown)}
	}
	defer s.inflight.Done()
	release, exclusive, err := s.lock.Acquire(ctx)
	if err != nil {
		return nil, s.lockErr(m, err)
	}
	defer release()
	if exclusive {
		s.recover(context.WithoutCancel(ctx))
	}
	for attempt := 1; ; attempt++ {
		t := &tx{s: s, msg: m, byPath: make(map[string]*change)}
		if !exclusive {
			t.warn(wStuck, s.opts.StuckAfter)
		}
		res, message, err := fn(ctx, t)
		if err == nil && len(t.changes) > 0 {
			err = t.verify()
		}
		if err == nil {
			err = t.sync(ctx)
		}
		if err == nil && ctx.Err() != nil {
			err = &api.Error{Code: api.CodeCancelled, Message: m.Get(eCancelled), Err: ctx.Err()}
		}
		if errors.Is(err, errReplan) && attempt < maxPlans {
			t.discard()
			continue
		}
		if err != nil {
			t.discard()
			if errors.Is(err, errReplan) {
				return nil, &api.Error{Code: api.CodeConflict, Message: m.Get(eKeptChanging, attempt, s.fs.Redact(err.Error())), Err: err}
			}
			return nil, err
		}
		// From here on the write is finished and committed even if the
		// caller goes away: git's own timeouts bound it.
		done, err := t.apply(context.WithoutCancel(ctx), res, message)
		if errors.Is(err, errReplan) && attempt < maxPlans {
			continue
		}
		if err != nil {
			if errors.Is(err, errReplan) {
				return nil, &api.Error{Code: api.CodeConflict, Message: s.fs.Redact(err.Error()), Err: err}
			}
			return nil, err
		}
		return done, nil
	}
}

// verify compares every planned file with the disk and re-plans the ones
// someone changed: merged when possible, else errReplan.
func (t *tx) verify() error {
	errs := make([]error, len(t.changes))
	parallel(len(t.changes), func(i int) { errs[i] = t.check(t.changes[i]) })
	return errors.Join(errs...)
}

// check re-plans c if its file is no longer what the write read.
func (t *tx) check(c *change) error {
	src := c.path
	if c.from != "" {
		src = c.from
	}
	now, err := t.s.readCurrent(src)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", src, errReplan, err)
	}
	if c.from != "" {
		if now == nil {
			return fmt.Errorf("%s was removed: %w", src, errReplan)
		}
		if cur, err := t.s.readCurrent(c.path); err != nil || cur != nil {
			return fmt.Errorf("%s appeared: %w", c.path, errReplan)
		}
	}
	if string(now) == string(c.before) && (now == nil) == (c.before == nil) {
		return nil
	}
	if c.exact || now == nil || c.before == nil || c.after == nil {
		return fmt.Errorf("%s changed: %w", src, errReplan)
	}
	merged, ok := merge3(c.before, c.after, now)
	if !ok {
		return fmt.Errorf("%s changed on the same lines: %w", src, errReplan)
	}
	st, err := t.s.fs.Stage(c.path, merged, c.acc, c.from != "", c.mode)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", c.path, errReplan, err)
	}
	if c.staged != nil {
		t.s.fs.Discard(c.staged)
	}
	t.s.log.Info("a note changed during a write; the write's edit was merged with it", "path", c.path)
	c.before, c.after, c.staged = now, merged, st
	return nil
}

// record makes the journal's commit record of the verified plan.
func (t *tx) record(message string, commit bool, meta api.WriteMeta) *journal.Record {
	r := &journal.Record{ID: journal.NewID(), Started: time.Now().UTC(), Message: message, Commit: commit,
		Author: meta.Author, Email: meta.Email, IdempotencyKey: meta.IdempotencyKey}
	for _, c := range t.changes {
		if c.staged != nil {
			op := journal.Op{Kind: journal.OpPut, Path: c.path, Temp: c.staged.Temp, Create: c.create(), After: sha256Hex(c.after)}
			if c.from == "" && c.before != nil {
				op.Before = sha256Hex(c.before)
			}
			r.Ops = append(r.Ops, op)
		}
		if c.from != "" {
			r.Ops = append(r.Ops, journal.Op{Kind: journal.OpRemove, Path: c.from, Before: sha256Hex(c.before)})
		} else if c.after == nil {
			r.Ops = append(r.Ops, journal.Op{Kind: journal.OpRemove, Path: c.path, Before: sha256Hex(c.before)})
		}
	}
	return r
}

// apply syncs, records, publishes, refreshes, commits. A file found changed
// at the last moment is merged again when it can be; otherwise what was
// published is put back and errReplan returned.
func (t *tx) apply(ctx context.Context, res *api.WriteResult, message string) (*api.WriteResult, error) {
	s := t.s
	if res == nil {
		res = &api.WriteResult{Action: api.ActionEdited}
	}
	sort.SliceStable(t.changes, func(i, j int) bool { return t.changes[i].path < t.changes[j].path })
	var rec *journal.Record
	if len(t.changes) > 0 {
		s.commitLocal(ctx, t)
		rec = t.record(message, s.git != nil, api.WriteMetaFrom(ctx))
		if err := s.journal.Write(rec); err != nil {
			t.discard()
			return nil, s.errorf("the write could not be recorded, nothing was changed: %w", err)
		}
		if testHookTx != nil {
			testHookTx("recorded")
		}
		if err := t.publish(); err != nil {
			t.undoPublished()
			t.discard()
			if rerr := s.journal.Remove(rec.ID); rerr != nil {
				s.log.Warn("could not remove a journal record", "err", rerr)
			}
			t.refresh()
			return nil, err
		}
		if testHookTx != nil {
			testHookTx("published")
		}
		if t.pruneDirs {
			for _, c := range t.changes {
				if c.after == nil {
					s.fs.PruneEmptyDirs(c.path)
				}
			}
		}
		s.fs.SyncDirs(t.paths())
	}
	t.refresh()
	for _, c := range t.changes {
		if c.from != "" {
			res.Files = append(res.Files, c.from)
		}
		res.Files = append(res.Files, c.path)
	}
	if res.Files == nil {
		res.Files = []string{}
	}
	res.Diff = t.diff()
	if len(t.changes) > 0 {
		s.commit(ctx, t, res, message)
		if err := s.journal.Remove(rec.ID); err != nil {
			s.log.Warn("could not remove a journal record; the next start will finish it again", "err", err)
		}
	}
	res.Warnings = append(res.Warnings, t.warnings...)
	return res, nil
}

// sync makes every staged file durable, all at once.
func (t *tx) sync(ctx context.Context) error {
	var staged []*vaultfs.Staged
	for _, c := range t.changes {
		if c.staged != nil {
			staged = append(staged, c.staged)
		}
	}
	if len(staged) == 0 {
		return nil
	}
	if err := t.s.fs.SyncStaged(context.WithoutCancel(ctx), staged); err != nil {
		return fieldErr("path", err)
	}
	if testHookTx != nil {
		testHookTx("synced")
	}
	return nil
}

// paths lists every path the write touches (old names of renames too).
func (t *tx) paths() []string {
	var out []string
	for _, c := range t.changes {
		if c.from != "" {
			out = append(out, c.from)
		}
		out = append(out, c.path)
	}
	return out
}

// refresh brings the index in line with the files as they are now.
func (t *tx) refresh() { t.s.refreshMany(t.paths()) }

// publish puts every staged file in place and removes what the write
// removes, each only if it is still what was verified. The files are
// independent of one another, so they are published on every core.
func (t *tx) publish() error {
	errs := make([]error, len(t.changes))
	parallel(len(t.changes), func(i int) { errs[i] = t.publishOne(t.changes[i]) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) publishOne(c *change) error {
	fsys := t.s.fs
	if c.staged != nil {
		// Replaced, but someone wrote to the note between the check and
		// the rename (vaultfs.LateEdit): their version goes back, and the
		// write is planned again on top of it.
		var late *vaultfs.LateEdit
		lateEdit := func(err error) error {
			if !errors.As(err, &late) {
				return nil
			}
			c.staged = nil
			t.s.giveBack(c.path, c.acc, c.mode, sha256Hex(c.after), late.Now)
			return fmt.Errorf("%w: %s was written to by someone else as it was replaced", errReplan, c.path)
		}
		err := fsys.Publish(c.staged, t.expectAt(c))
		if lerr := lateEdit(err); lerr != nil {
			return lerr
		}
		if vaultfs.CodeOf(err) == vaultfs.CodeChanged && !c.create() {
			// Changed in the last instant: merge again if possible.
			if cerr := t.check(c); cerr != nil {
				return cerr
			}
			if err2 := fsys.SyncStaged(context.Background(), []*vaultfs.Staged{c.staged}); err2 != nil {
				return fieldErr("path", err2)
			}
			err = fsys.Publish(c.staged, t.expectAt(c))
			if lerr := lateEdit(err); lerr != nil {
				return lerr
			}
		}
		if err != nil {
			if vaultfs.CodeOf(err) == vaultfs.CodeChanged {
				return fmt.Errorf("%w: %s", errReplan, fsys.Redact(err.Error()))
			}
			return fieldErr("path", err)
		}
		c.staged = nil
	}
	switch {
	case c.from != "":
		if err := fsys.RemoveIf(c.from, sha256Hex(c.before)); err != nil {
			c.done = true // the new name is published: undo takes it back
			if vaultfs.CodeOf(err) == vaultfs.CodeChanged {
				return fmt.Errorf("%w: %s", errReplan, fsys.Redact(err.Error()))
			}
			return fieldErr("from", err)
		}
	case c.after == nil:
		if err := fsys.RemoveIf(c.path, sha256Hex(c.before)); err != nil {
			if vaultfs.CodeOf(err) == vaultfs.CodeChanged {
				return fmt.Errorf("%w: %s", errReplan, fsys.Redact(err.Error()))
			}
			return fieldErr("path", err)
		}
	}
	c.done = true
	if testHookTx != nil {
		testHookTx("published-one")
	}
	return nil
}

// giveBack puts back, at p, the version of a note that another program
// wrote as this process replaced it with ours (see vaultfs.LateEdit), if
// ours (the SHA-256 of the version this process published) is still what
// is there.
func (s *Service) giveBack(p string, acc vaultfs.Access, mode fs.FileMode, ours string, theirs []byte) {
	st, err := s.fs.Stage(p, theirs, acc, false, mode)
	if err == nil {
		if err = s.fs.Publish(st, ours); err != nil {
			s.fs.Discard(st)
		}
	}
	if err != nil {
		s.log.Warn("a note written by someone else as a write replaced it could not be put back", "path", p, "err", s.fs.Redact(err.Error()))
		return
	}
	s.log.Info("a note was written by someone else as a write replaced it; their version was put back", "path", p)
}

// expectAt is the SHA-256 the note at c.path must have when c is
// published ("" for none).
func (t *tx) expectAt(c *change) string {
	if c.create() {
		return ""
	}
	return sha256Hex(c.before)
}

// undoPublished puts back what publish changed before it stopped, each file
// only while it still holds what this write put there.
func (t *tx) undoPublished() {
	fsys := t.s.fs
	for _, c := range t.changes {
		if !c.done {
			continue
		}
		switch {
		case c.from != "":
			if fsys.SameBytes(c.from, nil) {
				if st, err := fsys.Stage(c.from, c.before, vaultfs.Move, true, c.mode); err == nil {
					if err := fsys.Publish(st, ""); err != nil {
						fsys.Discard(st)
					}
				}
			}
			if err := fsys.RemoveIf(c.path, sha256Hex(c.after)); err != nil {
				t.s.log.Warn("could not take back a published file of a failed write", "path", c.path, "err", err)
			}
		case c.before == nil:
			if err := fsys.RemoveIf(c.path, sha256Hex(c.after)); err != nil {
				t.s.log.Warn("could not take back a published file of a failed write", "path", c.path, "err", err)
			}
		default:
			if st, err := fsys.Stage(c.path, c.before, c.acc, c.after == nil, c.mode); err == nil {
				expect := ""
				if c.after != nil {
					expect = sha256Hex(c.after)
				}
				var late *vaultfs.LateEdit
				switch err := fsys.Publish(st, expect); {
				case errors.As(err, &late):
					// Written to by someone else as it was taken back.
					t.s.giveBack(c.path, c.acc, c.mode, sha256Hex(c.before), late.Now)
				case err != nil:
					fsys.Discard(st)
					t.s.log.Warn("could not take back a published file of a failed write", "path", c.path, "err", err)
				}
			}
		}
		c.done = false
	}
}

// diff renders a unified diff of every change, file by file.
func (t *tx) diff() string {
	var b strings.Builder
	for _, c := range t.changes {
		from, to := "a/"+c.path, "b/"+c.path
		if c.from != "" {
			fmt.Fprintf(&b, "rename from %s\nrename to %s\n", c.from, c.path)
			from = "a/" + c.from
			if string(c.before) == string(c.after) {
				continue
			}
		}
		if c.before == nil {
			from = "/dev/null"
		}
		if c.after == nil {
			to = "/dev/null"
		}
		b.WriteString(udiff.Unified(from, to, string(c.before), string(c.after)))
	}
	return b.String()
}

// commitLocal commits, before a write publishes anything, the files it
// replaces, removes or renames whose content is not HEAD's (an untracked
// note, edits never committed), as they are. The write's own commit then
// holds its change only, and undoing it gives those bytes back: undo
// reverts to the commit's parent, which used to be HEAD's older version, so
// undoing the move of an untracked note deleted it, and undoing a move or
// an edit lost the uncommitted edits of every note it had touched. The
// files are committed as they are because the write would commit them
// anyway (with its change on top). A failure is a warning, as a failed
// commit is: the write goes on.
func (s *Service) commitLocal(ctx context.Context, t *tx) {
	if s.git == nil {
		return
	}
	files := make(map[string][]byte)
	for _, c := range t.changes {
		switch {
		case c.from != "":
			files[c.from] = c.before
		case c.before != nil:
			files[c.path] = c.before
		}
	}
	if len(files) == 0 {
		return
	}
	// Most writes touch committed files only, which is told in process
	// (a write costs no more); git is asked about the others.
	held, ok := s.git.HeadHolds(ctx, files)
	var paths []string
	for p := range files {
		if !ok || !held[p] {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return
	}
	sort.Strings(paths)
	// One commit of them all; git leaves out a path it finds unchanged
	// (ErrNothingToCommit when it finds every one so). It carries neither
	// the write's idempotency key (a commit carrying it says the write was
	// applied) nor its author: the changes are not the writer's (on a team
	// server, an API key's holder did not make an edit found on the disk),
	// so the repository's own identity (git's user, or vaultmcp's) signs
	// them, as it would a commit made by hand there.
	sha, err := s.git.CommitWith(ctx, paths, "chore(vault): commit local changes before a write", gitx.CommitOptions{})
	switch {
	case errors.Is(err, gitx.ErrNothingToCommit):
		return
	case err != nil:
		t.warn(wCommitFailed, s.fs.Redact(err.Error()))
		return
	}
	dirty, err := s.git.ChangedPaths(ctx, sha+"^", sha)
	if err != nil || len(dirty) == 0 {
		dirty = paths // the first commit of the repository: no parent
	}
	shown := dirty
	if len(shown) > 5 {
		shown = shown[:5]
	}
	list := strings.Join(shown, ", ")
	if len(dirty) > 5 {
		list += t.msg.Get(eAndMore, len(dirty)-5)
	}
	t.warn(wKeptLocal, len(dirty), list, shortID(sha))
}

// commit commits the touched paths; failures are warnings, never rollbacks.
func (s *Service) commit(ctx context.Context, t *tx, res *api.WriteResult, message string) {
	if s.git == nil {
		t.warn(wNoGit)
		return
	}
	sha, err := s.git.CommitWith(ctx, t.paths(), message, commitOptions(api.WriteMetaFrom(ctx)))
	switch {
	case errors.Is(err, gitx.ErrNothingToCommit):
		t.warn(wNothingToCommit)
		return
	case err != nil:
		t.warn(wCommitFailed, s.fs.Redact(err.Error()))
		return
	}
	res.Committed = true
	res.Version = sha
	if res.Action == api.ActionDeleted {
		res.UndoHint = fmt.Sprintf("git checkout %s^ -- %s", sha, shellPathspec(res.Path))
	}
	var warning string
	if res.Pushed, warning = s.push(ctx); warning != "" {
		t.warnings = append(t.warnings, warning)
	}
}

// shellPathspec spells a vault path for the undo command a person pastes
// into a POSIX shell: single-quoted, since inside double quotes the shell
// still runs "$(...)" and "`...`", which a note's name may hold; and, when
// the name holds a glob character, as a literal pathspec, or git would
// also restore every other file the name matches ("[a].md" matches a.md).
func shellPathspec(p string) string {
	if strings.ContainsAny(p, "*?[") {
		p = ":(literal)" + p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

func commitOptions(m api.WriteMeta) gitx.CommitOptions {
	return gitx.CommitOptions{AuthorName: m.Author, AuthorEmail: m.Email, IdempotencyKey: m.IdempotencyKey}
}

// push runs git push after a commit when AutoPush is on: whether it
// succeeded (nil when no push was tried), and the warning of a failure.
func (s *Service) push(ctx context.Context) (*bool, string) {
	if !s.opts.AutoPush {
		return nil, ""
	}
	err := s.git.Push(ctx)
	pushed := err == nil
	if err != nil {
		m := s.texts(ctx)
		return &pushed, m.Get(wPushFailed, s.describePush(m, err))
	}
	return &pushed, ""
}

func (s *Service) describePush(m *texts, err error) string {
	var pe *gitx.PushError
	if errors.As(err, &pe) {
		switch pe.Kind {
		case gitx.PushNoUpstream:
			return m.Get(wPushNoUpstream)
		case gitx.PushRejected:
			return m.Get(wPushRejected)
		case gitx.PushAuth:
			return m.Get(wPushAuth)
		case gitx.PushNetwork:
			return m.Get(wPushNetwork)
		}
		if pe.Detail != "" {
			return pe.Detail
		}
	}
	return err.Error()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// testHookTx, when set by a test, runs at the named steps of a write
// ("synced", "recorded", "published"), so a test can kill the process or
// change the vault there.
var testHookTx func(step string)

// testHookStaged, when set by a test, runs after each file a write stages,
// with the count so far.
var testHookStaged func(n int)
