package teamserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// queryKeyNames are query parameters that look like a credential. A request
// carrying one is refused whatever else it carries: a key in a URL ends up
// in logs and browser histories, so it is never accepted.
var queryKeyNames = map[string]bool{
	"api_key": true, "apikey": true, "api-key": true, "key": true, "x-api-key": true,
	"token": true, "access_token": true, "auth": true, "authorization": true,
}

// looksLikeKey reports whether a query value holds an API key (KeyPrefix
// and 64 hex digits), whatever the parameter's name.
func looksLikeKey(v string) bool {
	i := strings.Index(v, KeyPrefix)
	if i < 0 || len(v)-i-len(KeyPrefix) < 64 {
		return false
	}
	for _, c := range v[i+len(KeyPrefix) : i+len(KeyPrefix)+64] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// credentialInQuery finds a query parameter that carries a credential: a
// credential-like name, or a key in its name or value. It reads the raw
// query itself, since net/url drops the parameters it finds malformed (a
// ';', a bad escape) and they reach logs and proxies all the same; a part
// that does not unescape is looked at as it is.
func credentialInQuery(raw string) (string, bool) {
	for _, part := range strings.FieldsFunc(raw, func(r rune) bool { return r == '&' || r == ';' }) {
		name, value, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		if looksLikeKey(name) {
			return KeyPrefix + "…", true // the answer does not repeat the key
		}
		if queryKeyNames[strings.ToLower(name)] || looksLikeKey(value) {
			return name, true
		}
	}
	return "", false
}

// credential returns the key a request presents: X-API-Key, else
// Authorization: Bearer.
func credential(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get(teamapi.HeaderAPIKey)); k != "" {
		return k
	}
	a := r.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// keyLookupTimeout bounds looking a key up (and recording its use), and
// beginning a write's idempotency record (write.go): a database that does
// not answer at all (a primary frozen or cut off during a failover) makes
// the request 503 unavailable, which clients retry, instead of holding it
// until the client gives up.
const keyLookupTimeout = 5 * time.Second

// authenticate finds the key of a request, or the answer refusing it.
func (s *Server) authenticate(r *http.Request) (*teamstore.Key, *response) {
	if name, ok := credentialInQuery(r.URL.RawQuery); ok {
		return nil, errorf(http.StatusBadRequest, teamapi.CodeKeyInQuery, "query parameter %q: API keys are never accepted in a query string; send the X-API-Key header (or Authorization: Bearer)", name)
	}
	secret := credential(r)
	if secret == "" {
		resp := s.unauthorized(r, "no API key: send the X-API-Key header (or Authorization: Bearer)")
		// No credential at all: the challenge carries no error code (RFC
		// 6750 section 3.1), only where the metadata is.
		resp.header.Set("WWW-Authenticate", oauth.Challenge(s.metadataURL(r), nil))
		return nil, resp
	}
	if s.cfg.OAuth != nil && looksLikeJWT(secret) {
		return s.authenticateToken(r, secret)
	}
	want := HashKey(secret)
	lookup, cancel := context.WithTimeout(r.Context(), keyLookupTimeout)
	k, err := s.store.KeyByHash(lookup, want)
	cancel()
	if err != nil {
		if !errors.Is(err, teamstore.ErrNotFound) {
			// The metadata store does not answer (a database restarting or
			// failing over): nothing was done, and the client's retry works
			// once it is back. A client that went away cut the lookup
			// itself: no failure of the server's.
			if r.Context().Err() != nil {
				s.log.Debug("looking up an API key: the client went away", "err", err)
			} else {
				s.log.Error("looking up an API key", "err", err)
			}
			return nil, errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "the API key cannot be checked right now (the server's database does not answer); retry")
		}
		return nil, s.unauthorized(r, "the API key is not valid (unknown or revoked)")
	}
	// The lookup matched on the hash already; compare again in constant
	// time so that no timing of ours depends on how much of it matched.
	if subtle.ConstantTimeCompare(k.Hash, want) != 1 {
		return nil, s.unauthorized(r, "the API key is not valid (unknown or revoked)")
	}
	if k.Expired(s.now()) {
		return nil, s.unauthorized(r, "the API key expired at "+k.ExpiresAt.Format(time.RFC3339)+"; ask for a new one")
	}
	s.touch(r, &k)
	return &k, nil
}

// unauthorized is the 401 answer; its WWW-Authenticate names the
// protected-resource metadata (RFC 9728) of what was asked for.
func (s *Server) unauthorized(r *http.Request, msg string) *response {
	resp := errorf(http.StatusUnauthorized, teamapi.CodeUnauthorized, "%s", msg)
	resp.header.Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="vaultmcp", error="invalid_token", resource_metadata=%q`, s.metadataURL(r)))
	return resp
}

// metadataURL is where the protected-resource metadata of what r asks for
// is served.
func (s *Server) metadataURL(r *http.Request) string {
	meta := s.baseURL(r) + wellKnown
	if strings.HasSuffix(r.URL.Path, "/mcp") {
		meta += r.URL.Path
	}
	return meta
}

// looksLikeJWT tells an access token (three base64url parts) from an API
// key (tv_...).
func looksLikeJWT(s string) bool {
	return !strings.HasPrefix(s, KeyPrefix) && strings.Count(s, ".") == 2
}

// oauthKeyPrefix starts the id of the key an access token stands for.
const oauthKeyPrefix = "oauth:"

// authenticateToken checks an OAuth access token and makes the key it
// stands for: the subject, read-only unless the token has vault:write, with
// every project in scope. A token with neither scope is refused (403).
func (s *Server) authenticateToken(r *http.Request, token string) (*teamstore.Key, *response) {
	// An MCP endpoint is a protected resource of its own (its metadata
	// says so): a token issued for it is good there.
	resource := ""
	if strings.HasSuffix(r.URL.Path, "/mcp") {
		resource = r.URL.Path
	}
	c, err := s.cfg.OAuth.VerifyFor(r.Context(), token, resource)
	if err != nil {
		var oe *oauth.Error
		if !errors.As(err, &oe) {
			oe = &oauth.Error{Code: "invalid_token", Reason: "the token could not be checked"}
		}
		resp := errorf(http.StatusUnauthorized, teamapi.CodeUnauthorized, "the access token is not valid: %s", oe.Reason)
		resp.header.Set("WWW-Authenticate", oauth.Challenge(s.metadataURL(r), oe))
		return nil, resp
	}
	if !c.Has(oauth.ScopeRead) && !c.Has(oauth.ScopeWrite) {
		oe := &oauth.Error{Code: "insufficient_scope", Reason: "the token has neither " + oauth.ScopeRead + " nor " + oauth.ScopeWrite}
		resp := errorf(http.StatusForbidden, teamapi.CodeForbidden, "%s", oe.Reason)
		resp.header.Set("WWW-Authenticate", oauth.Challenge(s.metadataURL(r), oe))
		return nil, resp
	}
	name := c.Name
	if name == "" {
		name = c.Subject
	}
	return &teamstore.Key{ID: oauthKeyPrefix + c.Subject, Name: name, Hash: HashKey(token), ReadOnly: !c.Has(oauth.ScopeWrite)}, nil
}

// touch records the key's last use, at most once a minute per key.
func (s *Server) touch(r *http.Request, k *teamstore.Key) {
	now := s.now()
	if s.touchDue(k.ID, now) {
		ctx, cancel := context.WithTimeout(r.Context(), keyLookupTimeout)
		defer cancel()
		if err := s.store.TouchKey(ctx, k.ID, now); err != nil {
			s.log.Warn("recording a key's last use", "key", k.Name, "err", err)
		}
	}
}

// touchDue reports whether key id's last use is to be written now, and
// then notes it. With OAuth every user is a key of its own, so the entries
// past keyTouchEvery (the same as none: due) are dropped now and then,
// keeping the map to the keys of the last minute rather than all keys ever
// seen.
func (s *Server) touchDue(id string, now time.Time) bool {
	s.touchMu.Lock()
	defer s.touchMu.Unlock()
	last, ok := s.touched[id]
	if ok && now.Sub(last) < keyTouchEvery {
		return false
	}
	if !ok && len(s.touched) >= s.touchSweepAt {
		for other, t := range s.touched {
			if now.Sub(t) >= keyTouchEvery {
				delete(s.touched, other)
			}
		}
		s.touchSweepAt = max(minSweep, 2*len(s.touched))
	}
	s.touched[id] = now
	return true
}

// minSweep is the size below which the maps of touchDue and the limiter
// are not swept.
const minSweep = 64

// limiter is a token bucket per key: rate tokens a second, at most burst
// saved up; a request takes one.
type limiter struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	// sweepAt is the number of buckets at which the full ones (the same as
	// none) are dropped, so that the map holds the keys of the moment, not
	// every key (every OAuth user) ever seen.
	sweepAt int
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(rate float64, burst int, now func() time.Time) *limiter {
	if burst < 1 {
		burst = int(math.Max(1, math.Ceil(rate)))
	}
	return &limiter{rate: rate, burst: float64(burst), now: now, buckets: make(map[string]*bucket)}
}

// take takes a token for key: ok, or how many seconds until one is there.
func (l *limiter) take(key string) (bool, float64) {
	if l.rate <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.sweepAt {
			for other, ob := range l.buckets {
				if ob.tokens+now.Sub(ob.at).Seconds()*l.rate >= l.burst {
					delete(l.buckets, other)
				}
			}
			l.sweepAt = max(minSweep, 2*len(l.buckets))
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.at).Seconds(); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el*l.rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, (1 - b.tokens) / l.rate
}
