package teamserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// errDBDown stands for a metadata store that does not answer for a moment
// (a PostgreSQL restart, a connection cut by a failover).
var errDBDown = errors.New("the database does not answer")

// blinkStore fails once: the first EnsureFiles naming path (a write's
// bookkeeping, after its commit), or the first BeginIdem when idem is set.
type blinkStore struct {
	teamstore.Store
	path  string
	idem  bool
	once  sync.Once
	fired bool
}

func (b *blinkStore) blink() bool {
	failed := false
	b.once.Do(func() { failed, b.fired = true, true })
	return failed
}

func (b *blinkStore) EnsureFiles(ctx context.Context, project string, paths []string, at time.Time) ([]teamstore.File, error) {
	if b.path != "" && slices.Contains(paths, b.path) && b.blink() {
		return nil, errDBDown
	}
	return b.Store.EnsureFiles(ctx, project, paths, at)
}

func (b *blinkStore) BeginIdem(ctx context.Context, rec teamstore.Idem) (teamstore.Idem, bool, error) {
	if b.idem && b.blink() {
		return teamstore.Idem{}, false, errDBDown
	}
	return b.Store.BeginIdem(ctx, rec)
}

// A write applied while the database blinked (its bookkeeping could not be
// read, the next query answered) is not answered with a stored error: it is
// 503 unavailable, and its retry gets the write's own answer, booked once.
func TestWriteAppliedWhileDatabaseBlinks(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stop()
	b := &blinkStore{Store: e.data.Store, path: "notes/blink.md"}
	e.data.Store = b
	e.start(envOpts{})
	commits := len(e.gitLog(e.ex, "%H"))
	first := e.create(e.rw, "ex", "notes/blink.md", "# Blink\n", "Idempotency-Key", "blink-1")
	if !b.fired {
		t.Fatal("the store never failed: the test does not test anything")
	}
	wantStatus(t, "the create", first, http.StatusServiceUnavailable, teamapi.CodeUnavailable)
	if first.header.Get("Retry-After") == "" {
		t.Errorf("the 503 has no Retry-After: %v", first.header)
	}
	var got answer
	deadline := time.Now().Add(3 * settleEvery)
	for {
		got = e.create(e.rw, "ex", "notes/blink.md", "# Blink\n", "Idempotency-Key", "blink-1")
		if got.status != http.StatusConflict || got.code() != teamapi.CodeIdempotencyInUse || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	wantStatus(t, "the retry", got, http.StatusCreated, "")
	if got.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not answered from the record: %v %s", got.header, got.body)
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits+1 {
		t.Errorf("%d commits for one create, want 1", n-commits)
	}
	var fa teamapi.FileAnswer
	got.json(t, &fa)
	var vl teamapi.VersionList
	e.do("GET", "/api/projects/ex/files/"+fa.File.ID+"/versions", e.rw, nil).json(t, &vl)
	if len(vl.Versions) != 1 {
		t.Errorf("versions of the create = %+v, want one", vl.Versions)
	}
}

// A write whose idempotency record cannot be begun (the database does not
// answer) is 503 unavailable with Retry-After, nothing applied, and its
// retry applies it once.
func TestWriteRecordNotBegunIsUnavailable(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stop()
	b := &blinkStore{Store: e.data.Store, idem: true}
	e.data.Store = b
	e.start(envOpts{})
	commits := len(e.gitLog(e.ex, "%H"))
	first := e.create(e.rw, "ex", "notes/later.md", "# Later\n", "Idempotency-Key", "later-1")
	if !b.fired {
		t.Fatal("the store never failed: the test does not test anything")
	}
	wantStatus(t, "the create", first, http.StatusServiceUnavailable, teamapi.CodeUnavailable)
	if first.header.Get("Retry-After") == "" {
		t.Errorf("the 503 has no Retry-After: %v", first.header)
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits {
		t.Errorf("%d commits after a write refused before it ran, want none", n-commits)
	}
	wantStatus(t, "the retry", e.create(e.rw, "ex", "notes/later.md", "# Later\n", "Idempotency-Key", "later-1"), http.StatusCreated, "")
	if n := len(e.gitLog(e.ex, "%H")); n != commits+1 {
		t.Errorf("%d commits for one create, want 1", n-commits)
	}
}

// hangStore stands for a database that does not answer at all (a primary
// frozen or cut off during a failover): a key lookup waits until its
// context ends.
type hangStore struct {
	teamstore.Store
}

func (h *hangStore) KeyByHash(ctx context.Context, hash []byte) (teamstore.Key, error) {
	<-ctx.Done()
	return teamstore.Key{}, ctx.Err()
}

// A request whose key cannot be looked up because the database does not
// answer at all is 503 unavailable with Retry-After, not held until its
// client gives up.
func TestKeyLookupDatabaseHangsIsUnavailable(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stop()
	e.data.Store = &hangStore{Store: e.data.Store}
	e.start(envOpts{})
	req, err := http.NewRequest("GET", e.http.URL+"/api/projects", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", e.rw)
	// Far longer than the server's bound: without one, the client's own
	// timeout ends the request.
	client := &http.Client{Timeout: 6 * keyLookupTimeout}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("no answer while the database hangs: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	got := answer{resp.StatusCode, resp.Header, b}
	wantStatus(t, "a request while the database hangs", got, http.StatusServiceUnavailable, teamapi.CodeUnavailable)
	if got.header.Get("Retry-After") == "" {
		t.Errorf("the 503 has no Retry-After: %v", got.header)
	}
}
