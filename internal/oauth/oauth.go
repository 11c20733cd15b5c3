// Package oauth is the resource-server side of OAuth 2.0 for the team
// server: it validates JWT access tokens issued by an external identity
// provider and describes this server as a protected resource (RFC 9728),
// as the MCP authorization specification asks of an MCP server.
//
// # Guarantees
//
//   - A token is accepted only when every check passes: a signature by a key
//     the issuer publishes in its JWKS (RS256, RS384, RS512, PS256, ES256,
//     ES384; "none" and the HMAC algorithms are refused: an HMAC key would be
//     a secret this server does not have), the issuer exactly the
//     configured one, a subject, the configured audience among `aud`, `exp` in the
//     future and `nbf`/`iat` not in the future (with one minute of leeway for
//     clock skew).
//   - Scopes come from `scope` (space-separated, RFC 8693/9068) or `scp` (a
//     list); the caller asks for the one it needs (ScopeRead, ScopeWrite).
//   - The JWKS is fetched from the issuer's metadata (RFC 8414, then OpenID
//     discovery), cached, and fetched again when a token names a key id it
//     does not hold (key rotation) or the keys are older than MaxKeyAge (a
//     key withdrawn stops being accepted), at most once every RefetchAfter;
//     a fetch never holds up tokens whose key is known.
//   - Every failure is an *Error with a reason fit for a WWW-Authenticate
//     header; a token's content never appears in it.
package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	_ "crypto/sha256" // RS256, PS256, ES256
	_ "crypto/sha512" // RS384, RS512, ES384
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The scopes of the team server.
const (
	ScopeRead  = "vault:read"
	ScopeWrite = "vault:write"
)

// Leeway is the clock skew tolerated on exp, nbf and iat.
const Leeway = time.Minute

// RefetchAfter bounds how often an unknown key id (or keys grown old) makes
// the JWKS be fetched again.
const RefetchAfter = 30 * time.Second

// MaxKeyAge is how long the keys of a JWKS are used without asking the
// identity provider again: a key it stopped publishing (retired, or
// revoked after a leak) is refused at the latest this long after.
const MaxKeyAge = 15 * time.Minute

// maxDoc bounds a metadata or JWKS document.
const maxDoc = 1 << 20

// Error is a token refused. Code is "invalid_token" or
// "insufficient_scope" (RFC 6750).
type Error struct {
	Code   string
	Reason string
	// Scope is the scope the request needs (insufficient_scope only);
	// empty names both.
	Scope string
}

func (e *Error) Error() string { return e.Code + ": " + e.Reason }

func invalid(format string, args ...any) error {
	return &Error{Code: "invalid_token", Reason: fmt.Sprintf(format, args...)}
}

// Claims is what the server uses of a valid token.
type Claims struct {
	Subject string
	Name    string // "name" or "preferred_username", for commit authorship
	Email   string
	Scopes  []string
	Expiry  time.Time
}

// Has reports whether the token carries scope.
func (c *Claims) Has(scope string) bool {
	for _, s := range c.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// Verifier validates tokens of one issuer for one audience.
type Verifier struct {
	Issuer   string
	Audience string
	// Client fetches the metadata and the JWKS; nil means a client with a
	// 10 s timeout.
	Client *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey // by kid ("" for a key without one)
	fetched time.Time                   // the last fetch that got keys
	tried   time.Time                   // the last fetch, whatever its outcome
	jwksURI string
	// fetchMu makes one fetch at a time; it is not held with mu, so a
	// token with a key already known never waits for the identity
	// provider.
	fetchMu sync.Mutex
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) client() *http.Client {
	if v.Client != nil {
		return v.Client
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// Verify checks a compact JWS access token and returns its claims.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	return v.VerifyFor(ctx, token, "")
}

// VerifyFor is Verify for a request to the resource at path under the
// audience (an MCP endpoint, as its protected-resource metadata names it):
// a token whose audience is that resource's URL (RFC 8707, as MCP clients
// ask for one) is accepted there too, and only there. The URL is built from
// the configured audience, never from the request's Host, so a token a
// client obtained for another server is never taken.
func (v *Verifier) VerifyFor(ctx context.Context, token, path string) (*Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, invalid("not a JWT")
	}
	var hdr struct {
		Alg  string          `json:"alg"`
		Kid  string          `json:"kid"`
		Typ  string          `json:"typ"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := decodePart(parts[0], &hdr); err != nil {
		return nil, invalid("the header is not valid: %s", partProblem(err))
	}
	if len(hdr.Crit) > 0 {
		// Critical extensions must be understood or the token refused (RFC
		// 7515 section 4.1.11); this verifier understands none.
		return nil, invalid("the header names critical extensions (crit) this server does not understand")
	}
	hash, kind, ok := algorithm(hdr.Alg)
	if !ok {
		return nil, invalid("algorithm %q is not accepted", hdr.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, invalid("the signature is not base64url")
	}
	key, err := v.key(ctx, hdr.Kid)
	if err != nil {
		return nil, err
	}
	h := hash.New()
	h.Write([]byte(parts[0] + "." + parts[1]))
	if err := verifySig(key, kind, hash, h.Sum(nil), sig); err != nil {
		return nil, err
	}
	var c struct {
		Iss   string          `json:"iss"`
		Sub   string          `json:"sub"`
		Aud   json.RawMessage `json:"aud"`
		Exp   *json.Number    `json:"exp"`
		Nbf   *json.Number    `json:"nbf"`
		Iat   *json.Number    `json:"iat"`
		Scope scopes          `json:"scope"`
		Scp   scopes          `json:"scp"`
		Name  string          `json:"name"`
		User  string          `json:"preferred_username"`
		Email string          `json:"email"`
	}
	if err := decodePart(parts[1], &c); err != nil {
		return nil, invalid("the claims are not valid: %s", partProblem(err))
	}
	if c.Iss != v.Issuer {
		return nil, invalid("the token was issued by another issuer")
	}
	if strings.TrimSpace(c.Sub) == "" {
		// The subject is who the token stands for (its rate limit, its
		// audit rows, its MCP sessions): tokens without one would all be
		// one caller.
		return nil, invalid("the token has no subject (sub)")
	}
	if !audienceHas(c.Aud, v.Audience) && (path == "" || !audienceHas(c.Aud, strings.TrimRight(v.Audience, "/")+path)) {
		return nil, invalid("the token is not meant for this server (audience)")
	}
	now := v.now()
	exp, err := numericDate(c.Exp)
	if err != nil || exp.IsZero() {
		return nil, invalid("the token has no valid expiry")
	}
	if !now.Before(exp.Add(Leeway)) {
		return nil, invalid("the token has expired")
	}
	for _, d := range []*json.Number{c.Nbf, c.Iat} {
		t, err := numericDate(d)
		if err != nil {
			return nil, invalid("a time claim is not a number")
		}
		if !t.IsZero() && t.After(now.Add(Leeway)) {
			return nil, invalid("the token is not valid yet")
		}
	}
	out := &Claims{Subject: c.Sub, Name: c.Name, Email: c.Email, Expiry: exp}
	if out.Name == "" {
		out.Name = c.User
	}
	out.Scopes = append(c.Scope, c.Scp...)
	return out, nil
}

// scopes is a scope claim: a space-separated string (RFC 8693, RFC 9068;
// some providers put their scp so too) or a list of strings.
type scopes []string

func (s *scopes) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("a scope claim is neither a string nor a list of strings")
	}
	*s = many
	return nil
}

// Require checks that c carries scope.
func Require(c *Claims, scope string) error {
	if c.Has(scope) {
		return nil
	}
	return &Error{Code: "insufficient_scope", Reason: "the token lacks the scope " + scope, Scope: scope}
}

// partProblem says what is wrong with a part of a token without quoting
// it: the decoders' errors repeat the token's bytes (an offset, a
// character), and no part of a token goes into an answer or a log line.
func partProblem(err error) string {
	var be base64.CorruptInputError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &be):
		return "not base64url"
	case errors.As(err, &se):
		return "not JSON"
	case errors.As(err, &te) && te.Field == "":
		return "not a JSON object"
	case errors.As(err, &te):
		return fmt.Sprintf("the field %q has the wrong type", te.Field)
	}
	return "not the JSON object a token part is"
}

func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	return d.Decode(v)
}

func numericDate(n *json.Number) (time.Time, error) {
	if n == nil {
		return time.Time{}, nil
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, err
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
}

func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, a := range many {
			if a == want {
				return true
			}
		}
	}
	return false
}

type sigKind int

const (
	sigRSA sigKind = iota
	sigPSS
	sigEC
)

func algorithm(alg string) (crypto.Hash, sigKind, bool) {
	switch alg {
	case "RS256":
		return crypto.SHA256, sigRSA, true
	case "RS384":
		return crypto.SHA384, sigRSA, true
	case "RS512":
		return crypto.SHA512, sigRSA, true
	case "PS256":
		return crypto.SHA256, sigPSS, true
	case "ES256":
		return crypto.SHA256, sigEC, true
	case "ES384":
		return crypto.SHA384, sigEC, true
	}
	return 0, 0, false
}

func verifySig(key crypto.PublicKey, kind sigKind, hash crypto.Hash, digest, sig []byte) error {
	bad := invalid("the signature does not verify")
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch kind {
		case sigRSA:
			if rsa.VerifyPKCS1v15(k, hash, digest, sig) != nil {
				return bad
			}
			return nil
		case sigPSS:
			if rsa.VerifyPSS(k, hash, digest, sig, nil) != nil {
				return bad
			}
			return nil
		}
	case *ecdsa.PublicKey:
		if kind != sigEC {
			break
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return bad
		}
		r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
		if !ecdsa.Verify(k, digest, r, s) {
			return bad
		}
		return nil
	}
	return invalid("the key does not match the token's algorithm")
}

// key returns the issuer's key kid. The JWKS is fetched again when it does
// not hold kid (key rotation) or was fetched more than MaxKeyAge ago (a key
// withdrawn), at most once every RefetchAfter; while the provider cannot
// be reached, keys already known stay in use.
func (v *Verifier) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	k, ok, due := v.cached(kid)
	if !due {
		if ok {
			return k, nil
		}
		return nil, v.unknownKey()
	}
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	// Another request may have fetched while this one waited.
	if k, ok, due = v.cached(kid); !due {
		if ok {
			return k, nil
		}
		return nil, v.unknownKey()
	}
	// The download is not the caller's: it counts as the one allowed for
	// RefetchAfter whatever happens to the caller, so a caller that hangs
	// up (anyone may send a token naming an unknown key id, and close the
	// connection at once) must not abort it. The client's timeout bounds
	// it.
	if err := v.fetch(context.WithoutCancel(ctx)); err != nil {
		if ok {
			return k, nil
		}
		return nil, &Error{Code: "invalid_token", Reason: "the issuer's keys could not be fetched: " + err.Error()}
	}
	if k, ok, _ := v.cached(kid); ok {
		return k, nil
	}
	return nil, invalid("the token's signing key is not one the issuer publishes")
}

// unknownKey is the refusal of a key id the keys held do not have, or of
// any token while no keys could be fetched yet.
func (v *Verifier) unknownKey() error {
	v.mu.Lock()
	none := v.keys == nil
	v.mu.Unlock()
	if none {
		return invalid("the issuer's keys could not be fetched yet; retry in %d s", int(RefetchAfter/time.Second))
	}
	return invalid("the token's signing key is not one the issuer publishes")
}

// cached is the key kid as last fetched, and whether a fetch is due.
func (v *Verifier) cached(kid string) (crypto.PublicKey, bool, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	k, ok := v.lookup(kid)
	fresh := !v.fetched.IsZero() && now.Sub(v.fetched) < MaxKeyAge
	canFetch := v.tried.IsZero() || now.Sub(v.tried) >= RefetchAfter
	return k, ok, !(ok && fresh) && canFetch
}

func (v *Verifier) lookup(kid string) (crypto.PublicKey, bool) {
	if k, ok := v.keys[kid]; ok {
		return k, true
	}
	if kid == "" && len(v.keys) == 1 {
		for _, k := range v.keys {
			return k, true
		}
	}
	return nil, false
}

// Refresh fetches the issuer's metadata and keys now (at start, so a
// misconfigured issuer is reported at once).
func (v *Verifier) Refresh(ctx context.Context) error {
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	return v.fetch(ctx)
}

// fetch gets the JWKS (and, the first time, the metadata naming it); the
// caller holds fetchMu.
func (v *Verifier) fetch(ctx context.Context) error {
	v.mu.Lock()
	v.tried = v.now()
	uri := v.jwksURI
	v.mu.Unlock()
	if uri == "" {
		var err error
		if uri, err = v.discover(ctx); err != nil {
			return err
		}
		v.mu.Lock()
		v.jwksURI = uri
		v.mu.Unlock()
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := v.getJSON(ctx, uri, &set); err != nil {
		return err
	}
	keys := make(map[string]crypto.PublicKey, len(set.Keys))
	for _, raw := range set.Keys {
		kid, k, err := parseJWK(raw)
		if err != nil {
			continue // a key of a kind we do not use
		}
		keys[kid] = k
	}
	if len(keys) == 0 {
		return errors.New("the JWKS holds no usable key")
	}
	v.mu.Lock()
	v.keys = keys
	v.fetched = v.now()
	v.mu.Unlock()
	return nil
}

// discover finds the JWKS of the issuer: RFC 8414 metadata first, then
// OpenID Connect discovery.
func (v *Verifier) discover(ctx context.Context) (string, error) {
	base := strings.TrimSuffix(v.Issuer, "/")
	var lastErr error
	for _, u := range metadataURLs(base) {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, u, &md); err != nil {
			lastErr = err
			continue
		}
		if md.Issuer != v.Issuer || md.JWKSURI == "" {
			lastErr = fmt.Errorf("%s names issuer %q and jwks_uri %q", u, md.Issuer, md.JWKSURI)
			continue
		}
		return md.JWKSURI, nil
	}
	return "", lastErr
}

// metadataURLs are where an issuer's metadata lives: RFC 8414 inserts the
// well-known segment before the issuer's path; OpenID appends it.
func metadataURLs(base string) []string {
	scheme, rest, ok := strings.Cut(base, "://")
	if !ok {
		return []string{base + "/.well-known/openid-configuration"}
	}
	host, p, _ := strings.Cut(rest, "/")
	if p != "" {
		p = "/" + p
	}
	return []string{
		scheme + "://" + host + "/.well-known/oauth-authorization-server" + p,
		base + "/.well-known/openid-configuration",
	}
}

func (v *Verifier) getJSON(ctx context.Context, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDoc+1))
	if err != nil {
		return err
	}
	if len(body) > maxDoc {
		return fmt.Errorf("GET %s: the document is over %d bytes", url, maxDoc)
	}
	return json.Unmarshal(body, into)
}

// parseJWK reads one RSA or EC public key of a JWKS.
func parseJWK(raw json.RawMessage) (string, crypto.PublicKey, error) {
	var k struct {
		Kty string `json:"kty"`
		Kid string `json:"kid"`
		Use string `json:"use"`
		N   string `json:"n"`
		E   string `json:"e"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Y   string `json:"y"`
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", nil, err
	}
	if k.Use != "" && k.Use != "sig" {
		return "", nil, errors.New("not a signing key")
	}
	b := func(s string) (*big.Int, error) {
		d, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		return new(big.Int).SetBytes(d), nil
	}
	switch k.Kty {
	case "RSA":
		n, err := b(k.N)
		if err != nil {
			return "", nil, err
		}
		e, err := b(k.E)
		if err != nil || !e.IsInt64() || e.Int64() < 3 || n.BitLen() < 2048 {
			return "", nil, errors.New("unusable RSA key")
		}
		return k.Kid, &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		default:
			return "", nil, errors.New("unsupported curve")
		}
		x, err := b(k.X)
		if err != nil {
			return "", nil, err
		}
		y, err := b(k.Y)
		if err != nil {
			return "", nil, err
		}
		pub := &ecdsa.PublicKey{Curve: curve, X: x, Y: y}
		if !curve.IsOnCurve(x, y) {
			return "", nil, errors.New("the point is not on the curve")
		}
		return k.Kid, pub, nil
	}
	return "", nil, errors.New("unsupported key type")
}

// ProtectedResource is the RFC 9728 metadata of this server.
type ProtectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// Metadata describes a resource at the URL resource, protected by the
// issuer (empty when the server takes API keys only).
func Metadata(resource, issuer string) ProtectedResource {
	pr := ProtectedResource{
		Resource:               resource,
		ScopesSupported:        []string{ScopeRead, ScopeWrite},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "vaultmcp team server",
	}
	if issuer != "" {
		pr.AuthorizationServers = []string{issuer}
	}
	return pr
}

// MetadataPath is where the metadata is served (RFC 9728 section 3).
const MetadataPath = "/.well-known/oauth-protected-resource"

// Challenge is the WWW-Authenticate value of a 401 or 403 answer: the
// error, and where the client finds the resource's metadata.
func Challenge(metadataURL string, err *Error) string {
	var b strings.Builder
	b.WriteString(`Bearer realm="vaultmcp"`)
	if metadataURL != "" {
		fmt.Fprintf(&b, `, resource_metadata=%q`, metadataURL)
	}
	if err != nil {
		fmt.Fprintf(&b, `, error=%q, error_description=%q`, err.Code, strings.ReplaceAll(err.Reason, `"`, "'"))
		if err.Code == "insufficient_scope" {
			scope := err.Scope
			if scope == "" {
				scope = ScopeRead + " " + ScopeWrite
			}
			fmt.Fprintf(&b, `, scope=%q`, scope)
		}
	}
	return b.String()
}
