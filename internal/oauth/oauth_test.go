package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// idp is a fake identity provider served on loopback by the test: its
// metadata, its JWKS (which the test may rotate), and a way to sign tokens.
type idp struct {
	srv     *httptest.Server
	rsaKey  *rsa.PrivateKey
	ecKey   *ecdsa.PrivateKey
	kidRSA  string
	kidEC   string
	fetches atomic.Int64
	oidc    bool // serve OpenID discovery only
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{rsaKey: rk, ecKey: ek, kidRSA: "rsa-1", kidEC: "ec-1"}
	mux := http.NewServeMux()
	meta := func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": p.srv.URL + "/tenant", "jwks_uri": p.srv.URL + "/keys"})
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server/tenant", func(w http.ResponseWriter, r *http.Request) {
		if p.oidc {
			http.NotFound(w, r)
			return
		}
		meta(w, r)
	})
	mux.HandleFunc("/tenant/.well-known/openid-configuration", meta)
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		b64 := base64.RawURLEncoding.EncodeToString
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "kid": p.kidRSA, "use": "sig", "n": b64(p.rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(p.rsaKey.E)).Bytes())},
			{"kty": "EC", "kid": p.kidEC, "crv": "P-256", "x": b64(pad(p.ecKey.X.Bytes(), 32)), "y": b64(pad(p.ecKey.Y.Bytes(), 32))},
			{"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
		}})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func pad(b []byte, n int) []byte {
	for len(b) < n {
		b = append([]byte{0}, b...)
	}
	return b
}

func (p *idp) issuer() string { return p.srv.URL + "/tenant" }

// sign makes a token with the given header and claims.
func (p *idp) sign(t *testing.T, alg, kid string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	hdr := map[string]any{"alg": alg, "typ": "at+jwt"}
	if kid != "" {
		hdr["kid"] = kid
	}
	input := enc(hdr) + "." + enc(claims)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	var err error
	switch alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, p.rsaKey, crypto.SHA256, digest[:])
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, p.rsaKey, crypto.SHA256, digest[:], nil)
	case "ES256":
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, p.ecKey, digest[:])
		sig = append(pad(r.Bytes(), 32), pad(s.Bytes(), 32)...)
	case "HS256":
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write([]byte(input))
		sig = m.Sum(nil)
	case "none":
	}
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func (p *idp) claims(extra map[string]any) map[string]any {
	c := map[string]any{"iss": p.issuer(), "sub": "user-42", "aud": "https://vault.example/api", "exp": now.Add(time.Hour).Unix(),
		"iat": now.Unix(), "scope": "vault:read vault:write", "name": "Ana"}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func verifier(p *idp, clock *time.Time) *Verifier {
	return &Verifier{Issuer: p.issuer(), Audience: "https://vault.example/api", Now: func() time.Time { return *clock }}
}

func TestVerifyAccepts(t *testing.T) {
	p := newIDP(t)
	clock := now
	v := verifier(p, &clock)
	for _, alg := range []string{"RS256", "PS256", "ES256"} {
		kid := p.kidRSA
		if alg == "ES256" {
			kid = p.kidEC
		}
		c, err := v.Verify(context.Background(), p.sign(t, alg, kid, p.claims(nil)))
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if c.Subject != "user-42" || c.Name != "Ana" || !c.Has(ScopeRead) || !c.Has(ScopeWrite) {
			t.Fatalf("%s: claims %+v", alg, c)
		}
	}
	// An audience list and scp claims.
	c, err := v.Verify(context.Background(), p.sign(t, "RS256", p.kidRSA, p.claims(map[string]any{"aud": []string{"other", "https://vault.example/api"}, "scope": nil, "scp": []string{"vault:read"}})))
	if err != nil || !c.Has(ScopeRead) || c.Has(ScopeWrite) {
		t.Fatalf("claims %+v, %v", c, err)
	}
	if err := Require(c, ScopeWrite); err == nil || err.(*Error).Code != "insufficient_scope" {
		t.Fatalf("Require write = %v", err)
	}
	if p.fetches.Load() != 1 {
		t.Fatalf("the JWKS was fetched %d times, want once (cached)", p.fetches.Load())
	}
}

func TestVerifyRefuses(t *testing.T) {
	p := newIDP(t)
	clock := now
	v := verifier(p, &clock)
	good := p.sign(t, "RS256", p.kidRSA, p.claims(nil))
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+p.issuer()+`","sub":"admin","aud":"https://vault.example/api","exp":9999999999}`)) + "." + parts[2]
	cases := map[string]string{
		"not a jwt":          "abc",
		"alg none":           p.sign(t, "none", p.kidRSA, p.claims(nil)),
		"hmac":               p.sign(t, "HS256", "secret", p.claims(nil)),
		"tampered claims":    tampered,
		"expired":            p.sign(t, "RS256", p.kidRSA, p.claims(map[string]any{"exp": now.Add(-2 * time.Minute).Unix()})),
		"no expiry":          p.sign(t, "RS256", p.kidRSA, p.claims(map[string]any{"exp": nil})),
		"not yet valid":      p.sign(t, "RS256", p.kidRSA, p.claims(map[string]any{"nbf": now.Add(10 * time.Minute).Unix()})),
		"other issuer":       p.sign(t, "RS256", p.kidRSA, p.claims(map[string]any{"iss": "https://evil.example"})),
		"other audience":     p.sign(t, "RS256", p.kidRSA, p.claims(map[string]any{"aud": "https://other.example"})),
		"key of another alg": p.sign(t, "ES256", p.kidRSA, p.claims(nil)),
		"unknown key":        p.sign(t, "RS256", "rotated-away", p.claims(nil)),
	}
	for name, tok := range cases {
		_, err := v.Verify(context.Background(), tok)
		var e *Error
		if !errors.As(err, &e) || e.Code != "invalid_token" {
			t.Errorf("%s: err = %v, want invalid_token", name, err)
			continue
		}
		if strings.Contains(e.Error(), tok) {
			t.Errorf("%s: the error quotes the token", name)
		}
	}
	// Within the leeway an expired token still passes.
	if _, err := v.Verify(context.Background(), p.sign(t, "RS256", p.kidRSA, p.claims(map[string]any{"exp": now.Add(-30 * time.Second).Unix()}))); err != nil {
		t.Fatalf("inside the leeway: %v", err)
	}
}

// TestKeyRotation: a token signed by a key the verifier has not seen makes
// it fetch the JWKS again, at most once every RefetchAfter.
func TestKeyRotation(t *testing.T) {
	p := newIDP(t)
	clock := now
	v := verifier(p, &clock)
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.kidRSA = "rsa-2" // the provider rotates
	tok := p.sign(t, "RS256", "rsa-2", p.claims(nil))
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Fatal("a refetch happened sooner than RefetchAfter")
	}
	clock = clock.Add(RefetchAfter + time.Second)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("after the rotation: %v", err)
	}
	if p.fetches.Load() != 2 {
		t.Fatalf("fetches = %d, want 2", p.fetches.Load())
	}
}

// TestOpenIDDiscovery: an issuer without RFC 8414 metadata is found through
// OpenID discovery.
func TestOpenIDDiscovery(t *testing.T) {
	p := newIDP(t)
	p.oidc = true
	clock := now
	if _, err := verifier(p, &clock).Verify(context.Background(), p.sign(t, "ES256", p.kidEC, p.claims(nil))); err != nil {
		t.Fatal(err)
	}
}

func TestMetadataAndChallenge(t *testing.T) {
	md := Metadata("https://vault.example/api", "https://idp.example")
	b, _ := json.Marshal(md)
	want := `{"resource":"https://vault.example/api","authorization_servers":["https://idp.example"],"scopes_supported":["vault:read","vault:write"],"bearer_methods_supported":["header"],"resource_name":"vaultmcp team server"}`
	if string(b) != want {
		t.Fatalf("metadata %s", b)
	}
	got := Challenge("https://vault.example/.well-known/oauth-protected-resource", &Error{Code: "insufficient_scope", Reason: `the token lacks "x"`})
	if got != `Bearer realm="vaultmcp", resource_metadata="https://vault.example/.well-known/oauth-protected-resource", error="insufficient_scope", error_description="the token lacks 'x'", scope="vault:read vault:write"` {
		t.Fatalf("challenge %s", got)
	}
}
