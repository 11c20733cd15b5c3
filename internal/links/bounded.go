package links

import (
	"container/heap"
	"slices"
	"strings"
)

// Bounded queries: their answers and their work stay small however many
// links a note has or receives (a note linked to two million times must not
// cost an Edge per link). They only read the graph.

// BacklinkPage is a bounded view of the links to one note.
type BacklinkPage struct {
	Notes   int              // notes, other than the note itself, with a link resolving to it
	Links   int              // their links to it, in all
	Sources []BacklinkSource // the first of those notes by path
}

// BacklinkSource is one note linking to the note asked about.
type BacklinkSource struct {
	Path      string
	Links     int   // its links to the note
	LineCount int   // distinct lines holding them
	Lines     []int // the first of those lines, ascending
}

// BacklinkPage returns how many notes other than p link to p and with how many
// links, and the first maxNotes of those notes by path, each with the first
// maxLines distinct lines of its links to p. The work is one pass over the
// links of the notes that may link to p (those indexed under its file key);
// it keeps maxNotes notes at most, never one entry per link.
func (g *Graph) BacklinkPage(p string, maxNotes, maxLines int) BacklinkPage {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var page BacklinkPage
	first := &byPathDesc{} // the maxNotes smallest paths seen, the largest on top
	to := g.toOf(p)
	g.eachSource(p, func(n *noteRec) {
		c := 0
		for i := range n.links {
			if to != 0 && n.links[i].to == to {
				c++
			}
		}
		if c == 0 {
			return
		}
		page.Notes++
		page.Links += c
		switch {
		case maxNotes <= 0:
		case first.Len() < maxNotes:
			heap.Push(first, n)
		case n.path < (*first)[0].path:
			(*first)[0] = n
			heap.Fix(first, 0)
		}
	})
	recs := []*noteRec(*first)
	slices.SortFunc(recs, func(a, b *noteRec) int { return strings.Compare(a.path, b.path) })
	page.Sources = make([]BacklinkSource, len(recs))
	for i, n := range recs {
		src := BacklinkSource{Path: n.path}
		last := 0
		// Links are kept in document order, so their lines never decrease:
		// the first distinct lines met are the smallest.
		for k := range n.links {
			l := &n.links[k]
			if l.to != to { // to is not 0: the first pass kept n
				continue
			}
			src.Links++
			line := int(l.line)
			if src.LineCount > 0 && line == last {
				continue
			}
			src.LineCount++
			last = line
			if len(src.Lines) < maxLines {
				src.Lines = append(src.Lines, line)
			}
		}
		page.Sources[i] = src
	}
	return page
}

// EachOutTarget calls fn with each of the note's out-links in link order:
// the path it resolves to ("" when broken) and its target as written. It
// does not allocate (Out copies every link); fn runs under the graph's read
// lock and must not call the graph.
func (g *Graph) EachOutTarget(p string, fn func(to, target string)) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if n := g.notes[p]; n != nil {
		for i := range n.links {
			fn(g.target(&n.links[i]), n.links[i].target.of(n.text))
		}
	}
}

// byPathDesc is a max-heap of notes by path.
type byPathDesc []*noteRec

func (h byPathDesc) Len() int           { return len(h) }
func (h byPathDesc) Less(i, j int) bool { return h[i].path > h[j].path }
func (h byPathDesc) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byPathDesc) Push(x any)        { *h = append(*h, x.(*noteRec)) }
func (h *byPathDesc) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}
