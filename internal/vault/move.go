package vault

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// NewDomainRefusal is the refusal (NEEDS_CONFIRMATION, field
// confirm_new_domain) of moving a note from from to to when to lies in a
// domain of 02-wiki that does not exist yet, nil otherwise; a move passes
// it only with confirm_new_domain. The remote client on a plain team server
// asks its mirror of the project, whose PATCH would create the domain
// unasked.
func (s *Service) NewDomainRefusal(from, to string) error { return s.newDomainRefusal(s.msg, from, to) }

func (s *Service) newDomainRefusal(m *texts, from, to string) error {
	if d := domainOf(to); d != "" && domainOf(from) != d && !s.domainExists(d) {
		return &api.Error{Code: api.CodeNeedsConfirm, Field: "confirm_new_domain", Message: m.Get(eNewDomainMove, d, strings.Join(s.domains(), ", "))}
	}
	return nil
}

// Move renames a note (rename, promote 01-raw -> 02-wiki/<d>, archive into
// 99-archive, unarchive) so that every link that resolved to a note before the
// move resolves to the same note after it, and moves its MOC line.
func (s *Service) Move(ctx context.Context, req api.MoveRequest) (*api.WriteResult, error) {
	m := s.texts(ctx)
	from, viaFrom, err := s.writePath(m, "from", req.From, vaultfs.Move)
	if err != nil {
		// A folder is refused by the gatekeeper for its missing extension
		// (or as not a note): say what the agent needs to know, that this
		// tool moves notes, one at a time.
		if c, cerr := vaultfs.Clean(req.From); cerr == nil && s.fs.IsFolder(c) {
			return nil, Refusals{m}.MoveFolder(c)
		}
		return nil, err
	}
	to, err := vaultfs.Clean(req.To)
	if err == nil {
		err = vaultfs.CheckPolicy(to, vaultfs.Move)
	}
	if err != nil {
		return nil, fieldErr("to", err)
	}
	to, viaTo, err := s.newPath(m, "to", to, vaultfs.Move)
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, Refusals{m}.SamePath()
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	if !req.ConfirmNewDomain {
		if err := s.newDomainRefusal(m, from, to); err != nil {
			return nil, err
		}
	}
	return s.write(ctx, func(ctx context.Context, t *tx) (*api.WriteResult, string, error) {
		t.warnVia(viaFrom)
		t.warnVia(viaTo)
		before, _, err := s.fs.ReadNote(from)
		if err != nil {
			return nil, "", fieldErr("from", err)
		}
		// A read-only note is not moved (its old name could not be removed,
		// and the copy published under the new one would keep its mode):
		// refused before anything is staged.
		mode, err := s.fs.Mode(from)
		if err != nil {
			return nil, "", fieldErr("from", err)
		}
		if mode.Perm()&0o200 == 0 {
			return nil, "", &api.Error{Code: string(vaultfs.CodePermissionDenied), Field: "from", Message: t.msg.Get(eMoveReadOnly, vaultfs.QuotePath(from), mode.Perm())}
		}
		if _, err := s.fs.ResolveNew(to, vaultfs.Move); err != nil {
			return nil, "", fieldErr("to", err)
		}
		if cur, err := s.readCurrent(to); err != nil || cur != nil {
			if err != nil {
				return nil, "", fieldErr("to", err)
			}
			return nil, "", &api.Error{Code: api.CodeAlreadyExists, Field: "to", Message: t.msg.Get(eMoveExists, to)}
		}
		// Plan every link edit against the vault as it is now: the link
		// graph is first reconciled with the disk, since a note changed
		// outside this server in the last moments (the watcher's debounce)
		// or while no watcher runs is not in it yet, and a new link of
		// such a note to the moved one would be left broken. A walk of
		// the vault's metadata per move is the price of the invariant.
		s.notify(s.rescan(ctx))
		// The linking notes are read (and parsed) on every core first: a
		// hub note has thousands.
		s.mu.RLock()
		sources := s.graph.BacklinkSources(from)
		s.mu.RUnlock()
		type read struct {
			data  []byte
			links []markdown.Link
			err   error
		}
		pre := make([]read, len(sources))
		parallel(len(sources), func(i int) {
			r := &pre[i]
			if r.data, r.err = t.current(sources[i]); r.err == nil && r.data != nil {
				r.links = markdown.Parse(path.Base(sources[i]), r.data).Links
			}
		})
		byPath := make(map[string]*read, len(sources))
		for i := range sources {
			byPath[sources[i]] = &pre[i]
		}
		s.mu.RLock()
		plan, err := links.PlanMove(s.graph.Resolver(), s.graph, from, to, func(p string) ([]byte, []markdown.Link, error) {
			if r, ok := byPath[p]; ok && r.err == nil && r.data != nil {
				return r.data, r.links, nil
			}
			data, err := t.current(p)
			if err != nil {
				return nil, nil, err
			}
			if data == nil {
				return nil, nil, fmt.Errorf("%s: %w", p, errVanished)
			}
			return data, markdown.Parse(path.Base(p), data).Links, nil
		})
		s.mu.RUnlock()
		if err != nil {
			if code := api.CodeOf(err); code != api.CodeInternal {
				msg := err.Error()
				if me := (*links.MoveError)(nil); errors.As(err, &me) {
					msg = me.Detail() // the code is shown once, by the api.Error
				}
				return nil, "", &api.Error{Code: code, Field: "to", Message: s.fs.Redact(msg), Err: err}
			}
			return nil, "", s.errorf("planning the link updates: %w", err)
		}
		moved := before
		type update struct {
			path          string
			before, after []byte
		}
		var updates []update
		linksRewritten, notes := 0, 0
		for _, fe := range plan {
			if len(fe.Edits) == 0 {
				continue
			}
			if fe.Path == from {
				if err := links.CheckEdits(moved, fe.Edits); err != nil {
					t.warn(wOwnLinks, err)
					continue
				}
				linksRewritten += len(fe.Edits)
				moved = links.Apply(moved, fe.Edits)
				continue
			}
			// The bytes the plan was made from (read above); verify reads
			// every file again before anything is published.
			var cur []byte
			var err error
			if r, ok := byPath[fe.Path]; ok && r.err == nil && r.data != nil {
				cur = r.data
			} else {
				cur, err = t.current(fe.Path)
			}
			if err == nil && cur != nil {
				err = links.CheckEdits(cur, fe.Edits)
			}
			if err != nil || cur == nil {
				// It changed between the plan and now: plan again.
				return nil, "", fmt.Errorf("the links in %s: %w", fe.Path, errReplan)
			}
			linksRewritten += len(fe.Edits)
			notes++
			updates = append(updates, update{fe.Path, cur, links.Apply(cur, fe.Edits)})
		}
		// The rename itself: the note is published at its new name
		// exclusively (a move never overwrites) and the old name removed,
		// with the rest of the write.
		if err := t.rename(from, to, before, moved, mode); err != nil {
			return nil, "", fieldErr("to", err)
		}
		files := make([]planned, len(updates))
		for i, u := range updates {
			files[i] = planned{u.path, u.before, u.after}
		}
		if err := t.writeFiles(files, vaultfs.Move); err != nil {
			return nil, "", &api.Error{Code: api.CodeOf(err), Field: "from", Message: t.msg.Get(eMoveLinks, from, s.fs.Redact(err.Error())), Err: err}
		}
		s.moveMOCLine(t, from, to, moved)
		res := &api.WriteResult{Action: api.ActionMoved, Path: to, From: from, SHA256: sha256Hex(moved), LinksRewritten: linksRewritten, NotesRewritten: notes}
		return res, fmt.Sprintf("%s\n\n%s: %d\n%s: %d", moveSubject(from, to),
			gitx.LinksRewrittenTrailer, linksRewritten, gitx.NotesRewrittenTrailer, notes), nil
	})
}

var errVanished = fmt.Errorf("the file disappeared")

// moveSubjectPrefix starts the subject of a move's commit (moveSubject).
const moveSubjectPrefix = "refactor(vault): move "

// moveSubject is the subject of the commit of a move; History reads it
// back (movedFrom).
func moveSubject(from, to string) string { return moveSubjectPrefix + from + " -> " + to }

// movedFrom returns the path a note at to had before the move whose commit
// subject is subject (moveSubject), or false when subject is no such move.
func movedFrom(subject, to string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, moveSubjectPrefix)
	if !ok {
		return "", false
	}
	from, ok := strings.CutSuffix(rest, " -> "+to)
	if !ok || from == "" {
		return "", false
	}
	if c, err := vaultfs.Clean(from); err != nil || c != from {
		return "", false
	}
	return from, true
}

// moveMOCLine keeps the maps of content right after a move: the line listing
// the note leaves the old domain's MOC (with its summary) and goes to the new
// domain's MOC; an archived note is only removed from its MOC.
func (s *Service) moveMOCLine(t *tx, from, to string, content []byte) {
	d1, d2 := domainOf(from), domainOf(to)
	if d1 == d2 {
		return
	}
	after := s.resolverAfter(from, to)
	var line string
	if d1 != "" {
		moc := mocPath(d1)
		if cur, err := t.current(moc); err == nil && cur != nil {
			idxs := listLinesTo(cur, moc, after, to)
			if len(idxs) > 0 {
				text, removed := removeLines(string(cur), idxs)
				if err := t.writeFile(moc, cur, []byte(text), vaultfs.Move); err != nil {
					t.warn(wUpdateFailed, moc, s.fs.Redact(err.Error()))
				}
				line = removed[0]
			}
		}
	}
	if d2 == "" {
		return
	}
	moc := mocPath(d2)
	summary := summaryOf(string(content))
	if line != "" {
		// Keep the author's summary; the link must resolve from the new MOC.
		if _, rest, ok := strings.Cut(line, " — "); ok {
			summary = rest
		}
	}
	line = "- [[" + linkName(after, moc, to) + "]]" // the bare name, unless it is ambiguous
	if summary != "" {
		line += " — " + summary
	}
	if err := s.addMOCLine(t, d2, line, after, to); err != nil {
		t.warn(wUpdateFailed, moc, s.fs.Redact(err.Error()))
	}
}
