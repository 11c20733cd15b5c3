package index

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// prose returns a one-chunk note with no title, only prose.
func prose(text string) *markdown.Note {
	return &markdown.Note{Chunks: []markdown.Chunk{{Prose: text}}}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// sameHit: the same chunk, score and flags, explained the same way.
func sameHit(a, b Hit) bool {
	ea, eb := a.Explain, b.Explain
	a.Explain, b.Explain = nil, nil
	return a == b && reflect.DeepEqual(ea, eb)
}

func scoreOf(hits []Hit, path string, chunk int) (float64, bool) {
	for _, h := range hits {
		if h.Path == path && h.Chunk == chunk {
			return h.Score, true
		}
	}
	return 0, false
}

func paths(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s#%d", h.Path, h.Chunk))
	}
	return out
}

// TestBM25HandComputed checks scores against values computed by hand for a
// 3-chunk corpus: N = 3, lengths 3, 2, 4, average 3, k1 1.2, b 0.75,
// idf = ln(1 + (N - df + 0.5) / (df + 0.5)).
func TestBM25HandComputed(t *testing.T) {
	ix := New(Options{})
	ix.Add("a.md", prose("apple banana apple"))        // length 3
	ix.Add("b.md", prose("banana cherry"))             // length 2
	ix.Add("c.md", prose("cherry cherry cherry date")) // length 4
	// apple: df 1, idf = ln(1 + 2.5/1.5) = ln(2.6667) = 0.980829
	//   a: tf 2, K = 1.2 x (0.25 + 0.75 x 3/3) = 1.2 -> 0.980829 x 2 x 2.2 / 3.2 = 1.348640
	// banana: df 2, idf = ln(1 + 1.5/2.5) = ln(1.6) = 0.470004
	//   a: tf 1, K = 1.2 -> 0.470004 x 2.2 / 2.2 = 0.470004
	//   b: tf 1, K = 1.2 x (0.25 + 0.5) = 0.9 -> 0.470004 x 2.2 / 1.9 = 0.544215
	// cherry: df 2, idf 0.470004
	//   c: tf 3, K = 1.2 x (0.25 + 1) = 1.5 -> 0.470004 x 6.6 / 4.5 = 0.689339
	tests := []struct {
		query string
		want  map[string]float64
		order []string
	}{
		{"apple", map[string]float64{"a.md": 1.3486402228911236}, []string{"a.md#0"}},
		{"banana", map[string]float64{"a.md": 0.47000362924573563, "b.md": 0.5442147286003255}, []string{"b.md#0", "a.md#0"}},
		{"cherry", map[string]float64{"b.md": 0.5442147286003255, "c.md": 0.6893386562270789}, []string{"c.md#0", "b.md#0"}},
		{"apple banana", map[string]float64{"a.md": 1.3486402228911236 + 0.47000362924573563, "b.md": 0.5442147286003255}, []string{"a.md#0", "b.md#0"}},
	}
	for _, tc := range tests {
		hits := ix.Search(tc.query, Filter{}, 10)
		if got := paths(hits); !slices.Equal(got, tc.order) {
			t.Errorf("%q: order %v, want %v", tc.query, got, tc.order)
		}
		for p, want := range tc.want {
			got, ok := scoreOf(hits, p, 0)
			if !ok || !near(got, want) {
				t.Errorf("%q: score of %s = %v (found %v), want %v", tc.query, p, got, ok, want)
			}
		}
	}
}

// TestHeadNormalisation checks, by hand, that head occurrences are diluted by
// a long chunk less than body occurrences (bHead 0.25, bBody 0.75).
func TestHeadNormalisation(t *testing.T) {
	ix := New(Options{})
	// One-letter file names are too short to be terms.
	ix.Add("h.md", &markdown.Note{Chunks: []markdown.Chunk{{Headings: []string{"Kiwi"},
		Prose: "alpha bravo charlie delta echo foxtrot golf hotel india"}}}) // length 3 + 9 = 12
	ix.Add("s.md", prose("alpha mango")) // length 2
	// N 2, average length 7, relative length of h.md 12/7.
	// kiwi: df 1, idf ln(1 + 1.5/1.5) = ln 2; head tf 3 normalised by
	// 0.75 + 0.25 x 12/7 = 1.178571: tf~ = 2.545455, score = ln 2 x 2.2 x
	// tf~ / (tf~ + 1.2) = 1.036356.
	tfKiwi := 3 / (0.75 + 0.25*12.0/7)
	if got, want := scoreFor(t, ix, "kiwi", "h.md"), math.Log(2)*2.2*tfKiwi/(tfKiwi+1.2); !near(got, want) || math.Abs(want-1.036356) > 1e-6 {
		t.Errorf("kiwi: %v, want %v", got, want)
	}
	// alpha: df 2, idf ln(1 + 0.5/2.5) = ln 1.2; in h.md body tf 1
	// normalised by 0.25 + 0.75 x 12/7 = 1.535714: tf~ = 0.651163; in s.md
	// by 0.25 + 0.75 x 2/7 = 0.464286: tf~ = 2.153846.
	tfH, tfS := 1/(0.25+0.75*12.0/7), 1/(0.25+0.75*2.0/7)
	if got, want := scoreFor(t, ix, "alpha", "h.md"), math.Log(1.2)*2.2*tfH/(tfH+1.2); !near(got, want) {
		t.Errorf("alpha in h.md: %v, want %v", got, want)
	}
	if got, want := scoreFor(t, ix, "alpha", "s.md"), math.Log(1.2)*2.2*tfS/(tfS+1.2); !near(got, want) {
		t.Errorf("alpha in s.md: %v, want %v", got, want)
	}
	// Both parts: kiwi in the heading and twice in the prose of one chunk.
	ix2 := New(Options{})
	ix2.Add("k.md", &markdown.Note{Chunks: []markdown.Chunk{{Headings: []string{"Kiwi"}, Prose: "kiwi kiwi"}}}) // length 5
	ix2.Add("s.md", prose("mango papaya papaya"))                                                               // length 3
	// N 2, average 4, relative length 5/4; idf ln 2; tf~ = 3/(0.75 + 0.25 x
	// 1.25) + 2/(0.25 + 0.75 x 1.25) = 2.823529 + 1.684211 = 4.507740.
	tf := 3/(0.75+0.25*1.25) + 2/(0.25+0.75*1.25)
	if got, want := scoreFor(t, ix2, "kiwi", "k.md"), math.Log(2)*2.2*tf/(tf+1.2); !near(got, want) || math.Abs(tf-4.507740) > 1e-6 {
		t.Errorf("kiwi in heading and prose: %v, want %v", got, want)
	}
}

func TestFileNameAsTitle(t *testing.T) {
	tests := []struct{ path, title, want string }{
		{"Plugins/obsidian-excalidraw-plugin.md", "Excalidraw", "obsidian excalidraw plugin"},
		{"a/templater_obsidian.md", "Templater", "templater obsidian"},
		{"Plugins/Bookmarks.md", "Bookmarks", ""},
		{"periodic-notes.md", "Periodic Notes", ""},
		{"x/Periodic  Notes.md", "periodic notes", ""},
		{"x/notes.v2.md", "Other", "notes.v2"},
		{"noext", "Other", "noext"},
		{"x/.md", "", ""},
	}
	for _, tc := range tests {
		if got := fileTitle(tc.path, tc.title); got != tc.want {
			t.Errorf("fileTitle(%q, %q) = %q, want %q", tc.path, tc.title, got, tc.want)
		}
	}
	ix := New(Options{})
	ix.Add("Plugins/obsidian-excalidraw-plugin.md", &markdown.Note{Title: "Drawings", Chunks: []markdown.Chunk{{Prose: "sketch"}}})
	ix.Add("Plugins/zebra.md", &markdown.Note{Title: "Zebra", Chunks: []markdown.Chunk{{Prose: "stripes"}}})
	ix.Add("Plugins/lion.md", &markdown.Note{Title: "Lion", Chunks: []markdown.Chunk{{Prose: "mane"}}})
	if got := paths(ix.Search("excalidraw", Filter{}, 5)); !slices.Equal(got, []string{"Plugins/obsidian-excalidraw-plugin.md#0"}) {
		t.Errorf("excalidraw: %v", got)
	}
	// A title equal to the file name counts once: zebra.md has length 4
	// (title 3 + prose 1), like lion.md; "obsidian", "excalidraw", "plugin",
	// "drawings" and "sketch" make 3 x 4 + 1 = 13. Average 7, N 3, idf
	// ln(1 + 2.5/1.5); head tf 3 normalised by 0.75 + 0.25 x 4/7. The
	// query is the note's title: the full title bonus, FullTitleWeight x
	// the word's factor (idf x (k1 + 1)), comes on top.
	tf := 3 / (0.75 + 0.25*4.0/7)
	idf := math.Log(1 + 2.5/1.5)
	if got, want := scoreFor(t, ix, "zebra", "Plugins/zebra.md"), idf*2.2*tf/(tf+1.2)+FullTitleWeight*idf*2.2; !near(got, want) {
		t.Errorf("zebra: %v, want %v", got, want)
	}
}

func TestFieldWeights(t *testing.T) {
	ix := New(Options{})
	ix.Add("heading.md", &markdown.Note{Chunks: []markdown.Chunk{
		{Prose: "intro words here"},
		{Headings: []string{"Backoff"}, Prose: "something else entirely"},
	}})
	ix.Add("prose.md", prose("backoff something else entirely"))
	ix.Add("code.md", &markdown.Note{Chunks: []markdown.Chunk{{Prose: "something else entirely", Code: "backoff()"}}})
	ix.Add("tags.md", &markdown.Note{Tags: []string{"backoff"}, Frontmatter: map[string]any{"tags": []any{"backoff"}},
		Chunks: []markdown.Chunk{{Prose: "something else entirely"}}})
	hits := ix.Search("backoff", Filter{}, 10)
	want := []string{"heading.md#1", "tags.md#0", "prose.md#0", "code.md#0"}
	if got := paths(hits); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v (heading 3 > tags 2 > prose 1 > code 0.5)", got, want)
	}
}

func TestTitleAndAliasesInFirstChunkHeading(t *testing.T) {
	ix := New(Options{})
	ix.Add("n.md", &markdown.Note{Title: "Zebra Notes", Aliases: []string{"Quagga"}, Chunks: []markdown.Chunk{
		{Prose: "first"}, {Headings: []string{"More"}, Prose: "second"},
	}})
	for _, q := range []string{"zebra", "quagga"} {
		hits := ix.Search(q, Filter{}, 10)
		if got := paths(hits); !slices.Equal(got, []string{"n.md#0"}) {
			t.Errorf("%q: %v, want only the first chunk", q, got)
		}
	}
}

func TestExactBeatsStemOnly(t *testing.T) {
	ix := New(Options{})
	ix.Add("exact.md", prose("the retry loop"))
	ix.Add("stem.md", prose("the retries loop"))
	ix.Add("other.md", prose("unrelated text"))
	hits := ix.Search("retry", Filter{}, 10)
	if got := paths(hits); !slices.Equal(got, []string{"exact.md#0", "stem.md#0"}) {
		t.Fatalf("retry: %v, want the exact match first and the stem match second", got)
	}
	if hits[1].Score >= hits[0].Score || hits[1].Fuzzy {
		t.Errorf("stem-only match should score lower and not be fuzzy: %+v", hits)
	}
	// By hand: N 3; the file names "exact" and "stem" are head text of
	// weight 3 ("other" is a stopword), so the lengths are 5, 5, 2, average
	// 4. In exact.md and stem.md the body tf is 1, normalised by
	// 0.25 + 0.75 x 5/4 = 1.1875: tf~ = 1/1.1875 = 0.842105. The stem
	// "retri" is in 2 chunks: idf ln(1 + 1.5/2.5) = ln 1.6, score =
	// StemWeight x ln 1.6 x 2.2 x tf~ / (tf~ + 1.2).
	tfn := 1 / 1.1875
	if want := DefaultStemWeight * math.Log(1.6) * 2.2 * tfn / (tfn + 1.2); !near(hits[1].Score, want) {
		t.Errorf("stem score %v, want %v", hits[1].Score, want)
	}
	// The exact match: df 1, idf ln(1 + 2.5/1.5); its own stem match is
	// weaker, so the exact score stands.
	if want := math.Log(1+2.5/1.5) * 2.2 * tfn / (tfn + 1.2); !near(hits[0].Score, want) {
		t.Errorf("exact score %v, want %v", hits[0].Score, want)
	}
	hits = ix.Search("retries", Filter{}, 10)
	if got := paths(hits); !slices.Equal(got, []string{"stem.md#0", "exact.md#0"}) {
		t.Errorf("retries: %v", got)
	}
	// Custom weight.
	ix2 := New(Options{StemWeight: 0.25})
	ix2.Add("exact.md", prose("the retry loop"))
	ix2.Add("stem.md", prose("the retries loop"))
	// N 2, both lengths 5 (average 5, so tf~ = tf = 1): exact idf
	// ln(1 + 1.5/1.5) = ln 2, stem idf ln(1 + 0.5/2.5) = ln 1.2.
	a, b := scoreFor(t, ix2, "retry", "exact.md"), scoreFor(t, ix2, "retry", "stem.md")
	if !near(a, math.Log(2)) || !near(b, 0.25*math.Log(1.2)) {
		t.Errorf("StemWeight 0.25: stem %v exact %v", b, a)
	}
}

func scoreFor(t *testing.T, ix *Index, q, path string) float64 {
	t.Helper()
	s, ok := scoreOf(ix.Search(q, Filter{IncludeRaw: true}, 0), path, 0)
	if !ok {
		t.Fatalf("%q: %s not found", q, path)
	}
	return s
}

func TestStemmingPerLanguage(t *testing.T) {
	ix := New(Options{Lang: "en"})
	ix.Add("pt.md", prose("As configurações do servidor são carregadas quando o processo inicia e não mudam depois"))
	ix.Add("en.md", prose("The configuration of the server is loaded when the process starts"))
	ix.Add("ru.md", prose("Настройки сервера загружаются при запуске"))
	if st := ix.Stats(); !slices.Equal(st.LanguagesPresent, []string{"en", "pt", "ru"}) {
		t.Fatalf("languages present %v", st.LanguagesPresent)
	}
	tests := []struct{ q, want string }{
		{"configuração", "pt.md"}, // pt stem of configuracoes/configuracao
		{"configurations", "en.md"},
		{"настройка", "ru.md"},
		{"starting", "en.md"},
	}
	for _, tc := range tests {
		hits := ix.Search(tc.q, Filter{}, 10)
		if len(hits) == 0 || hits[0].Path != tc.want {
			t.Errorf("%q: %v, want %s first", tc.q, paths(hits), tc.want)
		}
	}
}

func TestFuzzy(t *testing.T) {
	ix := New(Options{})
	ix.Add("a.md", prose("exponential backoff with jitter"))
	ix.Add("b.md", prose("circuit breaker pattern"))
	exact := scoreFor(t, ix, "backoff", "a.md")
	hits := ix.Search("bakoff", Filter{}, 10) // distance 1, length 6
	if len(hits) != 1 || hits[0].Path != "a.md" || !hits[0].Fuzzy {
		t.Fatalf("bakoff: %+v", hits)
	}
	if !near(hits[0].Score, DefaultFuzzyWeight*exact) {
		t.Errorf("fuzzy score %v, want %v x %v", hits[0].Score, DefaultFuzzyWeight, exact)
	}
	// Length 8+: distance 2.
	if hits := ix.Search("exponentail", Filter{}, 10); len(hits) != 1 || !hits[0].Fuzzy {
		t.Errorf("exponentail (2 edits): %+v", hits)
	}
	// Under 8: distance 2 is not expanded; under 4 nothing is.
	if hits := ix.Search("bkoff", Filter{}, 10); hits != nil {
		t.Errorf("bkoff (2 edits, length 5) should not match: %+v", hits)
	}
	if hits := ix.Search("jiter", Filter{}, 10); len(hits) != 1 {
		t.Errorf("jiter (1 edit, length 5) should match: %+v", hits)
	}
	// Only the nearest spellings: with one a single edit away, those two
	// edits away are left out.
	ix2 := New(Options{})
	ix2.Add("a.md", prose("zanzibar"))
	ix2.Add("b.md", prose("zunzabor"))
	if got := paths(ix2.Search("zanzibor", Filter{}, 10)); !slices.Equal(got, []string{"a.md#0"}) {
		t.Errorf("zanzibor (zanzibar 1 edit away, zunzabor 2): %v", got)
	}
	if got := paths(ix2.Search("zanzabur", Filter{}, 10)); len(got) != 2 {
		t.Errorf("zanzabur (both 2 edits away): %v", got)
	}
	// A chunk matched exactly by another term is not fuzzy.
	hits = ix.Search("bakoff jitter", Filter{}, 10)
	if len(hits) != 1 || hits[0].Fuzzy {
		t.Errorf("bakoff jitter: %+v", hits)
	}
	// A term in the vocabulary is not expanded.
	ix.Add("c.md", prose("bakoff is a word here"))
	if hits := ix.Search("bakoff", Filter{}, 10); len(hits) != 1 || hits[0].Path != "c.md" {
		t.Errorf("bakoff in vocabulary: %+v", hits)
	}
}

func TestNoteFactors(t *testing.T) {
	ix := New(Options{})
	text := "distinctive content words"
	add := func(path, typ string) {
		n := prose(text)
		n.Type = typ
		ix.Add(path, n)
	}
	// One-letter file names (too short to be terms): the chunks are the same
	// but for the note factors.
	add("02-wiki/p.md", "wiki")
	add("02-wiki/m.md", "MOC")
	add("04-daily/d.md", "daily")
	add("99-archive/o.md", "wiki")
	add("99-archive/m.md", "moc")
	add("99-archived/n.md", "note")
	hits := ix.Search("distinctive", Filter{}, 0)
	base, _ := scoreOf(hits, "02-wiki/p.md", 0)
	want := map[string]float64{
		"02-wiki/m.md":     0.3,
		"04-daily/d.md":    0.3,
		"99-archive/o.md":  0.4,
		"99-archive/m.md":  0.12,
		"99-archived/n.md": 1,
	}
	for p, f := range want {
		got, ok := scoreOf(hits, p, 0)
		if !ok || !near(got, f*base) {
			t.Errorf("%s: %v, want %v x %v", p, got, f, base)
		}
	}
}

func TestRawExcluded(t *testing.T) {
	ix := New(Options{})
	ix.Add("01-raw/capture.md", prose("ephemeral capture"))
	ix.Add("01-rawish/x.md", prose("ephemeral other"))
	if got := paths(ix.Search("ephemeral", Filter{}, 10)); !slices.Equal(got, []string{"01-rawish/x.md#0"}) {
		t.Errorf("raw not excluded: %v", got)
	}
	if got := ix.Search("ephemeral", Filter{IncludeRaw: true}, 10); len(got) != 2 {
		t.Errorf("IncludeRaw: %v", paths(got))
	}
	if got := ix.Search("ephemeral", Filter{Folder: "01-raw"}, 10); len(got) != 1 || got[0].Path != "01-raw/capture.md" {
		t.Errorf("folder 01-raw implies raw: %v", paths(got))
	}
	if ix.Matches("01-raw/capture.md", Filter{}) || !ix.Matches("01-raw/capture.md", Filter{IncludeRaw: true}) {
		t.Errorf("Matches does not apply the raw rule")
	}
}

func TestFilters(t *testing.T) {
	ix := New(Options{})
	mk := func(path, typ, status string, tags ...string) {
		n := prose("shared keyword")
		n.Type, n.Status, n.Tags = typ, status, tags
		ix.Add(path, n)
	}
	mk("02-wiki/go/a.md", "wiki", "active", "go", "concurrency")
	mk("02-wiki/go/deep/b.md", "wiki", "draft", "Go")
	mk("02-wiki/golang/c.md", "wiki", "active", "go/generics")
	mk("03-projects/p.md", "project", "Active", "work")
	mk("notes/n.md", "note", "", "#go")
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"none", Filter{}, []string{"02-wiki/go/a.md", "02-wiki/go/deep/b.md", "02-wiki/golang/c.md", "03-projects/p.md", "notes/n.md"}},
		{"type", Filter{Type: "WIKI"}, []string{"02-wiki/go/a.md", "02-wiki/go/deep/b.md", "02-wiki/golang/c.md"}},
		{"type pt", Filter{Type: "projeto"}, []string{"03-projects/p.md"}},
		{"folder boundary", Filter{Folder: "02-wiki/go"}, []string{"02-wiki/go/a.md", "02-wiki/go/deep/b.md"}},
		{"folder trailing slash", Filter{Folder: "02-wiki/go/"}, []string{"02-wiki/go/a.md", "02-wiki/go/deep/b.md"}},
		{"folder ./ and backslash", Filter{Folder: `./02-wiki\go\deep`}, []string{"02-wiki/go/deep/b.md"}},
		{"folder none", Filter{Folder: "02-wiki/g"}, nil},
		{"status", Filter{Status: "active"}, []string{"02-wiki/go/a.md", "02-wiki/golang/c.md", "03-projects/p.md"}},
		{"tag", Filter{Tags: []string{"#GO"}}, []string{"02-wiki/go/a.md", "02-wiki/go/deep/b.md", "02-wiki/golang/c.md", "notes/n.md"}},
		{"tags all", Filter{Tags: []string{"go", "concurrency"}}, []string{"02-wiki/go/a.md"}},
		// A tag holds no comma or space: one string of several is read
		// as they are in a frontmatter.
		{"tags in one string", Filter{Tags: []string{"go, concurrency"}}, []string{"02-wiki/go/a.md"}},
		{"tags with spaces", Filter{Tags: []string{"#go #concurrency"}}, []string{"02-wiki/go/a.md"}},
		{"nested tag", Filter{Tags: []string{"go/generics"}}, []string{"02-wiki/golang/c.md"}},
		{"combined", Filter{Type: "wiki", Folder: "02-wiki", Status: "active", Tags: []string{"go"}}, []string{"02-wiki/go/a.md", "02-wiki/golang/c.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, h := range ix.Search("keyword", tc.f, 10) {
				got = append(got, h.Path)
			}
			sort.Strings(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Search: %v, want %v", got, tc.want)
			}
			var m []string
			for _, p := range []string{"02-wiki/go/a.md", "02-wiki/go/deep/b.md", "02-wiki/golang/c.md", "03-projects/p.md", "notes/n.md"} {
				if ix.Matches(p, tc.f) {
					m = append(m, p)
				}
			}
			if !slices.Equal(m, tc.want) {
				t.Errorf("Matches: %v, want %v", m, tc.want)
			}
		})
	}
	if ix.Matches("absent.md", Filter{}) {
		t.Errorf("Matches of an absent note")
	}
}

// TestMatcherPreparesOnce: a Matcher prepares its filter once (a note
// tested costs no allocation, however many tags the filter has), and a tag
// asked several times is kept once.
func TestMatcherPreparesOnce(t *testing.T) {
	ix := New(Options{})
	n := prose("shared keyword")
	n.Tags = []string{"go"}
	ix.Add("a.md", n)
	tags := make([]string, 1000)
	for i := range tags {
		tags[i] = "#GO, go"
	}
	f := Filter{Tags: tags}
	if pf := prepareFilter(f); !slices.Equal(pf.tags, []string{"go"}) {
		t.Fatalf("prepared tags %q", pf.tags)
	}
	m := ix.Matcher(f)
	if !m("a.md") || m("b.md") || !ix.Matches("a.md", f) {
		t.Fatal("wrong answers")
	}
	if a := testing.AllocsPerRun(20, func() { m("a.md") }); a != 0 {
		t.Fatalf("%v allocations a note: the filter is prepared again", a)
	}
}

func TestFilterBeforeCut(t *testing.T) {
	ix := New(Options{})
	for i := range 20 {
		n := prose(strings.Repeat("needle ", 20-i) + "hay")
		n.Type = "note"
		if i == 19 {
			n.Type = "wiki" // the weakest match
		}
		ix.Add(fmt.Sprintf("n%02d.md", i), n)
	}
	hits := ix.Search("needle", Filter{Type: "wiki"}, 3)
	if len(hits) != 1 || hits[0].Path != "n19.md" {
		t.Errorf("filter applied after the cut: %v", paths(hits))
	}
}

func TestTiesAndMax(t *testing.T) {
	ix := New(Options{})
	for _, p := range []string{"c.md", "a.md", "b.md"} {
		ix.Add(p, &markdown.Note{Chunks: []markdown.Chunk{{Prose: "equal words"}, {Prose: "equal words"}}})
	}
	hits := ix.Search("equal", Filter{}, 0)
	want := []string{"a.md#0", "a.md#1", "b.md#0", "b.md#1", "c.md#0", "c.md#1"}
	if got := paths(hits); !slices.Equal(got, want) {
		t.Errorf("ties: %v, want %v", got, want)
	}
	for max := 1; max <= 7; max++ {
		got := paths(ix.Search("equal", Filter{}, max))
		if !slices.Equal(got, want[:min(max, len(want))]) {
			t.Errorf("max %d: %v", max, got)
		}
	}
}

func TestTopKMatchesFullSort(t *testing.T) {
	items := syntheticSized(300, 60)
	ix := New(Options{})
	ix.AddBatch(items)
	for _, it := range items[:20] {
		q := it.Note.Title
		all := ix.Search(q, Filter{}, 0)
		for _, k := range []int{1, 5, 17} {
			got := ix.Search(q, Filter{}, k)
			if !slices.EqualFunc(got, all[:min(k, len(all))], sameHit) {
				t.Fatalf("%q top %d differs from the full ranking", q, k)
			}
		}
	}
}

func TestQueryLimits(t *testing.T) {
	ix := New(Options{})
	ix.Add("late.md", prose("zzlateterm"))
	var words []string
	for i := range MaxQueryTerms {
		words = append(words, fmt.Sprintf("filler%03d", i))
	}
	if hits := ix.Search(strings.Join(words, " ")+" zzlateterm", Filter{}, 10); hits != nil {
		t.Errorf("the 65th term was used: %v", paths(hits))
	}
	if hits := ix.Search(strings.Repeat(" ", MaxQueryChars)+"zzlateterm", Filter{}, 10); hits != nil {
		t.Errorf("text past 1,024 characters was used: %v", paths(hits))
	}
	if hits := ix.Search(strings.Repeat(" ", MaxQueryChars-10)+"zzlateterm", Filter{}, 10); len(hits) != 1 {
		t.Errorf("term within 1,024 characters not found: %v", paths(hits))
	}
	if ix.Search("", Filter{}, 10) != nil || ix.Search("the of", Filter{}, 10) != nil {
		t.Errorf("empty queries should give nil")
	}
}

func TestSuggest(t *testing.T) {
	ix := New(Options{})
	ix.Add("a.md", prose("kubernetes cluster deploy deployment docker dockerd"))
	tests := []struct {
		q    string
		max  int
		want []string
	}{
		{"dokcer", 5, []string{"docker"}}, // a transposition is 2; dockerd is 3 away
		{"deplo", 5, []string{"deploy"}},
		{"clustr kubernets", 5, []string{"cluster", "kubernetes"}},
		{"dockr", 5, []string{"docker", "dockerd"}}, // 1, then 2
		{"dockr", 1, []string{"docker"}},
		{"zzzzzz", 5, nil},
		{"docker zzzz", 5, nil}, // a term exists: no suggestions
	}
	for _, tc := range tests {
		got := ix.Suggest(tc.q, tc.max)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Suggest(%q, %d) = %q, want %q", tc.q, tc.max, got, tc.want)
		}
	}
	// Distance first, then alphabetical.
	ix2 := New(Options{})
	ix2.Add("b.md", prose("cart card care bard cards"))
	if got, want := ix2.Suggest("carx", 10), []string{"card", "care", "cart", "bard", "cards"}; !slices.Equal(got, want) {
		t.Errorf("ordering: %q, want %q", got, want)
	}
	// A term with every character replaced is no spelling of a short
	// query term: "00" is 2 away from "링크", "三" 1 away from "链".
	ix3 := New(Options{})
	ix3.Add("c.md", prose("00 01 ab 링 링고 三 上 下链"))
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"링크", []string{"링", "링고"}},
		{"链", []string{"下链"}},
		{"ax", []string{"ab"}},
		{"0x", []string{"00", "01"}},
		{"xy", nil},
	} {
		if got := ix3.Suggest(tc.q, 5); !slices.Equal(got, tc.want) {
			t.Errorf("Suggest(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

// TestSingleCJKCharacter: CJK text is indexed as bigrams, so a character
// searched alone finds the notes whose words hold it, as a close spelling
// (fuzzy), the most frequent words first; a character of no word finds
// nothing, and a character that stood alone in a note is an exact match.
func TestSingleCJKCharacter(t *testing.T) {
	ix := New(Options{})
	ix.Add("link.md", prose("内部链接的写法"))
	ix.Add("chain.md", prose("区块链技术"))
	ix.Add("cat.md", prose("我的猫 。猫。"))
	paths := func(hits []Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.Path)
		}
		slices.Sort(out)
		return out
	}
	if got := paths(ix.Search("链", Filter{}, 10)); !slices.Equal(got, []string{"chain.md", "link.md"}) {
		t.Errorf("链 found %v", got)
	}
	for _, h := range ix.SearchExplained("链", Filter{}, 10) {
		if len(h.Explain.Terms) != 1 || h.Explain.Terms[0].Match != "fuzzy" {
			t.Errorf("%s: %+v, want a close-spelling match", h.Path, h.Explain.Terms)
		}
	}
	if got := paths(ix.Search("猫", Filter{}, 10)); !slices.Equal(got, []string{"cat.md"}) {
		t.Errorf("猫 found %v", got)
	}
	if got := ix.Search("鲸", Filter{}, 10); len(got) != 0 {
		t.Errorf("鲸 found %v", paths(got))
	}
	if got := ix.Search("x", Filter{}, 10); len(got) != 0 {
		t.Errorf("a one-letter term absent from the vocabulary found %v", paths(got))
	}
}

// reference builds a fresh index from the final notes.
func reference(notes map[string]*markdown.Note) *Index {
	ix := New(Options{})
	var items []Item
	for p, n := range notes {
		items = append(items, Item{p, n})
	}
	ix.AddBatch(items)
	return ix
}

func sameRanking(t *testing.T, label string, got, want *Index, queries []string) {
	t.Helper()
	for _, q := range queries {
		a, b := got.Search(q, Filter{IncludeRaw: true}, 0), want.Search(q, Filter{IncludeRaw: true}, 0)
		if len(a) != len(b) {
			t.Fatalf("%s: %q: %d hits, fresh index %d", label, q, len(a), len(b))
		}
		for i := range a {
			if a[i].Path != b[i].Path || a[i].Chunk != b[i].Chunk || a[i].Fuzzy != b[i].Fuzzy || !near(a[i].Score, b[i].Score) {
				t.Fatalf("%s: %q: hit %d = %+v, fresh index %+v", label, q, i, a[i], b[i])
			}
		}
		if s1, s2 := got.Suggest(q, 5), want.Suggest(q, 5); !slices.Equal(s1, s2) {
			t.Fatalf("%s: Suggest(%q) = %q, fresh %q", label, q, s1, s2)
		}
	}
	gs, ws := got.Stats(), want.Stats()
	if gs.Notes != ws.Notes || gs.Chunks != ws.Chunks || gs.Terms != ws.Terms || gs.Stems != ws.Stems ||
		gs.Postings != ws.Postings || !near(gs.AvgChunkLength, ws.AvgChunkLength) {
		t.Fatalf("%s: stats %+v, fresh %+v", label, gs, ws)
	}
}

func TestIncrementalMatchesFresh(t *testing.T) {
	pool := syntheticSized(400, 60)
	r := rand.New(rand.NewPCG(7, 9))
	var queries []string
	for _, it := range pool[:15] {
		words := strings.Fields(it.Note.Chunks[0].Prose)
		queries = append(queries, it.Note.Title, words[0]+" "+words[len(words)-1], words[1]+"x")
	}
	queries = append(queries, "zzznothing")

	ix := New(Options{})
	live := map[string]*markdown.Note{}
	// Initial batch, with a duplicate path (last wins) and a nil note.
	batch := append([]Item{}, pool[:100]...)
	batch = append(batch, Item{pool[0].Path, pool[200].Note}, Item{"nil.md", nil})
	ix.AddBatch(batch)
	for _, it := range pool[:100] {
		live[it.Path] = it.Note
	}
	live[pool[0].Path] = pool[200].Note
	sameRanking(t, "after batch", ix, reference(live), queries)

	// Churn: adds, replacements, removals, batches with replacements; enough
	// to trigger the compactions.
	for round := range 20 {
		for range 60 {
			it := pool[r.IntN(len(pool))]
			path := fmt.Sprintf("02-wiki/d%d/n%05d.md", r.IntN(3), r.IntN(150))
			switch r.IntN(4) {
			case 0, 1:
				ix.Add(path, it.Note)
				live[path] = it.Note
			case 2:
				ix.Remove(path)
				delete(live, path)
			case 3:
				ix.Add(path, nil)
				delete(live, path)
			}
		}
		var items []Item
		for range 10 {
			it := pool[r.IntN(len(pool))]
			path := fmt.Sprintf("02-wiki/d%d/n%05d.md", r.IntN(3), r.IntN(150))
			items = append(items, Item{path, it.Note})
			live[path] = it.Note
		}
		ix.AddBatch(items)
		if round%5 == 4 {
			sameRanking(t, fmt.Sprintf("round %d", round), ix, reference(live), queries)
		}
	}
	// A large batch over a populated index (the shared-allocation merge),
	// replacing some notes, adding others, removing one through a nil note.
	var big []Item
	for i := range 150 {
		path := fmt.Sprintf("02-wiki/d%d/n%05d.md", i%3, 100+i)
		big = append(big, Item{path, pool[i+200].Note})
		live[path] = pool[i+200].Note
	}
	big = append(big, Item{"02-wiki/d1/n00101.md", nil})
	delete(live, "02-wiki/d1/n00101.md")
	ix.AddBatch(big)
	sameRanking(t, "after a large batch", ix, reference(live), queries)
	if ix.Len() != len(live) {
		t.Fatalf("Len %d, want %d", ix.Len(), len(live))
	}
	// Remove everything: an empty index.
	for p := range live {
		ix.Remove(p)
	}
	if ix.Len() != 0 || ix.Search(queries[0], Filter{}, 10) != nil {
		t.Fatalf("not empty after removing everything")
	}
	st := ix.Stats()
	if st.Chunks != 0 || st.Terms != 0 || st.Postings != 0 || st.AvgChunkLength != 0 {
		t.Fatalf("stats of an empty index: %+v", st)
	}
	// And it works again.
	ix.Add("x.md", prose("phoenix rises"))
	if hits := ix.Search("phoenix", Filter{}, 5); len(hits) != 1 {
		t.Fatalf("after emptying: %v", paths(hits))
	}
}

func TestCompactionHappens(t *testing.T) {
	items := syntheticSized(200, 60)
	ix := New(Options{})
	ix.AddBatch(items)
	const rounds = 6
	for round := range rounds {
		for i, it := range items {
			ix.Add(it.Path, items[(i+round+1)%len(items)].Note)
		}
	}
	ix.mu.RLock()
	slots, dead, deadPost, all, compactions := len(ix.cnote), ix.dead, ix.deadPostings, ix.postings, ix.compactions
	ix.mu.RUnlock()
	if compactions == 0 {
		t.Fatalf("no compaction after %d replacements", rounds*len(items))
	}
	if dead*4 > slots && dead >= minDeadChunks || deadPost*4 > all && deadPost >= minDeadPostings {
		t.Fatalf("no compaction: %d dead of %d slots, %d dead of %d postings", dead, slots, deadPost, all)
	}
	if slots > 2*ix.Stats().Chunks+minDeadChunks*4 {
		t.Fatalf("slots grow without bound: %d for %d chunks", slots, ix.Stats().Chunks)
	}
	fresh := map[string]*markdown.Note{}
	for i, it := range items {
		fresh[it.Path] = items[(i+rounds)%len(items)].Note
	}
	sameRanking(t, "after compactions", ix, reference(fresh), []string{items[3].Note.Title, items[50].Note.Title})
}

func TestAddBatchEqualsAdds(t *testing.T) {
	items := syntheticSized(250, 60)
	a, b := New(Options{}), New(Options{})
	a.AddBatch(items)
	for _, it := range items {
		b.Add(it.Path, it.Note)
	}
	var qs []string
	for _, it := range items[:10] {
		qs = append(qs, it.Note.Title)
	}
	sameRanking(t, "batch vs adds", a, b, qs)
}

func TestChunkIndexAndEmptyNotes(t *testing.T) {
	ix := New(Options{})
	ix.Add("multi.md", &markdown.Note{Chunks: []markdown.Chunk{
		{Prose: "alpha"}, {Headings: []string{"B"}, Prose: "beta"}, {Headings: []string{"B", "C"}, Prose: "gamma delta"},
	}})
	ix.Add("empty.md", &markdown.Note{})
	ix.Add("blank.md", &markdown.Note{Chunks: []markdown.Chunk{{}}})
	if hits := ix.Search("delta", Filter{}, 5); len(hits) != 1 || hits[0].Chunk != 2 {
		t.Errorf("chunk index: %+v", hits)
	}
	if ix.Len() != 3 || !ix.Has("empty.md") || !ix.Matches("empty.md", Filter{}) {
		t.Errorf("notes without text are indexed for filters")
	}
	ix.Remove("empty.md")
	ix.Remove("blank.md")
	ix.Remove("never.md")
	if ix.Len() != 1 {
		t.Errorf("Len %d", ix.Len())
	}
}

func TestCJKSearch(t *testing.T) {
	ix := New(Options{})
	ix.Add("ja.md", prose("日本語のテキストを検索できます"))
	ix.Add("zh.md", prose("中文文本搜索"))
	ix.Add("ko.md", prose("한국어 텍스트 검색"))
	for q, want := range map[string]string{"日本語": "ja.md", "検索": "ja.md", "文本": "zh.md", "한국어": "ko.md"} {
		hits := ix.Search(q, Filter{}, 5)
		if len(hits) == 0 || hits[0].Path != want {
			t.Errorf("%q: %v, want %s", q, paths(hits), want)
		}
	}
}

func TestFrontmatterTagsField(t *testing.T) {
	ix := New(Options{})
	n := &markdown.Note{
		Frontmatter: map[string]any{"tags": "#Resilience, networking"},
		Tags:        []string{"resilience", "networking", "inline"},
		Chunks: []markdown.Chunk{
			{Prose: "intro"},
			{Headings: []string{"Other"}, Prose: "body #inline", Tags: []string{"inline"}},
		},
	}
	ix.Add("t.md", n)
	// Frontmatter tags reach every chunk; inline tags only theirs.
	if got := paths(ix.Search("resilience", Filter{}, 5)); len(got) != 2 {
		t.Errorf("frontmatter tag: %v", got)
	}
	if got := paths(ix.Search("inline", Filter{}, 5)); !slices.Equal(got, []string{"t.md#1"}) {
		t.Errorf("inline tag: %v", got)
	}
	if got := frontmatterTags(map[string]any{"tags": []any{"A", 2024, nil, "#b c"}, "tag": "d"}, nil); !slices.Equal(got, []string{"a", "2024", "b", "c", "d"}) {
		t.Errorf("frontmatterTags: %q", got)
	}
}

func TestOptionsDefaults(t *testing.T) {
	ix := New(Options{StemWeight: 1.5, FuzzyWeight: -1})
	if ix.stemWeight != DefaultStemWeight || ix.fuzzyWeight != DefaultFuzzyWeight || ix.fw != defaultFields {
		t.Errorf("defaults not applied: %v %v %+v", ix.stemWeight, ix.fuzzyWeight, ix.fw)
	}
	// A zero field weight (others set) leaves that field out.
	ix = New(Options{Fields: FieldWeights{Heading: 1, Prose: 1}})
	ix.Add("a.md", &markdown.Note{Chunks: []markdown.Chunk{{Prose: "visible", Code: "hiddencode"}}})
	if ix.Search("hiddencode", Filter{}, 5) != nil || ix.Search("visible", Filter{}, 5) == nil {
		t.Errorf("zero code weight should leave code out")
	}
}

func TestConcurrentSearchWhileAdding(t *testing.T) {
	items := syntheticSized(200, 60)
	ix := New(Options{})
	ix.AddBatch(items[:100])
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				it := items[(i*7+w)%len(items)]
				for _, h := range ix.Search(it.Note.Title, Filter{Type: "wiki"}, 5) {
					if h.Score <= 0 || h.Path == "" {
						t.Errorf("bad hit %+v", h)
						return
					}
				}
				ix.Suggest("qqqqzz", 3)
				ix.Matches(it.Path, Filter{Tags: []string{"x"}})
				ix.Len()
			}
		}()
	}
	for i, it := range items[100:] {
		ix.Add(it.Path, it.Note)
		if i%3 == 0 {
			ix.Remove(items[i].Path)
		}
		if i%25 == 0 {
			ix.AddBatch(items[i : i+10])
		}
	}
	close(stop)
	wg.Wait()
}

// letterWord is the k-th of 26^4 words of letters only ("zq" then four
// letters), so that the words are stemmed too.
func letterWord(k int) string {
	b := []byte("zq")
	for range 4 {
		b = append(b, byte('a'+k%26))
		k /= 26
	}
	return string(b)
}

func TestVocabularyCompaction(t *testing.T) {
	ix := New(Options{})
	ix.Add("stable.md", prose("stable anchor words"))
	var paths []string
	for n := range 120 {
		var ws []string
		for k := range 50 {
			ws = append(ws, letterWord(n*50+k))
		}
		p := "tmp/" + ws[0] + ".md" // the file name adds no term
		paths = append(paths, p)
		ix.Add(p, prose(strings.Join(ws, " ")))
	}
	if st := ix.Stats(); st.Terms < 6000 || st.Stems < 4096 {
		t.Fatalf("setup: %+v", st)
	}
	for _, p := range paths {
		ix.Remove(p)
	}
	ix.mu.RLock()
	exactTerms, exactEmpty, stemTerms, stemEmpty := len(ix.exact.terms), ix.exact.empty, len(ix.stems.terms), ix.stems.empty
	ix.mu.RUnlock()
	// Compaction ran once a quarter (and at least minEmptyTerms) were empty.
	if exactTerms > 6003-minEmptyTerms || exactEmpty >= minEmptyTerms || stemTerms > 6003-minEmptyTerms || stemEmpty >= minEmptyTerms {
		t.Fatalf("vocabulary not compacted: exact %d (%d empty), stems %d (%d empty)", exactTerms, exactEmpty, stemTerms, stemEmpty)
	}
	if got := ix.Suggest("anchr", 5); !slices.Equal(got, []string{"anchor"}) {
		t.Errorf("fuzzy index not rebuilt: %q", got)
	}
	sameRanking(t, "after vocabulary compaction", ix, reference(map[string]*markdown.Note{"stable.md": prose("stable anchor words")}),
		[]string{"stable", "anchors", "anchr", letterWord(7)})
	ix.Add("again.md", prose(letterWord(7)))
	if hits := ix.Search(letterWord(7), Filter{}, 5); len(hits) != 1 || hits[0].Path != "again.md" {
		t.Errorf("a removed word added again: %+v", hits)
	}
}

func TestAccentVariantsIndependentOfOrder(t *testing.T) {
	notes := []Item{
		{"a.md", prose("As configurações do servidor são carregadas quando o processo inicia")},
		{"b.md", prose("A configuração do servidor não muda quando o processo já está rodando")},
		{"c.md", prose("configuracao escrita sem acentos no servidor, como o processo faz")},
		{"d.md", prose("Informações e informação, função e funções, résumé e resume")},
	}
	a := New(Options{Lang: "pt"})
	a.AddBatch(notes)
	b := New(Options{Lang: "pt"})
	for i := len(notes) - 1; i >= 0; i-- {
		b.Add(notes[i].Path, notes[i].Note)
	}
	qs := []string{"configuração", "configurações", "configuracoes", "informações", "funcao", "résumé", "resumes",
		"configura\u00e7\u00f5es", "configurac\u0327o\u0303es"} // composed and decomposed
	sameRanking(t, "order", a, b, qs)
	// Words written with accents share the stem of their accented forms
	// (configurações, configuração -> configur); the folded forms stem on
	// their own (configuracao -> configuraca, configuracoes -> configuraco).
	for q, want := range map[string][]string{
		"configurações":             {"a.md#0", "b.md#0"},
		"configuração":              {"a.md#0", "b.md#0", "c.md#0"}, // c: exact folded match
		"configuracao":              {"b.md#0", "c.md#0"},
		"configurac\u0327o\u0303es": {"a.md#0", "b.md#0"}, // decomposed input stems like composed
	} {
		got := paths(a.Search(q, Filter{}, 10))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}

// TestLargeCountsExact checks a chunk whose counts overflow the packed
// posting (a term 130 times in the heading, 1,100 times in the prose): the
// scores follow the formula, before and after the chunk slots are compacted.
func TestLargeCountsExact(t *testing.T) {
	ix := New(Options{})
	ix.Add("s.md", prose("mango papaya"))
	ix.Add("k.md", &markdown.Note{Chunks: []markdown.Chunk{{
		Headings: []string{strings.Repeat("kiwi ", 130)},
		Prose:    strings.Repeat("kiwi ", 1100) + strings.Repeat("kiwis ", 5),
	}}})
	// lengths 2 and 130 x 3 + 1,105 = 1,495; N 2, idf ln 2 for both terms.
	l := 1495 / ((1495.0 + 2) / 2)
	bm := func(head, body float64) float64 {
		tf := head/(0.75+0.25*l) + body/(0.25+0.75*l)
		return math.Log(2) * 2.2 * tf / (tf + 1.2)
	}
	check := func(label string) {
		t.Helper()
		if got, want := scoreFor(t, ix, "kiwi", "k.md"), bm(390, 1100); !near(got, want) {
			t.Errorf("%s: kiwi %v, want %v", label, got, want)
		}
		// kiwis: exact tf 5 in the body, or the stem kiwi at 0.6 with every
		// occurrence.
		if got, want := scoreFor(t, ix, "kiwis", "k.md"), math.Max(bm(0, 5), DefaultStemWeight*bm(390, 1105)); !near(got, want) {
			t.Errorf("%s: kiwis %v, want %v", label, got, want)
		}
	}
	check("fresh")
	if len(ix.exact.big) != 1 || len(ix.stems.big) != 1 {
		t.Fatalf("overflow tables: %d exact, %d stems; want 1 and 1", len(ix.exact.big), len(ix.stems.big))
	}
	// Kill the first note's slot and compact: the overflow entries move.
	ix.Add("s.md", prose("mango papaya"))
	ix.mu.Lock()
	ix.compactChunks()
	ix.mu.Unlock()
	check("after compaction")
}

// TestParallelMergeMatchesSequential builds the same notes with the merge
// sharded on several workers and on one, into an empty and a populated index.
func TestParallelMergeMatchesSequential(t *testing.T) {
	items := syntheticSized(300, 60)
	build := func(minParallel int) *Index {
		defer func(old int) { parallelMergeMin = old }(parallelMergeMin)
		parallelMergeMin = minParallel
		ix := New(Options{})
		ix.AddBatch(items[:200])
		ix.AddBatch(items[150:])
		return ix
	}
	par, seq := build(1), build(1<<30)
	var qs []string
	for _, it := range items[:20] {
		qs = append(qs, it.Note.Title)
	}
	sameRanking(t, "parallel vs sequential merge", par, seq, qs)
}

// TestSortedMergeSameLists: the merge that sorts the postings by term
// (large merges) writes every posting list, document frequency and term
// byte for byte as the merge that appends them in order, into an empty
// index and into a populated one.
func TestSortedMergeSameLists(t *testing.T) {
	// One CPU: the notes reach the builders, and so the terms and chunks
	// their ids, in the same order in both builds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer func(old int) { sortedMergeWorkers = old }(sortedMergeWorkers)
	sortedMergeWorkers = 3
	items := syntheticSized(300, 60)
	build := func(minSorted int) *Index {
		defer func(old int) { parallelMergeMin = old }(parallelMergeMin)
		parallelMergeMin = minSorted
		ix := New(Options{})
		ix.AddBatch(items[:200])
		ix.AddBatch(items[150:])
		return ix
	}
	sameLists(t, build(1), build(1<<30))

	// Several partials (the builders of a batch on several CPUs), each
	// counted and placed on its own CPU: given the same notes in the same
	// order, each to the same builder, a merge into an empty index and
	// into a populated one.
	merged := func(minSorted int) *Index {
		defer func(old int) { parallelMergeMin = old }(parallelMergeMin)
		parallelMergeMin = minSorted
		ix := New(Options{})
		for _, batch := range [][]Item{items[:150], items[150:]} {
			var parts []*partial
			for k := range 3 {
				b := newBuilder(ix.fw, ix.an.lang, builderSize{})
				for i := k; i < len(batch); i += 3 {
					b.addNote(batch[i].Path, batch[i].Note)
				}
				parts = append(parts, b.finish())
			}
			ix.mu.Lock()
			ix.merge(nil, nil, parts...)
			ix.mu.Unlock()
		}
		return ix
	}
	sameLists(t, merged(1), merged(1<<30))
}

// sameLists fails unless a and b hold the same terms, document
// frequencies, overflow counts and posting lists, byte for byte.
func sameLists(t *testing.T, a, b *Index) {
	t.Helper()
	for _, sp := range [...]struct {
		name string
		a, b *space
	}{{"exact", &a.exact, &b.exact}, {"stems", &a.stems, &b.stems}} {
		if !slices.Equal(sp.a.terms, sp.b.terms) || !slices.Equal(sp.a.df, sp.b.df) || sp.a.empty != sp.b.empty || !slices.Equal(sp.a.big, sp.b.big) {
			t.Fatalf("%s: terms, df, empty or overflow differ", sp.name)
		}
		for id := range sp.a.post {
			x, y := &sp.a.post[id], &sp.b.post[id]
			if !bytes.Equal(x.data, y.data) || x.last != y.last || x.n != y.n {
				t.Fatalf("%s: list of %q differs", sp.name, sp.a.terms[id])
			}
		}
	}
	if a.postings != b.postings {
		t.Fatalf("postings %d, %d", a.postings, b.postings)
	}
}

// TestSearchTiesKeepSmallestPaths: chunks that score alike are cut by path
// (then chunk), whatever order they were indexed in: a tie with the worst
// kept hit is decided by its path before anything else is read.
func TestSearchTiesKeepSmallestPaths(t *testing.T) {
	ix := New(Options{Lang: "en"})
	r := rand.New(rand.NewPCG(5, 6))
	var paths []string
	for i := range 40 {
		paths = append(paths, fmt.Sprintf("d%d/n%02d.md", i%3, i))
	}
	for _, k := range r.Perm(len(paths)) {
		ix.Add(paths[k], prose("alpha beta gamma"))
	}
	ix.Add("z/other.md", prose("alpha alpha alpha beta"))
	want := append([]string(nil), paths...)
	slices.Sort(want)
	for _, limit := range []int{1, 5, 8, 39} {
		hits := ix.Search("gamma", Filter{}, limit)
		if len(hits) != limit {
			t.Fatalf("limit %d: %d hits", limit, len(hits))
		}
		for i, h := range hits {
			if h.Path != want[i] || h.Score != hits[0].Score {
				t.Fatalf("limit %d: hit %d = %s (score %v), want %s (score %v)", limit, i, h.Path, h.Score, want[i], hits[0].Score)
			}
		}
	}
}

// TestDeferTermLists: merges made while the term lists are deferred (a
// batch, then link slots) search exactly as the same merges made at once;
// the lists are encoded by Settle, by a removal or by Encode, whichever
// comes first, into the same snapshot bytes; and a removal after the
// deferral leaves the same index as without it, searches running all the
// while.
func TestDeferTermLists(t *testing.T) {
	// One CPU: the notes reach the builders, and so the terms their ids,
	// in the same order in every build (the snapshots compare byte for
	// byte).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	items := syntheticSized(300, 60)
	var links []LinkItem
	for i, it := range items[:40] {
		links = append(links, LinkItem{Path: it.Path, Texts: []LinkText{{Text: fmt.Sprintf("alias %d of %s", i, it.Note.Title), Notes: 2}}})
	}
	var qs []string
	for _, it := range items[:20] {
		qs = append(qs, it.Note.Title, "alias "+it.Note.Title)
	}
	build := func(deferred bool) *Index {
		ix := New(Options{})
		ix.AddBatch(items[:100])
		if deferred {
			ix.DeferTermLists()
		}
		ix.AddBatch(items[100:])
		ix.SetLinkTextsBatch(links)
		return ix
	}
	pending := func(ix *Index) int {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		n := 0
		for _, l := range ix.pending {
			n += len(l.jobs)
		}
		return n
	}
	want := build(false)
	wantBytes := payload(t, want)

	// Settle: searches on meanwhile.
	got := build(true)
	if n := pending(got); n != 200+len(links) {
		t.Fatalf("%d term lists pending, want %d", n, 200+len(links))
	}
	if info := got.notes[got.byPath[items[150].Path]]; info.terms != nil || info.stems != nil {
		t.Fatalf("a deferred note has its term lists already")
	}
	sameRanking(t, "deferred, before Settle", got, want, qs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			got.Search(qs[0], Filter{}, 5)
		}
	}()
	got.Settle()
	<-done
	if n := pending(got); n != 0 {
		t.Fatalf("%d term lists pending after Settle", n)
	}
	if b := payload(t, got); !bytes.Equal(b, wantBytes) {
		t.Fatalf("the snapshot of a settled index differs from the one built at once")
	}
	// The deferral is over: the next merge encodes at once.
	got.AddBatch(items[:1])
	if n := pending(got); n != 0 {
		t.Fatalf("a merge after Settle left %d term lists pending", n)
	}

	// Encode settles first.
	got = build(true)
	if b := payload(t, got); !bytes.Equal(b, wantBytes) {
		t.Fatalf("the snapshot of a deferred index differs from the one built at once")
	}

	// A removal, or a change of link texts (which drops link slots),
	// settles first, and then changes the index as without the deferral.
	for _, c := range []struct {
		name   string
		change func(ix *Index)
	}{
		{"removal", func(ix *Index) { ix.Remove(items[150].Path); ix.Remove(items[3].Path) }},
		{"link texts", func(ix *Index) {
			changed := slices.Clone(links[:10])
			for i := range changed {
				changed[i].Texts = []LinkText{{Text: "renamed " + changed[i].Texts[0].Text, Notes: 1}}
			}
			ix.SetLinkTextsBatch(changed)
		}},
	} {
		got, want := build(true), build(false)
		c.change(got)
		c.change(want)
		if n := pending(got); n != 0 {
			t.Fatalf("%s: %d term lists pending after it", c.name, n)
		}
		sameRanking(t, "deferred, after "+c.name, got, want, qs)
		if !bytes.Equal(payload(t, got), payload(t, want)) {
			t.Fatalf("%s: the deferred index's snapshot differs", c.name)
		}
	}
}

// TestTrimInSteps: Trim leaves no list with more slack than an eighth of
// its length, in both spaces, over more lists than one step trims, and
// changes no answer; searches run while it trims (see -race).
func TestTrimInSteps(t *testing.T) {
	items := syntheticSized(3000, 60)
	ix, want := New(Options{}), New(Options{})
	for lo := 0; lo < len(items); lo += 500 { // batches: their lists grow by appending
		ix.AddBatch(items[lo : lo+500])
	}
	want.AddBatch(items)
	ix.mu.RLock()
	n := len(ix.exact.post)
	ix.mu.RUnlock()
	if n <= trimStep {
		t.Fatalf("setup: %d lists, not more than one step", n)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			ix.Search(items[i].Note.Title, Filter{}, 5)
		}
	}()
	ix.Trim()
	<-done
	ix.mu.RLock()
	for _, sp := range []*space{&ix.exact, &ix.stems} {
		for i := range sp.post {
			if d := sp.post[i].data; cap(d)-len(d) > len(d)/8 {
				t.Fatalf("list %d of %d: %d bytes, %d of slack", i, len(sp.post), len(d), cap(d)-len(d))
			}
		}
	}
	ix.mu.RUnlock()
	sameRanking(t, "after trim", ix, want, []string{items[3].Note.Title, items[1500].Note.Title, items[2999].Note.Title})
}

// TestEachMatch: EachMatch gives each live note that passes the filter once
// (the 01-raw rule included), exactly the notes Matches says pass; a removed
// note's freed record is never given.
func TestEachMatch(t *testing.T) {
	ix := New(Options{})
	wiki := func(text string) *markdown.Note {
		n := prose(text)
		n.Type = "wiki"
		return n
	}
	ix.Add("02-wiki/a.md", wiki("alpha"))
	ix.Add("02-wiki/b.md", wiki("beta"))
	ix.Add("03-projects/c.md", prose("gamma"))
	ix.Add("01-raw/d.md", wiki("delta"))
	ix.Add("02-wiki/gone.md", wiki("epsilon"))
	ix.Remove("02-wiki/gone.md")
	all := []string{"02-wiki/a.md", "02-wiki/b.md", "03-projects/c.md", "01-raw/d.md", "02-wiki/gone.md"}
	for _, f := range []Filter{{}, {IncludeRaw: true}, {Type: "wiki"}, {Type: "wiki", IncludeRaw: true}, {Folder: "01-raw"}, {Status: "none"}} {
		var got, want []string
		ix.EachMatch(f, func(p string) { got = append(got, p) })
		for _, p := range all {
			if ix.Matches(p, f) {
				want = append(want, p)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%+v: EachMatch gave %q, Matches passes %q", f, got, want)
		}
	}
	var got []string
	ix.EachMatch(Filter{IncludeRaw: true}, func(p string) { got = append(got, p) })
	if slices.Contains(got, "02-wiki/gone.md") || len(got) != 4 {
		t.Errorf("every note: %q", got)
	}
}

// A search's scratch is kept for the next search through collections (a
// sync.Pool dropped it at every other one, and a new scratch of a large
// vault is megabytes of fresh memory to fault in), up to maxKeptScratches.
func TestScratchKeptThroughCollections(t *testing.T) {
	var got []*scratch
	for range maxKeptScratches + 1 {
		got = append(got, getScratch(100))
	}
	for _, s := range got {
		putScratch(s)
	}
	runtime.GC()
	runtime.GC()
	kept := map[*scratch]bool{}
	for range maxKeptScratches + 1 {
		s := getScratch(10)
		if kept[s] {
			t.Fatal("a scratch was handed out twice")
		}
		kept[s] = true
	}
	n := 0
	for _, s := range got {
		if kept[s] {
			n++
		}
	}
	if n != maxKeptScratches {
		t.Errorf("%d of the %d scratches put back were kept through two collections, want %d", n, len(got), maxKeptScratches)
	}
	for s := range kept {
		putScratch(s)
	}
}
