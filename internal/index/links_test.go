package index

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// titled returns a one-chunk note with a title and prose.
func titled(title, text string) *markdown.Note {
	return &markdown.Note{Title: title, Chunks: []markdown.Chunk{{Prose: text}}}
}

// filler adds n notes of common words, so that the test vocabulary has
// both rare and common terms (idf above and below linkMinIdf).
func filler(ix *Index, n int) {
	var items []Item
	for i := range n {
		items = append(items, Item{fmt.Sprintf("filler/%03d.md", i), titled(fmt.Sprintf("Filler %d", i), "notes about plugins and settings, with more notes")})
	}
	ix.AddBatch(items)
}

// Link text is indexed as text of the target's first chunk: a word only
// other notes use for it finds it, and the explanation says so.
func TestLinkTextFindsTarget(t *testing.T) {
	ix := New(Options{})
	filler(ix, 20)
	ix.Add("props.md", &markdown.Note{Title: "Properties", Chunks: []markdown.Chunk{
		{Prose: "structured data about a note"}, {Headings: []string{"Types"}, Prose: "text, numbers, dates"},
	}})
	ix.Add("other.md", titled("Other", "nothing relevant"))
	if hits := ix.Search("frontmatter", Filter{}, 5); hits != nil {
		t.Fatalf("before link texts: %v", paths(hits))
	}
	ix.SetLinkTexts("props.md", []LinkText{{Text: "frontmatter", Notes: 3}, {Text: "YAML metadata", Notes: 1}})
	hits := ix.SearchExplained("frontmatter", Filter{}, 5)
	if got := paths(hits); !slices.Equal(got, []string{"props.md#0"}) {
		t.Fatalf("link text search: %v, want the first chunk of props.md", got)
	}
	want := []TermMatch{{Term: "frontmatter", Fields: []string{FieldLinkText}, Match: "exact"}}
	if e := hits[0].Explain; e == nil || !reflect.DeepEqual(e.Terms, want) {
		t.Fatalf("explanation %+v, want %+v", hits[0].Explain, want)
	}
	// The link slot is not a chunk.
	if st := ix.Stats(); st.Chunks != 23 {
		t.Errorf("Stats.Chunks = %d, want 23 (link slots are not chunks)", st.Chunks)
	}
	if got := ix.LinkTexts("props.md"); !reflect.DeepEqual(got, []LinkText{{"YAML metadata", 1}, {"frontmatter", 3}}) {
		t.Errorf("LinkTexts = %v", got)
	}
	if got := ix.LinkPaths(); !slices.Equal(got, []string{"props.md"}) {
		t.Errorf("LinkPaths = %v", got)
	}
}

// Link texts belong to the path: set before the note exists they wait for
// it, a removed note's slot goes and comes back with the note, a new
// version of the note gets a new slot, and clearing the texts removes it.
func TestLinkTextsFollowTheNote(t *testing.T) {
	ix := New(Options{})
	filler(ix, 20)
	ix.SetLinkTexts("t.md", []LinkText{{Text: "wombat", Notes: 2}})
	if ix.Search("wombat", Filter{}, 5) != nil {
		t.Fatal("link text of a note not indexed matched")
	}
	ix.Add("t.md", titled("Target", "first version"))
	if got := paths(ix.Search("wombat", Filter{}, 5)); !slices.Equal(got, []string{"t.md#0"}) {
		t.Fatalf("after the note appeared: %v", got)
	}
	ix.Add("t.md", &markdown.Note{Title: "Target", Chunks: []markdown.Chunk{{Headings: []string{"New"}, Prose: "second version"}}})
	if got := paths(ix.Search("wombat", Filter{}, 5)); !slices.Equal(got, []string{"t.md#0"}) {
		t.Fatalf("after the note changed: %v", got)
	}
	ix.Remove("t.md")
	if ix.Search("wombat", Filter{}, 5) != nil {
		t.Fatal("link text of a removed note matched")
	}
	ix.AddBatch([]Item{{"t.md", titled("Target", "third")}})
	if got := paths(ix.Search("wombat", Filter{}, 5)); !slices.Equal(got, []string{"t.md#0"}) {
		t.Fatalf("after the note came back: %v", got)
	}
	ix.SetLinkTexts("t.md", nil)
	if ix.Search("wombat", Filter{}, 5) != nil || ix.LinkTexts("t.md") != nil {
		t.Fatal("cleared link texts still match")
	}
	st := ix.Stats()
	ref := New(Options{})
	filler(ref, 20)
	ref.Add("t.md", titled("Target", "third"))
	if rs := ref.Stats(); st.Chunks != rs.Chunks || st.Terms != rs.Terms || st.Postings != rs.Postings {
		t.Fatalf("stats %+v, fresh %+v", st, rs)
	}
}

// A term matched both by a note's first chunk and by its link text scores
// the better of the two plus linkOverlap times the other; a term as common
// as "notes" gets nothing from link text.
func TestLinkOverlapAndCommonWords(t *testing.T) {
	ix := New(Options{})
	filler(ix, 30)
	ix.Add("both.md", titled("Zebra crossing", "stripes"))
	ix.Add("own.md", titled("Zebra crossing", "stripes"))
	ix.Add("link.md", titled("Pedestrians", "stripes"))
	texts := []LinkText{{Text: "zebra", Notes: 2}}
	ix.SetLinkTexts("both.md", texts)
	ix.SetLinkTexts("link.md", texts)
	hits := ix.Search("zebra", Filter{}, 0)
	own, _ := scoreOf(hits, "own.md", 0)
	link, _ := scoreOf(hits, "link.md", 0)
	both, _ := scoreOf(hits, "both.md", 0)
	if want := max(own, link) + linkOverlap*min(own, link); own == 0 || link == 0 || !near(both, want) {
		t.Fatalf("both %v, want max(%v, %v) + %v x min = %v", both, own, link, linkOverlap, want)
	}
	// "notes" is in every filler chunk: below linkMinIdf.
	before := ix.Search("notes", Filter{}, 0)
	ix.SetLinkTexts("own.md", []LinkText{{Text: "notes", Notes: 50}})
	after := ix.Search("notes", Filter{}, 0)
	if len(before) != len(after) {
		t.Fatalf("a common word's link text added hits: %d -> %d", len(before), len(after))
	}
	if _, ok := scoreOf(after, "own.md", 0); ok {
		t.Fatal("link text of a common word matched")
	}
}

// A text used by more notes counts more, with diminishing weight.
func TestLinkRepeat(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 1, 2: 2, 3: 2, 4: 3, 7: 3, 8: 4, 1000: 10} {
		if got := linkRepeat(n); got != want {
			t.Errorf("linkRepeat(%d) = %d, want %d", n, got, want)
		}
	}
	score := func(notes int) float64 {
		ix := New(Options{})
		filler(ix, 20)
		ix.Add("t.md", titled("Target", "text"))
		ix.Add("u.md", titled("Unrelated", "text"))
		ix.SetLinkTexts("t.md", []LinkText{{Text: "quagga", Notes: notes}})
		ix.SetLinkTexts("u.md", []LinkText{{Text: "other words here", Notes: 1}})
		s, _ := scoreOf(ix.Search("quagga", Filter{}, 0), "t.md", 0)
		return s
	}
	s1, s8, s1000 := score(1), score(8), score(1000)
	if !(s1 < s8 && s8 < s1000) || s1000-s8 >= s8-s1 {
		t.Fatalf("scores for 1, 8, 1000 notes: %v %v %v: want increasing, diminishing", s1, s8, s1000)
	}
}

// Texts are trimmed, merged, cut, and limited to the most used.
func TestCanonicalTexts(t *testing.T) {
	long := strings.Repeat("é", MaxLinkTextLen) // 2 bytes a character
	var many []LinkText
	for i := range MaxLinkTexts + 10 {
		many = append(many, LinkText{Text: fmt.Sprintf("t%03d", i), Notes: 1 + i})
	}
	got := canonicalTexts(append(many, LinkText{" t000 ", 5}, LinkText{"", 3}, LinkText{"zero", 0}, LinkText{long, 1}))
	if len(got) != MaxLinkTexts {
		t.Fatalf("%d texts, want %d", len(got), MaxLinkTexts)
	}
	if got[0].Text != "t010" || !slices.IsSortedFunc(got, func(a, b LinkText) int { return strings.Compare(a.Text, b.Text) }) {
		t.Fatalf("kept the least used, or not sorted: %v...", got[:3])
	}
	cut := canonicalTexts([]LinkText{{long, 1}, {"a", 1}, {"a", 2}})
	if len(cut) != 2 || cut[0] != (LinkText{"a", 3}) || len(cut[1].Text) > MaxLinkTextLen || !strings.HasPrefix(long, cut[1].Text) {
		t.Fatalf("merge and cut: %v", cut)
	}
	if canonicalTexts([]LinkText{{" ", 1}, {"x", 0}}) != nil {
		t.Fatal("empty texts kept")
	}
}

// An index updated by any sequence of note changes and link text changes
// ranks and explains exactly as a fresh build of the final state, through
// compactions; and so does its snapshot.
func TestIncrementalLinkTextsMatchFresh(t *testing.T) {
	pool := syntheticSized(300, 40)
	r := rand.New(rand.NewPCG(11, 12))
	var words []string
	for _, it := range pool[:60] {
		words = append(words, strings.Fields(it.Note.Chunks[0].Prose)[:3]...)
	}
	randTexts := func() []LinkText {
		var out []LinkText
		for range r.IntN(4) {
			k := 1 + r.IntN(3)
			var ws []string
			for range k {
				ws = append(ws, words[r.IntN(len(words))])
			}
			out = append(out, LinkText{Text: strings.Join(ws, " "), Notes: 1 + r.IntN(20)})
		}
		return out
	}
	path := func() string { return fmt.Sprintf("02-wiki/n%03d.md", r.IntN(90)) }
	var queries []string
	for range 40 {
		queries = append(queries, words[r.IntN(len(words))]+" "+words[r.IntN(len(words))], words[r.IntN(len(words))])
	}
	for _, it := range pool[:10] {
		queries = append(queries, it.Note.Title)
	}

	ix := New(Options{})
	live := map[string]*markdown.Note{}
	texts := map[string][]LinkText{}
	check := func(label string) {
		t.Helper()
		ref := reference(live)
		var items []LinkItem
		for _, p := range slices.Sorted(maps.Keys(texts)) {
			items = append(items, LinkItem{p, texts[p]})
		}
		ref.SetLinkTextsBatch(items)
		sameRanking(t, label, ix, ref, queries)
		sameExplained(t, label, ix, ref, queries)
		for p, want := range texts {
			if got := ix.LinkTexts(p); !reflect.DeepEqual(got, canonicalTexts(want)) {
				t.Fatalf("%s: LinkTexts(%s) = %v, want %v", label, p, got, canonicalTexts(want))
			}
		}
	}
	for round := range 24 {
		for range 40 {
			p := path()
			switch r.IntN(6) {
			case 0, 1:
				n := pool[r.IntN(len(pool))].Note
				ix.Add(p, n)
				live[p] = n
			case 2:
				ix.Remove(p)
				delete(live, p)
			case 3, 4:
				tx := randTexts()
				ix.SetLinkTexts(p, tx)
				if len(canonicalTexts(tx)) == 0 {
					delete(texts, p)
				} else {
					texts[p] = tx
				}
			case 5:
				var items []LinkItem
				for range 5 {
					p := path()
					tx := randTexts()
					items = append(items, LinkItem{p, tx})
					if len(canonicalTexts(tx)) == 0 {
						delete(texts, p)
					} else {
						texts[p] = tx
					}
				}
				ix.SetLinkTextsBatch(items)
			}
		}
		var batch []Item
		for range 8 {
			p := path()
			n := pool[r.IntN(len(pool))].Note
			batch = append(batch, Item{p, n})
			live[p] = n
		}
		ix.AddBatch(batch)
		if round%6 == 5 {
			check(fmt.Sprintf("round %d", round))
			ix = roundTrip(t, ix)
			check(fmt.Sprintf("round %d, read back", round))
		}
	}
	if ix.compactions == 0 {
		t.Log("no chunk compaction in the churn")
	}
}

// sameExplained compares the explanations of two indexes' hits.
func sameExplained(t *testing.T, label string, got, want *Index, queries []string) {
	t.Helper()
	for _, q := range queries {
		a, b := got.SearchExplained(q, Filter{IncludeRaw: true}, 20), want.SearchExplained(q, Filter{IncludeRaw: true}, 20)
		for i := range min(len(a), len(b)) {
			if !reflect.DeepEqual(a[i].Explain, b[i].Explain) {
				t.Fatalf("%s: %q: hit %d explained %+v, fresh %+v", label, q, i, a[i].Explain, b[i].Explain)
			}
		}
	}
}
