package teamserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// A key with an expiry is accepted until then, by the server's clock, and
// refused from then on saying so; a rotation of an expired key needs its
// new expiry, and the rotated key is accepted again.
func TestKeyExpiry(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	if _, _, err := e.data.AddKeyUntil(ctx, "past", nil, false, e.clock.Now().Add(-time.Second)); err == nil || !strings.Contains(err.Error(), "already past") {
		t.Errorf("a key expiring in the past: %v", err)
	}
	secret, k, err := e.data.AddKeyUntil(ctx, "temp", nil, true, e.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "before its expiry", e.do("GET", "/api/projects/ex/files?path=02-wiki/go/context.md", secret, nil), 200, "")
	e.clock.Advance(time.Hour)
	a := e.do("GET", "/api/projects/ex/files?path=02-wiki/go/context.md", secret, nil)
	wantStatus(t, "at its expiry", a, 401, teamapi.CodeUnauthorized)
	if !strings.Contains(string(a.body), "the API key expired at "+k.ExpiresAt.Format(time.RFC3339)) || !strings.Contains(a.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("the refusal of an expired key: %v %s", a.header, a.body)
	}
	if _, _, err := e.data.RotateKey(ctx, "temp", nil); err == nil || !strings.Contains(err.Error(), "expired at") {
		t.Errorf("a rotation of an expired key keeping its expiry: %v", err)
	}
	until := e.clock.Now().Add(24 * time.Hour)
	rotated, rk, err := e.data.RotateKey(ctx, "temp", &until)
	if err != nil {
		t.Fatal(err)
	}
	if rk.ID != k.ID || !rk.ReadOnly || !rk.ExpiresAt.Equal(until) {
		t.Errorf("the rotated key = %+v", rk)
	}
	wantStatus(t, "the rotated key", e.do("GET", "/api/projects/ex/files?path=02-wiki/go/context.md", rotated, nil), 200, "")
	if me := e.do("GET", "/api/auth/me", rotated, nil); !strings.Contains(string(me.body), `"expiresAt":"`+until.Format(time.RFC3339)+`"`) {
		t.Errorf("/api/auth/me of an expiring key: %s", me.body)
	}
	if me := e.do("GET", "/api/auth/me", e.rw, nil); strings.Contains(string(me.body), "expiresAt") {
		t.Errorf("/api/auth/me of a key that never expires: %s", me.body)
	}
	wantStatus(t, "the rotated key, read-only still", e.create(rotated, "ex", "n.md", "x"), 403, teamapi.CodeReadOnlyKey)
	// Kept when the rotation names none.
	again, rk2, err := e.data.RotateKey(ctx, "temp", nil)
	if err != nil || !rk2.ExpiresAt.Equal(until) {
		t.Fatalf("a rotation keeping the expiry: %+v %v", rk2, err)
	}
	wantStatus(t, "rotated again", e.do("GET", "/api/auth/me", again, nil), 200, "")
}
