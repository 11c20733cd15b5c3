package vault

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestSubscribeReportsWatchedChanges: a subscriber hears of every note the
// watcher sees change, appear or vanish (a folder moved in and one removed
// included), and nothing once its context is done.
func TestSubscribeReportsWatchedChanges(t *testing.T) {
	dir := writeVault(t, map[string]string{"a.md": "# A\n", "sub/b.md": "# B\n", "sub/c.md": "# C\n", "pic.png": "png"})
	s := openTest(t, dir, true)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 64)
	s.Subscribe(ctx, func(p string) { got <- p })

	expect := func(what string, want ...string) {
		t.Helper()
		var seen []string
		deadline := time.After(10 * time.Second)
		for len(seen) < len(want) {
			select {
			case p := <-got:
				if !slices.Contains(seen, p) {
					seen = append(seen, p)
				}
			case <-deadline:
				t.Fatalf("%s: heard %q, want %q", what, seen, want)
			}
		}
		slices.Sort(seen)
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Errorf("%s: heard %q, want %q", what, seen, want)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nchanged\n"), 0o644)
	expect("edit", "a.md")
	os.WriteFile(filepath.Join(dir, "new.md"), []byte("# New\n"), 0o644)
	expect("create", "new.md")
	os.Remove(filepath.Join(dir, "new.md"))
	expect("delete", "new.md")
	moved := filepath.Join(t.TempDir(), "moved")
	os.MkdirAll(moved, 0o755)
	os.WriteFile(filepath.Join(moved, "d.md"), []byte("# D\n"), 0o644)
	os.Rename(moved, filepath.Join(dir, "moved"))
	expect("folder moved in", "moved/d.md")
	os.RemoveAll(filepath.Join(dir, "sub"))
	expect("folder removed", "sub/b.md", "sub/c.md")

	cancel()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nagain\n"), 0o644)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := search(t, s, api.SearchRequest{Query: "again"})
		if len(res.Results) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the edit after cancel never reached the index")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case p := <-got:
		t.Errorf("heard %q after the subscription ended", p)
	default:
	}
}

func TestCompletePaths(t *testing.T) {
	dir := writeVault(t, map[string]string{"02-wiki/go/retry-backoff.md": "# R\n", "02-wiki/go/context.md": "# C\n", "03-projects/x.md": "# X\n", "pic.png": "png"})
	s := openTest(t, dir, false)
	got, total, err := s.CompletePaths(context.Background(), "02-wiki/go/", 1)
	if err != nil || total != 2 || !slices.Equal(got, []string{"02-wiki/go/context.md"}) {
		t.Errorf("CompletePaths = %q, %d, %v", got, total, err)
	}
	got, total, _ = s.CompletePaths(context.Background(), "retry", 10)
	if total != 1 || !slices.Equal(got, []string{"02-wiki/go/retry-backoff.md"}) {
		t.Errorf("by name: %q, %d", got, total)
	}
}
