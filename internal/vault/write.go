package vault

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
)

var _ api.WriteBackend = (*Service)(nil)

// readCurrent reads a note for a write: its bytes, or nil when it does not
// exist yet.
func (s *Service) readCurrent(rel string) ([]byte, error) {
	data, _, err := s.fs.ReadNote(rel)
	if err != nil {
		if vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
			return nil, nil
		}
		return nil, err
	}
	return data, nil
}

func (s *Service) today() string { return s.opts.Now().Format("2006-01-02") }

// WriteNote creates a note, or replaces one whose current hash the caller
// gives (so an edit made meanwhile, in Obsidian say, is never clobbered).
func (s *Service) WriteNote(ctx context.Context, req api.WriteRequest) (*api.WriteResult, error) {
	return s.writeNote(ctx, req, false)
}

// WriteNoteRaw is WriteNote storing Content byte for byte: no frontmatter
// is added to a new note and a replacement keeps no line endings of the
// old one. It is the team server's file API (a Team Vault client stores
// files, not notes to complete); Frontmatter must be empty.
func (s *Service) WriteNoteRaw(ctx context.Context, req api.WriteRequest) (*api.WriteResult, error) {
	if len(req.Frontmatter) > 0 {
		return nil, api.Invalid("frontmatter", "a raw write takes the content as it is; put the frontmatter in it")
	}
	return s.writeNote(ctx, req, true)
}

func (s *Service) writeNote(ctx context.Context, req api.WriteRequest, raw bool) (*api.WriteResult, error) {
	if strings.IndexByte(req.Content, 0) >= 0 {
		return nil, api.Invalid("content", "%s", s.texts(ctx).Get(eNUL))
	}
	rel, via, err := s.newPath(s.texts(ctx), "path", req.Path, vaultfs.Write)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, func(ctx context.Context, t *tx) (*api.WriteResult, string, error) {
		t.warnVia(via)
		before, err := s.readCurrent(rel)
		if err != nil {
			return nil, "", fieldErr("path", err)
		}
		if before == nil && req.ExpectedSHA256 != "" {
			// A hash says the caller read the note and means to replace
			// it: a note deleted or moved since is not silently created
			// again.
			return nil, "", Refusals{t.msg}.Gone(rel)
		}
		if before == nil {
			// A new name that differs from an existing note's only in
			// letter case or Unicode normalisation is refused, as a move
			// to it is: on macOS and Windows (a clone of the vault) the
			// two are one file, and a link to either reaches both.
			s.mu.RLock()
			other := s.graph.Resolver().SameName(rel)
			s.mu.RUnlock()
			if other != "" {
				return nil, "", &api.Error{Code: api.CodeAlreadyExists, Field: "path", Message: t.msg.Get(eSameName, rel, other)}
			}
		}
		if before != nil {
			current := sha256Hex(before)
			switch {
			case req.ExpectedSHA256 == "":
				return nil, "", Refusals{t.msg}.Exists(rel, current)
			case !strings.EqualFold(req.ExpectedSHA256, current):
				return nil, "", Refusals{t.msg}.Changed(rel, current)
			}
		}
		content := req.Content
		if !raw {
			content, err = s.composeNote(t.msg, rel, req.Content, req.Frontmatter, before == nil)
			if err != nil {
				return nil, "", err
			}
			if before != nil {
				content = matchEOL(content, before)
			}
		}
		after := []byte(content)
		if before != nil && content == string(before) {
			// Said, or "Replaced" with "Commit: no" reads as a failure.
			t.warn(wUnchanged, rel)
		}
		put := t.writeFile
		if before != nil {
			put = func(p string, before, after []byte, _ vaultfs.Access) error { return t.replaceExact(p, before, after) }
		}
		if err := put(rel, before, after, vaultfs.Write); err != nil {
			return nil, "", fieldErr("path", err)
		}
		res := &api.WriteResult{Action: api.ActionCreated, Path: rel, SHA256: sha256Hex(after)}
		verb := "create"
		if before != nil {
			res.Action, verb = api.ActionReplaced, "update"
		}
		return res, fmt.Sprintf("docs(vault): %s %s", verb, rel), nil
	})
}

// composeNote merges the caller's frontmatter into the content's own, and
// for a new note fills the missing keys: type note, tags [], created today.
func (s *Service) composeNote(m *texts, rel, content string, extra map[string]any, isNew bool) (string, error) {
	if len(extra) == 0 && !isNew {
		return content, nil
	}
	block, body := markdown.SplitFrontmatter(content)
	own, diags := markdown.ParseFrontmatter(block)
	if block != "" && own == nil {
		why := ""
		if len(diags) > 0 {
			why = ": " + diags[0] // the parser's words, as it says them
		}
		return "", api.Invalid("content", "%s", m.Get(eFMNotYAML, why))
	}
	fm := make(map[string]any, len(own)+len(extra)+3)
	for k, v := range own {
		fm[k] = v
	}
	for k, v := range extra {
		if strings.TrimSpace(k) == "" {
			return "", api.Invalid("frontmatter", "%s", m.Get(eFMEmptyKey))
		}
		setKey(fm, k, v)
	}
	var defaults []keyValue
	if isNew {
		p := s.profile()
		defaults = []keyValue{{"type", p.typeKey, p.noteType}, {"tags", "tags", []any{}}, {"created", p.createdKey, s.today()}}
	}
	if block != "" {
		// The content's own frontmatter keeps its author's spelling.
		head, err := mergeFrontmatter(block, extra, defaults, false)
		if err != nil {
			return "", api.Invalid("frontmatter", "%s", err.Error())
		}
		return withBody(head, body), nil
	}
	for _, d := range defaults {
		if !hasKey(fm, d.key) {
			fm[d.as] = d.value
		}
	}
	head, err := renderFrontmatter(fm)
	if err != nil {
		return "", api.Invalid("frontmatter", "%s", err.Error())
	}
	return withBody(head, body), nil
}

// withBody joins a rendered frontmatter block (LF line ends) and the body
// of a note, the block taking the body's line ends: content written with
// CRLF stays CRLF throughout, not LF in its frontmatter alone.
func withBody(head, body string) string {
	body = strings.TrimPrefix(body, "\uFEFF")
	if strings.Contains(body, "\r\n") {
		head = strings.ReplaceAll(head, "\n", "\r\n")
	}
	return head + body
}

// matchEOL gives text the line endings of like: CRLF when like uses CRLF.
func matchEOL(text string, like []byte) string {
	if !bytes.Contains(like, []byte("\r\n")) {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
}

// inEOLOf gives text the line endings of like: CRLF when like uses CRLF,
// else LF.
func inEOLOf(text string, like []byte) string {
	return matchEOL(strings.ReplaceAll(text, "\r\n", "\n"), like)
}

// countOverlapping counts occurrences of sub in s, overlapping ones included,
// and returns the offset of the first.
func countOverlapping(s, sub string) (int, int) {
	n, first := 0, -1
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return n, first
		}
		if first < 0 {
			first = i + j
		}
		n++
		i += j + 1
		if i > len(s) {
			return n, first
		}
	}
}

// EditNote replaces the one occurrence of old_text with new_text.
func (s *Service) EditNote(ctx context.Context, req api.EditRequest) (*api.WriteResult, error) {
	if req.OldText == "" {
		return nil, api.Invalid("old_text", "must not be empty")
	}
	if strings.IndexByte(req.NewText, 0) >= 0 {
		return nil, api.Invalid("new_text", "%s", s.texts(ctx).Get(eNUL))
	}
	rel, via, err := s.writePath(s.texts(ctx), "path", req.Path, vaultfs.Write)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, func(ctx context.Context, t *tx) (*api.WriteResult, string, error) {
		t.warnVia(via)
		before, _, err := s.fs.ReadNote(rel)
		if err != nil {
			return nil, "", fieldErr("path", err)
		}
		text := string(before)
		n, at, end, newText := FindEdit(before, req.OldText, req.NewText)
		if err := (Refusals{t.msg}).EditCount(rel, n); err != nil {
			return nil, "", err
		}
		after := []byte(text[:at] + newText + text[end:])
		if string(after) == text {
			t.warn(wUnchanged, rel) // new_text is old_text
		}
		if err := t.writeFile(rel, before, after, vaultfs.Write); err != nil {
			return nil, "", fieldErr("path", err)
		}
		res := &api.WriteResult{Action: api.ActionEdited, Path: rel, SHA256: sha256Hex(after)}
		return res, fmt.Sprintf("docs(vault): edit %s", rel), nil
	})
}

// Compiled on first use: a process start does not pay for it.
var dailyName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}\.md$`) })

// structural says why a note must not be deleted, or "".
func (s *Service) structural(m *texts, rel string) string {
	s.mu.RLock()
	ni := s.notes[rel]
	s.mu.RUnlock()
	switch {
	case rel == knowledgeIndex:
		return m.Get(eIsIndex)
	case strings.HasSuffix(path.Base(rel), "-moc.md") || (ni != nil && ni.typ == "moc"):
		return m.Get(eIsMOC)
	case vpath.Below(rel, dailyFolder) && dailyName().MatchString(path.Base(rel)) || (ni != nil && ni.typ == "daily"):
		return m.Get(eIsDaily)
	}
	return ""
}

// StructuralRefusal is the refusal (REFUSED, field path) of deleting rel
// when it is a structural note: the knowledge index, a map of content or a
// daily note; nil for any other note. The remote client's delete on a plain
// team server asks its mirror of the project, so that it refuses what this
// service's Delete refuses.
func (s *Service) StructuralRefusal(rel string) error { return s.structuralRefusal(s.msg, rel) }

func (s *Service) structuralRefusal(m *texts, rel string) error {
	if why := s.structural(m, rel); why != "" {
		return &api.Error{Code: api.CodeRefused, Field: "path", Message: m.Get(eStructural, rel, why)}
	}
	return nil
}

// Delete removes a note that is safe to remove: not structural, committed
// (so it can be brought back), and without backlinks unless confirmed.
func (s *Service) Delete(ctx context.Context, req api.DeleteRequest) (*api.WriteResult, error) {
	rel, via, err := s.writePath(s.texts(ctx), "path", req.Path, vaultfs.Write)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, func(ctx context.Context, t *tx) (*api.WriteResult, string, error) {
		t.warnVia(via)
		before, _, err := s.fs.ReadNote(rel)
		if err != nil {
			return nil, "", fieldErr("path", err)
		}
		if err := s.structuralRefusal(t.msg, rel); err != nil {
			return nil, "", err
		}
		if s.git == nil {
			return nil, "", &api.Error{Code: api.CodeRefused, Field: "path", Message: t.msg.Get(eDeleteNoGit, rel)}
		}
		committed, err := s.git.Committed(ctx, rel)
		if err != nil {
			return nil, "", s.errorf("checking %s in git: %w", rel, err)
		}
		if !committed {
			return nil, "", &api.Error{Code: api.CodeRefused, Field: "path", Message: t.msg.Get(eUncommitted, rel)}
		}
		s.mu.RLock()
		sources := s.graph.BacklinkSources(rel)
		s.mu.RUnlock()
		// The MOC line goes with the note: planned first, so that a MOC
		// whose only links to the note are its entry lines does not count
		// as a note whose links would break (it used to ask for confirm
		// on every listed note, then warn of a broken link that was not).
		mocErr := s.dropMOCLine(t, rel)
		var others []string
		for _, src := range sources {
			if src != rel && !s.unlinkedBy(t, src, rel) {
				others = append(others, src)
			}
		}
		if len(others) > 0 && !req.Confirm {
			return nil, "", Refusals{t.msg}.LinkedTo(rel, len(others), others[:min(len(others), 5)])
		}
		if err := t.remove(rel, before); err != nil {
			return nil, "", fieldErr("path", err)
		}
		if mocErr != nil {
			t.warn(wMOCFailed, s.fs.Redact(mocErr.Error()))
		}
		res := &api.WriteResult{Action: api.ActionDeleted, Path: rel}
		if len(others) > 0 {
			t.warn(wBrokenLinks, len(others), rel)
		}
		return res, fmt.Sprintf("docs(vault): delete %s", rel), nil
	})
}

// unlinkedBy reports whether this write has already changed the note src
// so that none of its links reaches target any more.
func (s *Service) unlinkedBy(t *tx, src, target string) bool {
	c, ok := t.byPath[src]
	if !ok || c.after == nil {
		return ok
	}
	return !linksTo(c.after, src, s.graph.Resolver(), target)
}

// undoField is the field of api.UndoRequest an undo's refusal names (the
// MCP tool calls it "commit" and renames it).
const undoField = "version"

// Undo takes back one write made by this server: every file its commit
// changed goes back to what it was before, merged with the changes made
// since on other lines (what git revert does), as one transaction of its
// own, committed as a revert (which can itself be undone).
func (s *Service) Undo(ctx context.Context, req api.UndoRequest) (*api.WriteResult, error) {
	m := s.texts(ctx)
	commit := strings.ToLower(strings.TrimSpace(req.Version))
	if commit == "" {
		return nil, api.Invalid(undoField, "%s", m.Get(vEmpty))
	}
	if !gitx.IsCommitID(commit) {
		return nil, api.Invalid(undoField, "%s", m.Get(eCommitID))
	}
	if s.opts.ReadOnly {
		return nil, &api.Error{Code: api.CodeReadOnly, Message: m.Get(eReadOnly)}
	}
	if s.git == nil {
		return nil, &api.Error{Code: api.CodeRefused, Field: undoField, Message: m.Get(eNoGit)}
	}
	return s.write(ctx, func(ctx context.Context, t *tx) (*api.WriteResult, string, error) {
		full, err := s.git.ResolveCommit(ctx, commit)
		if err != nil {
			return nil, "", &api.Error{Code: api.CodeNotFound, Field: undoField, Message: t.msg.Get(eNotACommit, commit), Err: err}
		}
		ours, err := s.git.IsOurs(ctx, full)
		if err != nil {
			return nil, "", s.errorf("reading %s: %w", commit, err)
		}
		if !ours {
			return nil, "", &api.Error{Code: api.CodeRefused, Field: undoField, Message: t.msg.Get(eNotOurs, commit)}
		}
		t.pruneDirs = true
		changes, err := s.git.Changes(ctx, full)
		if err != nil {
			return nil, "", &api.Error{Code: api.CodeRefused, Field: undoField, Message: s.fs.Redact(err.Error()), Err: err}
		}
		conflict := func(p string) error {
			return &api.Error{Code: api.CodeConflict, Field: undoField, Message: t.msg.Get(eUndoConflict, shortID(full), p)}
		}
		for _, c := range changes {
			if !vaultfs.IsNoteName(c.Path) {
				continue // vaultmcp writes notes only
			}
			cur, err := t.current(c.Path)
			if err != nil {
				return nil, "", fieldErr(undoField, err)
			}
			switch {
			case c.After == nil: // the commit removed it: bring it back
				if cur == nil {
					err = t.writeFile(c.Path, nil, c.Before, vaultfs.Move)
				} else if string(cur) != string(c.Before) {
					return nil, "", conflict(c.Path)
				}
			case c.Before == nil: // the commit created it: remove it
				if cur != nil {
					if string(cur) != string(c.After) {
						return nil, "", conflict(c.Path)
					}
					err = t.put(c.Path, cur, nil, vaultfs.Move, false)
				}
			default:
				if cur == nil {
					return nil, "", conflict(c.Path)
				}
				merged, ok := merge3(c.After, c.Before, cur)
				if !ok {
					return nil, "", conflict(c.Path)
				}
				err = t.writeFile(c.Path, cur, merged, vaultfs.Move)
			}
			if err != nil {
				return nil, "", fieldErr(undoField, err)
			}
		}
		if len(t.changes) == 0 {
			return nil, "", &api.Error{Code: api.CodeRefused, Field: undoField, Message: t.msg.Get(eAlreadyUndone, shortID(full))}
		}
		subject, _ := s.git.Subject(ctx, full)
		res := &api.WriteResult{Action: api.ActionReverted, Path: full}
		// Worded as git revert words it: the subject between plain quotes,
		// a quote in it left as it is (%q would write Revert "Revert \"x\"").
		return res, fmt.Sprintf("Revert \"%s\"\n\nThis reverts commit %s.", subject, full), nil
	})
}

func shortID(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
