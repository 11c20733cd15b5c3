package index

import (
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// TestFullTitleBonus: a query that is a note's title, file name or an alias
// (its words in order, as analyzed) ranks that note's first chunk above
// notes that only say the words more often; a query that is more or less
// than a title, or a misspelling of it, earns nothing; and the bonus
// survives a snapshot, removals and compactions.
func TestFullTitleBonus(t *testing.T) {
	guide := strings.Repeat("Dataview queries your notes. Dataview tables list them. ", 6)
	build := func() *Index {
		ix := New(Options{Lang: "en"})
		ix.Add("Plugins/dataview.md", &markdown.Note{Title: "Dataview", Chunks: []markdown.Chunk{{Prose: "A community plugin."}}})
		ix.Add("Plugins/dataview-properties.md", &markdown.Note{Title: "Dataview Properties", Chunks: []markdown.Chunk{{Prose: "Dataview fields as properties."}}})
		ix.Add("Guides/An Introduction to Dataview.md", &markdown.Note{Title: "An Introduction to Dataview", Chunks: []markdown.Chunk{{Prose: guide}, {Headings: []string{"Dataview tables"}, Prose: guide}}})
		ix.Add("Guides/Café.md", &markdown.Note{Title: "Café au lait", Aliases: []string{"DV Coffee"}, Chunks: []markdown.Chunk{{Prose: "Dataview coffee break."}}})
		for i := range 20 { // more notes, so that the words above are rare
			ix.Add(strings.Repeat("x", i+1)+".md", prose("filler words about something else entirely"))
		}
		return ix
	}
	full := func(ix *Index, q, path string) (first string, bonus bool) {
		t.Helper()
		hits := ix.SearchExplained(q, Filter{}, 10)
		if len(hits) == 0 {
			t.Fatalf("%q: no hits", q)
		}
		for _, h := range hits {
			if h.Path == path && h.Chunk == 0 {
				bonus = h.Explain.FullTitle
			}
		}
		return hits[0].Path, bonus
	}
	check := func(ix *Index, what string) {
		for _, c := range []struct {
			q, path string
			bonus   bool
		}{
			{"dataview", "Plugins/dataview.md", true},
			{"DataView", "Plugins/dataview.md", true},
			{"dataview properties", "Plugins/dataview-properties.md", true},
			{"an introduction to dataview", "Guides/An Introduction to Dataview.md", true},
			{"introduction dataview", "Guides/An Introduction to Dataview.md", true}, // stopwords left out on both sides
			{"cafe au lait", "Guides/Café.md", true},                                 // accents folded
			{"dv coffee", "Guides/Café.md", true},                                    // an alias
		} {
			first, bonus := full(ix, c.q, c.path)
			if first != c.path || bonus != c.bonus {
				t.Errorf("%s: %q: first %s, full title %v; want %s, %v", what, c.q, first, bonus, c.path, c.bonus)
			}
		}
		for _, c := range []struct{ q, path string }{
			{"dataview plugin", "Plugins/dataview.md"},                         // more than the title
			{"properties", "Plugins/dataview-properties.md"},                   // less
			{"dataveiw", "Plugins/dataview.md"},                                // misspelled: read as dataview, not earned
			{"dataview introduction", "Guides/An Introduction to Dataview.md"}, // another order
		} {
			if _, bonus := full(ix, c.q, c.path); bonus {
				t.Errorf("%s: %q: %s earned the full title bonus", what, c.q, c.path)
			}
		}
	}
	ix := build()
	check(ix, "built")
	// Without the bonus the guide, which says the word thirty times, would
	// be first.
	hits := ix.SearchExplained("dataview", Filter{}, 2)
	if len(hits) < 2 || hits[0].Score-hits[0].Explain.FullTitleBonus >= hits[1].Score || !strings.HasPrefix(hits[1].Path, "Guides/An") {
		t.Errorf("the bonus decides nothing here: %+v", hits)
	}
	check(roundTrip(t, ix), "from a snapshot")
	// Removals and a compaction renumber the terms; the signatures hold.
	for i := range 20 {
		ix.Remove(strings.Repeat("x", i+1) + ".md")
	}
	for i := range 20 {
		ix.Add(strings.Repeat("y", i+1)+".md", prose("other filler words about something else"))
	}
	ix.compactSpace(&ix.exact, true)
	check(ix, "after removals and a compaction")
	if got := slices.Collect(func(yield func(string) bool) {
		for _, h := range ix.Search("dataview", Filter{}, 3) {
			yield(h.Path)
		}
	}); got[0] != "Plugins/dataview.md" {
		t.Errorf("after a compaction: %v", got)
	}
}

// TestTitleSig: the signature is that of the words, in order.
func TestTitleSig(t *testing.T) {
	a, b := titleSig([]string{"dataview", "properties"}), titleSig([]string{"properties", "dataview"})
	if a == b || titleSig([]string{"dataviewproperties"}) == a || titleSig(nil) != sigStart {
		t.Errorf("signatures collide: %x %x", a, b)
	}
	if titleSig([]string{"ab", "c"}) == titleSig([]string{"a", "bc"}) {
		t.Error("word boundaries are not in the signature")
	}
}

// TestTitleMask: a note's title mask lets a query none of whose titles it
// is pass without reading them, and never turns away one of them, also
// when another signature has the same bit.
func TestTitleMask(t *testing.T) {
	titles := []uint64{3, 70, 1 << 40}
	info := noteInfo{titles: titles, titleMask: titlesMask(titles)}
	for _, c := range []struct {
		sig  uint64
		want bool
	}{
		{3, true}, {70, true}, {1 << 40, true},
		{3 + 64, false}, // the bit of 3, not a title
		{5, false},      // a bit no title has
		{1<<40 + 1, false},
	} {
		s := scratch{qsig: c.sig}
		if got := s.isTitle(&info); got != c.want {
			t.Errorf("signature %d: isTitle %v, want %v", c.sig, got, c.want)
		}
	}
	if m := titlesMask(titles); m != 1<<3|1<<6|1<<0 {
		t.Errorf("mask %b", m)
	}
}
