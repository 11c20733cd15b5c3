package index

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// TestQueuedLookupsSameIndex: a builder that queues its tokens (see drain)
// makes the index, byte for byte, of one that counts each at once, with
// words the tokenizer folds in its scratch buffer (capitals, accents,
// decomposed accents), their accented variants, hyphens, CJK titles and
// notes of another language.
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
	build := func(from int) *Index {
		defer func(old int) { drainFrom = old }(drainFrom)
		drainFrom = from
		ix := New(Options{})
		ix.AddBatch(items[:150])
		ix.AddBatch(items[150:])
		ix.Add(items[3].Path, items[300].Note)
		return ix
	}
	queued, direct := build(0), build(1<<30)
	var qs []string
	for _, it := range items[:20] {
		qs = append(qs, it.Note.Title)
	}
	qs = append(qs, "configuração", "CONFIGURACOES", "re-indexing", "cafe", "résumé", "知识", "grosse strasse")
	sameRanking(t, "queued vs direct", queued, direct, qs)
	if !bytes.Equal(payload(t, queued), payload(t, direct)) {
		t.Fatal("the index built with queued lookups differs from the one built without")
	}
	for _, q := range []string{"configuração", "résumé", "知识"} {
		if len(queued.Search(q, Filter{}, 5)) == 0 {
			t.Fatalf("%q finds nothing", q)
		}
	}
}

// TestRawBlocksReused: the blocks of raw postings a merge has read are
// taken again by the next builders (see rawBlocks), and an index built
// with them is, byte for byte, the one built before.
func TestRawBlocksReused(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// No collection, which empties the pool, between the builds.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	items := syntheticSized(600, 80)
	build := func() *Index {
		ix := New(Options{})
		ix.AddBatch(items[:300])
		ix.AddBatch(items[300:])
		return ix
	}
	first := build()
	before := rawBlocksReused.Load()
	second := build()
	if rawBlocksReused.Load() == before {
		t.Fatal("no block of raw postings was taken again")
	}
	if !bytes.Equal(payload(t, first), payload(t, second)) {
		t.Fatal("an index built with blocks taken again differs")
	}
}

// TestBuildersReused: the builders of large batches are taken again by the
// next large batch, emptied, and an index built with them is, byte for
// byte, the one built with new builders; an index of another language
// does not take them.
func TestBuildersReused(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the pool is kept
	// Small tables with a front and a queue, as large ones have.
	defer func(f, d int) { frontFrom, drainFrom = f, d }(frontFrom, drainFrom)
	frontFrom, drainFrom = 256, 256
	items := syntheticSized(2*hintMin+100, 50)
	// Notes of another language than the index's (their stems cached
	// apart), first in every batch, each with its own words (the same
	// local ids for other words in the next batch).
	for k, text := range []string{
		"the writers of the notes and the readers of them are running to the libraries, which they were building for the stories",
		"they were singing with the dancers in the gardens, and the players of the games are waiting for their teachers",
		"the engineers of the bridges and the drivers of the trains were talking about the storms that are coming to them",
	} {
		items[k*hintMin].Note = prose(text)
	}
	build := func(opts Options) *Index {
		ix := New(opts)
		ix.AddBatch(items[:hintMin])
		ix.AddBatch(items[hintMin : 2*hintMin])
		ix.AddBatch(items[2*hintMin:]) // a small batch: new builders
		ix.Add(items[5].Path, items[2*hintMin+3].Note)
		return ix
	}
	builderPool = sync.Pool{}
	before := buildersReused.Load()
	first := build(Options{})
	if buildersReused.Load() == before {
		t.Fatal("the second large batch took no builder of the first")
	}
	second := build(Options{})
	if !bytes.Equal(payload(t, first), payload(t, second)) {
		t.Fatal("an index built with builders taken again differs")
	}
	builderPool = sync.Pool{}
	ptFresh := build(Options{Lang: "pt"})
	builderPool = sync.Pool{}
	build(Options{}) // leaves English builders in the pool
	pt := build(Options{Lang: "pt"})
	if !bytes.Equal(payload(t, pt), payload(t, ptFresh)) {
		t.Fatal("a Portuguese index built after an English one differs")
	}
	var qs []string
	for _, it := range items[:10] {
		qs = append(qs, it.Note.Title)
	}
	qs = append(qs, "writer libraries", "running stories", "singers dancing", "engineer bridge", "storm driving")
	sameRanking(t, "builders taken again", second, first, qs)
	sameRanking(t, "Portuguese builders taken again", pt, ptFresh, qs)
}
