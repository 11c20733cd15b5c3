package mcpserver

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// manyLinksNote is a note whose backend kept 3 links of each kind out of
// 1,000,000 and 41.
func manyLinksNote() *api.Note {
	n := lastPageFixture()
	n.Offset, n.TotalChars = 0, len(n.Content)
	for i := range 3 {
		n.Links = append(n.Links, api.NoteLink{Target: fmt.Sprintf("t%d", i), Path: fmt.Sprintf("t%d.md", i), Line: i + 1})
		n.BrokenLinks = append(n.BrokenLinks, api.NoteLink{Target: fmt.Sprintf("gone%d", i), Line: i + 10})
	}
	n.LinksTotal, n.BrokenLinksTotal = 1_000_000, 41
	return n
}

// manyBacklinks is an answer that kept 2 of 2,000 linking notes, the first
// with 3 of its 1,000 lines.
func manyBacklinks() *api.BacklinksResult {
	return &api.BacklinksResult{Path: "hub.md", Total: 2000, Links: 2_000_000, Backlinks: []api.Backlink{
		{Path: "n/0000.md", Title: "Zero", Lines: []int{1, 2, 3}, LineCount: 1000},
		{Path: "n/0001.md", Title: "One", Lines: []int{7}, LineCount: 2},
	}}
}

func manyEdgesGraph() *api.GraphResult {
	g := graphFixture()
	g.NodeCount, g.EdgeCount, g.KeptEdgeCount, g.EdgesTruncated = 3, 40000, 25000, true
	return g
}

func TestRenderBoundedGolden(t *testing.T) {
	cases := map[string]func(m *messages) string{
		"note_many_links": func(m *messages) string { return renderNote(m, manyLinksNote()) },
		"backlinks_many": func(m *messages) string {
			return renderBacklinks(m, api.BacklinksRequest{Path: "hub.md"}, manyBacklinks())
		},
		"graph_many_edges": func(m *messages) string { return renderGraph(m, api.GraphRequest{MaxNodes: 3}, manyEdgesGraph()) },
	}
	for _, lang := range []string{"en", "pt"} {
		for name, render := range cases {
			t.Run(lang+"/"+name, func(t *testing.T) {
				golden(t, filepath.Join("render", lang, name+".txt"), []byte(render(newMessages(lang))))
			})
		}
	}
}

// TestRenderBoundedTotals checks, apart from the golden files, that each
// text states how many were left out, computed from the totals.
func TestRenderBoundedTotals(t *testing.T) {
	m := newMessages("en")
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"note", renderNote(m, manyLinksNote()), []string{"… and 999997 more links\n", "… and 38 more broken links\n"}},
		{"backlinks", renderBacklinks(m, api.BacklinksRequest{}, manyBacklinks()), []string{
			"2000 note(s) link to hub.md:\n", "(lines 1, 2, 3 … and 997 more)", "(lines 7 … and 1 more)", "… and 1998 more notes\n"}},
		{"graph", renderGraph(m, api.GraphRequest{MaxNodes: 3}, manyEdgesGraph()), []string{"… and 24998 more edges\n"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.text, w) {
				t.Errorf("%s: %q missing from\n%s", c.name, w, c.text)
			}
		}
	}
	// An answer from a backend that sends no totals is rendered from its lists.
	old := &api.BacklinksResult{Path: "a.md", Backlinks: []api.Backlink{{Path: "b.md", Title: "B", Lines: []int{3, 4}}}}
	if got := renderBacklinks(m, api.BacklinksRequest{}, old); got != "1 note(s) link to a.md:\n- b.md — B (lines 3, 4)\n" {
		t.Errorf("without totals: %q", got)
	}
	n := noteFixture()
	if got := renderNote(m, n); strings.Contains(got, "more") {
		t.Errorf("a note without totals says more: %q", got)
	}
}
