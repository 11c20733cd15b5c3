package index

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/snapshot"
)

// Benchmarks run on a synthetic corpus, and on a real vault when
// VAULTMCP_CORPUS names a folder (e.g. a clone of the Obsidian hub):
//
//	VAULTMCP_CORPUS=/path/to/vault go test -run '^$' -bench . ./internal/index/

// loadVault parses every *.md under dir (dot-folders and node_modules skipped).
func loadVault(tb testing.TB, dir string) ([]Item, int64) {
	tb.Helper()
	var items []Item
	var size int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".md") || !d.Type().IsRegular() {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		size += int64(len(src))
		items = append(items, Item{Path: rel, Note: markdown.Parse(rel, src)})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return items, size
}

var (
	corpusOnce  sync.Once
	corpusItems []Item
	corpusBytes int64
)

func corpus(b *testing.B) []Item {
	dir := os.Getenv("VAULTMCP_CORPUS")
	if dir == "" {
		b.Skip("VAULTMCP_CORPUS not set")
	}
	corpusOnce.Do(func() { corpusItems, corpusBytes = loadVault(b, dir) })
	return corpusItems
}

// synthetic builds n notes from a Zipf-distributed vocabulary, with headings,
// tags, code and some accented and hyphenated words.
func synthetic(n int) []Item { return syntheticSized(n, 240) }

// syntheticSized: chunks of 40 to maxWords words of prose.
func syntheticSized(n, maxWords int) []Item {
	r := rand.New(rand.NewPCG(1, 2))
	const vocab = 50000
	words := make([]string, vocab)
	syll := []string{"ka", "lo", "mi", "tre", "vos", "an", "qu", "bel", "ção", "dor", "ex", "zi", "por", "ten", "ul", "gra"}
	for i := range words {
		var sb strings.Builder
		for k := 0; k < 2+r.IntN(3); k++ {
			sb.WriteString(syll[r.IntN(len(syll))])
		}
		if i%97 == 0 {
			sb.WriteString("-" + syll[r.IntN(len(syll))] + "ing")
		}
		words[i] = sb.String()
	}
	zipf := rand.NewZipf(r, 1.1, 2, vocab-1)
	sentence := func(k int) string {
		var sb strings.Builder
		for i := 0; i < k; i++ {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[zipf.Uint64()])
		}
		return sb.String()
	}
	items := make([]Item, n)
	for i := range items {
		nc := 1 + r.IntN(6)
		note := &markdown.Note{
			Title:       sentence(3),
			Type:        []string{"wiki", "note", "moc", "daily", "project"}[r.IntN(5)],
			Tags:        []string{words[r.IntN(200)], words[r.IntN(200)]},
			Frontmatter: map[string]any{"tags": []any{words[r.IntN(200)]}},
		}
		for c := 0; c < nc; c++ {
			ch := markdown.Chunk{Prose: sentence(40 + r.IntN(maxWords-39)), StartLine: c*10 + 1, EndLine: c*10 + 9}
			if c > 0 {
				ch.Headings = []string{sentence(2)}
			}
			if r.IntN(3) == 0 {
				ch.Code = sentence(20)
			}
			note.Chunks = append(note.Chunks, ch)
		}
		items[i] = Item{Path: fmt.Sprintf("02-wiki/d%d/n%05d.md", i%20, i), Note: note}
	}
	return items
}

func benchAddBatch(b *testing.B, items []Item, bytes int64) {
	b.ReportAllocs()
	if bytes > 0 {
		b.SetBytes(bytes)
	}
	for b.Loop() {
		ix := New(Options{})
		ix.AddBatch(items)
	}
	b.ReportMetric(float64(len(items))*float64(b.N)/b.Elapsed().Seconds(), "notes/s")
}

func reportHeap(b *testing.B, items []Item) {
	ix := New(Options{})
	ix.AddBatch(items)
	st := ix.Stats()
	var m1, m2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(ix)
	ix = nil
	runtime.GC()
	runtime.ReadMemStats(&m2)
	// The heap the index holds: live with it, minus live without it.
	b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m2.HeapAlloc))/(1<<20), "index-MiB")
	b.ReportMetric(float64(st.Terms), "terms")
	b.ReportMetric(float64(st.Postings), "postings")
}

func BenchmarkAddBatch(b *testing.B) {
	b.Run("synthetic-5k", func(b *testing.B) {
		items := synthetic(5000)
		benchAddBatch(b, items, 0)
		reportHeap(b, items)
	})
	b.Run("corpus", func(b *testing.B) {
		items := corpus(b)
		benchAddBatch(b, items, corpusBytes)
		reportHeap(b, items)
	})
}

func benchSearch(b *testing.B, ix *Index, queries []string) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Search(queries[i%len(queries)], Filter{}, 6)
		i++
	}
}

func BenchmarkSearch(b *testing.B) {
	b.Run("synthetic-5k", func(b *testing.B) {
		items := synthetic(5000)
		ix := New(Options{})
		ix.AddBatch(items)
		var qs []string
		for _, it := range items[:50] {
			qs = append(qs, it.Note.Title)
		}
		benchSearch(b, ix, qs)
	})
	corpusQueries := []string{
		"dataview query", "daily notes template", "graph view", "canvas plugin settings",
		"obsidian sync", "community plugins", "mobile app", "css snippets theme",
		"templater", "kanban board", "zettelkasten", "backlinks", "vault folder structure",
		"pdf annotation", "git backup", "markdown tables", "excalidraw drawing",
		"tasks plugin due date", "publish website", "hotkeys",
	}
	for _, kind := range []struct {
		name string
		qs   []string
	}{
		{"corpus", corpusQueries},
		{"corpus-misspelled", []string{"datavew", "templatr plugin", "zettelkastn", "excalidrow", "backlniks"}},
	} {
		b.Run(kind.name, func(b *testing.B) {
			items := corpus(b)
			ix := New(Options{})
			ix.AddBatch(items)
			benchSearch(b, ix, kind.qs)
		})
	}
}

// BenchmarkAdd replaces notes one at a time in a full index (the watcher's
// path: analysis, removal of the old version, merge).
func BenchmarkAdd(b *testing.B) {
	run := func(b *testing.B, items []Item) {
		ix := New(Options{})
		ix.AddBatch(items)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			it := items[i%len(items)]
			ix.Add(it.Path, it.Note)
			i++
		}
	}
	b.Run("synthetic-5k", func(b *testing.B) { run(b, synthetic(5000)) })
	b.Run("corpus", func(b *testing.B) { run(b, corpus(b)) })
}

// BenchmarkFuzzy measures the misspelling lookup on a 300k-term vocabulary
// of random words (lengths 3 to 14) at distance 1 and 2.
func BenchmarkFuzzy(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 300000
	terms := make([]string, n)
	var fz fuzzyIndex
	for i := range terms {
		w := make([]byte, 3+r.IntN(12))
		for k := range w {
			w[k] = "etaoinshrdlcumwfgypbvkjxqz"[min(r.IntN(26), r.IntN(26))]
		}
		terms[i] = string(w)
		fz.add(terms[i], uint32(i))
	}
	for _, d := range []int{1, 2} {
		b.Run(fmt.Sprintf("distance-%d", d), func(b *testing.B) {
			qs := []string{"configuration", "retrying", "backof", "kubernets", "deployment"}
			found := 0
			i := 0
			for b.Loop() {
				fz.near(qs[i%len(qs)], d, terms, func(uint32, int) { found++ })
				i++
			}
		})
	}
}

// longNote joins the chunks of synthetic notes (the generator's first 400,
// which synthetic's larger sets start with too) into one note of about size
// bytes of prose.
func longNote(size int) *markdown.Note {
	src := syntheticSized(400, 240)
	n := &markdown.Note{Title: "a long note", Type: "wiki", Tags: src[0].Note.Tags}
	total := 0
	for _, it := range src[1:] {
		for _, ch := range it.Note.Chunks {
			ch.StartLine, ch.EndLine = len(n.Chunks)*10+1, len(n.Chunks)*10+9
			if len(n.Chunks) > 0 && len(ch.Headings) == 0 {
				ch.Headings = []string{it.Note.Title}
			}
			n.Chunks = append(n.Chunks, ch)
			total += len(ch.Prose) + len(ch.Code)
			if total >= size {
				return n
			}
		}
	}
	return n
}

// BenchmarkAddOneLongNote refreshes one 50 KB note, again and again, in an
// index of 50k synthetic notes: the cost must follow the note, not the vault.
func BenchmarkAddOneLongNote(b *testing.B) {
	items := synthetic(50000)
	ix := New(Options{})
	ix.AddBatch(items)
	long := longNote(50 << 10)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ix.Add("02-wiki/long.md", long)
	}
}

// BenchmarkAddBatch100k builds the index of 100k synthetic notes (set
// VAULTMCP_BENCH_100K=1; it needs a few GB) and reports the live heap of the
// built index.
func BenchmarkAddBatch100k(b *testing.B) {
	if os.Getenv("VAULTMCP_BENCH_100K") == "" {
		b.Skip("VAULTMCP_BENCH_100K not set")
	}
	items := synthetic(100000)
	benchAddBatch(b, items, 0)
	reportHeap(b, items)
}

// BenchmarkSnapshotDecode: Decode of an index snapshot (every list
// checked), the index's part of a start from the snapshot.
func BenchmarkSnapshotDecode(b *testing.B) {
	ix := New(Options{})
	ix.AddBatch(corpus(b))
	path := filepath.Join(b.TempDir(), "ix.snap")
	if err := snapshot.Write(path, "", func(e *snapshot.Enc) error { ix.Encode(e); return nil }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := snapshot.Read(path, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Decode(d, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
