package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/oauth/oauthtest"
)

// TestTeamServerOAuth runs the real team server in resource-server mode
// against an identity provider the test serves on loopback: a token with
// vault:write searches and writes (the commit authored by the token's
// name), a read token cannot write, a forged or expired one gets 401 with
// the challenge, and the flags are checked.
func TestTeamServerOAuth(t *testing.T) {
	p := oauthtest.New(t)
	data, key, vaultDir := teamData(t)
	const aud = "https://vault.example"
	srv := startTeam(t, data, nil, "--oauth-issuer", p.Issuer(), "--oauth-audience", aud)
	now := time.Now()
	writer := p.Sign(t, "RS256", p.KidRSA(), p.Claims(aud, now, "vault:read vault:write", map[string]any{"name": "Carla"}))
	reader := p.Sign(t, "ES256", p.KidEC(), p.Claims(aud, now, "vault:read", nil))
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	want(t, "search with a token", teamDo(t, "POST", srv.url+"/api/projects/ex/search", "", []byte(`{"query":"retry"}`), bearer(reader)...), 200, "")
	body, ctype := createBody(t, "02-wiki/go/oauth-e2e.md", "# OAuth\n\nWritten with an access token.\n")
	want(t, "create with a read token", teamDo(t, "POST", srv.url+"/api/projects/ex/files", "", body, append(bearer(reader), "Content-Type", ctype)...), 403, "")
	want(t, "create with a write token", teamDo(t, "POST", srv.url+"/api/projects/ex/files", "", body, append(bearer(writer), "Content-Type", ctype)...), 201, "")
	if out, err := exec.Command("git", "-C", vaultDir, "log", "-1", "--format=%an").Output(); err != nil || strings.TrimSpace(string(out)) != "Carla" {
		t.Fatalf("author %q, %v", out, err)
	}
	want(t, "the API key still works", teamDo(t, "GET", srv.url+"/api/projects", key, nil), 200, "")
	expired := p.Sign(t, "RS256", p.KidRSA(), p.Claims(aud, now.Add(-3*time.Hour), "vault:read", nil))
	a := teamDo(t, "GET", srv.url+"/api/projects", "", nil, bearer(expired)...)
	want(t, "an expired token", a, 401, "unauthorized")
	if wa := a.header.Get("WWW-Authenticate"); !strings.Contains(wa, `error="invalid_token"`) || !strings.Contains(wa, "resource_metadata=") {
		t.Fatalf("WWW-Authenticate = %q", wa)
	}
	want(t, "a forged token", teamDo(t, "GET", srv.url+"/api/projects", "", nil, bearer(writer[:len(writer)-6]+"AAAAAA")...), 401, "unauthorized")

	for _, args := range [][]string{{"--oauth-issuer", p.Issuer()}, {"--oauth-audience", aud}, {"--oauth-issuer", "http://idp.example/x", "--oauth-audience", aud}} {
		cmd := exec.Command(binary, append([]string{"team-server", "--data", data, "--listen", "127.0.0.1:0"}, args...)...)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--oauth") {
			t.Errorf("%v: err %v, output %q", args, err, out)
		}
	}
}
