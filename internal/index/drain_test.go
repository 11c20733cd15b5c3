package index

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// TestQueuedLookupsSameIndex: a builder that queues its tokens (see drain)
// makes the index, byte for byte, of one that counts each at once, with
// its table's front (the words of the front counted as they come, the
// others queued) and without, with words the tokenizer folds in its
// scratch buffer (capitals, accents, decomposed accents), their accented
// variants, hyphens, CJK titles and notes of another language.
func TestQueuedLookupsSameIndex(t *testing.T) {
	// One CPU: the notes reach the builder, and so the terms their ids, in
	// the same order in both builds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	items := syntheticSized(300, 80)
	hand := []string{
		"As Configurações do SISTEMA e a configuração das Notas: configurações, Configuração, CONFIGURAÇÕES",
		"Re-Indexing the Vault-Wide index; re-indexing RE-INDEXING well-known Well-Known",
		"Cafe\u0301 and CAFÉ and café: résumé Résumé RÉSUMÉ naïve Naïve",
		"Über große Straßen fährt der Müller; ÜBER GROSSE",
	}
	for i, text := range hand {
		n := prose(text)
		n.Title = []string{"Configurações Gerais", "知识库 搜索 Vault", "Résumé Notes", "Große Übersicht"}[i]
		n.Aliases = []string{"ALIAS " + n.Title}
		items = append(items, Item{Path: fmt.Sprintf("hand/n%d.md", i), Note: n})
	}
	items = append(items, Item{Path: "hand/empty.md", Note: &markdown.Note{Title: "Empty"}})
	build := func(from, front int) *Index {
		defer func(d, f int) { drainFrom, frontFrom = d, f }(drainFrom, frontFrom)
		drainFrom, frontFrom = from, front
		ix := New(Options{})
		ix.AddBatch(items[:150])
		ix.AddBatch(items[150:])
		ix.Add(items[3].Path, items[300].Note)
		return ix
	}
	direct := build(1<<30, 1<<30)
	var qs []string
	for _, it := range items[:20] {
		qs = append(qs, it.Note.Title)
	}
	qs = append(qs, "configuração", "CONFIGURACOES", "re-indexing", "cafe", "résumé", "知识", "grosse strasse")
	for _, tc := range []struct {
		name  string
		front int
	}{{"queued", 1 << 30}, {"queued with a front", 0}} {
		queued := build(0, tc.front)
		sameRanking(t, tc.name+" vs direct", queued, direct, qs)
		if !bytes.Equal(payload(t, queued), payload(t, direct)) {
			t.Fatalf("the index built with %s lookups differs from the one built without", tc.name)
		}
		for _, q := range []string{"configuração", "résumé", "知识"} {
			if len(queued.Search(q, Filter{}, 5)) == 0 {
				t.Fatalf("%s: %q finds nothing", tc.name, q)
			}
		}
	}
}

// buildInBatches builds an index of items in batches of size through a
// Build, as the first build of a vault does.
func buildInBatches(opts Options, items []Item, size int) *Index {
	ix := New(opts)
	bd := ix.NewBuild(0)
	for lo := 0; lo < len(items); lo += size {
		batch := items[lo:min(lo+size, len(items))]
		bd.AddFunc(len(batch), func(i int) (Item, bool) { return batch[i], true }, nil)
	}
	bd.Done()
	return ix
}

// TestBuildReusesMemory: a Build's batches take again the builders of the
// batch before (emptied), the blocks of raw postings its merge read and
// the arrays of its merge's sort (left as that merge wrote them), and the
// index is, byte for byte, the one the same batches make through
// AddBatch, for an index of the profile's language or another, with
// notes of another language than the index's first in each batch, and
// small tables given a front and a queue, as large ones have.
func TestBuildReusesMemory(t *testing.T) {
	// One CPU: the notes reach the builder, and so the terms their ids, in
	// the same order in both builds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer func(f, d, m int) { frontFrom, drainFrom, parallelMergeMin = f, d, m }(frontFrom, drainFrom, parallelMergeMin)
	frontFrom, drainFrom = 256, 256
	parallelMergeMin = 1 // every merge sorts: its arrays are taken again from the merge before
	const size = 700
	items := syntheticSized(3*size+100, 50)
	for k, text := range []string{
		"the writers of the notes and the readers of them are running to the libraries, which they were building for the stories",
		"they were singing with the dancers in the gardens, and the players of the games are waiting for their teachers",
		"the engineers of the bridges and the drivers of the trains were talking about the storms that are coming to them",
		"the painters of the houses were walking with their brothers, and the singers of the songs are looking for them",
	} {
		items[k*size].Note = prose(text)
	}
	var qs []string
	for _, it := range items[:10] {
		qs = append(qs, it.Note.Title)
	}
	qs = append(qs, "writer libraries", "running stories", "singers dancing", "engineer bridge", "storm driving", "painted house")
	for _, lang := range []string{"en", "pt"} {
		want := New(Options{Lang: lang})
		for lo := 0; lo < len(items); lo += size {
			want.AddBatch(items[lo:min(lo+size, len(items))])
		}
		builders, blocks, scratch := buildersReused.Load(), rawBlocksReused.Load(), scratchReused.Load()
		got := buildInBatches(Options{Lang: lang}, items, size)
		if buildersReused.Load() == builders || rawBlocksReused.Load() == blocks || scratchReused.Load() == scratch {
			t.Fatalf("%s: builders taken again %d, blocks %d, merge arrays %d", lang,
				buildersReused.Load()-builders, rawBlocksReused.Load()-blocks, scratchReused.Load()-scratch)
		}
		if !bytes.Equal(payload(t, got), payload(t, want)) {
			t.Fatalf("%s: the index built with memory taken again differs", lang)
		}
		sameRanking(t, lang, got, want, qs)
	}
}

// TestBuildGrowsOnce: a Build told how many notes it adds grows the
// index's arrays of notes and chunk slots for the whole build at its first
// merge (the chunks by the chunks per note seen so far: at most once more
// when that guess is short), and its vocabulary's arrays at least double
// when they grow, instead of copying every array at every batch; the index
// is, byte for byte, the one the same batches make through AddBatch.
func TestBuildGrowsOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the same term ids in both builds
	const size, batches = 300, 8
	items := syntheticSized(size*batches, 60)
	want := New(Options{})
	for lo := 0; lo < len(items); lo += size {
		want.AddBatch(items[lo : lo+size])
	}
	ix := New(Options{})
	bd := ix.NewBuild(len(items))
	var noteArrays, chunkArrays, termArrays int
	var notesCap, chunksCap, termsCap int
	for lo := 0; lo < len(items); lo += size {
		batch := items[lo : lo+size]
		bd.AddFunc(len(batch), func(i int) (Item, bool) { return batch[i], true }, nil)
		if c := cap(ix.notes); c != notesCap {
			noteArrays, notesCap = noteArrays+1, c
		}
		if c := cap(ix.cnote); c != chunksCap {
			chunkArrays, chunksCap = chunkArrays+1, c
		}
		if c := cap(ix.exact.terms); c != termsCap {
			termArrays, termsCap = termArrays+1, c
		}
	}
	bd.Done()
	if noteArrays != 1 || notesCap < len(items) {
		t.Errorf("the notes' array was made %d times (capacity %d for %d notes), want once", noteArrays, notesCap, len(items))
	}
	if chunkArrays > 2 || chunksCap > len(ix.cnote)*3/2 {
		t.Errorf("the chunk slots' array was made %d times (capacity %d for %d slots), want at most twice, at most half too large", chunkArrays, chunksCap, len(ix.cnote))
	}
	if termArrays > batches/2 || termsCap > 2*len(ix.exact.terms) {
		t.Errorf("the terms' array was made %d times in %d batches (capacity %d for %d terms)", termArrays, batches, termsCap, len(ix.exact.terms))
	}
	if !bytes.Equal(payload(t, ix), payload(t, want)) {
		t.Fatal("the index built with its arrays grown for the whole build differs")
	}
	sameRanking(t, "grown once", ix, want, []string{items[0].Note.Title, items[len(items)-1].Note.Title, "note", "index search"})
}
