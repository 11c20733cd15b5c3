package vault

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// targetsByNote resolves every link of every note of the vault folder with a
// fresh resolver (independent of the service's graph): note -> sorted targets
// ("" for broken links).
func targetsByNote(t *testing.T, dir string) map[string][]string {
	t.Helper()
	r := links.NewResolver()
	var notes []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "_templates" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		r.Add(rel)
		if strings.HasSuffix(rel, ".md") {
			notes = append(notes, rel)
		}
		return nil
	})
	out := make(map[string][]string, len(notes))
	for _, n := range notes {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			t.Fatal(err)
		}
		var ts []string
		for _, l := range markdown.Parse(path.Base(n), data).Links {
			to, _ := r.ResolveLink(n, l)
			ts = append(ts, to)
		}
		sort.Strings(ts)
		out[n] = ts
	}
	return out
}

// copyTree copies the regular files of the folder src into dst, leaving out
// hidden files and folders.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMoveOnRealVault moves the most-linked notes of a real vault
// ($VAULTMCP_CORPUS) through the service, in a git copy, and checks with an
// independent resolution pass that no link changed its target.
func TestMoveOnRealVault(t *testing.T) {
	src := os.Getenv("VAULTMCP_CORPUS")
	if src == "" {
		t.Skip("set VAULTMCP_CORPUS to a vault folder")
	}
	dir := t.TempDir()
	copyTree(t, src, dir)
	gitInit(t, dir)
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	// The three most linked notes.
	s.mu.RLock()
	all := s.graph.Notes()
	type cand struct {
		path string
		n    int
	}
	var cands []cand
	for _, p := range all {
		if _, ok := s.notes[p]; ok {
			cands = append(cands, cand{p, len(s.graph.BacklinkSources(p))})
		}
	}
	s.mu.RUnlock()
	sort.Slice(cands, func(i, j int) bool {
		return cands[i].n > cands[j].n || cands[i].n == cands[j].n && cands[i].path < cands[j].path
	})
	for i, c := range cands[:3] {
		before := targetsByNote(t, dir)
		to := "moved-" + string(rune('a'+i)) + "/" + strings.ReplaceAll(path.Base(c.path), ".md", " renamed.md")
		start := time.Now()
		res, err := s.Move(ctx, api.MoveRequest{From: c.path, To: to, ConfirmNewDomain: true})
		if err != nil {
			t.Fatalf("move %s: %v", c.path, err)
		}
		t.Logf("moved %s (%d linking notes): %d links in %d notes rewritten in %s", c.path, c.n, res.LinksRewritten, res.NotesRewritten, time.Since(start).Round(time.Millisecond))
		after := targetsByNote(t, dir)
		for note, ts := range before {
			now := note
			if note == c.path {
				now = to
			}
			want := make([]string, len(ts))
			for k, x := range ts {
				if x == c.path {
					x = to
				}
				want[k] = x
			}
			sort.Strings(want)
			if strings.Join(after[now], "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: links changed target after moving %s", now, c.path)
			}
		}
		if len(res.Warnings) > 0 {
			t.Errorf("warnings: %v", res.Warnings)
		}
	}
}
