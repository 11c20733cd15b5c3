package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// elisionCorpus mixes languages, accented words, words that are their own
// stem (plugin, server), words sharing a stem with them in the same chunk
// (plugins) and in other chunks, and overflowing counts.
func elisionCorpus() []Item {
	items := []Item{
		{"en1.md", prose("The plugin loads the server configuration when the server starts")},
		{"en2.md", prose("Community plugins and the plugin list: every plugin is a folder of plugins")},
		{"en3.md", &markdown.Note{Title: "Plugin settings", Chunks: []markdown.Chunk{
			{Prose: "Open the settings of the plugin and change the theme of the vault"},
			{Headings: []string{"Plugins"}, Prose: "Plugins extend the app; a plugin can add a view"},
			{Headings: []string{"Server"}, Prose: strings.Repeat("server ", 1100) + "servers"},
		}}},
		{"pt1.md", prose("As configurações do servidor são carregadas quando o processo inicia e o plugin abre")},
		{"pt2.md", prose("configuracao escrita sem acentos no servidor, como o processo faz com o plugin")},
		{"pt3.md", prose("Informações e informação, função e funções, résumé e resume, servidor e servidores")},
		{"01-raw/r.md", prose("raw plugin server notes about the theme")},
		{"99-archive/a.md", prose("archived plugin theme server")},
	}
	// "plugin" in many English notes and in few Portuguese ones: its
	// Portuguese stem is rarer than the term.
	for i := range 40 {
		items = append(items, Item{fmt.Sprintf("en/p%02d.md", i), prose("the plugin of the week number " + fmt.Sprint(i))})
	}
	return append(items, syntheticSized(150, 60)...)
}

// withoutElision builds with every stem posting stored: the index as it was
// before elision, the reference of the scores.
func withoutElision(build func() *Index) *Index {
	elideStems = false
	defer func() { elideStems = true }()
	return build()
}

func sameScoresExactly(t *testing.T, label string, got, want *Index, queries []string) {
	t.Helper()
	for _, q := range queries {
		a, b := got.SearchExplained(q, Filter{IncludeRaw: true}, 0), want.SearchExplained(q, Filter{IncludeRaw: true}, 0)
		if len(a) != len(b) {
			t.Fatalf("%s: %q: %d hits, reference %d", label, q, len(a), len(b))
		}
		for i := range a {
			if !sameHit(a[i], b[i]) {
				t.Fatalf("%s: %q: hit %d = %+v %+v, reference %+v %+v", label, q, i, a[i], a[i].Explain, b[i], b[i].Explain)
			}
		}
	}
	// Every stem keeps its document frequency.
	got.mu.RLock()
	defer got.mu.RUnlock()
	want.mu.RLock()
	defer want.mu.RUnlock()
	for wid, k := range want.stems.terms {
		wdf := want.stems.df[wid]
		gid, ok := got.stems.id(k)
		if !ok {
			if wdf != 0 {
				t.Fatalf("%s: stem %q missing, reference df %d", label, k, wdf)
			}
			continue
		}
		if gdf := got.stems.df[gid]; gdf != wdf {
			t.Fatalf("%s: stem %q df %d, reference %d", label, k, gdf, wdf)
		}
	}
	if g, w := len(got.stems.terms)-got.stems.empty, len(want.stems.terms)-want.stems.empty; g != w {
		t.Fatalf("%s: %d live stems, reference %d", label, g, w)
	}
}

// vocabularyQueries: the live exact terms of ix (every one of them, as a
// query, reaches its own stem), and a few phrases.
func vocabularyQueries(ix *Index) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	qs := []string{"plugins server", "configuração", "configurações do servidor", "servers", "résumé", "funcoes",
		"informação", "plugin theme", "settings plugins", "pluginz"}
	for id, term := range ix.exact.terms {
		if ix.exact.df[id] > 0 {
			qs = append(qs, term)
		}
	}
	return qs
}

// everyLanguage runs f with stem postings elided in every language's
// notes, as before only the main languages' were.
func everyLanguage[T any](f func() T) T {
	elideEvery = true
	defer func() { elideEvery = false }()
	return f()
}

func TestStemElisionScoresExact(t *testing.T) {
	t.Run("main languages", func(t *testing.T) { testStemElisionScoresExact(t) })
	t.Run("every language", func(t *testing.T) { everyLanguage(func() int { testStemElisionScoresExact(t); return 0 }) })
}

func testStemElisionScoresExact(t *testing.T) {
	items := elisionCorpus()
	build := func() *Index {
		ix := New(Options{Lang: "en"})
		ix.AddBatch(items)
		return ix
	}
	got, want := build(), withoutElision(build)
	if g, w := got.Stats().Postings, want.Stats().Postings; g >= w {
		t.Fatalf("postings %d with elision, %d without: nothing elided", g, w)
	}
	sameScoresExactly(t, "fresh", got, want, vocabularyQueries(want))

	// The same churn on both: replacements, removals, batches, compactions.
	churn := func(ix *Index) {
		r := rand.New(rand.NewPCG(3, 4))
		for round := range 12 {
			for range 40 {
				it := items[r.IntN(len(items))]
				path := fmt.Sprintf("02-wiki/c/n%03d.md", r.IntN(60))
				if r.IntN(3) == 0 {
					ix.Remove(path)
				} else {
					ix.Add(path, it.Note)
				}
			}
			ix.Remove(items[round].Path)
			ix.AddBatch(items[round+20 : round+30])
		}
		ix.mu.Lock()
		ix.compactChunks()
		ix.compactSpace(&ix.stems, false)
		ix.compactSpace(&ix.exact, true)
		ix.mu.Unlock()
	}
	churn(got)
	withoutElision(func() *Index { churn(want); return want })
	sameScoresExactly(t, "after churn", got, want, vocabularyQueries(want))
}

// TestStemElisionMainLanguage: the notes of the language with the most
// notes have their stem postings elided, those of another language none,
// whether they come in one batch or one at a time, and the scores are
// those of storing every posting.
func TestStemElisionMainLanguage(t *testing.T) {
	var items []Item
	for i := range 12 {
		items = append(items, Item{fmt.Sprintf("en/p%02d.md", i), prose(fmt.Sprintf("the plugin of the week number %d loads the server", i))})
	}
	pt := []Item{
		{"pt/1.md", prose("O servidor carrega as configurações quando o processo inicia e o plugin abre a janela")},
		{"pt/2.md", prose("Os servidores e o servidor do projeto guardam as notas e a configuração do processo")},
		{"pt/3.md", prose("A função do servidor é guardar as notas; as funções do processo são outras")},
	}
	elided := func(ix *Index) (en, pt uint32) {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		for id, k := range ix.stems.terms {
			if k == "" {
				continue
			}
			n := ix.stems.df[id] - ix.stems.post[id].n
			switch langID(k[0] - 'A') {
			case langEN:
				en += n
			case langPT:
				pt += n
			}
		}
		return en, pt
	}
	items = append(items, pt...)
	batch := New(Options{Lang: "en"})
	batch.AddBatch(items)
	single := New(Options{Lang: "en"})
	for _, it := range items {
		single.Add(it.Path, it.Note)
	}
	for _, ix := range []*Index{batch, single} {
		if got := ix.Stats().LanguagesPresent; !slices.Contains(got, "pt") || !slices.Contains(got, "en") {
			t.Fatalf("languages %v, want en and pt", got)
		}
		if en, pt := elided(ix); en == 0 || pt != 0 {
			t.Fatalf("elided postings: %d English, %d Portuguese; want some and none", en, pt)
		}
	}
	all := everyLanguage(func() *Index {
		ix := New(Options{Lang: "en"})
		ix.AddBatch(items)
		return ix
	})
	if _, pt := elided(all); pt == 0 {
		t.Fatal("eliding in every language elided no Portuguese posting: the corpus does not test the rule")
	}
	want := withoutElision(func() *Index {
		ix := New(Options{Lang: "en"})
		ix.AddBatch(items)
		return ix
	})
	qs := append(vocabularyQueries(want), "servidores", "funções", "configurações", "plugins")
	sameScoresExactly(t, "batch", batch, want, qs)
	sameScoresExactly(t, "one at a time", single, want, qs)
	sameScoresExactly(t, "every language", all, want, qs)
}

// TestStemElisionHandComputed: "plugin" alone in a chunk has its stem
// posting elided; the stem match of "plugins" scores it with the stem's df.
func TestStemElisionHandComputed(t *testing.T) {
	ix := New(Options{Lang: "en"})
	ix.Add("a.md", prose("plugin"))
	ix.Add("b.md", prose("plugins plugin"))
	ix.Add("c.md", prose("theme"))
	ix.mu.RLock()
	id, _ := ix.stems.id(stemKey(langEN, "plugin"))
	df, stored := ix.stems.df[id], int(ix.stems.post[id].n)
	ix.mu.RUnlock()
	if df != 2 || stored != 1 {
		t.Fatalf("stem plugin: df %d, %d stored postings; want 2 and 1 (a.md elided)", df, stored)
	}
	// N 3, lengths 1, 2, 1: avg 4/3. a.md: tf 1 in a chunk of length 1.
	avg := 4.0 / 3
	bm := func(df, tf, l float64) float64 {
		k := 1.2 * (0.25 + 0.75*l/avg)
		return idf(3, df) * 2.2 * tf / (tf + k)
	}
	if got, want := scoreFor(t, ix, "plugins", "a.md"), DefaultStemWeight*bm(2, 1, 1); !near(got, want) {
		t.Errorf("plugins on a.md: %v, want %v", got, want)
	}
	if got, want := scoreFor(t, ix, "plugins", "b.md"), max(bm(1, 1, 2), DefaultStemWeight*bm(2, 2, 2)); !near(got, want) {
		t.Errorf("plugins on b.md: %v, want %v", got, want)
	}
	ix.Remove("a.md")
	ix.mu.RLock()
	df = ix.stems.df[id]
	ix.mu.RUnlock()
	if df != 1 {
		t.Fatalf("stem plugin df %d after removing a.md, want 1", df)
	}
}

// TestStemElisionCorpus compares the scores of every vocabulary term of a
// real vault (VAULTMCP_CORPUS; skipped when unset) with and without elision.
func TestStemElisionCorpus(t *testing.T) {
	dir := os.Getenv("VAULTMCP_CORPUS")
	if dir == "" {
		t.Skip("VAULTMCP_CORPUS not set")
	}
	items, _ := loadVault(t, dir)
	build := func() *Index {
		ix := New(Options{})
		ix.AddBatch(items)
		return ix
	}
	got, want := build(), withoutElision(build)
	sameScoresExactly(t, "corpus", got, want, vocabularyQueries(want))
	// And after replacing a tenth of the notes by others.
	for _, ix := range []*Index{got, want} {
		for i := 0; i+1 < len(items); i += 10 {
			elideStems = ix == got
			ix.Add(items[i].Path, items[i+1].Note)
		}
		elideStems = true
	}
	sameScoresExactly(t, "corpus, replaced", got, want, vocabularyQueries(want))
}

// TestElisionCandidatesSameIndex: the builder's way of eliding a stem
// posting without reading the stem's state (elideFast, see flush) makes
// the index, byte for byte, of the general way alone, before and after
// removals (which read the notes' stem counts): with thousands of stems,
// so that the set of a chunk's stems says yes wrongly; with a note whose
// stem is elided that way in one chunk and stored or elided the general
// way in others; with accented words and another language.
func TestElisionCandidatesSameIndex(t *testing.T) {
	// One CPU: the notes reach the builder, and so the terms their ids, in
	// the same order in both builds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	items := append(elisionCorpus(), syntheticSized(1200, 120)...)
	mixed := &markdown.Note{Title: "Plugin notes", Chunks: []markdown.Chunk{
		{Prose: "the plugin alone"},
		{Prose: "a plugin and its plugins"},
		{Headings: []string{"Plugin"}, Prose: "one plugin again"},
		{Prose: "plugins only"},
	}}
	items = append(items,
		Item{"mixed.md", mixed},
		Item{"pt/mixed.md", &markdown.Note{Chunks: []markdown.Chunk{
			{Prose: "o servidor e a configuração do servidor"},
			{Prose: "servidor, servidores e configuracao"},
		}}})
	build := func(fast bool) *Index {
		defer func(old bool) { elideFast = old }(elideFast)
		elideFast = fast
		ix := New(Options{Lang: "en"})
		ix.AddBatch(items[:600])
		ix.AddBatch(items[600:])
		ix.Add("single.md", mixed)
		return ix
	}
	got, want := build(true), build(false)
	if !bytes.Equal(payload(t, got), payload(t, want)) {
		t.Fatal("the index built eliding candidates first differs from the general way's")
	}
	for _, ix := range []*Index{got, want} {
		for _, p := range []string{"mixed.md", "single.md", "pt/mixed.md", items[700].Path, items[5].Path} {
			ix.Remove(p)
		}
	}
	if !bytes.Equal(payload(t, got), payload(t, want)) {
		t.Fatal("after removals, the index built eliding candidates first differs from the general way's")
	}
	qs := vocabularyQueries(want)
	sameScoresExactly(t, "candidates", got, want, qs[:min(len(qs), 500)])
}
