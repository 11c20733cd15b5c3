package teamclient

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vault"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// The tools on a server without the extension endpoints: get, history and
// the writes through the basic files API (a replacement sends the hash the
// agent saw as If-Match), learn and undo refused as unsupported.
func TestPlainServerTools(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)

	note, err := c.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/context.md"})
	if err != nil || note.Title != "Context cancellation in Go" || len(note.SHA256) != 64 || len(note.Links) == 0 {
		t.Fatalf("get: %+v %v", note, err)
	}
	_, err = c.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/nothing.md"})
	if e := wantCode(t, "get of a missing note", err, api.CodeNotFound); strings.HasPrefix(e.Message, "path ") {
		t.Errorf("message %q names the path twice", e.Message)
	}

	created, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/plain.md", Content: "# Plain\n\nSee [[context]].\n"})
	if err != nil || created.Action != api.ActionCreated || !created.Committed || !strings.Contains(created.Diff, "+# Plain") {
		t.Fatalf("create: %+v %v", created, err)
	}
	_, err = c.WriteNote(ctx, api.WriteRequest{Path: "notes/plain.md", Content: "x", Frontmatter: map[string]any{"tags": []string{"a"}}})
	e := wantCode(t, "frontmatter on a plain server", err, api.CodeInvalidArgument)
	if e.Field != "frontmatter" {
		t.Errorf("field %q", e.Field)
	}
	_, err = c.WriteNote(ctx, api.WriteRequest{Path: "notes/plain.md", Content: "x"})
	wantCode(t, "replace without a hash", err, api.CodeConflict)

	p.setPlan(nil)
	_, err = c.WriteNote(ctx, api.WriteRequest{Path: "notes/plain.md", Content: "x", ExpectedSHA256: strings.Repeat("a", 64)})
	wantCode(t, "replace with a stale hash", err, api.CodeConflict)
	for _, x := range p.seen() {
		if x.method == http.MethodPut {
			t.Error("a stale replacement was sent")
		}
	}
	replaced, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/plain.md", Content: "# Plain\n\nSecond. See [[context]].\n", ExpectedSHA256: created.SHA256})
	if err != nil || replaced.Action != api.ActionReplaced || !strings.Contains(replaced.Diff, "+Second.") {
		t.Fatalf("replace: %+v %v", replaced, err)
	}
	var put *seen
	for _, x := range p.seen() {
		if x.method == http.MethodPut {
			put = &x
		}
	}
	if put == nil || put.ifMatch != `"`+created.SHA256+`"` || put.idemKey == "" {
		t.Errorf("the replacement was sent as %+v, want If-Match of the hash the agent saw", put)
	}

	// A colleague's change between the read and the write is never
	// overwritten: the server refuses the If-Match.
	p.setPlan(func(_ int, r *http.Request) (fault, *canned) {
		if r.Method == http.MethodPut {
			full := newClient(t, s.http.URL, s.rw, "ex", nil, 0)
			if _, err := full.EditNote(ctx, api.EditRequest{Path: "notes/plain.md", OldText: "Second.", NewText: "Colleague's."}); err != nil {
				t.Error(err)
			}
		}
		return pass, nil
	})
	_, err = c.EditNote(ctx, api.EditRequest{Path: "notes/plain.md", OldText: "# Plain", NewText: "# Plain note"})
	e = wantCode(t, "edit over a colleague's change", err, api.CodeConflict)
	// vault_edit_note takes no expected_sha256: the refusal names the note.
	if e.Field != "path" || !strings.Contains(e.Message, "HTTP 412 precondition_failed") {
		t.Errorf("error %v", e)
	}
	p.setPlan(nil)
	got, err := c.GetNote(ctx, api.NoteRequest{Path: "notes/plain.md"})
	if err != nil || !strings.Contains(got.Content, "Colleague's.") {
		t.Fatalf("the colleague's change is gone: %+v %v", got, err)
	}

	edited, err := c.EditNote(ctx, api.EditRequest{Path: "notes/plain.md", OldText: "# Plain", NewText: "# Plain note"})
	if err != nil || edited.Action != api.ActionEdited {
		t.Fatalf("edit: %+v %v", edited, err)
	}
	_, err = c.EditNote(ctx, api.EditRequest{Path: "notes/plain.md", OldText: "absent", NewText: "x"})
	wantCode(t, "edit of absent text", err, api.CodeNoMatch)
	_, err = c.EditNote(ctx, api.EditRequest{Path: "notes/plain.md", OldText: "e", NewText: "x"})
	wantCode(t, "edit of ambiguous text", err, api.CodeNotUnique)

	h, err := c.History(ctx, api.HistoryRequest{Path: "notes/plain.md", Limit: 2})
	if err != nil || len(h.Versions) != 2 || h.Versions[0].ID == "" || h.Versions[0].Date == "" {
		t.Fatalf("history: %+v %v", h, err)
	}

	moved, err := c.Move(ctx, api.MoveRequest{From: "notes/plain.md", To: "notes/plain-moved.md"})
	if err != nil || moved.Action != api.ActionMoved || moved.Path != "notes/plain-moved.md" || moved.From != "notes/plain.md" {
		t.Fatalf("move: %+v %v", moved, err)
	}
	_, err = c.Move(ctx, api.MoveRequest{From: "notes/plain-moved.md", To: "02-wiki/go/context.md"})
	wantCode(t, "move onto a note", err, api.CodeAlreadyExists)

	// graceful-shutdown.md has backlinks: deleting it needs confirm.
	_, err = c.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/graceful-shutdown.md"})
	e = wantCode(t, "delete of a linked note", err, api.CodeNeedsConfirm)
	if e.Field != "confirm" {
		t.Errorf("field %q", e.Field)
	}
	deleted, err := c.Delete(ctx, api.DeleteRequest{Path: "notes/plain-moved.md"})
	if err != nil || deleted.Action != api.ActionDeleted || !strings.Contains(deleted.Diff, "-# Plain note") {
		t.Fatalf("delete: %+v %v", deleted, err)
	}
	_, err = c.GetNote(ctx, api.NoteRequest{Path: "notes/plain-moved.md"})
	wantCode(t, "get of a deleted note", err, api.CodeNotFound)

	_, err = c.Learn(ctx, api.LearnRequest{Title: "t", Insight: "i", Domain: "go"})
	wantCode(t, "learn", err, CodeUnsupported)
	_, err = c.Undo(ctx, api.UndoRequest{Version: moved.Version + "x"})
	wantCode(t, "undo", err, CodeUnsupported)
}

// The edit rule is the local one: overlapping occurrences count, CRLF vs
// LF and NFC vs NFD are forgiven, the note's line endings and normalisation
// form are kept.
func TestApplyEdit(t *testing.T) {
	for _, tc := range []struct {
		before, old, new, want, code string
	}{
		{"a b c", "b", "x", "a x c", ""},
		{"aaa", "aa", "x", "", api.CodeNotUnique},
		{"abc", "d", "x", "", api.CodeNoMatch},
		{"one\r\ntwo\r\n", "one\ntwo", "1\n2", "1\r\n2\r\n", ""},
		{"one\ntwo\n", "one\ntwo", "1\r\n2", "1\n2\n", ""},
		// Unicode normalisation is forgiven too, the note keeping its form.
		{"o cafe\u0301 forte", "caf\u00e9", "ch\u00e1", "o cha\u0301 forte", ""},
		{"o caf\u00e9 forte\r\n", "cafe\u0301 forte", "ch\u00e1", "o ch\u00e1\r\n", ""},
		{"caf\u00e9 caf\u00e9", "cafe\u0301", "x", "", api.CodeNotUnique},
	} {
		got, err := applyEdit(vault.RefusalsFor("en"), "n.md", []byte(tc.before), tc.old, tc.new)
		if tc.code != "" {
			wantCode(t, tc.before, err, tc.code)
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.before, got, err, tc.want)
		}
	}
}

// A delete on a server without the extensions sends the hash of the
// content it read (and shows in its diff) as If-Match: a colleague's edit
// made between that read and the DELETE is not deleted unseen.
func TestPlainDeleteKeepsAColleaguesEdit(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	if _, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/doomed.md", Content: "# Doomed\n"}); err != nil {
		t.Fatal(err)
	}
	p.setPlan(func(_ int, r *http.Request) (fault, *canned) {
		if r.Method == http.MethodDelete {
			full := newClient(t, s.http.URL, s.rw, "ex", nil, 0)
			if _, err := full.EditNote(ctx, api.EditRequest{Path: "notes/doomed.md", OldText: "# Doomed", NewText: "# Saved by a colleague"}); err != nil {
				t.Error(err)
			}
		}
		return pass, nil
	})
	_, err := c.Delete(ctx, api.DeleteRequest{Path: "notes/doomed.md"})
	if e := wantCode(t, "delete over a colleague's edit", err, api.CodeConflict); e.Field != "path" {
		t.Errorf("field %q", e.Field)
	}
	var del *seen
	for _, x := range p.seen() {
		if x.method == http.MethodDelete {
			del = &x
		}
	}
	if del == nil || del.ifMatch == "" {
		t.Errorf("the DELETE was sent as %+v, want If-Match", del)
	}
	p.setPlan(nil)
	got, err := c.GetNote(ctx, api.NoteRequest{Path: "notes/doomed.md"})
	if err != nil || !strings.Contains(got.Content, "Saved by a colleague") {
		t.Fatalf("the colleague's edit was deleted: %+v %v", got, err)
	}
	deleted, err := c.Delete(ctx, api.DeleteRequest{Path: "notes/doomed.md"})
	if err != nil || !strings.Contains(deleted.Diff, "-# Saved by a colleague") {
		t.Fatalf("delete: %+v %v", deleted, err)
	}
}

// TestPlainWriteWithHashOfGoneNote: a replacement (a hash given) of a note
// that no longer exists is refused on a plain server, as the local vault
// and the extension endpoints refuse it: nothing is created.
func TestPlainWriteWithHashOfGoneNote(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	_, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/gone.md", Content: "# Back\n", ExpectedSHA256: strings.Repeat("b", 64)})
	if e := wantCode(t, "replace of a missing note", err, api.CodeConflict); e.Field != "expected_sha256" {
		t.Errorf("field %q", e.Field)
	}
	for _, x := range p.seen() {
		if x.method == http.MethodPut || x.method == http.MethodPost && strings.Contains(x.path, "/files") {
			t.Errorf("a write was sent: %s %s", x.method, x.path)
		}
	}
	if _, err := c.GetNote(ctx, api.NoteRequest{Path: "notes/gone.md"}); api.CodeOf(err) != api.CodeNotFound {
		t.Fatalf("the note exists: %v", err)
	}
}

// A plain server's delete refuses the structural notes the local vault
// refuses (the knowledge index, a map of content, a daily note), with or
// without confirm, before anything is sent: a plain server would delete
// them, and asking for confirm first sent the agent to a refusal.
func TestPlainDeleteRefusesStructuralNotes(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	for _, rel := range []string{"00-index/index-knowledge.md", "02-wiki/go/go-moc.md", "04-daily/2026-11-20.md"} {
		for _, confirm := range []bool{false, true} {
			p.setPlan(nil)
			_, err := c.Delete(ctx, api.DeleteRequest{Path: rel, Confirm: confirm})
			e := wantCode(t, fmt.Sprintf("delete of %s (confirm %v)", rel, confirm), err, api.CodeRefused)
			if e.Field != "path" || !strings.Contains(e.Message, "cannot be deleted") {
				t.Errorf("delete of %s: %v", rel, e)
			}
			for _, x := range p.seen() {
				if x.method == http.MethodDelete {
					t.Errorf("delete of %s (confirm %v) was sent", rel, confirm)
				}
			}
		}
	}
}

// On a plain server the refusals the client makes itself by the local
// rules are in the language of VAULT_LANG (Config.Lang), as the local
// vault's are: here Portuguese.
func TestPlainRefusalsInTheClientsLanguage(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c, err := New(Config{URL: p.http.URL, APIKey: s.rw, Project: "ex", Lang: "pt", CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const rel = "02-wiki/go/context.md"
	note, err := c.GetNote(ctx, api.NoteRequest{Path: rel})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		err  func() error
		code string
		want string
	}{
		{"replace without a hash", func() error {
			_, err := c.WriteNote(ctx, api.WriteRequest{Path: rel, Content: "x"})
			return err
		}, api.CodeConflict, "para substituí-la passe expected_sha256"},
		{"replace with a stale hash", func() error {
			_, err := c.WriteNote(ctx, api.WriteRequest{Path: rel, Content: "x", ExpectedSHA256: strings.Repeat("a", 64)})
			return err
		}, api.CodeConflict, "mudou desde que você a leu"},
		{"replace of a gone note", func() error {
			_, err := c.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/gone.md", Content: "x", ExpectedSHA256: note.SHA256})
			return err
		}, api.CodeConflict, "não existe"},
		{"edit of absent text", func() error {
			_, err := c.EditNote(ctx, api.EditRequest{Path: rel, OldText: "absent text", NewText: "x"})
			return err
		}, api.CodeNoMatch, "não encontrado em"},
		{"edit of ambiguous text", func() error {
			_, err := c.EditNote(ctx, api.EditRequest{Path: rel, OldText: "e", NewText: "x"})
			return err
		}, api.CodeNotUnique, "ocorre"},
		{"delete of a linked note", func() error {
			_, err := c.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/graceful-shutdown.md"})
			return err
		}, api.CodeNeedsConfirm, "têm link para"},
		{"move of a folder", func() error {
			_, err := c.Move(ctx, api.MoveRequest{From: "02-wiki/go", To: "02-wiki/golang"})
			return err
		}, "NOT_A_NOTE", "é uma pasta"},
	} {
		e := wantCode(t, tc.what, tc.err(), tc.code)
		if !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: %q, want it in Portuguese (%q)", tc.what, e.Message, tc.want)
		}
	}
}

// A note over the vault's size limit is refused before it is sent, as
// the local vault refuses it: TOO_LARGE naming the path and the limit,
// not the server's 413 about a request body.
func TestPlainWriteTooLarge(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	if _, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/small.md", Content: "# Small\n\nword\n"}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("word ", vaultfs.MaxNoteSize/5+1)
	p.setPlan(nil)
	for _, tc := range []struct {
		what string
		err  func() error
	}{
		{"create", func() error {
			_, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/big.md", Content: big})
			return err
		}},
		{"edit", func() error {
			_, err := c.EditNote(ctx, api.EditRequest{Path: "notes/small.md", OldText: "word", NewText: big})
			return err
		}},
	} {
		e := wantCode(t, tc.what, tc.err(), string(vaultfs.CodeTooLarge))
		if e.Field != "path" || !strings.Contains(e.Message, "notes/") || !strings.Contains(e.Message, "limit for a note") {
			t.Errorf("%s: %v", tc.what, e)
		}
	}
	for _, x := range p.seen() {
		if x.idemKey != "" {
			t.Errorf("a note over the limit was sent: %s %s", x.method, x.path)
		}
	}
}

// A move into a new domain needs confirm_new_domain on a plain server as
// locally: the server's PATCH would create the domain unasked.
func TestPlainMoveIntoANewDomain(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	req := api.MoveRequest{From: "02-wiki/go/context.md", To: "02-wiki/golang/context.md"}
	_, err := c.Move(ctx, req)
	e := wantCode(t, "move into a new domain", err, api.CodeNeedsConfirm)
	if e.Field != "confirm_new_domain" || !strings.Contains(e.Message, `"golang" would be a new domain`) {
		t.Errorf("error %v", e)
	}
	for _, x := range p.seen() {
		if x.method == http.MethodPatch {
			t.Error("the move into a new domain was sent without confirm_new_domain")
		}
	}
	// Within a domain, or into one that exists, nothing is asked.
	if _, err := c.Move(ctx, api.MoveRequest{From: "02-wiki/go/context.md", To: "02-wiki/http/context.md"}); err != nil {
		t.Fatalf("move into an existing domain: %v", err)
	}
	req = api.MoveRequest{From: "02-wiki/http/context.md", To: "02-wiki/golang/context.md", ConfirmNewDomain: true}
	if res, err := c.Move(ctx, req); err != nil || res.Path != req.To {
		t.Fatalf("move into a new domain, confirmed: %+v %v", res, err)
	}
}

// A move onto its own path is refused as locally, before anything is
// sent: "to: is the same path as from", not the server's words about its
// newPath field.
func TestMoveOntoItself(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	_, err := c.Move(ctx, api.MoveRequest{From: "02-wiki/go/context.md", To: "./02-wiki/go/context.md"})
	e := wantCode(t, "move onto itself", err, api.CodeInvalidArgument)
	if e.Field != "to" || e.Message != "is the same path as from" {
		t.Errorf("error %v", e)
	}
	for _, x := range p.seen() {
		if x.method == http.MethodPatch {
			t.Error("a move onto itself was sent")
		}
	}
}
