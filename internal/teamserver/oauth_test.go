package teamserver

import (
	"context"
	"encoding/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/oauth/oauthtest"
)

const oauthAudience = "https://vault.example"

// oauthEnv is env with the resource-server mode on, trusting p.
func oauthEnv(t *testing.T, p *oauthtest.IDP) *env {
	t.Helper()
	e := newEnv(t, envOpts{})
	e.stop()
	srv, err := New(context.Background(), Config{Data: e.data, Now: e.clock.Now, NoSnapshots: true,
		OAuth: &oauth.Verifier{Issuer: p.Issuer(), Audience: oauthAudience, Now: e.clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.http = httptest.NewServer(srv.Handler())
	return e
}

// TestOAuthTokens: with --oauth-issuer, JWT access tokens of the provider
// are accepted as Authorization: Bearer with their scopes (vault:read for
// reads, vault:write for writes), API keys keep working, and a bad token
// gets 401 with a challenge that names the protected-resource metadata.
func TestOAuthTokens(t *testing.T) {
	p := oauthtest.New(t)
	e := oauthEnv(t, p)
	now := e.clock.Now()
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	reader := p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, now, "vault:read", nil))
	writer := p.Sign(t, "ES256", p.KidEC(), p.Claims(oauthAudience, now, "vault:read vault:write", map[string]any{"sub": "user-7", "name": "Bea"}))

	me := e.do("GET", "/api/auth/me", "", nil, bearer(reader)...)
	wantStatus(t, "me with a read token", me, 200, "")
	var info struct {
		Key struct {
			Name     string `json:"name"`
			ReadOnly bool   `json:"readOnly"`
		} `json:"key"`
	}
	me.json(t, &info)
	if info.Key.Name != "Ana" || !info.Key.ReadOnly {
		t.Fatalf("me = %s", me.body)
	}
	wantStatus(t, "search with a read token", e.do("POST", "/api/projects/ex/search", "", []byte(`{"query":"retry"}`), bearer(reader)...), 200, "")
	body, ctype := multipartBody(t, "02-wiki/go/from-oauth.md", "# From OAuth\n\nWritten with a token.\n")
	wantStatus(t, "write with a read token", e.do("POST", "/api/projects/ex/files", "", body, append(bearer(reader), "Content-Type", ctype)...), 403, "")
	wantStatus(t, "write with a write token", e.do("POST", "/api/projects/ex/files", "", body, append(bearer(writer), "Content-Type", ctype)...), 201, "")
	if log := e.gitLog(e.ex, "%an"); len(log) == 0 || log[0] != "Bea" {
		t.Fatalf("the write is not authored by the token's name: %v", log)
	}
	wantStatus(t, "an API key still works", e.do("GET", "/api/projects", e.rw, nil), 200, "")

	for name, tok := range map[string]string{
		"expired":   p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, now.Add(-3*time.Hour), "vault:read", nil)),
		"audience":  p.Sign(t, "RS256", p.KidRSA(), p.Claims("https://elsewhere.example", now, "vault:read", nil)),
		"signature": reader[:len(reader)-4] + "AAAA",
		"alg none":  p.Sign(t, "none", p.KidRSA(), p.Claims(oauthAudience, now, "vault:read", nil)),
		"other idp": oauthtest.New(t).Sign(t, "RS256", "rsa-1", p.Claims(oauthAudience, now, "vault:read", nil)),
	} {
		a := e.do("GET", "/api/projects", "", nil, bearer(tok)...)
		wantStatus(t, name, a, 401, "unauthorized")
		if wa := a.header.Get("WWW-Authenticate"); !strings.Contains(wa, `error="invalid_token"`) || !strings.Contains(wa, `resource_metadata="`+e.http.URL+`/.well-known/oauth-protected-resource"`) {
			t.Errorf("%s: WWW-Authenticate = %q", name, wa)
		}
	}
	noScope := p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, now, "profile", nil))
	a := e.do("GET", "/api/projects", "", nil, bearer(noScope)...)
	wantStatus(t, "no vault scope", a, 403, "")
	if wa := a.header.Get("WWW-Authenticate"); !strings.Contains(wa, `error="insufficient_scope"`) {
		t.Errorf("WWW-Authenticate = %q", wa)
	}

	m := e.do("GET", "/.well-known/oauth-protected-resource", "", nil)
	var md oauth.ProtectedResource
	if err := json.Unmarshal(m.body, &md); err != nil || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != p.Issuer() {
		t.Fatalf("metadata = %s", m.body)
	}
}

// TestFilesAreStoredByteForByte: the file API stores what a Team Vault
// client sends, exactly: no frontmatter is added to a new note, and a
// replacement keeps its own line endings; the hash is of those bytes.
func TestFilesAreStoredByteForByte(t *testing.T) {
	e := newEnv(t, envOpts{})
	sent := "no frontmatter here\r\njust lines\r\n"
	body, ctype := multipartBody(t, "notes/raw.md", sent)
	a := e.do("POST", "/api/projects/ex/files", e.rw, body, "Content-Type", ctype)
	wantStatus(t, "create", a, 201, "")
	var created struct {
		File struct{ ID, ContentHash string } `json:"file"`
	}
	a.json(t, &created)
	if created.File.ContentHash != sha256Hex([]byte(sent)) {
		t.Fatalf("hash %s is not of the bytes sent", created.File.ContentHash)
	}
	if got := e.do("GET", "/api/projects/ex/files/"+created.File.ID, e.rw, nil); string(got.body) != sent {
		t.Fatalf("stored %q, sent %q", got.body, sent)
	}
	lf := "now LF only\n"
	wantStatus(t, "replace", e.do("PUT", "/api/projects/ex/files/"+created.File.ID, e.rw, []byte(lf), "Content-Type", "application/octet-stream", "If-Match", `"`+created.File.ContentHash+`"`), 200, "")
	if got := e.do("GET", "/api/projects/ex/files/"+created.File.ID, e.rw, nil); string(got.body) != lf {
		t.Fatalf("replaced with %q, sent %q", got.body, lf)
	}
}

// The MCP tools follow the scopes of the token each request carries, not
// those of the first token its subject used: a subject that opened an MCP
// session with vault:write and then connects with a vault:read token gets
// the read tools only, and a write through it is refused.
func TestOAuthMCPFollowsEachTokensScopes(t *testing.T) {
	p := oauthtest.New(t)
	e := oauthEnv(t, p)
	now := e.clock.Now()
	writer := p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, now, "vault:read vault:write", nil))
	reader := p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, now, "vault:read", nil))

	w := e.mcpSession(t, "/projects/ex/mcp", writer)
	if names := toolNames(t, w); !names["vault_write_note"] {
		t.Fatalf("tools for a write token: %v", names)
	}
	r := e.mcpSession(t, "/projects/ex/mcp", reader)
	if names := toolNames(t, r); names["vault_write_note"] || !names["vault_search"] {
		t.Errorf("tools for a read token of the same subject: %v", names)
	}
	res, err := r.CallTool(context.Background(), &mcp.CallToolParams{Name: "vault_write_note", Arguments: map[string]any{"path": "notes/sneaky.md", "content": "# Sneaky\n"}})
	if err == nil && !res.IsError {
		t.Errorf("a read token wrote through MCP: %+v", res.Content)
	}
	if _, ok := e.fileAt("ex", "notes/sneaky.md"); ok {
		t.Error("the note a read token sent was written")
	}

	// A session opened with the write token is not continued with the
	// read token.
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	a := e.do("POST", "/projects/ex/mcp", "", init, append(hdr, "Authorization", "Bearer "+writer)...)
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", a.status, a.body)
	}
	call := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"vault_write_note","arguments":{"path":"notes/sneaky2.md","content":"# Sneaky\n"}}}`)
	b := e.do("POST", "/projects/ex/mcp", "", call, append(hdr, "Authorization", "Bearer "+reader, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")...)
	if b.status < 400 {
		t.Errorf("a read token in a write token's session: %d %s", b.status, b.body)
	}
	if _, ok := e.fileAt("ex", "notes/sneaky2.md"); ok {
		t.Error("a read token wrote through a write token's session")
	}
}

// A write with a token that lacks vault:write is 403 with the challenge an
// OAuth client acts on (error="insufficient_scope", scope="vault:write",
// where the metadata is), on every write endpoint; a request with no
// credential at all is 401 with a challenge that carries no error code
// (RFC 6750 section 3.1).
func TestOAuthWriteScopeChallenge(t *testing.T) {
	p := oauthtest.New(t)
	e := oauthEnv(t, p)
	reader := p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, e.clock.Now(), "vault:read", nil))
	bearer := []string{"Authorization", "Bearer " + reader}
	f, ok := e.fileAt("ex", "02-wiki/postgres/advisory-locks.md")
	if !ok {
		t.Fatal("no fixture note")
	}
	body, ctype := multipartBody(t, "notes/x.md", "# X\n")
	for _, c := range []struct {
		method, path string
		body         []byte
		hdr          []string
	}{
		{"POST", "/api/projects/ex/files", body, []string{"Content-Type", ctype}},
		{"PUT", "/api/projects/ex/files/" + f.ID, []byte("# Y\n"), []string{"Content-Type", "application/octet-stream"}},
		{"PATCH", "/api/projects/ex/files/" + f.ID, []byte(`{"newPath":"notes/y.md"}`), nil},
		{"DELETE", "/api/projects/ex/files/" + f.ID, nil, nil},
		{"POST", "/api/projects/ex/learn", []byte(`{"title":"t","insight":"i","context":"c","domain":"go"}`), nil},
	} {
		a := e.do(c.method, c.path, "", c.body, append(append([]string{}, bearer...), c.hdr...)...)
		wantStatus(t, c.method+" "+c.path, a, 403, "read_only_key")
		wa := a.header.Get("WWW-Authenticate")
		if !strings.Contains(wa, `error="insufficient_scope"`) || !strings.Contains(wa, `scope="vault:write"`) || !strings.Contains(wa, `resource_metadata="`+e.http.URL+`/.well-known/oauth-protected-resource"`) {
			t.Errorf("%s %s: WWW-Authenticate = %q", c.method, c.path, wa)
		}
	}
	a := e.do("GET", "/api/projects", "", nil)
	wantStatus(t, "no credential", a, 401, "unauthorized")
	if wa := a.header.Get("WWW-Authenticate"); strings.Contains(wa, "error=") || !strings.Contains(wa, "resource_metadata=") {
		t.Errorf("no credential: WWW-Authenticate = %q", wa)
	}
}

// An MCP client that follows the MCP authorization flow asks the provider
// for a token for the endpoint's resource (RFC 8707: the URL its
// protected-resource metadata names), so the token's audience is that URL:
// it is accepted on that endpoint, and nowhere else.
func TestOAuthTokenForAnMCPEndpoint(t *testing.T) {
	p := oauthtest.New(t)
	e := oauthEnv(t, p)
	now := e.clock.Now()
	m := e.do("GET", "/.well-known/oauth-protected-resource/projects/ex/mcp", "", nil)
	var md oauth.ProtectedResource
	m.json(t, &md)
	resource := oauthAudience + "/projects/ex/mcp"
	if !strings.HasSuffix(md.Resource, "/projects/ex/mcp") {
		t.Fatalf("metadata resource %q", md.Resource)
	}
	tok := p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, now, "vault:read vault:write", map[string]any{"aud": resource}))
	s := e.mcpSession(t, "/projects/ex/mcp", tok)
	if names := toolNames(t, s); !names["vault_search"] {
		t.Errorf("tools: %v", names)
	}
	bearer := []string{"Authorization", "Bearer " + tok}
	wantStatus(t, "the endpoint's token on the REST API", e.do("GET", "/api/projects", "", nil, bearer...), 401, "unauthorized")
	wantStatus(t, "the endpoint's token on another endpoint", e.do("POST", "/projects/other/mcp", "", []byte(`{}`), bearer...), 401, "unauthorized")
	// A token for another server's endpoint of the same path is refused.
	foreign := p.Sign(t, "RS256", p.KidRSA(), p.Claims(oauthAudience, now, "vault:read", map[string]any{"aud": "https://evil.example/projects/ex/mcp"}))
	wantStatus(t, "another server's token", e.do("POST", "/projects/ex/mcp", "", []byte(`{}`), "Authorization", "Bearer "+foreign), 401, "unauthorized")
}
