package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
	"github.com/vaultmcp/vaultmcp/internal/writelock"
)

// change is one file a write touched: its bytes before and after (nil when
// the file did not exist / no longer exists).
type change struct {
	path          string
	from          string // for a rename: the old path
	before, after []byte
}

// tx is one write: it holds the write lock, records every file it changes,
// and at the end refreshes the index, commits exactly those paths in one
// commit, pushes when asked, and answers with a diff of everything.
type tx struct {
	s        *Service
	changes  []*change
	byPath   map[string]*change
	warnings []string
}

func (t *tx) warn(format string, args ...any) {
	t.warnings = append(t.warnings, fmt.Sprintf(format, args...))
}

// record notes a change of path from before to after (keeping the earliest
// before when a path changes twice in one write).
func (t *tx) record(path string, before, after []byte) {
	if c, ok := t.byPath[path]; ok {
		c.after = after
		return
	}
	c := &change{path: path, before: before, after: after}
	t.byPath[path] = c
	t.changes = append(t.changes, c)
}

// writeFile replaces or creates path atomically and records it. A file whose
// bytes would not change is not written.
func (t *tx) writeFile(path string, before, after []byte, acc vaultfs.Access) error {
	if before != nil && string(before) == string(after) {
		return nil
	}
	var err error
	if before == nil {
		_, err = t.s.fs.CreateFile(path, after, acc)
	} else {
		_, err = t.s.fs.WriteFile(path, after, acc)
	}
	if err != nil {
		return err
	}
	t.record(path, before, after)
	return nil
}

// lockPath is where the cross-process write lock lives: inside the git
// directory when there is one (DESIGN: .git/vaultmcp.lock), else in the
// system's temporary folder keyed by the vault's path, so that a vault that is
// not a repository gets no stray file.
func (s *Service) lockPath(ctx context.Context) string {
	if s.git != nil {
		if dir, err := s.git.GitDir(ctx); err == nil {
			return filepath.Join(dir, "vaultmcp.lock")
		}
	}
	sum := sha256.Sum256([]byte(s.fs.Dir()))
	return filepath.Join(os.TempDir(), "vaultmcp-"+hex.EncodeToString(sum[:8])+".lock")
}

func (s *Service) writeLock(ctx context.Context) *writelock.Lock {
	s.lockOnce.Do(func() {
		s.lock = writelock.New(s.lockPath(ctx), s.opts.StuckAfter)
	})
	return s.lock
}

// txFunc is the work of one write: it changes files through t and returns
// the result and the commit message.
type txFunc func(ctx context.Context, t *tx) (res *api.WriteResult, message string, err error)

// write runs fn under the write lock and finishes the write: index refresh,
// one commit of exactly the touched paths, optional push, diff.
func (s *Service) write(ctx context.Context, fn txFunc) (*api.WriteResult, error) {
	if s.opts.ReadOnly {
		return nil, &api.Error{Code: api.CodeReadOnly, Message: "the vault is open read-only"}
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	release, exclusive, err := s.writeLock(ctx).Acquire(ctx)
	if err != nil {
		return nil, &api.Error{Code: api.CodeBusy, Message: "could not take the write lock: " + s.fs.Redact(err.Error()) + ". The change may or may not have been applied; read the note before trying again.", Err: err}
	}
	defer release()
	t := &tx{s: s, byPath: make(map[string]*change)}
	if !exclusive {
		t.warn("a previous write was stuck for over %s; exclusivity of this write was not guaranteed", s.opts.StuckAfter)
	}
	res, message, err := fn(ctx, t)
	// Whatever happened, the index must reflect the files as they are now.
	for _, c := range t.changes {
		if c.from != "" {
			s.Refresh(c.from)
		}
		s.Refresh(c.path)
	}
	if err != nil {
		if len(t.changes) == 0 {
			return nil, err
		}
		// Part of the write happened: report it with the error as a warning
		// rather than hide what is on disk now.
		t.warn("the write stopped part way: %s", s.fs.Redact(err.Error()))
		if res == nil {
			res = &api.WriteResult{Action: api.ActionEdited}
		}
	}
	sort.SliceStable(t.changes, func(i, j int) bool { return t.changes[i].path < t.changes[j].path })
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
	}
	if res.Committed {
		res.Undo = fmt.Sprintf("vault_undo {\"commit\": %q}", res.Commit)
		if res.Action == api.ActionDeleted {
			res.Undo = fmt.Sprintf("git checkout %s^ -- %q, or %s", res.Commit, res.Path, res.Undo)
		}
	}
	res.Warnings = append(res.Warnings, t.warnings...)
	return res, nil
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

// recordRename notes that from was renamed to to (with content before, now
// after).
func (t *tx) recordRename(from, to string, before, after []byte) {
	c := &change{path: to, from: from, before: before, after: after}
	t.byPath[to] = c
	t.changes = append(t.changes, c)
}

// current returns the bytes of path as this write has left them so far, or
// as they are on disk.
func (t *tx) current(path string) ([]byte, error) {
	if c, ok := t.byPath[path]; ok {
		return c.after, nil
	}
	return t.s.readCurrent(path)
}

// commit commits the touched paths; failures are warnings, never rollbacks.
func (s *Service) commit(ctx context.Context, t *tx, res *api.WriteResult, message string) {
	if s.git == nil {
		t.warn("the vault is not a git repository: the change was written but not committed")
		return
	}
	var paths []string
	for _, c := range t.changes {
		paths = append(paths, c.path)
		if c.from != "" {
			paths = append(paths, c.from)
		}
	}
	sha, err := s.git.Commit(ctx, paths, message)
	switch {
	case errors.Is(err, gitx.ErrNothingToCommit):
		t.warn("git had nothing to commit")
		return
	case err != nil:
		t.warn("the change was written but the commit failed: %s", s.fs.Redact(err.Error()))
		return
	}
	res.Committed = true
	res.Commit = sha
	var warning string
	if res.Pushed, warning = s.push(ctx); warning != "" {
		t.warn("%s", warning)
	}
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
		return &pushed, "push failed: " + describePush(err)
	}
	return &pushed, ""
}

func describePush(err error) string {
	var pe *gitx.PushError
	if errors.As(err, &pe) {
		switch pe.Kind {
		case gitx.PushNoUpstream:
			return "the branch has no upstream (set one with git push -u)"
		case gitx.PushRejected:
			return "the remote is ahead; pull and push by hand (vaultmcp never pulls or merges)"
		case gitx.PushAuth:
			return "authentication failed (vaultmcp never prompts; configure a credential helper or an SSH key)"
		case gitx.PushNetwork:
			return "the remote could not be reached"
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
