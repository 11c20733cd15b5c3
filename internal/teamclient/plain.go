package teamclient

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vault"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// The writes on a server without the extension endpoints, through the
// basic files API. Each sends exactly one write request (with the call's
// Idempotency-Key); what it reads first only prepares it.

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// diff is a unified diff of one file, as the local vault renders it.
func diff(from, to, before, after string) string {
	return udiff.Unified(from, to, before, after)
}

// plainWrite creates a note (POST files), or replaces one (PUT files/{id})
// whose current hash the agent gave (sent as If-Match, so that a change
// made since is never overwritten). The content is written as given: the
// frontmatter merge and the default keys of a new note need the extension
// endpoints.
func (cl *call) plainWrite(p project, req api.WriteRequest) (*api.WriteResult, error) {
	if len(req.Frontmatter) > 0 {
		return nil, api.Invalid("frontmatter", "this team server has only the basic files API: put the frontmatter block at the top of content instead")
	}
	rel := req.Path
	if len(req.Content) > vaultfs.MaxNoteSize {
		return nil, fieldErr("path", vaultfs.TooLarge(rel, int64(len(req.Content))))
	}
	f, err := cl.lookup(p, rel)
	if err != nil {
		return nil, err
	}
	if f == nil {
		if req.ExpectedSHA256 != "" {
			// As the local vault: a hash says the caller read the note and
			// means to replace it; one deleted or moved since is not
			// silently created again.
			return nil, cl.c.refuse.Gone(rel)
		}
		ans, err := cl.create(p, rel, []byte(req.Content))
		if err != nil {
			return nil, err
		}
		return &api.WriteResult{Action: api.ActionCreated, Path: rel, Files: []string{rel}, SHA256: ans.File.ContentHash,
			Committed: true, Warnings: ans.Warnings, Diff: diff("/dev/null", "b/"+rel, "", req.Content)}, nil
	}
	switch {
	case req.ExpectedSHA256 == "":
		return nil, cl.c.refuse.Exists(rel, f.ContentHash)
	case !strings.EqualFold(req.ExpectedSHA256, f.ContentHash):
		return nil, cl.c.refuse.Changed(rel, f.ContentHash)
	}
	before, err := cl.fetch(p, "path", rel, f.ID)
	if err != nil {
		return nil, err
	}
	ans, err := cl.replace(p, f.ID, strings.ToLower(req.ExpectedSHA256), []byte(req.Content))
	if err != nil {
		return nil, err
	}
	d := ""
	if sha256Hex(before) == strings.ToLower(req.ExpectedSHA256) {
		d = diff("a/"+rel, "b/"+rel, string(before), req.Content)
	}
	return &api.WriteResult{Action: api.ActionReplaced, Path: rel, Files: []string{rel}, SHA256: ans.File.ContentHash,
		Committed: true, Warnings: ans.Warnings, Diff: d}, nil
}

// plainEdit reads the note, replaces the one occurrence of old_text, and
// puts the result back if the note is still what was read (If-Match).
func (cl *call) plainEdit(p project, req api.EditRequest) (*api.WriteResult, error) {
	rel := req.Path
	f, err := cl.mustLookup(p, "path", rel)
	if err != nil {
		return nil, err
	}
	before, err := cl.fetch(p, "path", rel, f.ID)
	if err != nil {
		return nil, err
	}
	after, err := applyEdit(cl.c.refuse, rel, before, req.OldText, req.NewText)
	if err != nil {
		return nil, err
	}
	if len(after) > vaultfs.MaxNoteSize {
		return nil, fieldErr("path", vaultfs.TooLarge(rel, int64(len(after))))
	}
	ans, err := cl.replace(p, f.ID, sha256Hex(before), after)
	if err != nil {
		var e *api.Error
		if errors.As(err, &e) && e.Field == "expected_sha256" {
			e.Field = "path" // an edit takes no hash: the note changed since it was read
		}
		return nil, err
	}
	return &api.WriteResult{Action: api.ActionEdited, Path: rel, Files: []string{rel}, SHA256: ans.File.ContentHash,
		Committed: true, Warnings: ans.Warnings, Diff: diff("a/"+rel, "b/"+rel, string(before), string(after))}, nil
}

// plainMove renames the note (PATCH files/{id}); links to it are rewritten
// only if the server does that itself.
func (cl *call) plainMove(p project, req api.MoveRequest) (*api.WriteResult, error) {
	f, err := cl.mustLookup(p, "from", req.From)
	if err != nil {
		return nil, err
	}
	if !req.ConfirmNewDomain && path.Dir(req.From) != path.Dir(req.To) {
		// A new domain needs confirm_new_domain, as locally (the server's
		// PATCH would create it): the mirror knows the domains. It holds
		// notes only, so a domain folder of attachments alone is new to it.
		m, err := cl.syncAll(p)
		if err != nil {
			return nil, err
		}
		if err := m.svc.NewDomainRefusal(req.From, req.To); err != nil {
			return nil, err
		}
	}
	ans, hash, err := cl.rename(p, f.ID, req.To)
	if err != nil {
		return nil, err
	}
	to := ans.File.Path
	if to == "" {
		to = req.To
	}
	return &api.WriteResult{Action: api.ActionMoved, From: req.From, Path: to, Files: []string{req.From, to}, SHA256: hash,
		LinksRewritten: ans.LinksRewritten, NotesRewritten: ans.NotesRewritten, Committed: true, Warnings: ans.Warnings,
		Diff: fmt.Sprintf("rename from %s\nrename to %s\n", req.From, to)}, nil
}

// plainDelete deletes the note (DELETE files/{id}). It first asks the
// project's mirror, as the local vault decides, whether the note is a
// structural one (refused, confirm or not: a plain server would delete
// it) and, without confirm, whether other notes link to it.
func (cl *call) plainDelete(p project, req api.DeleteRequest) (*api.WriteResult, error) {
	rel := req.Path
	f, err := cl.mustLookup(p, "path", rel)
	if err != nil {
		return nil, err
	}
	m, err := cl.syncAll(p)
	if err != nil {
		return nil, err
	}
	if err := m.svc.StructuralRefusal(rel); err != nil {
		return nil, err
	}
	if !req.Confirm {
		bl, err := m.svc.Backlinks(cl.ctx, api.BacklinksRequest{Path: rel})
		if err != nil {
			return nil, err
		}
		var others []string
		for _, b := range bl.Backlinks {
			if b.Path != rel {
				others = append(others, b.Path)
			}
		}
		n := bl.Total - (len(bl.Backlinks) - len(others))
		if n > 0 {
			return nil, cl.c.refuse.LinkedTo(rel, n, others[:min(len(others), 5)])
		}
	}
	before, err := cl.fetch(p, "path", rel, f.ID)
	if err != nil {
		return nil, err
	}
	// What is deleted is what was read (and is shown in the diff): a
	// change made since is refused by the server (412), not deleted unseen.
	ans, err := cl.remove(p, f.ID, sha256Hex(before))
	if err != nil {
		return nil, err
	}
	return &api.WriteResult{Action: api.ActionDeleted, Path: rel, Files: []string{rel}, Committed: true, Warnings: ans.Warnings,
		Diff: diff("a/"+rel, "/dev/null", string(before), "")}, nil
}

// applyEdit replaces the one occurrence of oldText in before with newText,
// by the rule of vault_edit_note (vault.FindEdit: occurrences counted
// overlapping; when there is none, CRLF vs LF ignored, then Unicode
// normalisation; newText takes the note's line endings and form).
func applyEdit(refuse vault.Refusals, rel string, before []byte, oldText, newText string) ([]byte, error) {
	n, start, end, repl := vault.FindEdit(before, oldText, newText)
	if err := refuse.EditCount(rel, n); err != nil {
		return nil, err
	}
	return []byte(string(before[:start]) + repl + string(before[end:])), nil
}
