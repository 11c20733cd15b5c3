package teamserver

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

var serverURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

// shape is what the golden files hold of an answer: the status, the
// headers a client relies on, and the JSON body.
func shape(t *testing.T, a answer) []byte {
	t.Helper()
	h := map[string]string{}
	for _, k := range []string{"Content-Type", "ETag", "Idempotent-Replayed", "Retry-After", "WWW-Authenticate"} {
		if v := a.header.Get(k); v != "" {
			h[k] = v
		}
	}
	var body any
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Fatalf("answer %d is not JSON: %s", a.status, a.body)
	}
	b, _ := json.Marshal(map[string]any{"status": a.status, "headers": h, "body": body})
	return serverURL.ReplaceAll(normalise(t, b), []byte("http://<server>"))
}

// The JSON shapes of the API, one golden file per answer (ids and versions
// replaced by placeholders; the clock is fixed, so times and hashes are
// stable). go test -update rewrites them.
func TestGoldenShapes(t *testing.T) {
	e := newEnv(t, envOpts{})
	g := func(name string, a answer) { t.Helper(); golden(t, "api/"+name+".json", shape(t, a)) }
	g("auth-me", e.do("GET", "/api/auth/me", e.rw, nil))
	g("projects", e.do("GET", "/api/projects", e.rw, nil))
	g("files-by-path", e.do("GET", "/api/projects/ex/files?path=02-wiki/go/context.md", e.rw, nil))
	g("files-by-path-missing", e.do("GET", "/api/projects/ex/files?path=no/such.md", e.rw, nil))
	g("files-by-prefix", e.do("GET", "/api/projects/ex/files?prefix=02-wiki/postgres/", e.rw, nil))
	created := e.create(e.rw, "ex", "notes/golden.md", "# Golden\n\nA note.\n", "Idempotency-Key", "golden-1")
	g("create", created)
	g("create-replayed", e.create(e.rw, "ex", "notes/golden.md", "# Golden\n\nA note.\n", "Idempotency-Key", "golden-1"))
	var fa teamapi.FileAnswer
	created.json(t, &fa)
	id := fa.File.ID
	g("update", e.do("PUT", "/api/projects/ex/files/"+id, e.rw, []byte("# Golden\n\nChanged.\n"), "If-Match", etag(fa.File.ContentHash), "Content-Type", "application/octet-stream"))
	g("move", e.do("PATCH", "/api/projects/ex/files/"+id, e.rw, []byte(`{"newPath":"notes/golden-moved.md"}`)))
	g("versions", e.do("GET", "/api/projects/ex/files/"+id+"/versions", e.rw, nil))
	g("delete", e.do("DELETE", "/api/projects/ex/files/"+id, e.rw, nil))
	g("search", e.do("POST", "/api/projects/ex/search", e.rw, []byte(`{"query":"advisory locks","limit":1}`)))
	g("error-unauthorized", e.do("GET", "/api/projects", "", nil))
	g("error-key-in-query", e.do("GET", "/api/projects?api_key=x", "", nil))
	g("error-forbidden", e.do("GET", "/api/projects/ex/files", e.scoped, nil))
	g("error-read-only", e.create(e.ro, "ex", "x.md", "x"))
	g("error-path-exists", e.create(e.rw, "ex", "02-wiki/go/context.md", "x"))
	ctx, _ := e.fileAt("ex", "02-wiki/go/context.md")
	g("error-precondition-failed", e.do("PUT", "/api/projects/ex/files/"+ctx.ID, e.rw, []byte("x"), "If-Match", `"stale"`))
	g("error-idempotency-mismatch", e.create(e.rw, "ex", "notes/other.md", "x", "Idempotency-Key", "golden-1"))
	g("error-path-escape", e.create(e.rw, "ex", "../escape.md", "x"))
	g("error-not-found", e.do("GET", "/api/projects/ex/files/"+id, e.rw, nil))
}
