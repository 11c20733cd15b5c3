package links

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/par"
	"github.com/vaultmcp/vaultmcp/internal/strarena"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
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
// (notes over 10 MiB are never parsed) and its strings are spans of its
// note's link text (noteRec.text), into which they are copied, so the graph
// never keeps a note's source text alive. A span each instead of a string
// each: the generated 100k-note vault's million links held five million
// pointers, which the collector read at every cycle of the first build. The
// file a link resolves to is a number too (see Graph.target), so that a
// note's links hold no pointer at all: with the path there, the collector
// scanned 70 MB more of that vault's heap at every cycle (235 MB of
// pointer-holding memory, now 165) and followed a million more pointers; its
// collections took 1.24 core-seconds of a first start against 1.51 (medians
// of 5 alternated starts).
type storedLink struct {
	to                            uint32 // the resolved file's id (Resolver.paths) + 1; 0 when broken
	target, anchor, alias, folded span   // folded: foldTarget(target), what resolution and the index use
	start, end                    int32
	targetStart, targetEnd        int32
	line                          int32
	kind                          markdown.LinkKind
	hasAlias                      bool
}

// span is a string of a note's link text.
type span struct{ off, n uint32 }

// of returns the string of text that s spans.
func (s span) of(text string) string { return text[s.off : s.off+s.n] }

// storeLinks returns the stored form of a note's links and their text,
// their folded targets found (see foldTarget); the caller resolves them.
func storeLinks(links []markdown.Link) (string, []storedLink) {
	var sc linkScratch
	return sc.storeLinks(links)
}

// linkScratch holds what storeLinks and linkKeyCounts need only while they
// run, kept from one note to the next by a caller that stores many (each
// worker of SetNotes): a first build of the generated 100k-note vault made
// these four buffers for each of its notes.
type linkScratch struct {
	folds  []string
	parts  []keyPart
	counts []int32
	at     map[keyPart]int
}

// keyPart is a LinkKeys key told apart by its base name and suffix (see
// linkKeyCounts).
type keyPart struct {
	name string
	md   bool // the key is name + ".md"
}

// bigScratch is the size above which a scratch map is dropped after use
// rather than cleared (clearing costs its room, whatever it holds).
const bigScratch = 1024

// storeLinks is the package's storeLinks, with sc's buffers.
func (sc *linkScratch) storeLinks(links []markdown.Link) (string, []storedLink) {
	folds := slices.Grow(sc.folds[:0], len(links))[:len(links)]
	for i := range links {
		folds[i] = foldTarget(links[i].Target)
	}
	st := make([]storedLink, len(links))
	text := packLinks(st, links, folds)
	clear(folds) // holds no note's strings past its turn
	sc.folds = folds[:0]
	return text, st
}

// packLinks stores links in dst (as long), folds[i] being the folded
// target of links[i], and returns their text: their strings copied into one
// string, each written once (an alias or a folded target equal to the
// target shares its span).
func packLinks(dst []storedLink, links []markdown.Link, folds []string) string {
	size := 0
	for i, l := range links {
		size += len(l.Target) + len(l.Anchor)
		if l.Alias != l.Target {
			size += len(l.Alias)
		}
		if folds[i] != l.Target {
			size += len(folds[i])
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	put := func(s string) span {
		sp := span{uint32(sb.Len()), uint32(len(s))}
		sb.WriteString(s)
		return sp
	}
	for i, l := range links {
		s := &dst[i]
		*s = storedLink{
			start:       clamp32(l.Start),
			end:         clamp32(l.End),
			targetStart: clamp32(l.TargetStart),
			targetEnd:   clamp32(l.TargetEnd),
			line:        clamp32(l.Line),
			kind:        l.Kind,
			hasAlias:    l.HasAlias,
		}
		s.target = put(l.Target)
		s.anchor = put(l.Anchor)
		s.alias, s.folded = s.target, s.target
		if l.Alias != l.Target {
			s.alias = put(l.Alias)
		}
		if folds[i] != l.Target {
			s.folded = put(folds[i])
		}
	}
	return sb.String()
}

// link returns the link, text being its note's link text.
func (s *storedLink) link(text string) markdown.Link {
	return markdown.Link{
		Kind:        s.kind,
		Target:      s.target.of(text),
		Anchor:      s.anchor.of(text),
		Alias:       s.alias.of(text),
		HasAlias:    s.hasAlias,
		Start:       int(s.start),
		End:         int(s.end),
		TargetStart: int(s.targetStart),
		TargetEnd:   int(s.targetEnd),
		Line:        int(s.line),
	}
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
// resolve to (see LinkKeys and FileKey). The same index answers backlinks: a
// link resolving to p is always indexed under FileKey(p).
//
// A note is any path given to SetNote, and any path ending in .md or
// .markdown given to AddFile. Hidden paths (a segment starting with '.') are
// ignored by every method that adds.
type Graph struct {
	mu    sync.RWMutex
	r     *Resolver
	notes map[string]*noteRec
	// recs holds every note of notes by its id (nil: a free id), so that
	// byKey's sets name notes by id: see srcSet.
	recs idSlots[*noteRec]
	// byKey holds, for each LinkKeys key, the notes with links depending
	// on it: the set sets.at[byKey[key]] (in one array, not an object a
	// set: see srcSet).
	byKey map[string]uint32
	sets  idSlots[srcSet]
	// textDirty: notes whose link texts may have changed (see linktext.go),
	// unless untracked (see TrackTextChanges)
	textDirty map[string]struct{}
	untracked bool
}

// noteRec is one note of the graph.
type noteRec struct {
	id    uint32 // in Graph.recs
	path  string
	dir   string       // folded parent folder, for resolution
	text  string       // the strings of its links (see storedLink)
	links []storedLink // in document order
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{
		r:     NewResolver(),
		notes: make(map[string]*noteRec),
		byKey: make(map[string]uint32),
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
	if vaultfs.IsNoteName(p) && g.notes[p] == nil {
		g.addRec(newNoteRec(p))
	}
}

// AddFiles is AddFile for many files at once (a start: every file of the
// vault), under one lock, with the graph's tables grown once and each
// file's name folded once.
func (g *Graph) AddFiles(paths []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.r.mu.Lock()
	if len(g.r.files) == 0 {
		g.r.files = make(map[string]uint32, len(paths))
		g.r.byName = make(map[string][]candidate, len(paths))
		g.r.paths.grow(len(paths))
	}
	if len(g.notes) == 0 {
		g.notes = make(map[string]*noteRec, len(paths))
		g.recs.grow(len(paths))
	}
	var keys []string // of the files added
	for _, p := range paths {
		if key, ok := g.r.addKey(p); ok {
			keys = append(keys, key)
			if vaultfs.IsNoteName(p) && g.notes[p] == nil {
				g.addRec(newNoteRec(p))
			}
		}
	}
	g.r.mu.Unlock()
	if len(g.byKey) == 0 {
		return // no link yet: none to resolve again
	}
	g.reresolveKeys(keys)
}

// RemoveFiles is Remove for many files at once (a folder removed, a git
// checkout): each note that links to files of their names has its links
// resolved again once, not once per file. (One at a time, a MOC linking
// to every note of a removed folder had all its links looked at again for
// each note: quadratic, seconds for the Obsidian hub's 2,692-note People
// folder.)
func (g *Graph) RemoveFiles(paths []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var keys []string
	for _, p := range paths {
		if g.forget(p) {
			keys = append(keys, FileKey(p))
		}
	}
	g.reresolveKeys(keys)
}

// SetNote adds or replaces the note at p and its out-links (in document
// order). The note's file is added if it was not known.
func (g *Graph) SetNote(p string, links []markdown.Link) {
	if p == "" || IsHidden(p) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.notes[p]
	var old []storedLink
	var oldText string
	if n == nil {
		n = newNoteRec(p)
		g.addRec(n)
	} else {
		old, oldText = n.links, n.text
		g.dropLinks(n)
	}
	g.addFile(p)
	if len(links) == 0 {
		g.markTextDiff(oldText, old, "", nil)
		return
	}
	text, stored := storeLinks(links)
	g.r.mu.RLock()
	for i := range stored {
		stored[i].to = g.resolveStored(n, text, &stored[i])
	}
	g.r.mu.RUnlock()
	n.text, n.links = text, stored
	g.markTextDiff(oldText, old, text, stored)
	for _, kc := range linkKeyCounts(text, stored) {
		g.count(kc.key, n, kc.c)
	}
}

// NoteLinks is one note for SetNotes.
type NoteLinks struct {
	Path  string
	Links []markdown.Link
}

// SetNotes is SetNote for many notes at once, under one lock: every note's
// file is added first, then the links of all are prepared and resolved on
// every CPU, then recorded. Measured on the generated 100k-note vault (a
// million links), starting from the index snapshot: 1.36 s with SetNote one
// note at a time.
func (g *Graph) SetNotes(items []NoteLinks) {
	g.mu.Lock()
	defer g.mu.Unlock()
	recs := make([]*noteRec, len(items))
	var keys []string                        // of the files added
	last := make(map[string]int, len(items)) // a path given twice: the last wins
	for i, it := range items {
		last[it.Path] = i
	}
	for i, it := range items {
		if it.Path == "" || IsHidden(it.Path) || last[it.Path] != i {
			continue
		}
		n := g.notes[it.Path]
		if n == nil {
			n = newNoteRec(it.Path)
			g.addRec(n)
		} else {
			g.markTextDiff(n.text, n.links, "", nil)
			g.dropLinks(n)
		}
		g.r.mu.Lock()
		key, added := g.r.addKey(it.Path)
		g.r.mu.Unlock()
		if added {
			keys = append(keys, key)
		}
		recs[i] = n
	}
	g.reresolveKeys(keys)
	texts := make([]string, len(items))
	stored := make([][]storedLink, len(items))
	linkKeys := make([][]keyCount, len(items)) // per note, the keys its links depend on
	workers := par.Workers(len(items), 256)
	par.Run(workers, func(w int) {
		g.r.mu.RLock()
		defer g.r.mu.RUnlock()
		var sc linkScratch
		for i := w; i < len(items); i += workers {
			n, links := recs[i], items[i].Links
			if n == nil || len(links) == 0 {
				continue
			}
			text, st := sc.storeLinks(links)
			for k := range st {
				st[k].to = g.resolveStored(n, text, &st[k])
			}
			texts[i], stored[i] = text, st
			linkKeys[i] = sc.linkKeyCounts(text, st)
		}
	})
	// The keys were found on every CPU; recording them takes the lock.
	for i, n := range recs {
		if n == nil || len(stored[i]) == 0 {
			continue
		}
		n.text, n.links = texts[i], stored[i]
		g.markTextDiff("", nil, n.text, n.links)
		for _, kc := range linkKeys[i] {
			g.count(kc.key, n, kc.c)
		}
	}
}

// keyCount is a LinkKeys key and how many of a note's links depend on it.
type keyCount struct {
	key string
	c   int32
}

// linkKeyCounts returns the keys the links depend on (see foldedKeys),
// each once with its count: what count does for each link, in one call a
// key (a note links the same target again and again). The keys are told
// apart by their base name and suffix before any is made, and those with
// the suffix are made in one string (a string a link was a million objects
// allocated while the generated 100k-note vault was first indexed); count
// copies a key it keeps.
func linkKeyCounts(text string, links []storedLink) []keyCount {
	var sc linkScratch
	return sc.linkKeyCounts(text, links)
}

// linkKeyCounts is the package's linkKeyCounts, with sc's buffers.
func (sc *linkScratch) linkKeyCounts(text string, links []storedLink) []keyCount {
	parts, counts := sc.parts[:0], sc.counts[:0]
	defer func() {
		clear(parts) // holds no note's strings past its turn
		sc.parts, sc.counts = parts[:0], counts[:0]
	}()
	var at map[keyPart]int // for a note with many links
	if len(links) > 32 {
		if sc.at == nil {
			sc.at = make(map[keyPart]int, len(links))
		}
		at = sc.at
		defer func() {
			if len(at) > bigScratch {
				sc.at = nil
			} else {
				clear(at)
			}
		}()
	}
	size, dotted := 0, false
	add := func(k keyPart) {
		if at != nil {
			if i, ok := at[k]; ok {
				counts[i]++
				return
			}
			at[k] = len(parts)
		} else {
			for i := range parts {
				if parts[i] == k {
					counts[i]++
					return
				}
			}
		}
		parts = append(parts, k)
		counts = append(counts, 1)
		if k.md {
			size += len(k.name) + len(".md")
		}
	}
	for k := range links {
		// What foldedKeys gives, as parts.
		t := links[k].folded.of(text)
		if t == "" {
			continue
		}
		name := baseName(t)
		if strings.Contains(name, ".") {
			add(keyPart{name, false})
			dotted = true
		}
		add(keyPart{name, true})
	}
	a := strarena.New(size)
	out := make([]keyCount, len(parts))
	for i, k := range parts {
		key := k.name
		if k.md {
			key = a.Join(k.name, ".md")
		}
		out[i] = keyCount{key, counts[i]}
	}
	if dotted {
		// A name with a dot and one that is the same name without ".md"
		// ("v1.2.md" and "v1.2") give the same key: one count of the two.
		merged := out[:0]
		var seen map[string]int // for a note with many links
		if len(out) > 32 {
			seen = make(map[string]int, len(out))
		}
		for _, kc := range out {
			i := -1
			if seen != nil {
				if j, ok := seen[kc.key]; ok {
					i = j
				} else {
					seen[kc.key] = len(merged)
				}
			} else {
				i = slices.IndexFunc(merged, func(m keyCount) bool { return m.key == kc.key })
			}
			if i >= 0 {
				merged[i].c += kc.c
			} else {
				merged = append(merged, kc)
			}
		}
		out = merged
	}
	return out
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
		if vpath.Within(p, dir) {
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

// Out returns the note's out-links in link order; nil for an unknown note or
// a note without links.
func (g *Graph) Out(p string) []Edge {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := g.notes[p]
	if n == nil || len(n.links) == 0 {
		return nil
	}
	out := make([]Edge, len(n.links))
	for i := range n.links {
		out[i] = Edge{From: p, To: g.target(&n.links[i]), Link: n.links[i].link(n.text)}
	}
	return out
}

// EachOut calls fn with each of the note's out-links in link order, without
// allocating (Out copies them): for walks over every note, such as writing
// the index snapshot. fn runs under the graph's read lock: it must not call
// the graph.
func (g *Graph) EachOut(p string, fn func(l markdown.Link)) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if n := g.notes[p]; n != nil {
		for i := range n.links {
			fn(n.links[i].link(n.text))
		}
	}
}

// Backlinks returns every link from another note that resolves to p, sorted
// by From then Line (then byte offset). A note's links to itself are excluded.
func (g *Graph) Backlinks(p string) []Edge {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []Edge
	to := g.toOf(p)
	g.eachSource(p, func(n *noteRec) {
		for i := range n.links {
			if to != 0 && n.links[i].to == to {
				out = append(out, Edge{From: n.path, To: p, Link: n.links[i].link(n.text)})
			}
		}
	})
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
	to := g.toOf(p)
	g.eachSource(p, func(n *noteRec) {
		if n.linksTo(to) {
			out = append(out, n.path)
		}
	})
	slices.Sort(out)
	return out
}

// Neighbors returns the notes linked from p or linking to p, deduplicated,
// sorted, without p itself. Attachments are not notes and are not included.
func (g *Graph) Neighbors(p string) []string {
	out := g.AppendNeighbors(nil, p)
	slices.Sort(out)
	return slices.Compact(out)
}

// AppendNeighbors appends to dst the notes of Neighbors(p), in no
// particular order and possibly more than once, without the map and the
// sort: for a caller that keeps the best of each anyway (the graph
// expansion of a search, where a hub note has thousands of neighbours).
func (g *Graph) AppendNeighbors(dst []string, p string) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if n := g.notes[p]; n != nil {
		for i := range n.links {
			to := g.target(&n.links[i])
			if to != "" && to != p && g.notes[to] != nil {
				dst = append(dst, to)
			}
		}
	}
	to := g.toOf(p)
	g.eachSource(p, func(n *noteRec) {
		if n.linksTo(to) {
			dst = append(dst, n.path)
		}
	})
	return dst
}

// IsNote reports whether p is a note of the graph.
func (g *Graph) IsNote(p string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.notes[p] != nil
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
	for _, n := range g.notes {
		s.Links += len(n.links)
		for i := range n.links {
			if n.links[i].to == 0 {
				s.Broken++
			}
		}
	}
	return s
}

// --- internals; the caller holds g.mu (for writing, unless noted) ---

func newNoteRec(p string) *noteRec {
	return &noteRec{path: p, dir: parentDir(fold(p))}
}

// addRec adds n to the notes, with an id.
func (g *Graph) addRec(n *noteRec) {
	n.id = g.recs.put(n)
	g.notes[n.path] = n
}

// dropRec removes n from the notes, its id freed (its links are dropped:
// no set names it).
func (g *Graph) dropRec(n *noteRec) {
	delete(g.notes, n.path)
	g.recs.at[n.id] = nil
	g.recs.release(n.id)
}

// eachIn calls fn for every note of set.
func (g *Graph) eachIn(set *srcSet, fn func(*noteRec)) {
	set.each(func(id uint32) {
		if n := g.recs.at[id]; n != nil {
			fn(n)
		}
	})
}

// linksTo reports whether a link of n resolves to the file to (a
// storedLink.to; 0, no file, is linked by none).
func (n *noteRec) linksTo(to uint32) bool {
	if to == 0 {
		return false
	}
	for i := range n.links {
		if n.links[i].to == to {
			return true
		}
	}
	return false
}

// toOf returns the storedLink.to of a link resolving to p (0 when p is not
// a file: no link resolves to it).
func (g *Graph) toOf(p string) uint32 {
	if id, ok := g.r.files[p]; ok {
		return id + 1
	}
	return 0
}

// eachSource calls fn for every note other than p that may link to p (it has
// a link indexed under p's file key), in no particular order. Read lock is
// enough.
func (g *Graph) eachSource(p string, fn func(*noteRec)) {
	set := g.setOf(FileKey(p))
	if set == nil {
		return
	}
	g.eachIn(set, func(n *noteRec) {
		if n.path != p {
			fn(n)
		}
	})
}

func (g *Graph) removeLocked(p string) {
	if g.forget(p) {
		g.reresolve(FileKey(p))
	}
}

// forget drops the note at p and its links, and p from the resolver,
// reporting whether the resolver knew p (the links to its name must then
// be resolved again). g.mu is held.
func (g *Graph) forget(p string) bool {
	if n := g.notes[p]; n != nil {
		g.markTextDiff(n.text, n.links, "", nil)
		g.dropLinks(n)
		g.dropRec(n)
	}
	g.r.mu.Lock()
	defer g.r.mu.Unlock()
	return g.r.remove(p)
}

func (g *Graph) addFile(p string) {
	g.r.mu.Lock()
	added := g.r.add(p)
	g.r.mu.Unlock()
	if added {
		g.reresolve(FileKey(p))
	}
}

// dropLinks removes the note's out-links (the note stays).
func (g *Graph) dropLinks(n *noteRec) {
	for _, kc := range linkKeyCounts(n.text, n.links) {
		g.count(kc.key, n, -kc.c)
	}
	n.text, n.links = "", nil
}

// count adds d to the number of n's links depending on key; "" is ignored.
func (g *Graph) count(key string, n *noteRec, d int32) {
	if key == "" {
		return
	}
	i, ok := g.byKey[key]
	if !ok {
		if d <= 0 {
			return
		}
		i = g.sets.put(srcSet{})
		// A copy: key is often a slice of a longer string (see
		// linkKeyCounts) that it would keep alive.
		g.byKey[strings.Clone(key)] = i
	}
	if g.sets.at[i].add(n.id, d) {
		delete(g.byKey, key)
		g.sets.at[i] = srcSet{} // its list or map let go
		g.sets.release(i)
	}
}

// setOf returns the set of the notes with links depending on key, nil
// when there are none.
func (g *Graph) setOf(key string) *srcSet {
	if i, ok := g.byKey[key]; ok {
		return &g.sets.at[i]
	}
	return nil
}

// resolveStored resolves a stored link of note n, whose link text is text,
// to its storedLink.to; the caller holds g.r.mu.
func (g *Graph) resolveStored(n *noteRec, text string, l *storedLink) uint32 {
	if l.folded.n == 0 {
		return g.toOf(n.path)
	}
	if c := g.r.resolveCand(n.dir, l.folded.of(text), l.kind == markdown.MarkdownLink); c != nil {
		return c.id + 1
	}
	return 0
}

// target returns the path l resolves to ("" when broken). The caller holds
// g.mu (the resolver's files change only under it).
func (g *Graph) target(l *storedLink) string { return g.toPath(l.to) }

// toPath returns the path of a storedLink.to ("" for 0); as target.
func (g *Graph) toPath(to uint32) string {
	if to == 0 {
		return ""
	}
	return g.r.paths.at[to-1]
}

// reresolve resolves again every link that depends on files named key.
func (g *Graph) reresolve(key string) {
	set := g.setOf(key)
	if set == nil {
		return
	}
	g.r.mu.RLock()
	defer g.r.mu.RUnlock()
	g.eachIn(set, func(n *noteRec) {
		for i := range n.links {
			l := &n.links[i]
			if dependsOn(l.folded.of(n.text), key) {
				old := l.to
				if l.to = g.resolveStored(n, n.text, l); l.to != old {
					g.markText(n.text, l, old)
				}
			}
		}
	})
}

// reresolveKeys is reresolve for many keys at once: a note that links to
// files of several of the names has its links looked at once, not once per
// name. The resolver holds its final files already, so one pass resolves
// each link as a pass per key would.
func (g *Graph) reresolveKeys(keys []string) {
	if len(keys) < 2 {
		for _, k := range keys {
			g.reresolve(k)
		}
		return
	}
	exact := make(map[string]bool, len(keys)) // the keys (see dependsOn)
	stems := make(map[string]bool, len(keys)) // the keys ending in .md, without it
	for _, k := range keys {
		exact[k] = true
		if stem, ok := strings.CutSuffix(k, ".md"); ok {
			stems[stem] = true
		}
	}
	seen := make(map[*noteRec]bool)
	g.r.mu.RLock()
	defer g.r.mu.RUnlock()
	for _, key := range keys {
		set := g.setOf(key)
		if set == nil {
			continue
		}
		g.eachIn(set, func(n *noteRec) {
			if seen[n] {
				return
			}
			seen[n] = true
			for i := range n.links {
				l := &n.links[i]
				t := l.folded.of(n.text)
				if t == "" {
					continue
				}
				// dependsOn(t, k) for some key k, in two lookups.
				if name := baseName(t); (exact[name] && strings.Contains(name, ".")) || stems[name] {
					old := l.to
					if l.to = g.resolveStored(n, n.text, l); l.to != old {
						g.markText(n.text, l, old)
					}
				}
			}
		})
	}
}

// srcSet is a counted set of notes, by id (Graph.recs): a short list while
// small (most file names are linked from a handful of notes), a map once it
// grows. Ids, not pointers, and the sets in one array (Graph.sets): there
// is an entry for every note a file name is linked from (about a million in
// the generated 100k-note vault, for 148,000 names), and the collector
// followed each pointer at every cycle. With pointers and an object a set,
// dropping the sets took a full collection of that vault's server heap
// from 500 to 180 ms (one core); with ids, the collections of its first
// start took 1.46 core-seconds against 2.09 (medians of 4 alternated
// starts), and BenchmarkGraphBuild's 1.76 million allocations 1.61. A set
// of a busy name is read 0.1-0.3 ms slower (each note through Graph.recs:
// BenchmarkGraphAddRemoveBusyName, 537 notes).
type srcSet struct {
	list []srcCount
	big  map[uint32]int32
}

type srcCount struct {
	id uint32
	c  int32
}

const srcSetListMax = 16

// add adds d to id's count, dropping id at zero; it reports whether the set
// is now empty.
func (s *srcSet) add(id uint32, d int32) (empty bool) {
	if s.big != nil {
		c := s.big[id] + d
		if c <= 0 {
			delete(s.big, id)
		} else {
			s.big[id] = c
		}
		return len(s.big) == 0
	}
	for i := range s.list {
		if s.list[i].id == id {
			s.list[i].c += d
			if s.list[i].c <= 0 {
				s.list = slices.Delete(s.list, i, i+1)
			}
			return len(s.list) == 0
		}
	}
	if d <= 0 {
		return len(s.list) == 0
	}
	if len(s.list) < srcSetListMax {
		s.list = append(s.list, srcCount{id, d})
		return false
	}
	s.big = make(map[uint32]int32, 2*srcSetListMax)
	for _, e := range s.list {
		s.big[e.id] = e.c
	}
	s.big[id] = d
	s.list = nil
	return false
}

func (s *srcSet) len() int {
	if s.big != nil {
		return len(s.big)
	}
	return len(s.list)
}

func (s *srcSet) each(fn func(uint32)) {
	if s.big != nil {
		for id := range s.big {
			fn(id)
		}
		return
	}
	for _, e := range s.list {
		fn(e.id)
	}
}
