// Package oauthtest is a fake OAuth identity provider for tests: its
// metadata (RFC 8414 and OpenID discovery) and JWKS served on loopback, and
// access tokens signed with its keys. It stands for a provider this project
// does not run (DESIGN: fakes only for what we do not own).
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// IDP is the fake provider. Its issuer is URL + "/tenant".
type IDP struct {
	Server  *httptest.Server
	RSA     *rsa.PrivateKey
	EC      *ecdsa.PrivateKey
	Fetches atomic.Int64 // JWKS downloads

	mu     sync.Mutex
	kidRSA string
	kidEC  string
	oidc   bool
}

// New starts a provider on 127.0.0.1 (closed with the test).
func New(t testing.TB) *IDP {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &IDP{RSA: rk, EC: ek, kidRSA: "rsa-1", kidEC: "ec-1"}
	mux := http.NewServeMux()
	meta := func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": p.Issuer(), "jwks_uri": p.Server.URL + "/keys"})
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server/tenant", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		oidc := p.oidc
		p.mu.Unlock()
		if oidc {
			http.NotFound(w, r)
			return
		}
		meta(w, r)
	})
	mux.HandleFunc("/tenant/.well-known/openid-configuration", meta)
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		p.Fetches.Add(1)
		p.mu.Lock()
		kr, ke := p.kidRSA, p.kidEC
		p.mu.Unlock()
		b64 := base64.RawURLEncoding.EncodeToString
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "kid": kr, "use": "sig", "n": b64(p.RSA.N.Bytes()), "e": b64(big.NewInt(int64(p.RSA.E)).Bytes())},
			{"kty": "EC", "kid": ke, "crv": "P-256", "x": b64(pad(p.EC.X.Bytes(), 32)), "y": b64(pad(p.EC.Y.Bytes(), 32))},
			{"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
		}})
	})
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Server.Close)
	return p
}

// Issuer is the provider's issuer identifier.
func (p *IDP) Issuer() string { return p.Server.URL + "/tenant" }

// KidRSA and KidEC are the key ids the JWKS publishes now.
func (p *IDP) KidRSA() string { p.mu.Lock(); defer p.mu.Unlock(); return p.kidRSA }
func (p *IDP) KidEC() string  { p.mu.Lock(); defer p.mu.Unlock(); return p.kidEC }

// RotateRSA publishes the RSA key under a new key id.
func (p *IDP) RotateRSA(kid string) { p.mu.Lock(); p.kidRSA = kid; p.mu.Unlock() }

// OpenIDOnly makes the provider answer OpenID discovery only.
func (p *IDP) OpenIDOnly() { p.mu.Lock(); p.oidc = true; p.mu.Unlock() }

func pad(b []byte, n int) []byte {
	for len(b) < n {
		b = append([]byte{0}, b...)
	}
	return b
}

// Claims are the usual claims of a token for audience aud, valid an hour
// from now, with the given scopes; extra entries replace them (nil
// removes one).
func (p *IDP) Claims(aud string, now time.Time, scope string, extra map[string]any) map[string]any {
	c := map[string]any{"iss": p.Issuer(), "sub": "user-42", "aud": aud, "exp": now.Add(time.Hour).Unix(),
		"iat": now.Unix(), "scope": scope, "name": "Ana"}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// Sign makes a compact JWS with alg (RS256, PS256, ES256, HS256 with the
// secret "secret", or none) under key id kid.
func (p *IDP) Sign(t testing.TB, alg, kid string, claims map[string]any) string {
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
		sig, err = rsa.SignPKCS1v15(rand.Reader, p.RSA, crypto.SHA256, digest[:])
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, p.RSA, crypto.SHA256, digest[:], nil)
	case "ES256":
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, p.EC, digest[:])
		if err == nil {
			sig = append(pad(r.Bytes(), 32), pad(s.Bytes(), 32)...)
		}
	case "HS256":
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write([]byte(input))
		sig = m.Sum(nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}
