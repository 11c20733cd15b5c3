package teamserver

import (
	"context"
	"encoding/json"
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
