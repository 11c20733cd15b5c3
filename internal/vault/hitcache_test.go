package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// TestHitCacheBoundAndVersion: entries are served only at their version,
// and the least recently used go first when the cache is over its bytes.
func TestHitCacheBoundAndVersion(t *testing.T) {
	c := newHitCache(100)
	v1 := vaultfs.FileInfo{Path: "a.md", Size: 40, ModTime: time.Unix(1, 0)}
	c.put("a.md", v1, strings.Repeat("x", 40))
	if _, _, ok := c.get("a.md", v1); !ok {
		t.Fatal("miss right after put")
	}
	if _, _, ok := c.get("a.md", vaultfs.FileInfo{Size: 41, ModTime: v1.ModTime}); ok {
		t.Fatal("served at another version")
	}
	for i := range 3 {
		p := fmt.Sprintf("n%d.md", i)
		c.put(p, vaultfs.FileInfo{Path: p, Size: 40, ModTime: time.Unix(1, 0)}, strings.Repeat("x", 40))
	}
	if _, _, ok := c.get("a.md", v1); ok || c.size > 100 {
		t.Fatalf("over the bound: size %d, oldest kept %v", c.size, ok)
	}
	c.put("big.md", vaultfs.FileInfo{}, strings.Repeat("x", maxHitEntry+1))
	if _, ok := c.byKey["big.md"]; ok {
		t.Fatal("an entry over maxHitEntry was kept")
	}
}

// TestSearchCacheNeverStale: with no watcher, a note quoted once and then
// rewritten (same size, new bytes), or deleted, is never quoted from the
// cache: the lstat sees the change and the note is read and indexed again.
func TestSearchCacheNeverStale(t *testing.T) {
	dir := writeVault(t, testVault)
	s := openTest(t, dir, false)
	q := api.SearchRequest{Query: "jitter spreads"}
	first := search(t, s, q)
	if len(first.Results) == 0 || !strings.Contains(first.Results[0].Snippet, "Full jitter") {
		t.Fatalf("first search: %+v", first.Results)
	}
	s.mu.RLock()
	ni := s.notes[first.Results[0].Path]
	s.mu.RUnlock()
	if _, _, ok := s.hits.get(first.Results[0].Path, ni.file); !ok {
		t.Fatal("the quoted note was not kept")
	}
	rb := filepath.Join(dir, "02-wiki/go/retry-backoff.md")
	old, _ := os.ReadFile(rb)
	same := strings.Replace(string(old), "Full jitter spreads", "Fuul jitter spreads", 1) // same length
	time.Sleep(10 * time.Millisecond)                                                     // a new mtime
	if err := os.WriteFile(rb, []byte(same), 0o644); err != nil {
		t.Fatal(err)
	}
	again := search(t, s, q)
	if len(again.Results) == 0 || !strings.Contains(again.Results[0].Snippet, "Fuul jitter") {
		t.Fatalf("rewritten note quoted stale: %+v", again.Results)
	}
	if err := os.Remove(rb); err != nil {
		t.Fatal(err)
	}
	for _, h := range search(t, s, q).Results {
		if h.Path == "02-wiki/go/retry-backoff.md" {
			t.Fatalf("deleted note quoted from the cache: %+v", h)
		}
	}
}
