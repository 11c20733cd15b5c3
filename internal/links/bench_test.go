package links

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// corpusNote is one note of a benchmark corpus with its links.
type corpusNote struct {
	path  string
	links []markdown.Link
}

// loadCorpus reads the vault named by $VAULTMCP_CORPUS (its obsidian-hub
// folder when it has one), or skips the benchmark.
func loadCorpus(b *testing.B) (files []string, notes []corpusNote) {
	b.Helper()
	root := os.Getenv("VAULTMCP_CORPUS")
	if root == "" {
		b.Skip("VAULTMCP_CORPUS is not set")
	}
	if st, err := os.Stat(filepath.Join(root, "obsidian-hub")); err == nil && st.IsDir() {
		root = filepath.Join(root, "obsidian-hub")
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if IsHidden(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		files = append(files, rel)
		if strings.HasSuffix(strings.ToLower(rel), ".md") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			notes = append(notes, corpusNote{path: rel, links: markdown.Parse(rel, data).Links})
		}
		return nil
	})
	if err != nil {
		b.Fatalf("reading corpus: %v", err)
	}
	return files, notes
}

func buildGraph(files []string, notes []corpusNote) *Graph {
	g := NewGraph()
	for _, f := range files {
		g.AddFile(f)
	}
	for _, n := range notes {
		g.SetNote(n.path, n.links)
	}
	return g
}

// BenchmarkGraphBuild builds the whole graph of the corpus: every file added,
// then every note's links resolved. It reports the links, the broken ones and
// the live heap the finished graph holds.
func BenchmarkGraphBuild(b *testing.B) {
	files, notes := loadCorpus(b)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g := buildGraph(files, notes)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(g)
	g = nil

	for b.Loop() {
		g = buildGraph(files, notes)
	}
	s := g.Stats()
	b.ReportMetric(float64(heap)/(1<<20), "heapMB")
	b.ReportMetric(float64(s.Links), "links")
	b.ReportMetric(float64(s.Broken), "broken")
	b.ReportMetric(float64(len(notes))/(b.Elapsed().Seconds()/float64(b.N)), "notes/s")
}

// BenchmarkGraphBuildNotesFirst sets the notes before the other files are
// known, the worst order for incremental upkeep (every link is resolved again
// as its target appears).
func BenchmarkGraphBuildNotesFirst(b *testing.B) {
	files, notes := loadCorpus(b)
	for b.Loop() {
		g := NewGraph()
		for _, n := range notes {
			g.SetNote(n.path, n.links)
		}
		for _, f := range files {
			g.AddFile(f)
		}
	}
}

// BenchmarkGraphAddRemoveBusyName adds and removes a file whose name is the
// most linked-to name of the corpus, forcing its links to be resolved again.
func BenchmarkGraphAddRemoveBusyName(b *testing.B) {
	files, notes := loadCorpus(b)
	g := buildGraph(files, notes)
	busy, most := "", 0
	for key, i := range g.byKey {
		srcs := &g.sets.at[i]
		if srcs.len() > most {
			busy, most = key, srcs.len()
		}
	}
	p := "zz-bench/" + busy
	for b.Loop() {
		g.AddFile(p)
		g.Remove(p)
	}
	b.ReportMetric(float64(most), "dependent-notes")
}

func BenchmarkGraphBacklinks(b *testing.B) {
	files, notes := loadCorpus(b)
	g := buildGraph(files, notes)
	sources := map[string]map[string]bool{}
	g.AllEdges(func(e Edge) bool {
		if e.To != "" {
			if sources[e.To] == nil {
				sources[e.To] = map[string]bool{}
			}
			sources[e.To][e.From] = true
		}
		return true
	})
	target, most := "", 0
	for to, srcs := range sources {
		if len(srcs) > most {
			target, most = to, len(srcs)
		}
	}
	for b.Loop() {
		_ = g.Backlinks(target)
	}
	b.ReportMetric(float64(most), "sources")
}

// BenchmarkEachLinkTexts gathers the link texts of every note of the corpus
// in one pass, as the first build does once the graph is filled (a step no
// other work overlaps).
func BenchmarkEachLinkTexts(b *testing.B) {
	files, notes := loadCorpus(b)
	g := buildGraph(files, notes)
	n := 0
	for b.Loop() {
		n = 0
		g.EachLinkTexts(func(string, []Text) { n++ })
	}
	b.ReportMetric(float64(n), "notes")
}
