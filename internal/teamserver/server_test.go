package teamserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// The per-key token bucket refuses the request past the burst with 429 and
// a Retry-After, and refills with the (injected) clock.
func TestRateLimit(t *testing.T) {
	e := newEnv(t, envOpts{rate: 2, burst: 2})
	for i := range 2 {
		wantStatus(t, fmt.Sprintf("request %d", i+1), e.do("GET", "/api/auth/me", e.rw, nil), 200, "")
	}
	a := e.do("GET", "/api/auth/me", e.rw, nil)
	wantStatus(t, "third request at once", a, 429, teamapi.CodeRateLimited)
	if a.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q, want 1", a.header.Get("Retry-After"))
	}
	// Another key has its own bucket.
	wantStatus(t, "another key", e.do("GET", "/api/auth/me", e.ro, nil), 200, "")
	e.clock.Advance(500 * time.Millisecond)
	wantStatus(t, "after half a second (one token back)", e.do("GET", "/api/auth/me", e.rw, nil), 200, "")
	wantStatus(t, "and then at once again", e.do("GET", "/api/auth/me", e.rw, nil), 429, teamapi.CodeRateLimited)
}

// Every way of failing authentication.
func TestAuthFailures(t *testing.T) {
	e := newEnv(t, envOpts{})
	a := e.do("GET", "/api/projects", "", nil)
	wantStatus(t, "no key", a, 401, teamapi.CodeUnauthorized)
	if !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("401 without WWW-Authenticate: %v", a.header)
	}
	wantStatus(t, "a wrong key", e.do("GET", "/api/projects", "tv_"+strings.Repeat("0", 64), nil), 401, teamapi.CodeUnauthorized)
	wantStatus(t, "a key in the query string", e.do("GET", "/api/projects?api_key="+e.rw, "", nil), 400, teamapi.CodeKeyInQuery)
	wantStatus(t, "a key in the query string next to a valid header", e.do("GET", "/api/projects?token=x", e.rw, nil), 400, teamapi.CodeKeyInQuery)
	wantStatus(t, "a key in a query parameter of any name", e.do("GET", "/api/projects?credential="+e.rw, e.rw, nil), 400, teamapi.CodeKeyInQuery)
	wantStatus(t, "a key inside a query value", e.do("GET", "/api/projects?q=x%20"+e.scoped, e.rw, nil), 400, teamapi.CodeKeyInQuery)
	// Parameters net/url drops as malformed (a ';', a bad escape) are
	// looked at too, and so is a key given as a parameter's name.
	a = e.do("GET", "/api/projects?"+e.scoped, e.rw, nil)
	wantStatus(t, "a key as a parameter's name", a, 400, teamapi.CodeKeyInQuery)
	if strings.Contains(string(a.body), e.scoped) {
		t.Errorf("the refusal repeats the key: %s", a.body)
	}
	wantStatus(t, "a key in a value next to a ';'", e.do("GET", "/api/projects?q="+e.scoped+";x=1", e.rw, nil), 400, teamapi.CodeKeyInQuery)
	wantStatus(t, "a credential parameter with a bad escape", e.do("GET", "/api/projects?api_key=%zz", e.rw, nil), 400, teamapi.CodeKeyInQuery)
	wantStatus(t, "a key after a bad escape", e.do("GET", "/api/projects?q=%zz"+e.scoped, e.rw, nil), 400, teamapi.CodeKeyInQuery)
	wantStatus(t, "a query value that is not a key", e.do("GET", "/api/projects/ex/files?prefix=tv_notes/", e.rw, nil), 200, "")
	wantStatus(t, "Authorization: Bearer", e.do("GET", "/api/projects", "", nil, "Authorization", "Bearer "+e.rw), 200, "")
	wantStatus(t, "an unknown path still needs a key", e.do("GET", "/api/nothing", "", nil), 401, teamapi.CodeUnauthorized)
	if err := e.data.RevokeKey(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "a revoked key", e.do("GET", "/api/projects", e.rw, nil), 401, teamapi.CodeUnauthorized)
	// The revocation's audit row names the key by id as well as by name
	// (a name is given to a new key once the old one is revoked).
	var aliceID string
	keys, _ := e.data.Store.Keys(context.Background())
	for _, k := range keys {
		if k.Name == "alice" {
			aliceID = k.ID
		}
	}
	rows, err := e.data.Store.Audit(context.Background(), teamstore.AuditQuery{Limit: 1})
	if err != nil || len(rows) != 1 || rows[0].Operation != "key revoke" || rows[0].KeyName != "alice" || rows[0].KeyID == "" || rows[0].KeyID != aliceID {
		t.Errorf("the revocation's audit row = %+v (%v), want alice's, with her key id %s", rows, err, aliceID)
	}
}

// Read-only keys read but never write; a scoped key sees only its projects.
func TestKeyScopes(t *testing.T) {
	e := newEnv(t, envOpts{})
	f, ok := e.fileAt("ex", "02-wiki/go/context.md")
	if !ok {
		t.Fatal("context.md not listed")
	}
	wantStatus(t, "read-only key reads", e.do("GET", "/api/projects/ex/files/"+f.ID, e.ro, nil), 200, "")
	wantStatus(t, "read-only key searches", e.do("POST", "/api/projects/ex/search", e.ro, []byte(`{"query":"context"}`)), 200, "")
	wantStatus(t, "read-only key PUT", e.do("PUT", "/api/projects/ex/files/"+f.ID, e.ro, []byte("x")), 403, teamapi.CodeReadOnlyKey)
	wantStatus(t, "read-only key create", e.create(e.ro, "ex", "n.md", "x"), 403, teamapi.CodeReadOnlyKey)
	wantStatus(t, "read-only key learn", e.do("POST", "/api/projects/ex/learn", e.ro, []byte(`{"title":"t","insight":"i","context":"","domain":"go"}`)), 403, teamapi.CodeReadOnlyKey)
	wantStatus(t, "read-only key DELETE", e.do("DELETE", "/api/projects/ex/files/"+f.ID, e.ro, nil), 403, teamapi.CodeReadOnlyKey)
	wantStatus(t, "scoped key on another project", e.do("GET", "/api/projects/ex/files", e.scoped, nil), 403, teamapi.CodeForbidden)
	wantStatus(t, "scoped key on another project by id", e.do("GET", "/api/projects/"+e.ex.ID+"/files", e.scoped, nil), 403, teamapi.CodeForbidden)
	// A project that does not exist is outside a scoped key's scope too:
	// 404 there and 403 for the others would tell the key which names the
	// server's other projects have.
	a := e.do("GET", "/api/projects/nope/files", e.scoped, nil)
	wantStatus(t, "scoped key on a project that does not exist", a, 403, teamapi.CodeForbidden)
	b := e.do("GET", "/api/projects/ex/files", e.scoped, nil)
	if strings.Replace(string(a.body), "nope", "ex", 1) != string(b.body) {
		t.Errorf("a scoped key tells a missing project from another's: %s / %s", a.body, b.body)
	}
	wantStatus(t, "unscoped key on a project that does not exist", e.do("GET", "/api/projects/nope/files", e.rw, nil), 404, teamapi.CodeNotFound)
	wantStatus(t, "scoped key on its project", e.create(e.scoped, "other", "mine.md", "# Mine\n"), 201, "")
	var pl teamapi.ProjectList
	e.do("GET", "/api/projects", e.scoped, nil).json(t, &pl)
	if len(pl.Projects) != 1 || pl.Projects[0].Name != "other" {
		t.Errorf("the scoped key lists %+v, want only other", pl.Projects)
	}
	e.do("GET", "/api/projects", e.rw, nil).json(t, &pl)
	if len(pl.Projects) != 2 {
		t.Errorf("the unscoped key lists %+v, want both", pl.Projects)
	}
	wantStatus(t, "unknown project", e.do("GET", "/api/projects/nope/files", e.rw, nil), 404, teamapi.CodeNotFound)
}

// Idempotency: a repeat gets the stored answer (Idempotent-Replayed), the
// key reused on another request gets 422, a repeat while the first runs
// gets 409, records are per API key, and expire after 24 hours.
func TestIdempotency(t *testing.T) {
	e := newEnv(t, envOpts{})
	commits := len(e.gitLog(e.ex, "%H"))
	first := e.create(e.rw, "ex", "notes/once.md", "# Once\n", "Idempotency-Key", "k-1")
	wantStatus(t, "first create", first, 201, "")
	again := e.create(e.rw, "ex", "notes/once.md", "# Once\n", "Idempotency-Key", "k-1")
	wantStatus(t, "the repeat", again, 201, "")
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) || again.header.Get("ETag") != first.header.Get("ETag") {
		t.Errorf("the repeat was not the stored answer: %v\n%s\nvs\n%s", again.header, again.body, first.body)
	}
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Error("the first answer says it was replayed")
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits+1 {
		t.Errorf("%d commits for one idempotent create, want 1", n-commits)
	}
	wantStatus(t, "same key, another request", e.create(e.rw, "ex", "notes/other.md", "# Other\n", "Idempotency-Key", "k-1"), 422, teamapi.CodeIdempotencyMisuse)
	wantStatus(t, "a bad key", e.create(e.rw, "ex", "notes/x.md", "x", "Idempotency-Key", "has space"), 400, teamapi.CodeInvalidIdemKey)

	// While the first request runs (held here by the project's lock).
	pr, err := e.srv.project(context.Background(), "ex")
	if err != nil {
		t.Fatal(err)
	}
	pr.mu.Lock()
	done := make(chan answer)
	go func() { done <- e.create(e.rw, "ex", "notes/slow.md", "# Slow\n", "Idempotency-Key", "k-2") }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs, err := e.data.Store.RunningIdem(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	inUse := e.create(e.rw, "ex", "notes/slow.md", "# Slow\n", "Idempotency-Key", "k-2")
	pr.mu.Unlock()
	wantStatus(t, "a repeat while the first runs", inUse, 409, teamapi.CodeIdempotencyInUse)
	if inUse.header.Get("Retry-After") == "" {
		t.Error("409 in use without Retry-After")
	}
	wantStatus(t, "the slow first request", <-done, 201, "")

	// Scoped to the API key: another key's identical request is its own.
	other := e.create(e.scoped, "other", "notes/once.md", "# Once\n", "Idempotency-Key", "k-1")
	wantStatus(t, "the same Idempotency-Key from another API key", other, 201, "")
	if other.header.Get("Idempotent-Replayed") != "" {
		t.Error("another key got alice's stored answer")
	}

	// After 24 hours the record is gone: the request runs again (and now
	// finds the note there).
	e.clock.Advance(IdemTTL + time.Second)
	late := e.create(e.rw, "ex", "notes/once.md", "# Once\n", "Idempotency-Key", "k-1")
	wantStatus(t, "the repeat a day later", late, 409, teamapi.CodePathExists)
	if late.header.Get("Idempotent-Replayed") != "" {
		t.Error("a record older than 24 h was replayed")
	}
}

// Two clients replace the same note from the same ETag at once: one wins,
// the other gets 412 with the winner's hash, and after re-reading it
// writes too. Nothing is lost: both contents are in the history.
func TestIfMatchRace(t *testing.T) {
	e := newEnv(t, envOpts{})
	f, _ := e.fileAt("ex", "02-wiki/go/context.md")
	var wg sync.WaitGroup
	answers := make([]answer, 2)
	contents := []string{"# Context\n\nversion A\n", "# Context\n\nversion B\n"}
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.do("PUT", "/api/projects/ex/files/"+f.ID, e.rw, []byte(contents[i]), "If-Match", etag(f.ContentHash), "Content-Type", "application/octet-stream")
		}()
	}
	wg.Wait()
	win, lose := 0, 1
	if answers[0].status != 200 {
		win, lose = 1, 0
	}
	wantStatus(t, "the winner", answers[win], 200, "")
	wantStatus(t, "the loser", answers[lose], 412, teamapi.CodePreconditionFailed)
	var fa teamapi.FileAnswer
	answers[win].json(t, &fa)
	var eb teamapi.ErrorBody
	answers[lose].json(t, &eb)
	if eb.Error.CurrentHash != fa.File.ContentHash || answers[lose].header.Get("ETag") != etag(fa.File.ContentHash) {
		t.Errorf("412 names %s (ETag %s), the winner wrote %s", eb.Error.CurrentHash, answers[lose].header.Get("ETag"), fa.File.ContentHash)
	}
	raw := e.do("GET", "/api/projects/ex/files/"+f.ID, e.rw, nil)
	if string(raw.body) != contents[win] {
		t.Errorf("content after the race = %q, want the winner's", raw.body)
	}
	retry := e.do("PUT", "/api/projects/ex/files/"+f.ID, e.rw, []byte(contents[lose]), "If-Match", raw.header.Get("ETag"))
	wantStatus(t, "the loser after re-reading", retry, 200, "")
	var vl teamapi.VersionList
	e.do("GET", "/api/projects/ex/files/"+f.ID+"/versions", e.rw, nil).json(t, &vl)
	if len(vl.Versions) != 3 || vl.Versions[0].VersionNumber != 3 {
		t.Fatalf("versions = %+v, want import + 2 writes, newest first", vl.Versions)
	}
	for i, c := range []string{contents[lose], contents[win]} {
		if vl.Versions[i].ContentHash != sha256Hex([]byte(c)) {
			t.Errorf("version %d hash %s is not of %q", vl.Versions[i].VersionNumber, vl.Versions[i].ContentHash, c)
		}
		out, err := gitShow(e.vaultDir(e.ex), vl.Versions[i].ID, "02-wiki/go/context.md")
		if err != nil || out != c {
			t.Errorf("git has %q (%v) at version %s, want %q", out, err, vl.Versions[i].ID, c)
		}
	}
	// A stale If-Match on PATCH and DELETE is refused too.
	wantStatus(t, "PATCH with a stale ETag", e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{"newPath":"02-wiki/go/ctx.md"}`), "If-Match", etag(f.ContentHash)), 412, teamapi.CodePreconditionFailed)
	wantStatus(t, "DELETE with a stale ETag", e.do("DELETE", "/api/projects/ex/files/"+f.ID, e.rw, nil, "If-Match", etag(f.ContentHash)), 412, teamapi.CodePreconditionFailed)
}

func gitShow(dir, commit, path string) (string, error) {
	out, err := execGit(dir, "show", commit+":"+path)
	return out, err
}

// Paths from clients are hostile: every attack is refused with the
// gatekeeper's code, on create, move and lookup, and nothing is written.
func TestPathAttacks(t *testing.T) {
	e := newEnv(t, envOpts{})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(e.vaultDir(e.ex), "link.md")); err != nil {
		t.Fatal(err)
	}
	commits := len(e.gitLog(e.ex, "%H"))
	cases := []struct{ path, code string }{
		{"../x.md", "path_escape"},
		{"a/../../x.md", "path_escape"},
		{`dir\..\..\x.md`, "path_escape"},
		{"/etc/x.md", "path_escape"},
		{`C:\x.md`, "path_escape"},
		{"C:x.md", "path_escape"},
		{`\\server\share\x.md`, "path_escape"},
		{"notes/x.md:stream", "path_escape"},
		{".git/config.md", "hidden_segment"},
		{".obsidian/app.md", "hidden_segment"},
		{".trash/x.md", "hidden_segment"},
		{"notes/.hidden.md", "hidden_segment"},
		{"_templates/x.md", "protected_path"},
		{"99-archive/x.md", "protected_path"},
		{"node_modules/x.md", "protected_path"},
		{"a\x00b.md", "invalid_path"},
		{"evil\u202etxt.md", "invalid_path"},
		{"notes/x.sh", "invalid_extension"},
		{"", "invalid_path"},
		{strings.Repeat("a/", 520) + "x.md", "invalid_path"},
	}
	for _, c := range cases {
		a := e.create(e.rw, "ex", c.path, "# pwned\n")
		what := fmt.Sprintf("create %.40q", c.path)
		wantStatus(t, what, a, 400, c.code)
		var b teamapi.ErrorBody
		a.json(t, &b)
		if b.Error.Field != "path" {
			t.Errorf("%s: field %q, want \"path\"", what, b.Error.Field)
		}
	}
	f, _ := e.fileAt("ex", "02-wiki/go/context.md")
	for _, c := range cases[:12] {
		body, _ := json.Marshal(teamapi.MoveRequest{NewPath: c.path})
		a := e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, body)
		wantStatus(t, fmt.Sprintf("move to %q", c.path), a, 400, c.code)
	}
	wantStatus(t, "lookup ../x.md", e.do("GET", "/api/projects/ex/files?path=../x.md", e.rw, nil), 400, "path_escape")
	wantStatus(t, "lookup through a symlink out of the vault", e.do("GET", "/api/projects/ex/files?path=link.md", e.rw, nil), 403, "symlink_escape")
	wantStatus(t, "create over a symlink out of the vault", e.create(e.rw, "ex", "link.md", "# pwned\n"), 409, "not_a_note")
	wantStatus(t, "extension write through the symlink", e.do("POST", "/api/projects/ex/write", e.rw, []byte(`{"path":"link.md","content":"x"}`)), 409, "not_a_note")
	var l teamapi.FileList
	e.do("GET", "/api/projects/ex/files", e.rw, nil).json(t, &l)
	for _, f := range l.Files {
		if f.Path == "link.md" {
			t.Error("the listing shows a symlink that leaves the vault")
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(b) != "secret" {
		t.Errorf("the file outside the vault changed: %q", b)
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits {
		t.Errorf("%d commit(s) made by refused writes", n-commits)
	}
}

// A delete leaves a tombstone; a create on the path revives the same id,
// and its versions go on from where they were.
func TestTombstoneRevive(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.create(e.rw, "ex", "notes/phoenix.md", "# Phoenix\n")
	wantStatus(t, "create", c, 201, "")
	var fa teamapi.FileAnswer
	c.json(t, &fa)
	id := fa.File.ID
	wantStatus(t, "delete", e.do("DELETE", "/api/projects/ex/files/"+id, e.rw, nil), 200, "")
	wantStatus(t, "GET of the tombstone", e.do("GET", "/api/projects/ex/files/"+id, e.rw, nil), 404, teamapi.CodeNotFound)
	wantStatus(t, "versions of the tombstone", e.do("GET", "/api/projects/ex/files/"+id+"/versions", e.rw, nil), 404, teamapi.CodeNotFound)
	wantStatus(t, "PUT on the tombstone", e.do("PUT", "/api/projects/ex/files/"+id, e.rw, []byte("x")), 404, teamapi.CodeNotFound)
	if _, ok := e.fileAt("ex", "notes/phoenix.md"); ok {
		t.Error("a deleted file is still listed")
	}
	r := e.create(e.rw, "ex", "notes/phoenix.md", "# Phoenix\n\nrisen\n")
	wantStatus(t, "create again", r, 201, "")
	var again teamapi.FileAnswer
	r.json(t, &again)
	if again.File.ID != id {
		t.Errorf("the revived file has id %s, want %s", again.File.ID, id)
	}
	var vl teamapi.VersionList
	e.do("GET", "/api/projects/ex/files/"+id+"/versions", e.rw, nil).json(t, &vl)
	if len(vl.Versions) != 2 || vl.Versions[0].VersionNumber != 2 || vl.Versions[0].ContentHash != again.File.ContentHash {
		t.Errorf("versions after the revive = %+v", vl.Versions)
	}
}

// PATCH moves through the vault's move: the id stays, every link to the
// note is rewritten (a new version of each linking note), and the MOC line
// follows.
func TestMoveRewritesLinks(t *testing.T) {
	e := newEnv(t, envOpts{})
	f, _ := e.fileAt("ex", "02-wiki/go/retry-backoff.md")
	var bl api.BacklinksResult
	e.do("POST", "/api/projects/ex/backlinks", e.rw, []byte(`{"path":"02-wiki/go/retry-backoff.md"}`)).json(t, &bl)
	if len(bl.Backlinks) == 0 {
		t.Fatal("retry-backoff.md has no backlinks to rewrite")
	}
	a := e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{"newPath":"02-wiki/go/retries.md"}`), "If-Match", etag(f.ContentHash))
	wantStatus(t, "move", a, 200, "")
	var ma teamapi.MoveAnswer
	a.json(t, &ma)
	if ma.File.ID != f.ID || ma.File.Path != "02-wiki/go/retries.md" || ma.LinksRewritten == 0 {
		t.Errorf("move answer = %+v", ma)
	}
	if _, ok := e.fileAt("ex", "02-wiki/go/retry-backoff.md"); ok {
		t.Error("the old path is still listed")
	}
	moved, ok := e.fileAt("ex", "02-wiki/go/retries.md")
	if !ok || moved.ID != f.ID {
		t.Errorf("new path listed as %+v, want id %s", moved, f.ID)
	}
	var after api.BacklinksResult
	e.do("POST", "/api/projects/ex/backlinks", e.rw, []byte(`{"path":"02-wiki/go/retries.md"}`)).json(t, &after)
	if len(after.Backlinks) != len(bl.Backlinks) {
		t.Errorf("%d backlinks after the move, %d before", len(after.Backlinks), len(bl.Backlinks))
	}
	src := bl.Backlinks[0].Path
	sf, _ := e.fileAt("ex", src)
	var vl teamapi.VersionList
	e.do("GET", "/api/projects/ex/files/"+sf.ID+"/versions", e.rw, nil).json(t, &vl)
	if len(vl.Versions) < 2 || !strings.Contains(vl.Versions[0].Message, "02-wiki/go/retries.md") {
		t.Errorf("the linking note %s has versions %+v, want a new one for the rewrite", src, vl.Versions)
	}
	wantStatus(t, "move onto an existing note", e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{"newPath":"02-wiki/go/context.md"}`)), 409, teamapi.CodePathExists)
	wantStatus(t, "move body with an unknown field", e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{"new_path":"x.md"}`)), 400, teamapi.CodeBadRequest)
}

// A create or a move to a name that differs from an existing note's only
// in letter case is 409 path_exists naming the note that is there, on the
// request's field: not "<the asked path> exists", a path that GET
// ?path= says holds nothing.
func TestPathExistsNamesTheNoteThere(t *testing.T) {
	e := newEnv(t, envOpts{})
	check := func(what string, a answer, field string) {
		t.Helper()
		wantStatus(t, what, a, 409, teamapi.CodePathExists)
		var b teamapi.ErrorBody
		a.json(t, &b)
		if !strings.Contains(b.Error.Message, "02-wiki/go/context.md") || b.Error.Field != field {
			t.Errorf("%s: %q on field %q, want the existing 02-wiki/go/context.md named, on field %q", what, b.Error.Message, b.Error.Field, field)
		}
	}
	check("create of a name differing in case", e.create(e.rw, "ex", "02-wiki/go/Context.md", "# x\n"), "path")
	check("create of the same name", e.create(e.rw, "ex", "02-wiki/go/context.md", "# x\n"), "path")
	f, _ := e.fileAt("ex", "02-wiki/go/retry-backoff.md")
	check("move to a name differing in case", e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{"newPath":"02-wiki/go/CONTEXT.md"}`)), "newPath")
	check("move to the same name", e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{"newPath":"02-wiki/go/context.md"}`)), "newPath")
}

// Every write is one commit authored by the key's name and one audit row.
func TestAttributionAndAudit(t *testing.T) {
	e := newEnv(t, envOpts{})
	wantStatus(t, "create", e.create(e.rw, "ex", "notes/who.md", "# Who\n", "Idempotency-Key", "audit-1"), 201, "")
	authors := e.gitLog(e.ex, "%an <%ae>|%s")
	if authors[0] != "alice <alice@vaultmcp.invalid>|docs(vault): create notes/who.md" {
		t.Errorf("last commit = %q, want authored by alice", authors[0])
	}
	learn := e.do("POST", "/api/projects/ex/learn", e.rw, []byte(`{"title":"Connection pool sizing under load","insight":"Size the pool from measured concurrency, not from CPU count.","context":"load test","domain":"postgres","tags":["pattern"]}`))
	wantStatus(t, "learn", learn, 200, "")
	var lr api.LearnResult
	learn.json(t, &lr)
	if !lr.Committed || lr.Version == "" || len(lr.Files) < 2 {
		t.Errorf("learn = %+v", lr)
	}
	rows, err := e.data.Store.Audit(context.Background(), teamstore.AuditQuery{Project: e.ex.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 3 || rows[0].Operation != "learn" || rows[0].KeyName != "alice" || rows[0].Version != lr.Version || rows[0].Result != "ok" || len(rows[0].Paths) != len(lr.Files) {
		t.Errorf("newest audit row = %+v, want the learn", rows[0])
	}
	if rows[1].Operation != "create" || rows[1].IdempotencyKey != "audit-1" || rows[1].Paths[0] != "notes/who.md" || rows[1].Version == "" {
		t.Errorf("second audit row = %+v, want the create", rows[1])
	}
	// A refused write is audited with its code.
	e.create(e.rw, "ex", "notes/who.md", "# Again\n")
	rows, _ = e.data.Store.Audit(context.Background(), teamstore.AuditQuery{Project: e.ex.ID, Limit: 1})
	if rows[0].Result != teamapi.CodePathExists {
		t.Errorf("refused create audited as %+v", rows[0])
	}
}

// The extension endpoints take and answer the internal/api types.
func TestExtensionEndpoints(t *testing.T) {
	e := newEnv(t, envOpts{})
	post := func(op, body string) answer { return e.do("POST", "/api/projects/ex/"+op, e.rw, []byte(body)) }
	var sr api.SearchResult
	a := post("search", `{"query":"retry backoff jitter","limit":3}`)
	wantStatus(t, "search", a, 200, "")
	a.json(t, &sr)
	if len(sr.Results) == 0 || sr.Results[0].Path != "02-wiki/go/retry-backoff.md" {
		t.Errorf("search = %+v", sr.Results)
	}
	var n api.Note
	post("note", `{"path":"02-wiki/go/context.md"}`).json(t, &n)
	if n.Title == "" || n.SHA256 == "" {
		t.Errorf("note = %+v", n)
	}
	var l api.ListResult
	post("list", `{"folder":"02-wiki/go"}`).json(t, &l)
	if len(l.Notes) < 5 {
		t.Errorf("list = %d notes", len(l.Notes))
	}
	var g api.GraphResult
	post("graph", `{"folder":"02-wiki"}`).json(t, &g)
	if g.NodeCount == 0 || g.EdgeCount == 0 {
		t.Errorf("graph = %+v", g)
	}
	edit := post("edit", `{"path":"02-wiki/go/context.md","old_text":"`+firstLineAfterTitle(t, e)+`","new_text":"EDITED LINE"}`)
	wantStatus(t, "edit", edit, 200, "")
	var er api.WriteResult
	edit.json(t, &er)
	var h api.HistoryResult
	post("history", `{"path":"02-wiki/go/context.md"}`).json(t, &h)
	if len(h.Versions) < 2 || h.Versions[0].ID != er.Version {
		t.Errorf("history = %+v, want the edit first (%s)", h.Versions, er.Version)
	}
	// A refusal names the body's field.
	for _, c := range []struct{ body, code string }{
		{`{"version":" "}`, "invalid_argument"},
		{`{"version":"0123456789abcdef0123456789abcdef01234567"}`, "not_found"},
	} {
		bad := post("undo", c.body)
		wantStatus(t, "undo of "+c.body, bad, bad.status, c.code)
		var eb teamapi.ErrorBody
		if bad.json(t, &eb); eb.Error.Field != "version" {
			t.Errorf("undo of %s: field %q, want \"version\"", c.body, eb.Error.Field)
		}
	}
	undo := post("undo", `{"version":"`+er.Version+`"}`)
	wantStatus(t, "undo", undo, 200, "")
	cf, _ := e.fileAt("ex", "02-wiki/go/context.md")
	if cf.ContentHash != n.SHA256 {
		t.Errorf("after the undo the hash is %s, want the original %s", cf.ContentHash, n.SHA256)
	}
	wantStatus(t, "write", post("write", `{"path":"notes/ext.md","content":"# Ext\n"}`), 200, "")
	if f, ok := e.fileAt("ex", "notes/ext.md"); !ok || f.ID == "" {
		t.Error("a note written by the extension has no id")
	}
	wantStatus(t, "move", post("move", `{"from":"notes/ext.md","to":"notes/ext2.md"}`), 200, "")
	wantStatus(t, "delete", post("delete", `{"path":"notes/ext2.md"}`), 200, "")
	wantStatus(t, "learn in a new domain", post("learn", `{"title":"T","insight":"I","context":"","domain":"brand-new"}`), 409, "needs_confirmation")
	wantStatus(t, "edit with no match", post("edit", `{"path":"02-wiki/go/context.md","old_text":"no such text anywhere","new_text":"x"}`), 422, "no_match")
	wantStatus(t, "unknown field", post("search", `{"query":"x","limitt":3}`), 400, teamapi.CodeBadRequest)
	wantStatus(t, "bad limit", post("search", `{"query":"x","limit":500}`), 400, "invalid_argument")
	wantStatus(t, "unknown endpoint", post("frobnicate", `{}`), 404, teamapi.CodeNotFound)
	wantStatus(t, "GET on an endpoint", e.do("GET", "/api/projects/ex/search", e.rw, nil), 405, teamapi.CodeMethodNotAllowed)
}

func firstLineAfterTitle(t *testing.T, e *env) string {
	t.Helper()
	f, _ := e.fileAt("ex", "02-wiki/go/context.md")
	raw := e.do("GET", "/api/projects/ex/files/"+f.ID, e.rw, nil)
	for _, line := range strings.Split(string(raw.body), "\n") {
		if len(line) > 20 && !strings.HasPrefix(line, "#") && !strings.Contains(line, `"`) && !strings.Contains(line, `\`) && !strings.Contains(line, ":") {
			return line
		}
	}
	t.Fatal("no plain line in context.md")
	return ""
}

// A write applied before a crash, whose answer was never recorded, is
// settled at the next start from the token in its commit: the retry gets
// the answer and nothing is applied twice. (The real kill -9 of the binary
// is in cmd/vaultmcp.)
func TestRecoverSettlesFromGit(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	// The write of "applied" happened (its commit carries the token); the
	// process died before recording its answer. That of "not-applied" did
	// not happen.
	applied := e.crashedCreate(t, "applied", "notes/crash.md", "# Crash\n")
	notApplied := applied
	notApplied.Key, notApplied.Token, notApplied.Target = "not-applied", teamstore.NewID(), "notes/later.md"
	notApplied.Fingerprint = fingerprint("create", e.ex.ID, "notes/later.md", "# Later\n")
	if _, _, err := e.data.Store.BeginIdem(ctx, notApplied); err != nil {
		t.Fatal(err)
	}
	commits := len(e.gitLog(e.ex, "%H"))
	e.stop()
	e.start(envOpts{})
	running, _ := e.data.Store.RunningIdem(ctx)
	if len(running) != 0 {
		t.Errorf("records still running after the start: %+v", running)
	}
	retry := e.create(e.rw, "ex", "notes/crash.md", "# Crash\n", "Idempotency-Key", "applied")
	wantStatus(t, "retry of the applied write", retry, 201, "")
	if retry.header.Get("Idempotent-Replayed") != "true" {
		t.Error("the retry was not answered from the record")
	}
	var fa teamapi.FileAnswer
	retry.json(t, &fa)
	if fa.File.Path != "notes/crash.md" || fa.File.ID == "" || len(fa.Warnings) == 0 {
		t.Errorf("rebuilt answer = %+v", fa)
	}
	later := e.create(e.rw, "ex", "notes/later.md", "# Later\n", "Idempotency-Key", "not-applied")
	wantStatus(t, "retry of the write never applied", later, 201, "")
	if later.header.Get("Idempotent-Replayed") != "" {
		t.Error("a write never applied was answered from a record")
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits+1 {
		t.Errorf("%d commits after the retries, want %d (only the write never applied)", n, commits+1)
	}
}

// crashedCreate leaves in project "ex" what a process killed between a
// create and the record of its answer leaves: alice's idempotency record
// (key idemKey) running, owned by a dead process, and the note written and
// committed with the record's token.
func (e *env) crashedCreate(t *testing.T, idemKey, path, content string) teamstore.Idem {
	t.Helper()
	ctx := context.Background()
	pr, err := e.srv.project(ctx, "ex")
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := e.data.Store.Keys(ctx)
	var alice teamstore.Key
	for _, k := range keys {
		if k.Name == "alice" {
			alice = k
		}
	}
	now := e.clock.Now()
	rec := teamstore.Idem{KeyID: alice.ID, Key: idemKey, Fingerprint: fingerprint("create", e.ex.ID, path, content), Project: e.ex.ID,
		Operation: "create", Target: path, Token: teamstore.NewID(), Owner: "dead", CreatedAt: now, ExpiresAt: now.Add(IdemTTL)}
	if _, _, err := e.data.Store.BeginIdem(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := pr.svc.WriteNote(withWriteMeta(ctx, "alice", authorEmail("alice"), rec.Token), api.WriteRequest{Path: path, Content: content}); err != nil {
		t.Fatal(err)
	}
	return rec
}

// Bodies over the limit are refused with 413, a create that is not
// multipart with 415, an unknown method with 405.
func TestLimits(t *testing.T) {
	e := newEnv(t, envOpts{})
	f, _ := e.fileAt("ex", "02-wiki/go/context.md")
	big := make([]byte, MaxNote+1)
	for i := range big {
		big[i] = 'a'
	}
	wantStatus(t, "PUT over 10 MiB", e.do("PUT", "/api/projects/ex/files/"+f.ID, e.rw, big), 413, teamapi.CodeTooLarge)
	wantStatus(t, "create over 10 MiB", e.create(e.rw, "ex", "big.md", string(big)), 413, teamapi.CodeTooLarge)
	wantStatus(t, "create as JSON", e.do("POST", "/api/projects/ex/files", e.rw, []byte(`{"path":"a.md"}`), "Content-Type", "application/json"), 415, teamapi.CodeUnsupportedMedia)
	body, ct := multipartBody(t, "a.md", "x")
	noFile := strings.Replace(string(body), `name="file"`, `name="other"`, 1)
	wantStatus(t, "create without a file part", e.do("POST", "/api/projects/ex/files", e.rw, []byte(noFile), "Content-Type", ct), 400, teamapi.CodeInvalidArgument)
	// A create's content is its "file" part: a refusal of it names that
	// field, not the vault's "content".
	a := e.create(e.rw, "ex", "nul.md", "a\x00b")
	wantStatus(t, "create of a content with a NUL", a, 400, teamapi.CodeInvalidArgument)
	var b teamapi.ErrorBody
	if a.json(t, &b); b.Error.Field != "file" {
		t.Errorf("create of a content with a NUL: field %q, want \"file\"", b.Error.Field)
	}
	wantStatus(t, "POST on a file", e.do("POST", "/api/projects/ex/files/"+f.ID, e.rw, nil), 405, teamapi.CodeMethodNotAllowed)
	// A PUT sent as a form, as a create is (curl -F file=@note.md), is
	// refused: its MIME envelope would become the note.
	mp, mct := multipartBody(t, f.Path, "# Replaced\n")
	wantStatus(t, "PUT as multipart", e.do("PUT", "/api/projects/ex/files/"+f.ID, e.rw, mp, "Content-Type", mct), 415, teamapi.CodeUnsupportedMedia)
	if now := e.do("GET", "/api/projects/ex/files/"+f.ID, e.rw, nil); sha256Hex(now.body) != f.ContentHash {
		t.Errorf("a multipart PUT changed the note to %.120q", now.body)
	}
	a = e.do("GET", "/api/projects/ex/files/"+f.ID, e.rw, nil, "If-None-Match", etag(f.ContentHash))
	if a.status != http.StatusNotModified {
		t.Errorf("GET with a matching If-None-Match: %d", a.status)
	}
}

// A project imported from a folder that is not a git repository of its own
// has its objects packed, none loose (see importVault).
func TestImportIsPacked(t *testing.T) {
	e := newEnv(t, envOpts{})
	out, err := gitx.Admin(context.Background(), e.data.VaultDir(e.ex.ID), "count-objects", "-v")
	if err != nil {
		t.Fatal(err)
	}
	stats := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			stats[k] = v
		}
	}
	if stats["count"] != "0" || stats["in-pack"] == "" || stats["in-pack"] == "0" {
		t.Fatalf("the imported vault's objects are not packed:\n%s", out)
	}
}

// project add --from a folder that holds the data directory (the data
// directory itself, its vaults/, a parent of it) is refused: the copy
// walked into the vault it was writing, folder within folder until the
// names grew too long, and would have copied the database and the other
// projects' notes into the new project.
func TestImportOfTheDataDirectoryRefused(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	d, err := OpenData(ctx, filepath.Join(parent, "data"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.AddProject(ctx, "first", ""); err != nil {
		t.Fatal(err)
	}
	for i, from := range []string{d.Dir, filepath.Join(d.Dir, "vaults"), parent} {
		_, _, err := d.AddProject(ctx, fmt.Sprintf("copy%d", i), from)
		if err == nil || !strings.Contains(err.Error(), "--from") || !strings.Contains(err.Error(), "data directory") {
			t.Errorf("--from %s: %v, want a refusal naming the data directory", from, err)
		}
	}
	ents, err := os.ReadDir(filepath.Join(d.Dir, "vaults"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Errorf("%d vault folders after the refusals, want the first project's only", len(ents))
	}
}

// TestProjectLanguage: with no language set, each project's vault writes in
// its own language, as in local mode (a Portuguese vault's profile is
// detected); a language set applies to every project.
func TestProjectLanguage(t *testing.T) {
	ctx := context.Background()
	pt := t.TempDir()
	for name, text := range map[string]string{
		"02-conhecimento/go/retentativas.md": "---\ntipo: wiki\ncriado: 2026-01-02\n---\n# Retentativas\n\n## Contexto\n\nEspera exponencial.\n",
		"02-conhecimento/go/contexto.md":     "---\ntipo: wiki\ncriado: 2026-01-03\n---\n# Contexto em Go\n\n## Contexto\n\nCancelamento.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(pt, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pt, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ lang, wantEx, wantPt string }{{"", "en", "pt"}, {"en", "en", "en"}, {"pt", "pt", "pt"}} {
		d, err := OpenData(ctx, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.AddProject(ctx, "ex", filepath.Join("..", "..", "examples", "vault")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.AddProject(ctx, "pt", pt); err != nil {
			t.Fatal(err)
		}
		srv, err := New(ctx, Config{Data: d, Lang: tc.lang, NoSnapshots: true})
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"ex": tc.wantEx, "pt": tc.wantPt} {
			pr, err := srv.project(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if err := pr.svc.Ready(ctx); err != nil {
				t.Fatal(err)
			}
			if got, why := pr.svc.Profile(); got != want {
				t.Errorf("Lang %q, project %s: profile %s (%s), want %s", tc.lang, name, got, why, want)
			}
		}
		srv.Close()
		d.Close()
	}
}

// Every write request of a key is in the audit log, refused ones included
// (a read-only key, a hidden path, a bad body, a stale If-Match, an
// Idempotency-Key reused on another request), each naming the note's path
// and the refusal's code.
func TestRefusedWritesAudited(t *testing.T) {
	e := newEnv(t, envOpts{})
	f, ok := e.fileAt("ex", "02-wiki/go/context.md")
	if !ok {
		t.Fatal("context.md not listed")
	}
	wantStatus(t, "create", e.create(e.rw, "ex", "notes/a.md", "# A\n", "Idempotency-Key", "ik-1"), 201, "")
	tests := []struct {
		what      string
		send      func() answer
		status    int
		code, key string
		op, path  string
	}{
		{"a read-only key's PUT", func() answer { return e.do("PUT", "/api/projects/ex/files/"+f.ID, e.ro, []byte("x")) },
			403, teamapi.CodeReadOnlyKey, "reader", "update", f.Path},
		{"a read-only key's edit", func() answer {
			return e.do("POST", "/api/projects/ex/edit", e.ro, []byte(`{"path":"02-wiki/go/context.md","old_text":"a","new_text":"b"}`))
		}, 403, teamapi.CodeReadOnlyKey, "reader", "edit", ""},
		{"a create in .git", func() answer { return e.create(e.rw, "ex", ".git/hooks/x.md", "x") },
			400, "hidden_segment", "alice", "create", ".git/hooks/x.md"},
		{"a create that is not multipart", func() answer { return e.do("POST", "/api/projects/ex/files", e.rw, []byte("x=y")) },
			415, teamapi.CodeUnsupportedMedia, "alice", "create", ""},
		{"a move without newPath", func() answer { return e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{}`)) },
			400, teamapi.CodeInvalidArgument, "alice", "move", f.Path},
		{"a move to where the note is", func() answer {
			a := e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte(`{"newPath":"./`+f.Path+`"}`))
			if !strings.Contains(string(a.body), `newPath: \"`+f.Path+`\" is where the note is already`) {
				t.Errorf("a move to the note's own path: %s", a.body)
			}
			return a
		}, 400, teamapi.CodeInvalidArgument, "alice", "move", f.Path},
		{"a stale If-Match", func() answer {
			return e.do("PUT", "/api/projects/ex/files/"+f.ID, e.rw, []byte("x"), "If-Match", `"`+strings.Repeat("0", 64)+`"`)
		}, 412, teamapi.CodePreconditionFailed, "alice", "update", f.Path},
		{"an edit that matches nothing", func() answer {
			return e.do("POST", "/api/projects/ex/edit", e.rw, []byte(`{"path":"02-wiki/go/context.md","old_text":"not in the note at all","new_text":"b"}`))
		}, 422, "no_match", "alice", "edit", "02-wiki/go/context.md"},
		{"an edit that is not JSON", func() answer { return e.do("POST", "/api/projects/ex/edit", e.rw, []byte(`{`)) },
			400, teamapi.CodeBadRequest, "alice", "edit", ""},
		{"an Idempotency-Key reused on another request", func() answer {
			return e.create(e.rw, "ex", "notes/b.md", "# B\n", "Idempotency-Key", "ik-1")
		}, 422, teamapi.CodeIdempotencyMisuse, "alice", "create", "notes/b.md"},
	}
	for _, tc := range tests {
		wantStatus(t, tc.what, tc.send(), tc.status, tc.code)
		rows, err := e.data.Store.Audit(context.Background(), teamstore.AuditQuery{Project: e.ex.ID, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("%s: no audit row", tc.what)
		}
		got := rows[0]
		wantPaths := []string{}
		if tc.path != "" {
			wantPaths = []string{tc.path}
		}
		if got.Result != tc.code || got.KeyName != tc.key || got.Operation != tc.op || strings.Join(got.Paths, ",") != strings.Join(wantPaths, ",") || got.Version != "" {
			t.Errorf("%s: audit row %+v, want %s by %s of %v refused with %s", tc.what, got, tc.op, tc.key, wantPaths, tc.code)
		}
	}
	rows, _ := e.data.Store.Audit(context.Background(), teamstore.AuditQuery{Project: e.ex.ID, Limit: 1})
	if rows[0].IdempotencyKey != "ik-1" {
		t.Errorf("the refused reuse of an Idempotency-Key is audited without it: %+v", rows[0])
	}
	// A write that changes nothing (the same bytes again) makes no commit;
	// its row still names the note.
	a, ok := e.fileAt("ex", "notes/a.md")
	if !ok {
		t.Fatal("notes/a.md not listed")
	}
	wantStatus(t, "the same content again", e.do("PUT", "/api/projects/ex/files/"+a.ID, e.rw, []byte("# A\n")), 200, "")
	rows, _ = e.data.Store.Audit(context.Background(), teamstore.AuditQuery{Project: e.ex.ID, Limit: 1})
	if rows[0].Operation != "update" || rows[0].Result != "ok" || rows[0].Version != "" || strings.Join(rows[0].Paths, ",") != "notes/a.md" {
		t.Errorf("audit row of a write that changed nothing = %+v, want notes/a.md, no version", rows[0])
	}
}

// A PUT of the bytes the note holds already writes nothing, and its answer
// says so with the file as it is: the updatedAt a listing shows, not the
// time of the request.
func TestUnchangedPutKeepsUpdatedAt(t *testing.T) {
	e := newEnv(t, envOpts{})
	f, _ := e.fileAt("ex", "02-wiki/go/context.md")
	body := e.do("GET", "/api/projects/ex/files/"+f.ID, e.rw, nil).body
	e.clock.Advance(time.Hour)
	a := e.do("PUT", "/api/projects/ex/files/"+f.ID, e.rw, body)
	wantStatus(t, "PUT of the same bytes", a, 200, "")
	var fa teamapi.FileAnswer
	a.json(t, &fa)
	after, _ := e.fileAt("ex", "02-wiki/go/context.md")
	if !fa.File.UpdatedAt.Equal(f.UpdatedAt) || !after.UpdatedAt.Equal(f.UpdatedAt) {
		t.Errorf("updatedAt: %v before, %v in the answer, %v listed after; want it unchanged", f.UpdatedAt, fa.File.UpdatedAt, after.UpdatedAt)
	}
}

// TestUncleanPaths: a URL path with //, /./ or /../ gets the API's JSON 404,
// not the ServeMux's redirect (an HTML body, and a client following it
// would send its key to a path it did not name); clean paths, trailing
// slashes included, are routed as before.
func TestUncleanPaths(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, p := range []string{"/api//projects", "/api/./projects", "/x/../api/projects", "/api/projects/ex/files//"} {
		got := e.do("GET", p, e.rw, nil)
		if got.status != http.StatusNotFound || !strings.Contains(string(got.body), `"code":"not_found"`) || got.header.Get("Location") != "" {
			t.Errorf("GET %s: %d %s (Location %q), want the JSON 404", p, got.status, got.body, got.header.Get("Location"))
		}
	}
	wantStatus(t, "a clean path", e.do("GET", "/api/projects", e.rw, nil), 200, "")
	if got := e.do("GET", "/.well-known/oauth-protected-resource/", "", nil); strings.Contains(string(got.body), "clean path") {
		t.Errorf("a trailing slash taken for an unclean path: %s", got.body)
	}
}

// A write settled after a restart is answered as it was applied, from its
// commit, even when the note changed or went away since: the retry learns
// that its create happened (201, the note's id and the hash it wrote), never
// a "not found" that would have it create the note again under a new key.
func TestRecoverAnswersFromTheCommit(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	const content = "# Gone\n"
	e.crashedCreate(t, "gone", "notes/gone.md", content)
	e.crashedCreate(t, "changed", "notes/changed.md", content)
	e.stop()
	// The notes as the creates wrote them (the vault adds its frontmatter).
	dir := e.vaultDir(e.ex)
	written := map[string][]byte{}
	for _, key := range []string{"gone", "changed"} {
		b, err := os.ReadFile(filepath.Join(dir, "notes", key+".md"))
		if err != nil {
			t.Fatal(err)
		}
		written[key] = b
	}
	// Between the crash and the next start, the notes changed in git (an
	// operator, or another replica holding the vault meanwhile).
	if err := os.WriteFile(filepath.Join(dir, "notes", "changed.md"), []byte("# Changed since\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"rm", "-q", "notes/gone.md"}, {"add", "notes/changed.md"}, {"-c", "user.name=op", "-c", "user.email=op@example.com", "commit", "-q", "-m", "changed since"}} {
		if _, err := gitx.Admin(ctx, dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	e.start(envOpts{})
	for _, key := range []string{"gone", "changed"} {
		path := "notes/" + key + ".md"
		retry := e.create(e.rw, "ex", path, content, "Idempotency-Key", key)
		wantStatus(t, "retry of the "+key+" create", retry, 201, "")
		if retry.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s: the retry was not answered from the record", key)
		}
		var fa teamapi.FileAnswer
		retry.json(t, &fa)
		want := sha256Hex(written[key])
		// (The note gone before the server booked it never had an id.)
		if fa.File.Path != path || (fa.File.ID == "") != (key == "gone") || fa.File.ContentHash != want || fa.File.Size != int64(len(written[key])) || len(fa.Warnings) == 0 {
			t.Errorf("%s: rebuilt answer = %+v, want the note as the create wrote it", key, fa)
		}
		if got := retry.header.Get("ETag"); got != etag(want) {
			t.Errorf("%s: ETag %s, want the hash the create wrote", key, got)
		}
	}
}

// byPathFails fails every lookup of a file by its path while on, as a
// database going away would.
type byPathFails struct {
	teamstore.Store
	on atomic.Bool
}

func (b *byPathFails) FileByPath(ctx context.Context, project, path string) (teamstore.File, error) {
	if b.on.Load() {
		return teamstore.File{}, io.ErrUnexpectedEOF
	}
	return b.Store.FileByPath(ctx, project, path)
}

// A settled write whose answer cannot be made (the store failing as its
// note's record is read) stores nothing: its record stays running, and the
// next settle answers it, instead of an error replayed to every retry of a
// write that was applied.
func TestRecoverStoresNoFailedAnswer(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.refusedSettle(t, "notes/gone.md", "rebuilding the answer", func(dir string) func() {
		for _, args := range [][]string{{"rm", "-q", "notes/gone.md"}, {"-c", "user.name=op", "-c", "user.email=op@example.com", "commit", "-q", "-m", "gone since"}} {
			if _, err := gitx.Admin(context.Background(), dir, args...); err != nil {
				t.Fatal(err)
			}
		}
		fails := &byPathFails{Store: e.data.Store}
		fails.on.Store(true)
		e.data.Store = fails
		return func() { fails.on.Store(false) }
	})
}

// A settled create whose note cannot be read from its commit (its blob
// missing from the repository) is not answered from anything else: the
// start that cannot settle it says so, the record stays running, and once
// the blob is back the next start answers the retry with what was written.
func TestRecoverNeedsTheCommittedNote(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.refusedSettle(t, "notes/lost.md", "reading the note a settled write wrote", func(dir string) func() {
		id, err := gitx.Admin(context.Background(), dir, "rev-parse", "HEAD:notes/lost.md")
		if err != nil {
			t.Fatal(err)
		}
		id = strings.TrimSpace(id)
		obj := filepath.Join(dir, ".git", "objects", id[:2], id[2:])
		if err := os.Rename(obj, obj+".away"); err != nil {
			t.Fatalf("the new note's blob is not a loose object: %v", err)
		}
		return func() {
			if err := os.Rename(obj+".away", obj); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// refusedSettle leaves a create of path (Idempotency-Key: its path) applied
// by a server killed before its answer, breaks what settling it needs with
// brk (given the vault's folder; it returns the mending), and checks that a
// start is then refused saying want, with the record still running, and
// that once mended the next start answers the retry with the note the
// create wrote.
func (e *env) refusedSettle(t *testing.T, path, want string, brk func(dir string) func()) {
	t.Helper()
	ctx := context.Background()
	const content = "# Crashed\n"
	e.crashedCreate(t, path, path, content)
	e.stop()
	dir := e.vaultDir(e.ex)
	written, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	mend := brk(dir)
	if srv, err := New(ctx, Config{Data: e.data, Now: e.clock.Now, NoSnapshots: true}); err == nil {
		srv.Close()
		t.Fatal("the server started with a settled write whose answer could not be made")
	} else if !strings.Contains(err.Error(), want) {
		t.Fatalf("start: %v, want it to say %q", err, want)
	}
	if running, _ := e.data.Store.RunningIdem(ctx); len(running) != 1 || running[0].Key != path {
		t.Fatalf("records running after the failed settle: %+v", running)
	}
	mend()
	e.start(envOpts{})
	retry := e.create(e.rw, "ex", path, content, "Idempotency-Key", path)
	wantStatus(t, "the retry", retry, 201, "")
	var fa teamapi.FileAnswer
	retry.json(t, &fa)
	// (A note gone before the server booked it never had an id.)
	_, gone := os.Stat(filepath.Join(dir, filepath.FromSlash(path)))
	if retry.header.Get("Idempotent-Replayed") != "true" || fa.File.ContentHash != sha256Hex(written) || (fa.File.ID == "") != (gone != nil) {
		t.Errorf("the retry: %v %+v", retry.header, fa)
	}
}
