package teamserver

import (
	"encoding/json"
	"strings"
	"testing"
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
