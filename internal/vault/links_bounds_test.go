package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// writeFile writes one generated note of the test vault.
func writeFile(t testing.TB, dir, rel string, data []byte) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// linkLines is n lines each holding one wiki-link, to target(i).
func linkLines(n int, target func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("# Many links\n\n")
	for i := range n {
		fmt.Fprintf(&b, "- [[%s]]\n", target(i))
	}
	return []byte(b.String())
}

func jsonSize(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// TestGetNoteBoundsLinks reads a note of 100,000 links, two thirds of them
// broken: each list holds api.MaxNoteLinks, the totals are exact and the
// answer is a small fraction of the note's link list.
func TestGetNoteBoundsLinks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.md", []byte("# A\n"))
	writeFile(t, dir, "b.md", []byte("# B\n"))
	const n = 100_000
	writeFile(t, dir, "big.md", linkLines(n, func(i int) string {
		switch i % 3 {
		case 0:
			return "a"
		case 1:
			return "b"
		}
		return fmt.Sprintf("missing-%d", i)
	}))
	s := openTest(t, dir, false)
	note, err := s.GetNote(context.Background(), api.NoteRequest{Path: "big.md"})
	if err != nil {
		t.Fatal(err)
	}
	resolved := (n+2)/3 + (n+1)/3 // i%3 == 0, i%3 == 1
	if note.LinksTotal != resolved || note.BrokenLinksTotal != n-resolved {
		t.Errorf("totals %d + %d, want %d + %d", note.LinksTotal, note.BrokenLinksTotal, resolved, n-resolved)
	}
	if len(note.Links) != api.MaxNoteLinks || len(note.BrokenLinks) != api.MaxNoteLinks {
		t.Fatalf("lists of %d and %d links, want %d each", len(note.Links), len(note.BrokenLinks), api.MaxNoteLinks)
	}
	// The first links in document order are kept, with their lines.
	if l := note.Links[0]; l.Target != "a" || l.Path != "a.md" || l.Line != 3 {
		t.Errorf("first link %+v", l)
	}
	if l := note.Links[1]; l.Target != "b" || l.Path != "b.md" || l.Line != 4 {
		t.Errorf("second link %+v", l)
	}
	if l := note.BrokenLinks[api.MaxNoteLinks-1]; l.Target != fmt.Sprintf("missing-%d", 3*api.MaxNoteLinks-1) || l.Path != "" {
		t.Errorf("last broken link kept %+v", l)
	}
	// What the links cost in the answer: under 40 kB, when the note holds
	// over a megabyte of them (the content is one 20,000-character page).
	size := jsonSize(t, note) - jsonSize(t, note.Content)
	if size > 40_000 {
		t.Errorf("answer without the content is %d bytes", size)
	}
	t.Logf("note of %d links: answer %d bytes besides its 20,000-character page", n, size)
}

// TestBacklinksBounded links 300 notes, 500 times each, to one note: the
// answer counts every note and link, lists the first api.MaxBacklinkNotes
// notes by path with api.MaxBacklinkLines lines each, and stays small.
func TestBacklinksBounded(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "hub.md", []byte("# Hub\n\nSee [[hub]] (a self-link does not count).\n"))
	const notes, per = 300, 500
	for i := range notes {
		// Two links on the first line of each note, one on each of the others.
		body := append([]byte("[[hub]] and [[hub|again]]\n"), linkLines(per-1, func(int) string { return "hub" })...)
		writeFile(t, dir, fmt.Sprintf("n/%04d.md", notes-1-i), body)
	}
	writeFile(t, dir, "other.md", []byte("# Other\n\n[[n/0000]]\n"))
	s := openTest(t, dir, false)
	res, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: "hub.md"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != notes || res.Links != notes*(per+1) || len(res.Backlinks) != api.MaxBacklinkNotes {
		t.Fatalf("total %d, links %d, listed %d; want %d, %d, %d", res.Total, res.Links, len(res.Backlinks), notes, notes*(per+1), api.MaxBacklinkNotes)
	}
	for i, bl := range res.Backlinks {
		if want := fmt.Sprintf("n/%04d.md", i); bl.Path != want {
			t.Fatalf("backlink %d is %s, want %s (the first by path)", i, bl.Path, want)
		}
		// Line 1 holds two links; then "# Many links", a blank line, and
		// one link a line from line 4.
		if bl.LineCount != per || len(bl.Lines) != api.MaxBacklinkLines || bl.Lines[0] != 1 || bl.Lines[1] != 4 || bl.Lines[api.MaxBacklinkLines-1] != api.MaxBacklinkLines+2 {
			t.Fatalf("backlink %s: %d lines listed of %d: %v", bl.Path, len(bl.Lines), bl.LineCount, bl.Lines)
		}
		if bl.Title != "Many links" {
			t.Fatalf("title %q", bl.Title)
		}
	}
	if size := jsonSize(t, res); size > 40_000 {
		t.Errorf("answer is %d bytes", size)
	}
	// A note with few backlinks is listed whole.
	few, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: "n/0000.md"})
	if err != nil || few.Total != 1 || few.Links != 1 || len(few.Backlinks) != 1 || few.Backlinks[0].Path != "other.md" || few.Backlinks[0].LineCount != 1 {
		t.Errorf("few backlinks: %+v, %v", few, err)
	}
}

// TestGraphBoundsEdges gives vault_graph more edges between the nodes it
// keeps than an answer holds: the first api.MaxGraphEdges are returned and
// the total is stated.
func TestGraphBoundsEdges(t *testing.T) {
	dir := t.TempDir()
	// 120 notes each linking to every other: 14,280 edges.
	const n = 120
	for i := range n {
		writeFile(t, dir, fmt.Sprintf("g/%03d.md", i), linkLines(n, func(j int) string { return fmt.Sprintf("%03d", j) }))
	}
	s := openTest(t, dir, false)
	g, err := s.Graph(context.Background(), api.GraphRequest{MaxNodes: n})
	if err != nil {
		t.Fatal(err)
	}
	if g.NodeCount != n || g.EdgeCount != n*(n-1) || g.KeptEdgeCount != n*(n-1) || !g.EdgesTruncated || g.Truncated {
		t.Fatalf("nodes %d, edges %d, kept %d, truncated %v/%v", g.NodeCount, g.EdgeCount, g.KeptEdgeCount, g.EdgesTruncated, g.Truncated)
	}
	if len(g.Edges) != api.MaxGraphEdges || g.Edges[0] != (api.GraphEdge{From: "g/000.md", To: "g/001.md"}) {
		t.Fatalf("%d edges, first %+v", len(g.Edges), g.Edges[0])
	}
	// Fewer nodes kept: the edges between them only, all of them.
	small, err := s.Graph(context.Background(), api.GraphRequest{MaxNodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Nodes) != 10 || small.KeptEdgeCount != 90 || len(small.Edges) != 90 || small.EdgesTruncated || !small.Truncated {
		t.Fatalf("10 nodes: %d nodes, %d edges of %d, truncated %v/%v", len(small.Nodes), len(small.Edges), small.KeptEdgeCount, small.EdgesTruncated, small.Truncated)
	}
}

// BenchmarkBacklinksBig is vault_backlinks on a note with two million
// incoming links (2,000 notes linking to it 1,000 times each); -benchmem
// shows the memory of one call.
func BenchmarkBacklinksBig(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, dir, "hub.md", []byte("# Hub\n"))
	body := linkLines(1000, func(int) string { return "hub" })
	for i := range 2000 {
		writeFile(b, dir, fmt.Sprintf("n/%04d.md", i), body)
	}
	s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: "hub.md"})
		if err != nil || len(res.Backlinks) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetNoteManyLinks is vault_get_note on a note of a million links
// (8 MB), half of them broken; it reports the size of the answer's JSON.
func BenchmarkGetNoteManyLinks(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, dir, "a.md", []byte("# A\n"))
	writeFile(b, dir, "big.md", linkLines(1_000_000, func(i int) string {
		if i%2 == 0 {
			return "a"
		}
		return "z" // broken
	}))
	s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		note, err := s.GetNote(context.Background(), api.NoteRequest{Path: "big.md"})
		if err != nil {
			b.Fatal(err)
		}
		out, _ := json.Marshal(note)
		size = len(out)
	}
	b.ReportMetric(float64(size), "answer-bytes")
}

// TestGraphBrokenTargetCount: with include_broken the missing targets are
// nodes (node_count counts them) and BrokenTargetCount says how many, so
// that the answer can tell the notes apart from them: two notes with five
// distinct missing targets, one of them linked twice.
func TestGraphBrokenTargetCount(t *testing.T) {
	_, s := openLearn(t, map[string]string{
		"03-x/a.md": "# A\n\n[[b]] [[m1]] [[m2]] [[m3]]\n",
		"03-x/b.md": "# B\n\n[[m4]] [[m5]] [[m1]] [[a]]\n",
	}, learnOpts{})
	g, err := s.Graph(context.Background(), api.GraphRequest{Folder: "03-x", IncludeBroken: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.NodeCount != 7 || g.BrokenTargetCount != 5 || g.BrokenCount != 6 || g.EdgeCount != 8 {
		t.Errorf("nodes %d, missing targets %d, broken links %d, edges %d; want 7, 5, 6, 8", g.NodeCount, g.BrokenTargetCount, g.BrokenCount, g.EdgeCount)
	}
	g, err = s.Graph(context.Background(), api.GraphRequest{Folder: "03-x"})
	if err != nil {
		t.Fatal(err)
	}
	if g.NodeCount != 2 || g.BrokenTargetCount != 0 || g.BrokenCount != 6 || g.EdgeCount != 2 {
		t.Errorf("without include_broken: nodes %d, missing targets %d, broken links %d, edges %d; want 2, 0, 6, 2", g.NodeCount, g.BrokenTargetCount, g.BrokenCount, g.EdgeCount)
	}
}
