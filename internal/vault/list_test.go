package vault

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestListFolderThroughItsFolders: a folder's list (found through the
// folders that hold notes) is the whole list's notes under that folder,
// nested folders included and a sibling with the same beginning left out,
// before and after writes change the folders.
func TestListFolderThroughItsFolders(t *testing.T) {
	files := with(learnVault, map[string]string{
		"02-wiki/go/deep/inner.md":  "# Inner\n\nDeep.\n",
		"02-wiki/golang/sibling.md": "# Sibling\n\nNot under go.\n",
		"02-wiki/go/diagram.png":    "not a note",
	})
	_, s := openLearn(t, files, learnOpts{})
	ctx := t.Context()
	check := func(step string) {
		t.Helper()
		all, err := s.List(ctx, api.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, folder := range []string{"02-wiki/go", "02-wiki/go/", "02-wiki", "02-wiki/go/deep", "02-wiki/golang"} {
			var want []string
			for _, n := range all.Notes {
				if strings.HasPrefix(n.Path, strings.TrimSuffix(folder, "/")+"/") {
					want = append(want, n.Path)
				}
			}
			got, err := s.List(ctx, api.ListRequest{Folder: folder})
			if err != nil {
				t.Fatalf("%s: %s: %v", step, folder, err)
			}
			var paths []string
			for _, n := range got.Notes {
				paths = append(paths, n.Path)
			}
			if !slices.Equal(paths, want) || got.Total != len(want) {
				t.Errorf("%s: folder %s: %q (total %d), want %q", step, folder, paths, got.Total, want)
			}
		}
	}
	check("at the start")
	if _, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/deep/new.md", Content: "# New\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/deep/inner.md", To: "02-wiki/golang/inner.md"}); err != nil {
		t.Fatal(err)
	}
	check("after a write and a move")
}

// TestListLimit: a list with a limit holds the first notes by path of the
// list without one, for every filter (the whole vault, a type, a folder),
// with the same total; a limit of 0, or above the total, lists them all.
func TestListLimit(t *testing.T) {
	files := with(learnVault, map[string]string{})
	for i := range 40 {
		// Names in no particular order, so that the first by path are
		// not the first stored.
		files[fmt.Sprintf("03-projects/p%02d.md", (i*17)%40)] = "---\ntype: project\n---\n# P\n"
	}
	_, s := openLearn(t, files, learnOpts{})
	ctx := t.Context()
	for _, req := range []api.ListRequest{{}, {Type: "project"}, {Folder: "03-projects"}, {Type: "nothing"}} {
		all, err := s.List(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(all.Notes, func(a, b api.NoteSummary) int { return strings.Compare(a.Path, b.Path) }) || all.Total != len(all.Notes) {
			t.Fatalf("%+v: not sorted, or total %d for %d notes", req, all.Total, len(all.Notes))
		}
		for _, limit := range []int{1, 2, 7, 39, 40, 41, len(all.Notes), len(all.Notes) + 1} {
			req := req
			req.Limit = limit
			got, err := s.List(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want := all.Notes[:min(limit, len(all.Notes))]
			if !slices.EqualFunc(got.Notes, want, func(a, b api.NoteSummary) bool { return a.Path == b.Path && a.Title == b.Title }) || got.Total != all.Total {
				t.Errorf("%+v: %d notes (total %d), want the first %d of %d", req, len(got.Notes), got.Total, len(want), all.Total)
			}
		}
	}
}

// TestFirstSorted: the k smallest of a list, sorted, whatever its order.
func TestFirstSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := r.IntN(60)
		var paths []string
		for range n {
			paths = append(paths, fmt.Sprintf("%c/%d.md", 'a'+r.IntN(5), r.IntN(30))) // repeats too
		}
		want := slices.Sorted(slices.Values(paths))
		for _, k := range []int{0, 1, 2, r.IntN(n + 2), n, n + 1} {
			first := want // k 0, or k not below n: all of them
			if k > 0 && k < n {
				first = want[:k]
			}
			if got := firstSorted(slices.Clone(paths), k); !slices.Equal(got, first) {
				t.Fatalf("k %d of %q: %q, want %q", k, paths, got, first)
			}
		}
	}
}

// TestGraphEdgeRules: an edge counts once per ordered pair however many
// links make it, a link to the note itself is none, a missing target counts
// once per linking note (a node of its own with include_broken), and the
// edges returned are those between kept nodes.
func TestGraphEdgeRules(t *testing.T) {
	_, s := openLearn(t, map[string]string{
		"a.md": "# A\n\n[[b]] [[b]] [[b#x]] [[a]] [[gone]] [[gone]] [[c]]\n",
		"b.md": "# B\n\n[[a]] [[gone]] [[c]]\n",
		"c.md": "# C\n\n[[c]]\n",
		"d.md": "# D\n\nalone\n",
	}, learnOpts{})
	ctx := t.Context()
	g, err := s.Graph(ctx, api.GraphRequest{})
	if err != nil {
		t.Fatal(err)
	}
	degrees := func(g *api.GraphResult) map[string][2]int {
		out := map[string][2]int{}
		for _, n := range g.Nodes {
			out[n.Path] = [2]int{n.InDegree, n.OutDegree}
		}
		return out
	}
	wantDeg := map[string][2]int{"a.md": {1, 2}, "b.md": {1, 2}, "c.md": {2, 0}, "d.md": {0, 0}}
	if g.EdgeCount != 4 || g.BrokenCount != 2 || g.NodeCount != 4 || len(g.Edges) != 4 || !maps.Equal(degrees(g), wantDeg) {
		t.Errorf("graph: %d edges (%d returned), %d broken, %d nodes, degrees %v", g.EdgeCount, len(g.Edges), g.BrokenCount, g.NodeCount, degrees(g))
	}
	g, err = s.Graph(ctx, api.GraphRequest{IncludeBroken: true})
	if err != nil {
		t.Fatal(err)
	}
	wantDeg["gone"] = [2]int{2, 0}
	wantDeg["a.md"], wantDeg["b.md"] = [2]int{1, 3}, [2]int{1, 3}
	if g.EdgeCount != 6 || g.BrokenTargetCount != 1 || g.NodeCount != 5 || !maps.Equal(degrees(g), wantDeg) {
		t.Errorf("graph with broken links: %d edges, %d broken targets, %d nodes, degrees %v", g.EdgeCount, g.BrokenTargetCount, g.NodeCount, degrees(g))
	}
	g, err = s.Graph(ctx, api.GraphRequest{IncludeBroken: true, MaxNodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Kept: a and b (4 links each), then c and gone (2 each): c by path.
	var edges []string
	for _, e := range g.Edges {
		edges = append(edges, e.From+">"+e.To)
	}
	if want := []string{"a.md>b.md", "a.md>c.md", "b.md>a.md", "b.md>c.md"}; !g.Truncated || g.KeptEdgeCount != 4 || !slices.Equal(edges, want) {
		t.Errorf("3 nodes kept: edges %q (%d kept), truncated %v", edges, g.KeptEdgeCount, g.Truncated)
	}
}
