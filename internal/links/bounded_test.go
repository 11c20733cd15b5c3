package links

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// pageFromBacklinks is BacklinkPage computed the plain way, from every
// edge Backlinks returns.
func pageFromBacklinks(g *Graph, p string, maxNotes, maxLines int) BacklinkPage {
	var page BacklinkPage
	for _, e := range g.Backlinks(p) {
		page.Links++
		if n := len(page.Sources); n == 0 || page.Sources[n-1].Path != e.From {
			page.Notes++
			page.Sources = append(page.Sources, BacklinkSource{Path: e.From})
		}
		s := &page.Sources[len(page.Sources)-1]
		s.Links++
		if s.LineCount == 0 || s.Lines[len(s.Lines)-1] != e.Link.Line {
			s.LineCount++
			s.Lines = append(s.Lines, e.Link.Line)
		}
	}
	page.Sources = page.Sources[:min(len(page.Sources), maxNotes)]
	for i := range page.Sources {
		s := &page.Sources[i]
		s.Lines = s.Lines[:min(len(s.Lines), maxLines)]
		if len(s.Lines) == 0 {
			s.Lines = nil
		}
	}
	if page.Sources == nil {
		page.Sources = []BacklinkSource{}
	}
	return page
}

// TestBacklinkPageMatchesBacklinks checks the bounded query against the
// full list on random graphs: same counts, same first notes, same lines.
func TestBacklinkPageMatchesBacklinks(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for round := range 30 {
		g := NewGraph()
		names := []string{"hub", "a/hub", "x", "y", "z"}
		for _, n := range names {
			g.AddFile(n + ".md")
		}
		notes := 1 + rng.Intn(60)
		for i := range notes {
			var ls []markdown.Link
			line := 1
			for range rng.Intn(40) {
				line += rng.Intn(3) // several links on one line too
				ls = append(ls, wl(names[rng.Intn(len(names))], line))
			}
			g.SetNote(fmt.Sprintf("n/%03d-%d.md", (i*37)%101, i), ls)
		}
		g.SetNote("hub.md", []markdown.Link{wl("hub", 1)}) // a self-link never counts
		for _, p := range []string{"hub.md", "a/hub.md", "x.md", "none.md"} {
			for _, lim := range [][2]int{{0, 0}, {1, 1}, {5, 3}, {1000, 1000}} {
				got := g.BacklinkPage(p, lim[0], lim[1])
				want := pageFromBacklinks(g, p, lim[0], lim[1])
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d BacklinkPage(%s, %d, %d) =\n%+v\nwant\n%+v", round, p, lim[0], lim[1], got, want)
				}
			}
		}
	}
}

func TestEachOutTarget(t *testing.T) {
	g := NewGraph()
	g.AddFile("b.md")
	g.SetNote("a.md", []markdown.Link{wl("b", 1), wl("missing", 2), wl("b", 3)})
	var got []string
	g.EachOutTarget("a.md", func(to, target string) { got = append(got, to+"<"+target) })
	if want := []string{"b.md<b", "<missing", "b.md<b"}; !slices.Equal(got, want) {
		t.Errorf("EachOutTarget = %q, want %q", got, want)
	}
	g.EachOutTarget("unknown.md", func(string, string) { t.Error("called for an unknown note") })
}

// bigBacklinks is a graph where 2,000 notes link 1,000 times each to hub.md:
// two million incoming links.
func bigBacklinks(b *testing.B) *Graph {
	g := NewGraph()
	g.AddFile("hub.md")
	ls := make([]markdown.Link, 1000)
	for i := range ls {
		ls[i] = wl("hub", i+1)
	}
	for i := range 2000 {
		g.SetNote(fmt.Sprintf("notes/n%04d.md", i), ls)
	}
	return g
}

// BenchmarkBacklinks2M compares the full list of backlinks (an Edge per
// link, what vault_backlinks used) with the bounded page, on two million
// incoming links; -benchmem shows the memory.
func BenchmarkBacklinks2M(b *testing.B) {
	g := bigBacklinks(b)
	b.Run("all-edges", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n := len(g.Backlinks("hub.md")); n != 2_000_000 {
				b.Fatal(n)
			}
		}
	})
	b.Run("page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p := g.BacklinkPage("hub.md", 200, 20); p.Links != 2_000_000 || len(p.Sources) != 200 {
				b.Fatal(p.Links)
			}
		}
	})
}
