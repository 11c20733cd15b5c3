package vault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gcpause"
)

// benchVault returns the vault to measure: $VAULTMCP_CORPUS when set (a real
// vault folder), else a generated one of 2,000 notes.
func benchVault(b *testing.B) string {
	if dir := os.Getenv("VAULTMCP_CORPUS"); dir != "" {
		return dir
	}
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("retry backoff jitter context cancel goroutine leak pool postgres vacuum index explain " +
		"timeout deadline idempotency key rate limit token bucket tls certificate renewal logging json feature flag " +
		"migration column lock advisory deploy rollback canary dns ttl docker image layer cache build test table")
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntype: wiki\ntags: [%s]\n---\n# Note %d %s\n\n", words[r.IntN(len(words))], i, words[r.IntN(len(words))])
		for s := 0; s < 4; s++ {
			fmt.Fprintf(&b, "## Section %s\n\n", words[r.IntN(len(words))])
			for w := 0; w < 120; w++ {
				b.WriteString(words[r.IntN(len(words))])
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "\nSee [[n%d]].\n\n", r.IntN(2000))
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%40), fmt.Sprintf("n%d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(b.String()), 0o644)
	}
	return dir
}

// BenchmarkColdIndex measures opening a vault until its index is ready
// (walk, read, parse on every core, index, graph), with the collector's
// pause of the server. The pause acts only when neither GOGC nor
// GOMEMLIMIT is set in the environment (see gcpause), as in the server,
// which sets its GOGC of 50 itself: with GOGC=50 in the environment this
// measures a build without the pause (at 100k notes, one run each: 29.4 s
// against 18.5 s).
func BenchmarkColdIndex(b *testing.B) {
	dir := benchVault(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(context.Background(), Options{Dir: dir, PauseGC: gcpause.DefaultLimit})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Ready(context.Background()); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			st, _ := s.Stats(context.Background())
			b.ReportMetric(float64(st.Notes), "notes")
		}
		s.Close()
	}
}

// BenchmarkSearch measures a full search (rank, graph expansion, re-validation
// and snippets) on a warm index.
func BenchmarkSearch(b *testing.B) {
	dir := benchVault(b)
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	queries := []string{"retry backoff", "plugin settings sync", "how to embed a note", "daily notes template", "graph view", "vaccum postgress"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Search(context.Background(), api.SearchRequest{Query: queries[i%len(queries)]}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDetectProfile measures the detection of the vault's language
// (the sample chosen from every indexed path, then read and parsed), which
// the first build does before the index is ready when VAULT_LANG is unset.
func BenchmarkDetectProfile(b *testing.B) {
	dir := benchVault(b)
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		s.detectProfile(s.indexedNotes)
	}
}

// BenchmarkSnapshotStart measures a start from the index snapshot (no note
// changed since it was written): the walk, the snapshot read and checked
// against it, the link graph filled from it, until the index is ready.
func BenchmarkSnapshotStart(b *testing.B) {
	dir := benchVault(b)
	cache := b.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: dir, CacheDir: cache, CacheWriteOnClose: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		b.Fatal(err)
	}
	s.Close() // writes the snapshot
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(ctx, Options{Dir: dir, CacheDir: cache, CacheReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Ready(ctx); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
