package oauth_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/oauth/oauthtest"
)

const aud = "https://vault.example/api"

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func verifier(p *oauthtest.IDP, clock *time.Time) *oauth.Verifier {
	return &oauth.Verifier{Issuer: p.Issuer(), Audience: aud, Now: func() time.Time { return *clock }}
}

func claims(p *oauthtest.IDP, extra map[string]any) map[string]any {
	return p.Claims(aud, now, "vault:read vault:write", extra)
}

func TestVerifyAccepts(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	v := verifier(p, &clock)
	for _, alg := range []string{"RS256", "PS256", "ES256"} {
		kid := p.KidRSA()
		if alg == "ES256" {
			kid = p.KidEC()
		}
		c, err := v.Verify(context.Background(), p.Sign(t, alg, kid, claims(p, nil)))
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if c.Subject != "user-42" || c.Name != "Ana" || !c.Has(oauth.ScopeRead) || !c.Has(oauth.ScopeWrite) {
			t.Fatalf("%s: claims %+v", alg, c)
		}
	}
	// An audience list and scp claims.
	c, err := v.Verify(context.Background(), p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"aud": []string{"other", aud}, "scope": nil, "scp": []string{"vault:read"}})))
	if err != nil || !c.Has(oauth.ScopeRead) || c.Has(oauth.ScopeWrite) {
		t.Fatalf("claims %+v, %v", c, err)
	}
	// scp as a space-separated string, scope as a list: both are seen.
	for _, extra := range []map[string]any{{"scope": nil, "scp": "vault:read vault:write"}, {"scope": []string{"vault:read", "vault:write"}}} {
		c2, err := v.Verify(context.Background(), p.Sign(t, "RS256", p.KidRSA(), claims(p, extra)))
		if err != nil || !c2.Has(oauth.ScopeRead) || !c2.Has(oauth.ScopeWrite) {
			t.Fatalf("%v: claims %+v, %v", extra, c2, err)
		}
	}
	if err := oauth.Require(c, oauth.ScopeWrite); err == nil || err.(*oauth.Error).Code != "insufficient_scope" {
		t.Fatalf("Require write = %v", err)
	}
	if p.Fetches.Load() != 1 {
		t.Fatalf("the JWKS was fetched %d times, want once (cached)", p.Fetches.Load())
	}
}

func TestVerifyRefuses(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	v := verifier(p, &clock)
	good := p.Sign(t, "RS256", p.KidRSA(), claims(p, nil))
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+p.Issuer()+`","sub":"admin","aud":"`+aud+`","exp":9999999999}`)) + "." + parts[2]
	cases := map[string]string{
		"not a jwt":          "abc",
		"alg none":           p.Sign(t, "none", p.KidRSA(), claims(p, nil)),
		"hmac":               p.Sign(t, "HS256", "secret", claims(p, nil)),
		"tampered claims":    tampered,
		"expired":            p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"exp": now.Add(-2 * time.Minute).Unix()})),
		"no expiry":          p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"exp": nil})),
		"not yet valid":      p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"nbf": now.Add(10 * time.Minute).Unix()})),
		"other issuer":       p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"iss": "https://evil.example"})),
		"other audience":     p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"aud": "https://other.example"})),
		"key of another alg": p.Sign(t, "ES256", p.KidRSA(), claims(p, nil)),
		"unknown key":        p.Sign(t, "RS256", "rotated-away", claims(p, nil)),
		"no subject":         p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"sub": nil})),
		"empty subject":      p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"sub": ""})),
	}
	for name, tok := range cases {
		_, err := v.Verify(context.Background(), tok)
		var e *oauth.Error
		if !errors.As(err, &e) || e.Code != "invalid_token" {
			t.Errorf("%s: err = %v, want invalid_token", name, err)
			continue
		}
		if strings.Contains(e.Error(), tok) {
			t.Errorf("%s: the error quotes the token", name)
		}
	}
	// Within the leeway an expired token still passes.
	if _, err := v.Verify(context.Background(), p.Sign(t, "RS256", p.KidRSA(), claims(p, map[string]any{"exp": now.Add(-30 * time.Second).Unix()}))); err != nil {
		t.Fatalf("inside the leeway: %v", err)
	}
}

// TestKeyRotation: a token signed by a key the verifier has not seen makes
// it fetch the JWKS again, at most once every RefetchAfter.
func TestKeyRotation(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	v := verifier(p, &clock)
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.RotateRSA("rsa-2")
	tok := p.Sign(t, "RS256", "rsa-2", claims(p, nil))
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Fatal("a refetch happened sooner than RefetchAfter")
	}
	clock = clock.Add(oauth.RefetchAfter + time.Second)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("after the rotation: %v", err)
	}
	if p.Fetches.Load() != 2 {
		t.Fatalf("fetches = %d, want 2", p.Fetches.Load())
	}
}

// TestOpenIDDiscovery: an issuer without RFC 8414 metadata is found through
// OpenID discovery.
func TestOpenIDDiscovery(t *testing.T) {
	p := oauthtest.New(t)
	p.OpenIDOnly()
	clock := now
	if _, err := verifier(p, &clock).Verify(context.Background(), p.Sign(t, "ES256", p.KidEC(), claims(p, nil))); err != nil {
		t.Fatal(err)
	}
}

func TestMetadataAndChallenge(t *testing.T) {
	md := oauth.Metadata("https://vault.example/api", "https://idp.example")
	b, _ := json.Marshal(md)
	want := `{"resource":"https://vault.example/api","authorization_servers":["https://idp.example"],"scopes_supported":["vault:read","vault:write"],"bearer_methods_supported":["header"],"resource_name":"vaultmcp team server"}`
	if string(b) != want {
		t.Fatalf("metadata %s", b)
	}
	got := oauth.Challenge("https://vault.example/.well-known/oauth-protected-resource", &oauth.Error{Code: "insufficient_scope", Reason: `the token lacks "x"`})
	if got != `Bearer realm="vaultmcp", resource_metadata="https://vault.example/.well-known/oauth-protected-resource", error="insufficient_scope", error_description="the token lacks 'x'", scope="vault:read vault:write"` {
		t.Fatalf("challenge %s", got)
	}
}

// TestWithdrawnKeyIsRefused: a key the provider stops publishing is
// refused once the keys are older than MaxKeyAge, although no token named
// an unknown key meanwhile; younger keys are not fetched again.
func TestWithdrawnKeyIsRefused(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	v := verifier(p, &clock)
	old := p.Sign(t, "RS256", "rsa-1", claims(p, nil))
	if _, err := v.Verify(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	p.RotateRSA("rsa-2") // rsa-1 is no longer published
	clock = clock.Add(oauth.MaxKeyAge - time.Second)
	if _, err := v.Verify(context.Background(), p.Sign(t, "RS256", "rsa-1", claims(p, map[string]any{"iat": clock.Unix(), "exp": clock.Add(time.Hour).Unix()}))); err != nil {
		t.Fatalf("within MaxKeyAge: %v", err)
	}
	if n := p.Fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d within MaxKeyAge, want 1", n)
	}
	clock = clock.Add(2 * time.Second)
	_, err := v.Verify(context.Background(), p.Sign(t, "RS256", "rsa-1", claims(p, map[string]any{"iat": clock.Unix(), "exp": clock.Add(time.Hour).Unix()})))
	var e *oauth.Error
	if !errors.As(err, &e) || e.Code != "invalid_token" {
		t.Fatalf("a withdrawn key after MaxKeyAge: err = %v", err)
	}
	if n := p.Fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
}

// gate holds the JWKS downloads after the first until released.
type gate struct {
	n       atomic.Int64
	waiting chan struct{}
	release chan struct{}
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/keys") && g.n.Add(1) > 1 {
		g.waiting <- struct{}{}
		<-g.release
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestFetchDoesNotHoldUpKnownKeys: while a token with an unknown key id
// waits for a slow JWKS download, tokens signed with a known key are
// verified.
func TestFetchDoesNotHoldUpKnownKeys(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	g := &gate{waiting: make(chan struct{}), release: make(chan struct{})}
	v := verifier(p, &clock)
	v.Client = &http.Client{Transport: g}
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(oauth.RefetchAfter + time.Second)
	slow := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), p.Sign(t, "RS256", "unknown-kid", claims(p, nil)))
		slow <- err
	}()
	<-g.waiting // the refetch is under way
	known := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), p.Sign(t, "ES256", p.KidEC(), claims(p, nil)))
		known <- err
	}()
	select {
	case err := <-known:
		if err != nil {
			t.Errorf("a known key: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("a token with a known key waited for the JWKS download")
	}
	close(g.release)
	if err := <-slow; err == nil {
		t.Error("a token with an unknown key id was accepted")
	}
}

// TestIssuerUnreachable: while no keys could be fetched, a token is refused
// saying so, not as signed by a key the issuer does not publish.
func TestIssuerUnreachable(t *testing.T) {
	p := oauthtest.New(t)
	tok := p.Sign(t, "RS256", p.KidRSA(), claims(p, nil))
	issuer := p.Issuer()
	p.Server.Close()
	clock := now
	v := &oauth.Verifier{Issuer: issuer, Audience: aud, Now: func() time.Time { return clock }}
	if err := v.Refresh(context.Background()); err == nil {
		t.Fatal("Refresh of a closed issuer succeeded")
	}
	_, err := v.Verify(context.Background(), tok)
	var e *oauth.Error
	if !errors.As(err, &e) || !strings.Contains(e.Reason, "could not be fetched") {
		t.Fatalf("err = %v", err)
	}
}

// TestCriticalHeaderRefused: a token whose header lists critical extensions
// (crit) is refused, since the verifier understands none (RFC 7515).
func TestCriticalHeaderRefused(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	v := verifier(p, &clock)
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(map[string]any{"alg": "RS256", "kid": p.KidRSA(), "crit": []string{"exp-policy"}, "exp-policy": "ignore"}) + "." + enc(claims(p, nil))
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.RSA, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), input+"."+base64.RawURLEncoding.EncodeToString(sig))
	var e *oauth.Error
	if !errors.As(err, &e) || e.Code != "invalid_token" || !strings.Contains(e.Reason, "crit") {
		t.Fatalf("err = %v", err)
	}
}

// TestMalformedPartsNotQuoted: a token whose header or claims do not
// decode is refused saying what is wrong, never repeating a byte of it
// (the decoders' own errors quote a character or an offset of the input).
func TestMalformedPartsNotQuoted(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	v := verifier(p, &clock)
	enc := base64.RawURLEncoding.EncodeToString
	for tok, want := range map[string]string{
		"garbage.x.y":                                   "the header is not valid: not JSON",
		"a$b.x.y":                                       "the header is not valid: not base64url",
		enc([]byte(`{"alg":7}`)) + ".x.y":               `the header is not valid: the field "alg" has the wrong type`,
		enc([]byte(`["RS256"]`)) + ".x.y":               "the header is not valid: not a JSON object",
		enc([]byte("{\"alg\":\"RS256\"\x81}")) + ".x.y": "the header is not valid: not JSON",
	} {
		_, err := v.Verify(context.Background(), tok)
		var e *oauth.Error
		if !errors.As(err, &e) || e.Code != "invalid_token" || !strings.Contains(e.Error(), want) {
			t.Errorf("%q: %v, want %q", tok, err, want)
			continue
		}
		if strings.ContainsAny(e.Error(), "$\x81\ufffd") || strings.Contains(e.Error(), "offset") || strings.Contains(e.Error(), "byte") {
			t.Errorf("%q: the error repeats the token: %v", tok, e)
		}
	}
}

// TestCancelledRequestDoesNotStopTheRefetch: a caller that goes away while
// its unknown key id has the JWKS fetched again (anyone can send such a
// token, signed or not, and hang up at once) does not abort the download:
// else, at most one download every RefetchAfter, one such request each
// time would keep a rotated-in key refused and a withdrawn one accepted.
func TestCancelledRequestDoesNotStopTheRefetch(t *testing.T) {
	p := oauthtest.New(t)
	clock := now
	g := &gate{waiting: make(chan struct{}), release: make(chan struct{})}
	v := verifier(p, &clock)
	v.Client = &http.Client{Transport: g}
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.RotateRSA("rsa-2")
	clock = clock.Add(oauth.RefetchAfter + time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, p.Sign(t, "RS256", "no-such-kid", claims(p, nil)))
		gone <- err
	}()
	<-g.waiting // the refetch is under way
	cancel()    // and its caller hangs up
	close(g.release)
	if err := <-gone; err == nil {
		t.Fatal("a token with an unknown key id was accepted")
	}
	if _, err := v.Verify(context.Background(), p.Sign(t, "RS256", "rsa-2", claims(p, nil))); err != nil {
		t.Fatalf("the key rotated in, fetched by the refetch its first caller left: %v", err)
	}
}
