package teamserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// A note the vault takes is taken through the JSON extension endpoints
// too, although JSON spells some of its characters in two bytes (quotes,
// backslashes, tabs): 6 MiB of quotes is a 12 MiB body.
func TestJSONBodyOfALargeNote(t *testing.T) {
	e := newEnv(t, envOpts{})
	content := "# Quotes\n\n" + strings.Repeat(`"\`+"\t"+`"`+"\n", 6<<20/5)
	body, err := json.Marshal(map[string]any{"path": "notes/quotes.md", "content": content})
	if err != nil {
		t.Fatal(err)
	}
	if len(body) <= maxBody {
		t.Fatalf("the body is %d bytes: not over a note's size, the test proves nothing", len(body))
	}
	a := e.do("POST", "/api/projects/ex/write", e.rw, body, "Content-Type", "application/json")
	wantStatus(t, "write of a 6 MiB note of quotes", a, 200, "")
	var res struct{ SHA256 string }
	a.json(t, &res)
	if res.SHA256 == "" {
		t.Fatalf("answer %.200s", a.body)
	}
}

// A JSON body that is not UTF-8 is refused, not decoded with U+FFFD in
// place of its bad bytes: the server never writes a path or a content
// other than the one it was sent.
func TestJSONBodyNotUTF8(t *testing.T) {
	e := newEnv(t, envOpts{})
	a := e.do("POST", "/api/projects/ex/write", e.rw, []byte("{\"path\":\"notes/bad\xff.md\",\"content\":\"x\"}"))
	wantStatus(t, "write naming a path with a byte that is not UTF-8", a, 400, "bad_request")
	a = e.do("POST", "/api/projects/ex/write", e.rw, []byte("{\"path\":\"notes/ok.md\",\"content\":\"a \xfe\xff b\"}"))
	wantStatus(t, "write of a content with bytes that are not UTF-8", a, 400, "bad_request")
	a = e.do("POST", "/api/projects/ex/search", e.rw, []byte("{\"query\":\"caf\xe9\"}"))
	wantStatus(t, "search in Latin-1", a, 400, "bad_request")
	for _, p := range []string{"notes/bad\uFFFD.md", "notes/ok.md"} {
		if _, ok := e.fileAt("ex", p); ok {
			t.Errorf("%s was written", p)
		}
	}
	f, _ := e.fileAt("ex", "02-wiki/go/context.md")
	a = e.do("PATCH", "/api/projects/ex/files/"+f.ID, e.rw, []byte("{\"newPath\":\"02-wiki/go/c\xffx.md\"}"))
	wantStatus(t, "move to a path with a byte that is not UTF-8", a, 400, "bad_request")
	if _, ok := e.fileAt("ex", "02-wiki/go/context.md"); !ok {
		t.Error("the note was moved")
	}
}

// A body whose value has the wrong JSON type names the field at fault in
// the error's field, as every other bad-input answer does, and a body that
// is not an object says so in JSON's words, not in the server's Go types.
func TestJSONBodyWrongType(t *testing.T) {
	e := newEnv(t, envOpts{})
	f, _ := e.fileAt("ex", "02-wiki/go/context.md")
	for _, c := range []struct {
		what, method, path, body, field string
	}{
		{"search with a string limit", "POST", "/api/projects/ex/search", `{"query":"go","limit":"2"}`, "limit"},
		{"learn with a string for tags", "POST", "/api/projects/ex/learn", `{"title":"t","insight":"i","context":"c","domain":"go","tags":"a"}`, "tags"},
		{"move with a number for newPath", "PATCH", "/api/projects/ex/files/" + f.ID, `{"newPath":1}`, "newPath"},
	} {
		a := e.do(c.method, c.path, e.rw, []byte(c.body))
		wantStatus(t, c.what, a, 400, "bad_request")
		var b teamapi.ErrorBody
		a.json(t, &b)
		if b.Error.Field != c.field {
			t.Errorf("%s: field %q, want %q (%s)", c.what, b.Error.Field, c.field, b.Error.Message)
		}
	}
	a := e.do("POST", "/api/projects/ex/write", e.rw, []byte(`{"path":"a.md","content":"x","frontmatter":"tags: [a]"}`))
	wantStatus(t, "write with a string for frontmatter", a, 400, "bad_request")
	if !strings.Contains(string(a.body), "expected an object, not string") {
		t.Errorf("write with a string for frontmatter: %s, want it to say an object is expected", a.body)
	}
	a = e.do("POST", "/api/projects/ex/search", e.rw, []byte(`["go"]`))
	wantStatus(t, "a search body that is an array", a, 400, "bad_request")
	var b teamapi.ErrorBody
	a.json(t, &b)
	if strings.Contains(b.Error.Message, "api.") || !strings.Contains(b.Error.Message, "object") {
		t.Errorf("a body that is an array: %q, want it to say an object is expected, without Go type names", b.Error.Message)
	}
}
