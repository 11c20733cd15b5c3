package teamclient

import (
	"fmt"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// What a tool call costs in remote mode over loopback HTTP, against the
// real team server on the example vault: a search on the server (the
// extension endpoint), a search from the local mirror of a plain server in
// steady state (one listing, nothing to fetch, the local index), and an
// idempotent create.

func BenchmarkSearchExtension(b *testing.B) {
	s := newServer(b)
	benchSearch(b, newBenchClient(b, s.http.URL, s.rw))
}

func BenchmarkSearchMirror(b *testing.B) {
	s := newServer(b)
	p := newProxy(b, plain(s.http.Config.Handler), newFakeClock())
	benchSearch(b, newBenchClient(b, p.http.URL, s.rw))
}

func BenchmarkCreate(b *testing.B) {
	s := newServer(b)
	c := newBenchClient(b, s.http.URL, s.rw)
	b.ResetTimer()
	for i := range b.N {
		if _, err := c.WriteNote(b.Context(), api.WriteRequest{Path: fmt.Sprintf("bench/n%d.md", i), Content: "# Bench\n"}); err != nil {
			b.Fatal(err)
		}
	}
}

func newBenchClient(b *testing.B, url, key string) *Client {
	c, err := New(Config{URL: url, APIKey: key, Project: "ex", CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchSearch(b *testing.B, c *Client) {
	queries := []string{"retry backoff", "context cancellation", "pool sizing", "graceful shutdown"}
	if _, err := c.Search(b.Context(), api.SearchRequest{Query: queries[0]}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := c.Search(b.Context(), api.SearchRequest{Query: queries[i%len(queries)]}); err != nil {
			b.Fatal(err)
		}
	}
}
