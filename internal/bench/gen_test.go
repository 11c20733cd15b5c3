package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// treeHash hashes every path and byte under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h.Write([]byte(filepath.ToSlash(rel) + "\x00"))
		h.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func generate(t *testing.T, n int, seed uint64) (string, GenStats) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	st, err := Generate(context.Background(), dir, GenOptions{Notes: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, sa := generate(t, 300, 7)
	b, sb := generate(t, 300, 7)
	c, _ := generate(t, 300, 8)
	if treeHash(t, a) != treeHash(t, b) {
		t.Error("the same seed gave two different vaults")
	}
	if sa != sb {
		t.Errorf("stats differ for one seed: %+v vs %+v", sa, sb)
	}
	if treeHash(t, a) == treeHash(t, c) {
		t.Error("two seeds gave the same vault")
	}
}

func TestGenerateRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.md"), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), dir, GenOptions{Notes: 10, Seed: 1}); err == nil {
		t.Fatal("Generate wrote into a folder that holds a note")
	}
	if _, err := Generate(context.Background(), filepath.Join(dir, "new"), GenOptions{Notes: 0}); err == nil {
		t.Fatal("Generate accepted 0 notes")
	}
}

// TestGenerateShape checks the vault looks like a real one: the numbered
// layout, note counts, size distribution, frontmatter, headings, code, tags,
// MOCs with hundreds of links, popular notes, links that mostly resolve.
func TestGenerateShape(t *testing.T) {
	const n = 1500
	dir, st := generate(t, n, 3)
	if st.Notes != n || st.MOCs < 1 || st.Domains < 1 || st.Attachments < 1 || st.Bytes <= 0 {
		t.Fatalf("stats: %+v", st)
	}
	for _, d := range []string{"00-index", "01-raw", "02-wiki", "03-projects", "04-daily", "99-archive", "_templates", "assets"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			t.Errorf("folder %s missing", d)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "00-index", "index-knowledge.md")); err != nil {
		t.Error("no knowledge index")
	}

	var sizes []int
	var bytes int64
	types := map[string]int{}
	withH2, withCode, withTags, maxOut := 0, 0, 0, 0
	notes := 0
	df := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || !strings.HasSuffix(rel, ".md") || strings.HasPrefix(rel, "_templates/") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		notes++
		sizes = append(sizes, len(data))
		bytes += int64(len(data))
		note := markdown.Parse(filepath.Base(p), data)
		fm := note.Frontmatter
		if fm == nil || fm["type"] == nil || fm["tags"] == nil || fm["created"] == nil {
			t.Errorf("%s: frontmatter lacks type, tags or created: %v", rel, fm)
			return nil
		}
		typ, _ := fm["type"].(string)
		types[typ]++
		if typ == "wiki" || typ == "project" || typ == "note" {
			if _, ok := fm["status"]; !ok {
				t.Errorf("%s: no status", rel)
			}
		}
		for _, c := range note.Chunks {
			if len(c.Headings) > 0 {
				withH2++
				break
			}
		}
		for _, c := range note.Chunks {
			if c.Code != "" {
				withCode++
				break
			}
		}
		if len(note.Tags) > 0 {
			withTags++
		}
		maxOut = max(maxOut, len(note.Links))
		seen := map[string]bool{}
		for _, w := range strings.Fields(strings.ToLower(string(data))) {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if notes != n {
		t.Fatalf("%d notes on disk, want %d", notes, n)
	}
	if bytes != st.Bytes {
		t.Errorf("stats say %d bytes, disk holds %d", st.Bytes, bytes)
	}
	for _, typ := range []string{"wiki", "moc", "daily", "project", "note"} {
		if types[typ] == 0 {
			t.Errorf("no note of type %s: %v", typ, types)
		}
	}
	slices.Sort(sizes)
	if med := sizes[len(sizes)/2]; med < 1024 || med > 4096 {
		t.Errorf("median note size %d bytes, want 1-4 KB", med)
	}
	in1to4 := 0
	for _, s := range sizes {
		if s >= 1024 && s <= 4096 {
			in1to4++
		}
	}
	if in1to4 < len(sizes)/2 {
		t.Errorf("only %d of %d notes are 1-4 KB", in1to4, len(sizes))
	}
	if top := sizes[len(sizes)-1]; top < 10_000 || top > 64_000 {
		t.Errorf("largest note %d bytes, want a tail of tens of KB (at most ~50 KB)", top)
	}
	if withH2 < notes/2 || withCode < notes/10 || withTags < notes/5 {
		t.Errorf("of %d notes: %d with ## headings, %d with code, %d with inline tags", notes, withH2, withCode, withTags)
	}
	if maxOut < 100 {
		t.Errorf("the biggest MOC has %d links, want hundreds", maxOut)
	}
	// Word frequencies: a few words in nearly every note, most in few.
	if df["the"] < notes*8/10 {
		t.Errorf(`"the" is in %d of %d notes`, df["the"], notes)
	}
	rare := 0
	for _, c := range df {
		if c <= 3 {
			rare++
		}
	}
	if len(df) < 10_000 || rare < len(df)/3 {
		t.Errorf("%d distinct words, %d in at most 3 notes: the distribution is too flat", len(df), rare)
	}

	// Links resolve (a few are broken on purpose), and link popularity
	// gives some notes many backlinks.
	svc, err := vault.Open(context.Background(), vault.Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	g, err := svc.Graph(context.Background(), api.GraphRequest{IncludeRaw: true, IncludeBroken: true, MaxNodes: api.MaxGraphNodes})
	if err != nil {
		t.Fatal(err)
	}
	if g.BrokenCount == 0 || g.BrokenCount*20 > g.EdgeCount {
		t.Errorf("%d broken of %d links: want a few, under 5%%", g.BrokenCount, g.EdgeCount)
	}
	maxIn := 0
	for _, nd := range g.Nodes {
		if !nd.Broken {
			maxIn = max(maxIn, nd.InDegree)
		}
	}
	if maxIn < 100 {
		t.Errorf("the most linked note has %d backlinks, want hundreds", maxIn)
	}
	stats, err := svc.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Notes != n || stats.Unindexed != 0 {
		t.Errorf("indexed %+v, want %d notes and none unindexed", stats, n)
	}
}

func TestVocabulary(t *testing.T) {
	v := newVocabulary(rand.New(rand.NewPCG(1, 2)), 50000)
	if len(v) != 50000 {
		t.Fatalf("%d words, want 50000", len(v))
	}
	seen := map[string]bool{}
	for _, w := range v {
		if seen[w] || w == "" || strings.ContainsAny(w, " \t\n") {
			t.Fatalf("word %q repeated or malformed", w)
		}
		seen[w] = true
	}
	if v[0] != "the" {
		t.Errorf("most frequent word %q, want the", v[0])
	}
	if len(v[1000]) > len(v[len(v)-1]) {
		t.Errorf("rank 1000 %q is longer than the last word %q: short words should be frequent", v[1000], v[len(v)-1])
	}
}

func TestRelPath(t *testing.T) {
	for _, tc := range []struct{ from, target, want string }{
		{".", "a/b.md", "a/b.md"},
		{"a", "a/b.md", "b.md"},
		{"a/x", "a/b.md", "../b.md"},
		{"c", "a/b.md", "../a/b.md"},
		{"02-wiki/go", "02-wiki/pg/n.md", "../pg/n.md"},
	} {
		if got := relPath(tc.from, tc.target); got != tc.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", tc.from, tc.target, got, tc.want)
		}
	}
}
