package index

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// Each field a query term matched is named, in TermMatch order, with how it
// matched: exactly, only through its stem, or only as a misspelling (with
// the word it was read as).
func TestExplainFieldsAndKinds(t *testing.T) {
	ix := New(Options{Lang: "en"})
	filler(ix, 10)
	ix.Add("n.md", &markdown.Note{
		Title:       "Kubernetes deployments",
		Frontmatter: map[string]any{"tags": []any{"rollout"}},
		Tags:        []string{"rollout"},
		Chunks: []markdown.Chunk{
			{Prose: "how we ship"},
			{Headings: []string{"Canary rollout"}, Prose: "the kubernetes canary waits", Code: "kubectl rollout status"},
		},
	})
	hits := ix.SearchExplained("kubernetes rollout", Filter{}, 5)
	got := map[int][]TermMatch{}
	for _, h := range hits {
		if h.Path == "n.md" {
			got[h.Chunk] = h.Explain.Terms
		}
	}
	want := map[int][]TermMatch{
		0: {
			{Term: "kubernetes", Fields: []string{FieldTitle}, Match: "exact"},
			{Term: "rollout", Fields: []string{FieldTags}, Match: "exact"},
		},
		1: {
			{Term: "kubernetes", Fields: []string{FieldProse}, Match: "exact"},
			{Term: "rollout", Fields: []string{FieldHeading, FieldTags, FieldCode}, Match: "exact"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("explanations\n%+v\nwant\n%+v", got, want)
	}

	// "deploying" is not in the vault: its stem matches the title's
	// "deployments"; "kubernets" is read as "kubernetes".
	hits = ix.SearchExplained("deploying kubernets", Filter{}, 5)
	if len(hits) == 0 || hits[0].Path != "n.md" || hits[0].Chunk != 0 {
		t.Fatalf("hits %v", paths(hits))
	}
	want0 := []TermMatch{
		{Term: "deploying", Fields: []string{FieldTitle}, Match: "stem"},
		{Term: "kubernets", Fields: []string{FieldTitle}, Match: "fuzzy", As: []string{"kubernetes"}},
	}
	if got := hits[0].Explain.Terms; !reflect.DeepEqual(got, want0) {
		t.Fatalf("stem and fuzzy: %+v, want %+v", got, want0)
	}
}

// A query whose words follow each other in a title earns that note's first
// chunk the title phrase bonus: two notes with the same words, only one with
// them in order, rank that one first, and the explanation names the pair.
func TestTitlePhraseBonus(t *testing.T) {
	ix := New(Options{})
	filler(ix, 20)
	ix.Add("a.md", titled("Quick switcher", "jump between notes"))
	ix.Add("b.md", titled("Switcher for quick notes", "jump between notes"))
	ix.Add("c.md", &markdown.Note{Title: "Jumping", Aliases: []string{"quick switcher"}, Chunks: []markdown.Chunk{{Prose: "more"}}})
	hits := ix.SearchExplained("quick switcher", Filter{}, 5)
	if got := paths(hits); len(got) < 3 || got[2] != "b.md#0" {
		t.Fatalf("order %v: b.md, whose title has the words apart, should be last", got)
	}
	for _, h := range hits {
		e := h.Explain
		if h.Path == "b.md" {
			if e.TitlePhrase != nil || e.TitleBonus != 0 {
				t.Errorf("b.md explained with a phrase: %+v", e)
			}
			continue
		}
		if !slices.Equal(e.TitlePhrase, []string{"quick switcher"}) || e.TitleBonus <= 0 {
			t.Errorf("%s: phrase %v bonus %v, want [quick switcher] > 0", h.Path, e.TitlePhrase, e.TitleBonus)
		}
	}
	sa, _ := scoreOf(hits, "a.md", 0)
	sb, _ := scoreOf(hits, "b.md", 0)
	if sa-sb < hits[0].Explain.TitleBonus*0.5 {
		t.Errorf("the bonus does not show in the scores: a %v b %v bonus %v", sa, sb, hits[0].Explain.TitleBonus)
	}
	// One word, or words of different titles (title then alias), earn none.
	for _, q := range []string{"switcher", "jumping quick"} {
		for _, h := range ix.SearchExplained(q, Filter{}, 5) {
			if h.Explain.TitlePhrase != nil {
				t.Errorf("%q: %s has a phrase %v", q, h.Path, h.Explain.TitlePhrase)
			}
		}
	}
	// CJK bigrams that follow each other are no phrase.
	ix.Add("zh.md", titled("插入文件", "内容"))
	for _, h := range ix.SearchExplained("插入文件", Filter{}, 5) {
		if h.Explain.TitlePhrase != nil {
			t.Errorf("CJK title phrase: %v", h.Explain.TitlePhrase)
		}
	}
}

// explain scores postings again with scorer.value: it gives the scores
// Search gives (the fast path of prose-only postings included).
func TestExplainValueMatchesSearch(t *testing.T) {
	ix := New(Options{})
	items := syntheticSized(200, 60)
	ix.AddBatch(items)
	var qs []string
	for _, it := range items[:20] {
		// single words: the score is that of one list (no stems: no
		// language detected in the synthetic text)
		if w := strings.Fields(it.Note.Chunks[0].Prose)[0]; !strings.Contains(w, "-") && len(ix.an.QueryTerms(w)) == 1 {
			qs = append(qs, w)
		}
	}
	checked := 0
	for _, q := range qs {
		hits := ix.SearchExplained(q, Filter{}, 0)
		ix.mu.RLock()
		s := getScratch(len(ix.cnote))
		sc := ix.newScorer(s)
		id, ok := ix.exact.id(q)
		for _, h := range hits {
			if !ok {
				break
			}
			slot := ix.byPath[h.Path]
			c := ix.notes[slot].first + uint32(h.Chunk)
			tf, found := ix.seek(false, id, &ix.exact.post[id], c)
			wi, links := sc.factor(1, ix.exact.df[id])
			if v := sc.value(c, tf, ix.exact.big, wi, links) * ix.notes[slot].mult; !found || v != h.Score {
				t.Errorf("%q %s#%d: value %v (found %v), Search %v", q, h.Path, h.Chunk, v, found, h.Score)
			}
			checked++
		}
		putScratch(s)
		ix.mu.RUnlock()
	}
	if checked < 100 {
		t.Fatalf("only %d hits checked", checked)
	}
}

// seek finds every posting of a long list through its skip table, and
// nothing else; the table is rebuilt when the list changes.
func TestSeekSkipTable(t *testing.T) {
	ix := New(Options{})
	var items []Item
	for i := range 500 {
		text := "common"
		if i%3 == 0 {
			text += " third"
		}
		items = append(items, Item{Path: fmtPath(i), Note: prose(text)})
	}
	ix.AddBatch(items)
	id, _ := ix.exact.id("third")
	l := &ix.exact.post[id]
	want := map[uint32]bool{}
	it := l.iter()
	for c, _, ok := it.next(); ok; c, _, ok = it.next() {
		want[c] = true
	}
	for c := range uint32(len(ix.cnote) + 2) {
		if _, ok := ix.seek(false, id, l, c); ok != want[c] {
			t.Fatalf("seek %d: %v, want %v", c, ok, want[c])
		}
	}
	tab := ix.skipTableOf(false, id, l)
	ix.Add(fmtPath(1000), prose("third"))
	if again := ix.skipTableOf(false, id, &ix.exact.post[id]); again == tab {
		t.Fatal("skip table kept after the list grew")
	}
	last := ix.exact.post[id].last
	if _, ok := ix.seek(false, id, &ix.exact.post[id], last); !ok {
		t.Fatal("the new posting is not found")
	}
}

func fmtPath(i int) string {
	return "n/" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)) + ".md"
}

// Search and SearchExplained give the same hits in the same order with the
// same scores; only the explanation differs.
func TestSearchEqualsSearchExplained(t *testing.T) {
	ix := New(Options{Lang: "en"})
	filler(ix, 30)
	ix.Add("k.md", &markdown.Note{Title: "Kubernetes deployments", Tags: []string{"rollout"}, Chunks: []markdown.Chunk{
		{Prose: "how we ship plugins"}, {Headings: []string{"Canary rollout"}, Prose: "the kubernetes canary waits for notes", Code: "kubectl rollout status"},
	}})
	ix.Add("99-archive/old.md", titled("Old settings", "plugins settings from before"))
	ix.SetLinkTexts("k.md", []LinkText{{Text: "deploy guide", Notes: 2}})
	for _, q := range []string{"plugins", "notes settings", "kubernets rollout", "deploy guide", "filler 7", "settings plugins notes more", "absent"} {
		for _, max := range []int{0, 1, 3} {
			for _, f := range []Filter{{}, {Folder: "filler"}, {Tags: []string{"rollout"}}} {
				a, b := ix.Search(q, f, max), ix.SearchExplained(q, f, max)
				if len(a) != len(b) {
					t.Fatalf("%q max %d %+v: %d hits, explained %d", q, max, f, len(a), len(b))
				}
				for i := range a {
					if a[i].Explain != nil || b[i].Explain == nil {
						t.Fatalf("%q: hit %d explanations %v / %v", q, i, a[i].Explain, b[i].Explain)
					}
					b[i].Explain = nil
					if a[i] != b[i] {
						t.Fatalf("%q max %d %+v: hit %d = %+v, explained %+v", q, max, f, i, a[i], b[i])
					}
				}
			}
		}
	}
}
