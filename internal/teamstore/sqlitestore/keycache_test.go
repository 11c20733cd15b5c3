package sqlitestore

import (
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// TestKeyCache: a key looked up is served from memory while the database
// has not changed and for at most keyCacheTTL; a revocation by another
// handle on the file (another process, as `key revoke` is) is seen by the
// very next lookup; an unknown key is never kept.
func TestKeyCache(t *testing.T) {
	file := filepath.Join(t.TempDir(), "team.db")
	srv, cli := open(t, file), open(t, file)
	defer srv.Close()
	defer cli.Close()
	ctx := context.Background()
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	srv.keys.now = func() time.Time { return clock }
	sum := sha256.Sum256([]byte("tv_alice"))
	hash := sum[:]
	if _, err := srv.KeyByHash(ctx, hash); !errors.Is(err, teamstore.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	if len(srv.keys.m) != 0 {
		t.Fatal("an unknown key was cached")
	}
	if err := cli.AddProject(ctx, teamstore.Project{ID: "p", Name: "p", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := cli.AddKey(ctx, teamstore.Key{ID: "k1", Name: "alice", Hash: hash, Projects: []string{"p"}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	k, err := srv.KeyByHash(ctx, hash)
	if err != nil || k.Name != "alice" || len(k.Projects) != 1 {
		t.Fatalf("key %+v, %v", k, err)
	}
	if _, ok, _ := srv.keys.get(hash); !ok {
		t.Fatal("the key found is not served from the cache")
	}
	k.Projects[0] = "changed by the caller"
	if k2, _ := srv.KeyByHash(ctx, hash); k2.Projects[0] != "p" {
		t.Fatal("a caller's change reached the cached key")
	}
	clock = clock.Add(keyCacheTTL)
	if _, ok, _ := srv.keys.get(hash); ok {
		t.Fatal("the key is served from the cache after its TTL")
	}
	if _, err := srv.KeyByHash(ctx, hash); err != nil { // looked up again, cached again
		t.Fatal(err)
	}
	if err := cli.RevokeKey(ctx, "alice", now); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.KeyByHash(ctx, hash); !errors.Is(err, teamstore.ErrNotFound) {
		t.Fatalf("a key revoked by another handle still answered: %v", err)
	}
}
