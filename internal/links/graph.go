package links

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"unique"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// Edge is one link of a note and where it resolves.
type Edge struct {
	From string // the note the link is written in
	To   string // the file it resolves to; "" when broken
	Link markdown.Link
}

// Broken reports whether the link resolves to no file.
func (e Edge) Broken() bool { return e.To == "" }

// storedLink is the compact in-memory form of one out-link: offsets are int32
// (notes over 10 MiB are never parsed) and repeated targets and anchors share
// one interned string, so the graph does not keep any note's source text alive.
type storedLink struct {
	target, anchor, alias string
	to                    string // resolved path ("" when broken), shared with the resolver's copy
	start, end            int32
	targetStart, tgtEnd   int32
	line                  int32
	kind                  markdown.LinkKind
	hasAlias              bool
}

func newStoredLink(l markdown.Link) storedLink {
	s := storedLink{
		target:      intern(l.Target),
		anchor:      intern(l.Anchor),
		start:       clamp32(l.Start),
		end:         clamp32(l.End),
		targetStart: clamp32(l.TargetStart),
		tgtEnd:      clamp32(l.TargetEnd),
		line:        clamp32(l.Line),
		kind:        l.Kind,
		hasAlias:    l.HasAlias,
	}
	if l.Alias != "" {
		if l.Alias == l.Target {
			s.alias = s.target
		} else {
			s.alias = strings.Clone(l.Alias)
		}
	}
	return s
}

func (s *storedLink) link() markdown.Link {
	return markdown.Link{
		Kind:        s.kind,
		Target:      s.target,
		Anchor:      s.anchor,
		Alias:       s.alias,
		HasAlias:    s.hasAlias,
		Start:       int(s.start),
		End:         int(s.end),
		TargetStart: int(s.targetStart),
		TargetEnd:   int(s.tgtEnd),
		Line:        int(s.line),
	}
}

func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

func clamp32(v int) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int32(v)
}

// Graph holds every note's out-links and their resolution, kept up to date
// incrementally; safe for concurrent use.
//
// When a file appears or disappears, only the links whose resolution could
// change are resolved again: those whose target's last segment names a file
// with the same (case-folded) base name — the only files a link can ever
// resolve to (see LinkKeys and FileKey).
//
// A note is any path given to SetNote, and any path ending in .md or
// .markdown given to AddFile. Hidden paths (a segment starting with '.') are
// ignored by every method that adds.
type Graph struct {
	mu    sync.RWMutex
	r     *Resolver
	notes map[string][]storedLink       // note -> out-links in document order (nil: a note without links)
	in    map[string]map[string]int32 // resolved target -> source note -> number of links
	byKey map[string]map[string]int32 // LinkKeys key -> source note -> number of links depending on it
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{
		r:     NewResolver(),
		notes: make(map[string][]storedLink),
		in:    make(map[string]map[string]int32),
		byKey: make(map[string]map[string]int32),
	}
}

// Resolver returns the graph's resolver, holding every file the graph knows.
// Use it only to resolve and query: adding or removing files through it
// would bypass the graph's incremental upkeep (use AddFile and Remove).
func (g *Graph) Resolver() *Resolver { return g.r }

// AddFile records that the file at p exists: an attachment, or a note whose
// links are not known (a note already set keeps its links).
func (g *Graph) AddFile(p string) {
	if p == "" || IsHidden(p) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.addFile(p)
	if isNoteName(p) {
		if _, ok := g.notes[p]; !ok {
			g.notes[p] = nil
		}
	}
}

// SetNote adds or replaces the note at p and its out-links (in document
// order). The note's file is added if it was not known.
func (g *Graph) SetNote(p string, links []markdown.Link) {
	if p == "" || IsHidden(p) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropLinks(p)
	g.addFile(p)
	var stored []storedLink
	if len(links) > 0 {
		stored = make([]storedLink, len(links))
		g.r.mu.RLock()
		for i, l := range links {
			s := newStoredLink(l)
			s.to, _ = g.r.resolve(p, s.target, s.kind == markdown.MarkdownLink)
			stored[i] = s
		}
		g.r.mu.RUnlock()
		for i := range stored {
			g.index(p, &stored[i])
		}
	}
	g.notes[p] = stored
}

// Remove records that the file at p disappeared: its out-links are dropped
// and every link that resolved to it is resolved again.
func (g *Graph) Remove(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removeLocked(p)
}

// RemoveTree removes every file at dir or below it (dir "" is not allowed
// and removes nothing) and returns the removed paths, sorted. Use it when a
// watched directory disappeared.
func (g *Graph) RemoveTree(dir string) []string {
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var gone []string
	g.r.mu.RLock()
	for p := range g.r.files {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			gone = append(gone, p)
		}
	}
	g.r.mu.RUnlock()
	slices.Sort(gone)
	for _, p := range gone {
		g.removeLocked(p)
	}
	return gone
}

// Out returns the note's out-links in link order; nil for an unknown note.
func (g *Graph) Out(p string) []Edge {
	g.mu.RLock()
	defer g.mu.RUnlock()
	links := g.notes[p]
	if len(links) == 0 {
		return nil
	}
	out := make([]Edge, len(links))
	for i := range links {
		out[i] = Edge{From: p, To: links[i].to, Link: links[i].link()}
	}
	return out
}

// Backlinks returns every link from another note that resolves to p, sorted
// by From then Line (then byte offset). A note's links to itself are excluded.
func (g *Graph) Backlinks(p string) []Edge {
	g.mu.RLock()
	defer g.mu.RUnlock()
	srcs := g.in[p]
	if len(srcs) == 0 {
		return nil
	}
	var out []Edge
	for from := range srcs {
		if from == p {
			continue
		}
		links := g.notes[from]
		for i := range links {
			if links[i].to == p {
				out = append(out, Edge{From: from, To: p, Link: links[i].link()})
			}
		}
	}
	slices.SortFunc(out, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.From, b.From), cmp.Compare(a.Link.Line, b.Link.Line), cmp.Compare(a.Link.Start, b.Link.Start))
	})
	return out
}

// BacklinkSources returns the notes (other than p) with at least one link
// resolving to p, sorted; a note linking twice counts once.
func (g *Graph) BacklinkSources(p string) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []string
	for from := range g.in[p] {
		if from != p {
			out = append(out, from)
		}
	}
	slices.Sort(out)
	return out
}

// Neighbors returns the notes linked from p or linking to p, deduplicated,
// sorted, without p itself. Attachments are not notes and are not included.
func (g *Graph) Neighbors(p string) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	seen := make(map[string]struct{})
	for _, l := range g.notes[p] {
		if l.to == "" || l.to == p {
			continue
		}
		if _, ok := g.notes[l.to]; ok {
			seen[l.to] = struct{}{}
		}
	}
	for from := range g.in[p] {
		if from != p {
			seen[from] = struct{}{}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// IsNote reports whether p is a note of the graph.
func (g *Graph) IsNote(p string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.notes[p]
	return ok
}

// Notes returns every note's path, sorted.
func (g *Graph) Notes() []string {
	g.mu.RLock()
	out := make([]string, 0, len(g.notes))
	for p := range g.notes {
		out = append(out, p)
	}
	g.mu.RUnlock()
	slices.Sort(out)
	return out
}

// AllEdges calls fn for every out-link of every note, notes in path order and
// links in document order, until fn returns false. fn runs without the
// graph's lock held (it may call the graph); each note's edges are a
// consistent snapshot, but a concurrent change between two notes is seen by
// the later one only.
func (g *Graph) AllEdges(fn func(Edge) bool) {
	for _, n := range g.Notes() {
		for _, e := range g.Out(n) {
			if !fn(e) {
				return
			}
		}
	}
}

// Stats counts what the graph holds.
type Stats struct {
	Files  int // every known file, notes included
	Notes  int
	Links  int // out-links of all notes
	Broken int // links that resolve to nothing
}

// Stats returns the graph's current counts.
func (g *Graph) Stats() Stats {
	g.mu.RLock()
	defer g.mu.RUnlock()
	s := Stats{Files: g.r.Len(), Notes: len(g.notes)}
	for _, links := range g.notes {
		s.Links += len(links)
		for i := range links {
			if links[i].to == "" {
				s.Broken++
			}
		}
	}
	return s
}

// --- internals; the caller holds g.mu for writing ---

func (g *Graph) removeLocked(p string) {
	if _, ok := g.notes[p]; ok {
		g.dropLinks(p)
		delete(g.notes, p)
	}
	g.r.mu.Lock()
	removed := g.r.remove(p)
	g.r.mu.Unlock()
	if removed {
		g.reresolve(FileKey(p))
	}
}

func (g *Graph) addFile(p string) {
	g.r.mu.Lock()
	added := g.r.add(p)
	g.r.mu.Unlock()
	if added {
		g.reresolve(FileKey(p))
	}
}

// dropLinks removes the note's out-links from the indexes (the note stays).
func (g *Graph) dropLinks(p string) {
	links := g.notes[p]
	for i := range links {
		g.unindex(p, &links[i])
	}
	if links != nil {
		g.notes[p] = nil
	}
}

func (g *Graph) index(from string, l *storedLink) {
	k1, k2 := LinkKeys(l.target)
	addCount(g.byKey, k1, from, 1)
	addCount(g.byKey, k2, from, 1)
	addCount(g.in, l.to, from, 1)
}

func (g *Graph) unindex(from string, l *storedLink) {
	k1, k2 := LinkKeys(l.target)
	addCount(g.byKey, k1, from, -1)
	addCount(g.byKey, k2, from, -1)
	addCount(g.in, l.to, from, -1)
}

// reresolve resolves again every link that depends on files named key.
func (g *Graph) reresolve(key string) {
	srcs := g.byKey[key]
	if len(srcs) == 0 {
		return
	}
	g.r.mu.RLock()
	defer g.r.mu.RUnlock()
	for from := range srcs {
		links := g.notes[from]
		for i := range links {
			l := &links[i]
			if k1, k2 := LinkKeys(l.target); k1 != key && k2 != key {
				continue
			}
			to, _ := g.r.resolve(from, l.target, l.kind == markdown.MarkdownLink)
			if to == l.to {
				continue
			}
			addCount(g.in, l.to, from, -1)
			l.to = to
			addCount(g.in, to, from, 1)
		}
	}
}

// addCount adds d to m[k][sub], deleting entries that reach zero; an empty k
// is ignored.
func addCount(m map[string]map[string]int32, k, sub string, d int32) {
	if k == "" {
		return
	}
	inner := m[k]
	if inner == nil {
		if d <= 0 {
			return
		}
		inner = make(map[string]int32)
		m[k] = inner
	}
	n := inner[sub] + d
	if n <= 0 {
		delete(inner, sub)
		if len(inner) == 0 {
			delete(m, k)
		}
		return
	}
	inner[sub] = n
}

func isNoteName(p string) bool {
	l := strings.ToLower(p)
	return strings.HasSuffix(l, ".md") || strings.HasSuffix(l, ".markdown")
}
