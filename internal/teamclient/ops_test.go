package teamclient

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Every operation against a team server with the extension endpoints:
// the answers are the vault service's, reached over HTTP.
func TestEveryOperationWithExtensions(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s.http.URL, s.rw, "ex", nil, 0)
	ctx := ctxT(t)

	sr, err := c.Search(ctx, api.SearchRequest{Query: "retry backoff jitter", Limit: 3})
	if err != nil || len(sr.Results) == 0 || sr.Results[0].Path != "02-wiki/go/retry-backoff.md" || sr.Results[0].Snippet == "" {
		t.Fatalf("search: %+v %v", sr, err)
	}
	note, err := c.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/context.md"})
	if err != nil || note.Title != "Context cancellation in Go" || len(note.SHA256) != 64 || !strings.Contains(note.Content, "# Context cancellation") {
		t.Fatalf("get: %+v %v", note, err)
	}
	l, err := c.List(ctx, api.ListRequest{Folder: "02-wiki/go"})
	if err != nil || len(l.Notes) < 5 {
		t.Fatalf("list: %+v %v", l, err)
	}
	bl, err := c.Backlinks(ctx, api.BacklinksRequest{Path: "02-wiki/go/context.md"})
	if err != nil || bl.Total == 0 {
		t.Fatalf("backlinks: %+v %v", bl, err)
	}
	g, err := c.Graph(ctx, api.GraphRequest{Folder: "02-wiki"})
	if err != nil || g.NodeCount == 0 || g.EdgeCount == 0 {
		t.Fatalf("graph: %+v %v", g, err)
	}
	h, err := c.History(ctx, api.HistoryRequest{Path: "02-wiki/go/context.md"})
	if err != nil || len(h.Versions) == 0 {
		t.Fatalf("history: %+v %v", h, err)
	}

	created, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/remote.md", Content: "# Remote\n\nfirst\n"})
	if err != nil || created.Action != api.ActionCreated || created.Version == "" {
		t.Fatalf("create: %+v %v", created, err)
	}
	_, err = c.WriteNote(ctx, api.WriteRequest{Path: "notes/remote.md", Content: "# Remote\n\nsecond\n"})
	wantCode(t, "replace without expected_sha256", err, api.CodeConflict)
	_, err = c.WriteNote(ctx, api.WriteRequest{Path: "notes/remote.md", Content: "x", ExpectedSHA256: strings.Repeat("0", 64)})
	wantCode(t, "replace with a stale hash", err, api.CodeConflict)
	replaced, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/remote.md", Content: "# Remote\n\nsecond\n", ExpectedSHA256: created.SHA256})
	if err != nil || replaced.Action != api.ActionReplaced {
		t.Fatalf("replace: %+v %v", replaced, err)
	}
	edited, err := c.EditNote(ctx, api.EditRequest{Path: "notes/remote.md", OldText: "second", NewText: "third"})
	if err != nil || edited.Action != api.ActionEdited || !strings.Contains(edited.Diff, "+third") {
		t.Fatalf("edit: %+v %v", edited, err)
	}
	_, err = c.EditNote(ctx, api.EditRequest{Path: "notes/remote.md", OldText: "absent", NewText: "x"})
	wantCode(t, "edit of absent text", err, api.CodeNoMatch)
	moved, err := c.Move(ctx, api.MoveRequest{From: "notes/remote.md", To: "notes/moved.md"})
	if err != nil || moved.Action != api.ActionMoved || moved.Path != "notes/moved.md" {
		t.Fatalf("move: %+v %v", moved, err)
	}
	undone, err := c.Undo(ctx, api.UndoRequest{Version: moved.Version})
	if err != nil || undone.Action != api.ActionReverted {
		t.Fatalf("undo: %+v %v", undone, err)
	}
	deleted, err := c.Delete(ctx, api.DeleteRequest{Path: "notes/remote.md"})
	if err != nil || deleted.Action != api.ActionDeleted {
		t.Fatalf("delete: %+v %v", deleted, err)
	}
	learned, err := c.Learn(ctx, api.LearnRequest{Title: "Remote learnings reach the team", Insight: "A learning recorded remotely lands in the shared vault.", Context: "test", Domain: "go"})
	if err != nil || learned.Path == "" || len(learned.Propagated) == 0 {
		t.Fatalf("learn: %+v %v", learned, err)
	}

	id, err := c.WhoAmI(ctx)
	if err != nil || id.Name != "alice" || id.ReadOnly || id.Server != s.http.URL || id.DefaultProject != "ex" || !id.Extensions {
		t.Fatalf("whoami: %+v %v", id, err)
	}
	ps, err := c.Projects(ctx)
	if err != nil || len(ps.Projects) != 2 || ps.Projects[0].Name != "empty" || ps.Projects[1].Name != "ex" || !ps.Projects[1].Default || ps.Default != "ex" {
		t.Fatalf("projects: %+v %v", ps, err)
	}
}

// The project comes from the call's context (the tool's project argument),
// else the default; with neither and several projects, the error says
// which exist.
func TestProjectOfACall(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	c := newClient(t, s.http.URL, s.rw, "", nil, 0)
	_, err := c.List(ctx, api.ListRequest{})
	e := wantCode(t, "no project", err, api.CodeInvalidArgument)
	if e.Field != "project" || !strings.Contains(e.Message, "empty, ex") {
		t.Errorf("error %v", e)
	}
	l, err := c.List(api.WithProject(ctx, "ex"), api.ListRequest{Folder: "02-wiki/go"})
	if err != nil || len(l.Notes) == 0 {
		t.Fatalf("list in ex: %+v %v", l, err)
	}
	l, err = c.List(api.WithProject(ctx, s.ex.ID), api.ListRequest{})
	if err != nil || len(l.Notes) == 0 {
		t.Fatalf("list by id: %+v %v", l, err)
	}
	l, err = c.List(api.WithProject(ctx, "empty"), api.ListRequest{})
	if err != nil || len(l.Notes) != 0 {
		t.Fatalf("list in empty: %+v %v", l, err)
	}
	_, err = c.List(api.WithProject(ctx, "nope"), api.ListRequest{})
	wantCode(t, "unknown project", err, api.CodeNotFound)
	_, err = c.List(api.WithProject(ctx, "a/b"), api.ListRequest{})
	wantCode(t, "bad project", err, api.CodeInvalidArgument)
}

// Paths are normalised exactly as locally before any request, and a path
// the gatekeeper refuses never leaves the process.
func TestPathsNormalisedBeforeAnyRequest(t *testing.T) {
	s := newServer(t)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	ctx := ctxT(t)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	for _, spelling := range []string{"./02-wiki/go/context.md", `02-wiki\go\context.md`, "02-wiki//go/context.md", "x/../02-wiki/go/context.md"} {
		p.setPlan(nil)
		h, err := c.History(ctx, api.HistoryRequest{Path: spelling})
		if err != nil || h.Path != "02-wiki/go/context.md" || len(h.Versions) == 0 {
			t.Fatalf("%q: %+v %v", spelling, h, err)
		}
		q, _ := url.ParseQuery(p.seen()[0].query)
		if got := q.Get("path"); got != "02-wiki/go/context.md" {
			t.Errorf("%q was sent as %q", spelling, got)
		}
	}
	p.setPlan(nil)
	for _, tc := range []struct{ path, code string }{
		{"../outside.md", "PATH_ESCAPE"},
		{"/etc/passwd.md", "PATH_ESCAPE"},
		{`C:\x.md`, "PATH_ESCAPE"},
		{".git/config.md", "HIDDEN_SEGMENT"},
		{"node_modules/a.md", "PROTECTED_PATH"},
		{"a\x00b.md", "INVALID_PATH"},
		{"notes/a.txt", "INVALID_EXTENSION"},
	} {
		_, err := c.GetNote(ctx, api.NoteRequest{Path: tc.path})
		e := wantCode(t, tc.path, err, tc.code)
		if e.Field != "path" {
			t.Errorf("%q: field %q", tc.path, e.Field)
		}
		// The field is named once, as the local vault names it.
		if strings.HasPrefix(e.Message, "path ") {
			t.Errorf("%q: message %q names the path twice", tc.path, e.Message)
		}
	}
	_, err := c.WriteNote(ctx, api.WriteRequest{Path: "_templates/t.md", Content: "x"})
	wantCode(t, "write to _templates", err, "PROTECTED_PATH")
	_, err = c.WriteNote(ctx, api.WriteRequest{Path: "99-archive/t.md", Content: "x"})
	wantCode(t, "write to 99-archive", err, "PROTECTED_PATH")
	if n := len(p.seen()); n != 0 {
		t.Errorf("refused paths sent %d requests: %+v", n, p.seen())
	}
}

// Refusals read as the agent can act on them: the local code, the
// server's line, the HTTP status and code; never a raw body, never the key.
func TestErrorsAgentsCanActOn(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	ro := newClient(t, s.http.URL, s.ro, "ex", nil, 0)
	_, err := ro.WriteNote(ctx, api.WriteRequest{Path: "notes/x.md", Content: "x"})
	e := wantCode(t, "read-only key", err, CodeForbidden)
	if e.Error() != `FORBIDDEN: the key "reader" is read-only (HTTP 403 read_only_key)` || e.Uncertain {
		t.Errorf("read-only key: %q", e.Error())
	}
	_, err = ro.GetNote(ctx, api.NoteRequest{Path: "02-wiki/x.md"})
	e = wantCode(t, "missing note", err, api.CodeNotFound)
	if !strings.Contains(e.Error(), `"02-wiki/x.md"`) || !strings.HasSuffix(e.Error(), "(HTTP 404 not_found)") {
		t.Errorf("missing note: %q", e.Error())
	}

	bad := "tv_" + strings.Repeat("ab", 32)
	wrong := newClient(t, s.http.URL, bad, "ex", nil, 0)
	_, err = wrong.Search(ctx, api.SearchRequest{Query: "x"})
	e = wantCode(t, "wrong key", err, CodeUnauthorized)
	if strings.Contains(e.Error(), bad) || !strings.Contains(e.Error(), "HTTP 401 unauthorized") {
		t.Errorf("wrong key: %q", e.Error())
	}

	// A server that quotes the key, and one that answers HTML.
	p := newProxy(t, s.http.Config.Handler, newFakeClock())
	c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	p.setPlan(onAll([]fault{status, status},
		apiError(400, "bad_request", "key "+s.rw+" is not welcome"),
		&canned{status: 418, body: "<html><body>teapot " + s.rw + "</body></html>"}))
	_, err = c.Search(ctx, api.SearchRequest{Query: "x"})
	if err == nil || strings.Contains(err.Error(), s.rw) || !strings.Contains(err.Error(), "<key>") {
		t.Errorf("key quoted by the server: %v", err)
	}
	_, err = c.Search(ctx, api.SearchRequest{Query: "x"})
	if err == nil || strings.Contains(err.Error(), "html") || strings.Contains(err.Error(), s.rw) || !strings.Contains(err.Error(), "(HTTP 418)") {
		t.Errorf("HTML answer: %v", err)
	}
}

// A redirect is never followed: it could carry X-API-Key elsewhere.
func TestNoRedirect(t *testing.T) {
	var leaked bool
	other := newProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = leaked || r.Header.Get("X-API-Key") != ""
	}), newFakeClock())
	redirect := newProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.http.URL+r.URL.Path, http.StatusFound)
	}), newFakeClock())
	c := newClient(t, redirect.http.URL, "tv_secret", "ex", nil, 0)
	_, err := c.WhoAmI(ctxT(t))
	if err == nil || leaked || len(other.seen()) != 0 {
		t.Errorf("redirect followed: err %v, leaked %v", err, leaked)
	}
}

// sameAnswers compares two backends' answers as a tool's structured
// content would carry them (JSON: an empty list and none are the same).
func sameAnswers(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(ja) != string(jb) {
		t.Errorf("%s differs:\nextensions: %s\nmirror:     %s", what, ja, jb)
	}
}

// A note of markup the vault takes is written through the extension
// endpoint too: its <, > and & are sent as they are, not as six-byte
// escapes that made a 6 MiB note a 32 MiB body the server refused.
func TestLargeMarkupNote(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s.http.URL, s.rw, "ex", nil, 0)
	content := "# Markup\n\n" + strings.Repeat("<><>&&\n", 6<<20/7)
	res, err := c.WriteNote(ctxT(t), api.WriteRequest{Path: "notes/markup.md", Content: content})
	if err != nil || res.Action != api.ActionCreated {
		t.Fatalf("write: %+v %v", res, err)
	}
}

// A folder given as vault_move's from is refused as the local vault
// refuses it, saying it is a folder (NOT_A_NOTE), not for its missing
// extension, on either kind of server; a path without extension that is
// no folder stays INVALID_EXTENSION.
func TestMoveOfAFolder(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	for _, kind := range []string{"extensions", "plain"} {
		h := s.http.Config.Handler
		if kind == "plain" {
			h = plain(h)
		}
		p := newProxy(t, h, newFakeClock())
		c := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
		for _, from := range []string{"02-wiki/go", "02-wiki/go/", "./02-wiki/go"} {
			_, err := c.Move(ctx, api.MoveRequest{From: from, To: "02-wiki/golang"})
			e := wantCode(t, kind+": move of folder "+from, err, "NOT_A_NOTE")
			if e.Field != "from" || !strings.Contains(e.Message, "02-wiki/go is a folder") {
				t.Errorf("%s: move of folder %q: %v", kind, from, e)
			}
		}
		_, err := c.Move(ctx, api.MoveRequest{From: "02-wiki/nothing", To: "02-wiki/else.md"})
		wantCode(t, kind+": move of a path without extension", err, "INVALID_EXTENSION")
		for _, x := range p.seen() {
			if x.idemKey != "" || x.method == http.MethodPatch {
				t.Errorf("%s: a refused move sent a write: %s %s", kind, x.method, x.path)
			}
		}
	}
}

// A delete's answer carries no git command to restore the note: it would
// name a commit of the team server's vault, which the agent's shell cannot
// reach (run in the agent's own repository, it fails or worse). vault_undo
// with the answer's version takes the delete back.
func TestDeleteAnswerHasNoGitCommand(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s.http.URL, s.rw, "ex", nil, 0)
	ctx := ctxT(t)
	if _, err := c.WriteNote(ctx, api.WriteRequest{Path: "notes/gone.md", Content: "# Gone\n"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Delete(ctx, api.DeleteRequest{Path: "notes/gone.md"})
	if err != nil || res.Action != api.ActionDeleted || res.Version == "" {
		t.Fatalf("delete: %+v %v", res, err)
	}
	if res.UndoHint != "" {
		t.Errorf("undo hint %q", res.UndoHint)
	}
	if _, err := c.Undo(ctx, api.UndoRequest{Version: res.Version}); err != nil {
		t.Fatalf("undo of the delete: %v", err)
	}
}

// A default project (TEAM_VAULT_PROJECT_ID) that does not exist, or that
// the key may not use, is named as the default in the refusal, with what to
// do: the agent never saw the setting, and can pass project instead.
func TestUnusableDefaultProjectNamed(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	c := newClient(t, s.http.URL, s.rw, "nosuch", nil, 0)
	_, err := c.Search(ctx, api.SearchRequest{Query: "x"})
	e := wantCode(t, "unknown default project", err, api.CodeNotFound)
	if !strings.Contains(e.Message, "TEAM_VAULT_PROJECT_ID") || !strings.Contains(e.Message, "vault_projects") {
		t.Errorf("error %v", e)
	}
	// A project the call names is the agent's own: no word of the setting.
	_, err = c.Search(api.WithProject(ctx, "nope"), api.SearchRequest{Query: "x"})
	e = wantCode(t, "unknown project argument", err, api.CodeNotFound)
	if strings.Contains(e.Message, "TEAM_VAULT_PROJECT_ID") {
		t.Errorf("error %v", e)
	}
	if _, err := c.Search(api.WithProject(ctx, "ex"), api.SearchRequest{Query: "x"}); err != nil {
		t.Errorf("search of a project named by the call: %v", err)
	}
}
