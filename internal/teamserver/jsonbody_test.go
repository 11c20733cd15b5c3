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
