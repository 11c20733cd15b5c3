package vault

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/par"
)

// A search takes a place in Options.SearchGate: while the gate is full it
// waits, a cancelled wait returns the context's error, and once a place is
// free it answers as it would without a gate.
func TestSearchWaitsForGate(t *testing.T) {
	dir := t.TempDir()
	for p, body := range testVault {
		writeFile(t, dir, p, []byte(body))
	}
	gate := par.NewGate(1)
	s, err := Open(context.Background(), Options{Dir: dir, SearchGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := search(t, s, api.SearchRequest{Query: "retry backoff"})
	if len(want.Results) == 0 {
		t.Fatal("no results to compare")
	}

	if err := gate.Enter(context.Background()); err != nil { // another search's place
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if res, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"}); !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Fatalf("search with the gate full and its context ended: %v, %v", res, err)
	}

	done := make(chan *api.SearchResult)
	go func() {
		res, err := s.Search(context.Background(), api.SearchRequest{Query: "retry backoff"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case <-done:
		t.Fatal("the search ran while the gate was full")
	case <-time.After(100 * time.Millisecond):
	}
	gate.Leave()
	got := <-done
	if got == nil || len(got.Results) != len(want.Results) || got.Results[0].Path != want.Results[0].Path {
		t.Fatalf("gated search answered %+v, want %+v", got, want)
	}
	// The search gave its place back.
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := gate.Enter(ctx); err != nil {
		t.Fatalf("the search kept its place: %v", err)
	}
	gate.Leave()
}
