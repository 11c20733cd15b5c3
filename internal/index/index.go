package index

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/par"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
)

// BM25F parameters: saturation, and the length normalisation of the body
// (prose, code) and of the head (heading trail, title, file name, aliases,
// tags) occurrences; see the package documentation.
const (
	k1    = 1.2
	bBody = 0.75
	bHead = 0.25
	bLink = 1.0 // link slots, against their own average length
)

// Link text and title phrases (chosen with `vaultmcp eval`, see the package
// documentation).
const (
	// linkOverlap: a term matching both a note's first chunk and its link
	// slot scores the better of the two plus this share of the other.
	linkOverlap = 0.5
	// linkMinIdf: link text counts only for a term at least this rare
	// (idf 2: in at most about one chunk in 7.4).
	linkMinIdf = 2.0
	// TitlePhraseWeight weighs the title phrase bonus (see queryPairs).
	TitlePhraseWeight = 0.5
	// FullTitleWeight weighs the full title bonus (see fullTitle).
	FullTitleWeight = 0.5
)

// Default weights, chosen with the labelled queries of eval_test.go on the
// Obsidian help vault (38 English and 27 Portuguese questions; MRR@10, en/pt):
//
//	StemWeight (FuzzyWeight 0.6): off 0.739/0.675, 0.3 0.745/0.700,
//	0.5 0.751/0.707, 0.6 0.774/0.725, 0.7 0.761/0.727, 0.8 0.763/0.727,
//	0.9 0.767/0.726
//	FuzzyWeight (StemWeight 0.6, one word of each query misspelled by one
//	deletion): off 0.637/0.595, 0.2 0.669/0.648, 0.4 0.714/0.678,
//	0.6 0.762/0.709, 0.8 0.762/0.688
//
// Stemming helps in both languages and plateaus from 0.6, which also keeps an
// exact match well ahead of a stem-only one; fuzzy matching peaks at 0.6.
const (
	DefaultStemWeight  = 0.6
	DefaultFuzzyWeight = 0.6
	// Note-level factors of the final score. Both are at most 1: collect
	// passes over a chunk by its score before the factors are applied.
	TypeFactor    = 0.3 // type moc or daily
	ArchiveFactor = 0.4 // under 99-archive/
)

// Folder conventions that change scoring and filtering.
const (
	RawFolder     = "01-raw"
	ArchiveFolder = "99-archive"
)

// Options configure an Index.
type Options struct {
	// Lang is the profile language ("en" default, "pt", "es", ...): the
	// stemming language of a note whose language cannot be detected.
	Lang string
	// StemWeight is the weight of a stem-only match relative to an exact
	// match; 0, negative or >= 1 -> DefaultStemWeight.
	StemWeight float64
	// FuzzyWeight is the weight of a misspelling-expansion match; 0, negative
	// or >= 1 -> DefaultFuzzyWeight.
	FuzzyWeight float64
	// Fields are the field weights; the zero value means the defaults
	// (see defaultFields). A field weighted 0 (with another non-zero) is not
	// indexed.
	Fields FieldWeights
}

// FieldWeights weight a term occurrence by the field it is in: the heading
// trail of a chunk, the title (with the file name and the aliases, in the
// first chunk), tags, prose, code, and the link text other notes use for
// the note (see SetLinkTexts).
type FieldWeights struct{ Heading, Title, Tags, Prose, Code, Link float64 }

// defaultFields are the field weights of DESIGN.md (heading 3.0, tags 2.0,
// prose 1.0, code 0.5), with the title and the link text weighted as
// measured (see the package documentation).
var defaultFields = FieldWeights{Heading: 3.0, Title: 3.0, Tags: 2.0, Prose: 1.0, Code: 0.5, Link: 4.0}

// Filter restricts search results and graph neighbours.
type Filter struct {
	// Type: the note's type, case-insensitive (Portuguese projeto/nota accepted).
	Type string
	// Folder: a folder prefix on segment boundaries ("02-wiki/go" matches
	// "02-wiki/go/x.md", not "02-wiki/golang/x.md"); a trailing slash is fine.
	Folder string
	// Status: case-insensitive.
	Status string
	// Tags: all must be present, case-insensitive, '#' optional; a filter tag
	// "a" is also satisfied by a nested note tag "a/b", as in Obsidian.
	Tags []string
	// IncludeRaw lets notes under 01-raw/ through (so does a Folder inside
	// 01-raw: asking for that folder is asking for raw notes).
	IncludeRaw bool
}

// Hit is one chunk matching a query.
type Hit struct {
	Path string
	// Chunk is the index into the note's Chunks.
	Chunk int
	Score float64
	// Fuzzy: matched only through misspelling expansion.
	Fuzzy bool
	// Explain says what matched (see Explanation).
	Explain *Explanation
}

// Item is one note for AddBatch.
type Item struct {
	Path string
	Note *markdown.Note
}

// Stats describe an index.
type Stats struct {
	Notes, Chunks    int
	Terms, Stems     int // distinct live terms in the exact and stem spaces
	Postings         int // exact + stored stem postings (see Index)
	AvgChunkLength   float64
	LanguagesPresent []string
}

// Index is an in-memory inverted index over note chunks. It is safe for
// concurrent use: many readers (Search, Suggest, Matches, Len) and one writer
// at a time (Add, AddBatch, Remove).
//
// Layout: every chunk has a slot; a term has a posting list of (slot, tf)
// sorted by slot, tf being the term's occurrence counts per field packed in
// 32 bits (the field-weighted frequencies of the head and body groups of the
// package documentation are computed from them while scoring), stored
// compressed (see plist), and a document frequency kept apart. Each list has
// its own allocation. New chunks get new slots at the end, so appending
// keeps every list sorted and adding never moves existing postings.
//
// Stem postings are not stored when they repeat an exact one: in a chunk
// where the only word with stem s is the term spelled s (English "plugin"),
// the stem's posting would equal that term's, so the builder counts it in
// the stem's df only, and a stem lookup also reads the term's list, in the
// chunks of the stem's language that the stem list lacks (see addElided).
// Only notes of the language with the most notes have theirs elided (see
// builder.major).
// Scores and df are those of storing them; on the Obsidian hub vault this
// drops a quarter of the postings.
//
// Removal uses tombstones: the note's slots are marked dead (a negative
// length, which the scoring loop reads anyway) and the document frequencies
// of its terms are decremented (every note keeps its distinct terms with the
// number of its chunks holding each, see termCount), so N, df and the
// average length are exact at once and a removal costs O(terms of the note),
// whatever the length of the lists. Dead postings are skipped while scoring;
// when they are more than a quarter of all postings (or dead slots more
// than a quarter of the slots) every list is filtered and the live slots are
// renumbered in one pass, and when more than a quarter of the vocabulary has
// no live chunk left the vocabulary is rebuilt. (Deleting postings eagerly
// was measured first: on the synthetic 5k-note benchmark, shifting the tails
// of long lists cost about 0.2 ms per replaced note, the tombstones a few
// microseconds.)
type Index struct {
	mu sync.RWMutex

	an          *Analyzer
	fw          FieldWeights
	stemWeight  float64
	fuzzyWeight float64

	exact space
	stems space
	fz    fuzzyIndex

	// per chunk slot
	cnote []uint32  // note slot, noNote when dead
	cidx  []uint32  // index in note.Chunks
	clen  []float32 // weighted length, -1 when dead
	clang []langID  // the note's language (the stem postings not stored)
	dead  int       // dead chunk slots

	postings     int // postings in all lists, dead included
	deadPostings int
	compactions  int // times the chunk slots were compacted (tests, stats)

	notes     []noteInfo
	freeNotes []uint32
	byPath    map[string]uint32

	live      int     // live chunks (N)
	sumLen    float64 // total weighted length of live chunks
	langNotes [numLangs]int

	links      map[string]*linkInfo // link texts by path (see links.go)
	linkLive   int                  // live link slots
	linkSumLen float64              // their total weighted length

	// skip tables of long lists, for explain (see seek); listGen changes
	// when compaction renumbers slots or terms.
	skips     sync.Map // uint64 list key -> *skipTable
	skipBytes atomic.Int64
	listGen   uint64

	intern map[string]string
	hint   builderSize

	// pending are the term lists of merges made while deferLists is set
	// (DeferTermLists), encoded by settle; settleMu orders settles that
	// run under the read lock.
	deferLists bool
	pending    []termLists
	settleMu   sync.Mutex
}

const noNote = ^uint32(0)

// space is a term space: exact terms, or language-prefixed stems.
type space struct {
	ids   idTable // of terms (see id)
	terms []string
	post  []plist
	df    []uint32   // live chunks holding the term
	empty int        // terms with df 0
	big   []tfCounts // tf overflow (tfq)
	// self, stems only: the stem, read as a term, is stemmable and its own
	// stem in the key's language (see selfTerm).
	self []bool
	// vocab holds the strings of the terms added (see addTerm) in large
	// blocks, not a string each: the collector marked those again at every
	// cycle (with the builders' stem keys, a third of the objects it marked
	// during the generated 100k-note vault's first build). The live terms
	// move to new blocks when the space is compacted.
	vocab byteArena
}

// id returns the id of term t.
func (sp *space) id(t string) (uint32, bool) { return sp.ids.find(sp.terms, t) }

type noteInfo struct {
	path   string
	typ    string
	status string
	tags   []string
	lang   langID
	mult   float64
	raw    bool
	live   bool
	first  uint32
	n      uint32
	// pairs are the pairs of exact terms that follow each other in the
	// note's title, file name or an alias (see titlePair), sorted. (Here,
	// in the cache line collect reads anyway.)
	pairs []uint64
	// pairMask has the pairMaskBit of every word of pairs: a query pair
	// whose two bits are not both set is not in them.
	pairMask uint64
	// titleMask has the titleMaskBit of every signature of titles: a query
	// whose bit is not set is none of them, found without reading titles
	// (a read of memory far from the note's, for most of the first chunks
	// a search looks at).
	titleMask uint64
	// titles are the signatures of its title, file name and aliases (see
	// titleSig), sorted: a query that is one of them earns the first chunk
	// the full title bonus.
	titles []uint64
	terms  []byte // the note's terms and stems with their chunk counts,
	stems  []byte // encoded (see termCount)
	sumLen float64
}

// New returns an empty index.
func New(opts Options) *Index {
	fw := opts.Fields
	if fw == (FieldWeights{}) {
		fw = defaultFields
	}
	fw.Heading, fw.Title, fw.Tags = max(fw.Heading, 0), max(fw.Title, 0), max(fw.Tags, 0)
	fw.Prose, fw.Code, fw.Link = max(fw.Prose, 0), max(fw.Code, 0), max(fw.Link, 0)
	sw := opts.StemWeight
	if sw <= 0 || sw >= 1 {
		sw = DefaultStemWeight
	}
	fzw := opts.FuzzyWeight
	if fzw <= 0 || fzw >= 1 {
		fzw = DefaultFuzzyWeight
	}
	return &Index{
		an:          NewAnalyzer(opts.Lang),
		fw:          fw,
		stemWeight:  sw,
		fuzzyWeight: fzw,
		exact:       space{ids: newIDTable(0)},
		stems:       space{ids: newIDTable(0)},
		byPath:      make(map[string]uint32),
		intern:      make(map[string]string),
		links:       make(map[string]*linkInfo),
	}
}

// Analyzer returns the index's analyzer.
func (ix *Index) Analyzer() *Analyzer { return ix.an }

// Len returns the number of indexed notes.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byPath)
}

// Has reports whether a note is indexed at path.
func (ix *Index) Has(path string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.byPath[path]
	return ok
}

// Chunks returns the number of chunks of the note indexed at path.
func (ix *Index) Chunks(path string) (int, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	slot, ok := ix.byPath[path]
	if !ok {
		return 0, false
	}
	return int(ix.notes[slot].n), true
}

// Stats describes the index.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := Stats{
		Notes:  len(ix.byPath),
		Chunks: ix.live,
		Terms:  len(ix.exact.terms) - ix.exact.empty,
		Stems:  len(ix.stems.terms) - ix.stems.empty,
	}
	s.Postings = ix.postings - ix.deadPostings
	if ix.live > 0 {
		s.AvgChunkLength = ix.sumLen / float64(ix.live)
	}
	for l, n := range ix.langNotes {
		if n > 0 && l != int(langNone) {
			s.LanguagesPresent = append(s.LanguagesPresent, langCodes[l])
		}
	}
	return s
}

// Add adds the note at path, replacing any note indexed there. A nil note
// removes it.
func (ix *Index) Add(path string, n *markdown.Note) {
	if n == nil {
		ix.Remove(path)
		return
	}
	bd := newBuilder(ix.fw, ix.an.lang, builderSize{})
	ix.mu.RLock()
	bd.langs = ix.langNotes
	ix.mu.RUnlock()
	bd.addNote(path, n)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(path)
	ix.merge(nil, nil, bd.finish())
	ix.rebuildLinkSlots([]string{path})
	ix.maybeCompact()
}

// AddBatch adds many notes at once, analyzing them on every CPU into
// per-worker partial indexes that are merged at the end. A note already
// indexed at an item's path is replaced; when a path appears twice the last
// item wins; a nil note removes its path (as with Add).
func (ix *Index) AddBatch(items []Item) {
	last := make(map[string]int, len(items))
	for i, it := range items {
		last[it.Path] = i
	}
	work := make([]int, 0, len(last))
	var gone []string
	for i, it := range items {
		if last[it.Path] != i {
			continue
		}
		if it.Note == nil {
			gone = append(gone, it.Path)
		} else {
			work = append(work, i)
		}
	}
	if len(work) == 0 {
		if len(gone) > 0 {
			ix.mu.Lock()
			defer ix.mu.Unlock()
			for _, p := range gone {
				ix.removeLocked(p)
			}
			ix.maybeCompact()
		}
		return
	}
	ix.addFunc(len(work), func(k int) (Item, bool) { return items[work[k]], true }, gone, nil, nil)
}

// AddFunc is AddBatch for n notes produced on the analysis workers: item(i)
// returns the i-th (ok false: skip it; a nil Note removes the path), so that
// a caller can read and parse each note on the worker that analyzes it,
// while its text is in cache and with no pause between reading all and
// analyzing all. The paths must be distinct; a note already indexed at a
// path is replaced. analyzed, if not nil, is called once every note is
// analyzed, before the merge takes the write lock.
func (ix *Index) AddFunc(n int, item func(i int) (Item, bool), analyzed func()) {
	ix.addFunc(n, item, nil, analyzed, nil)
}

// Build adds the notes of one large build in batches (Build.AddFunc, one
// batch at a time), keeping from one batch to the next what the last one
// allocated and dropped: the builders of its analysis (emptied, their
// tables and arrays kept: about 15 MB a builder at the generated 100k-note
// vault's batches of 8,192 notes) and the full-size blocks of raw postings
// its merge read (about 40 MB a batch there). Fresh memory is dear on a
// small virtual machine. What it keeps goes with it (Done): a build's
// batches only, so that nothing stays alive after the build. The index is
// the one AddFunc makes of the same batches.
type Build struct {
	ix       *Index
	builders []*builder
	blocks   [][]rawPosting
	scratch  mergeScratch
	room     buildRoom
}

// NewBuild starts a build in batches; notes is about how many notes its
// batches will add in all (0 when not known), for which the index's arrays
// of notes and chunk slots are then grown at once (see buildRoom).
func (ix *Index) NewBuild(notes int) *Build { return &Build{ix: ix, room: buildRoom{expect: notes}} }

// buildRoom sizes the index's arrays of notes and of chunk slots for the
// rest of a build. Grown by each batch's merge for that batch alone, the
// arrays were copied into new memory at nearly every batch (append grows
// a large slice by a quarter, a batch adds more). Reserving for the notes
// still to come, and for their chunks at the chunks per note seen so far,
// makes one copy of each: with the vocabularies' arrays doubled (see
// growBuild), the generated 100k-note vault's first build (13 batches)
// allocated 114 MB less (BenchmarkColdIndex), for the same page faults
// (they follow the peak, which the build's other memory makes) and first
// starts within the noise.
type buildRoom struct {
	expect        int // notes the build adds in all (0: not known)
	notes, chunks int // added so far
}

// want returns how many notes and chunk slots to make room for in a merge
// that adds notes and chunks: those, and the build's still to come.
func (r *buildRoom) want(notes, chunks int) (int, int) {
	r.notes += notes
	r.chunks += chunks
	left := r.expect - r.notes
	if r.expect == 0 || left <= 0 || r.notes == 0 {
		return notes, chunks
	}
	// An eighth more than the chunks per note so far: a short guess
	// copies the chunk arrays once more at the end, a long one leaves
	// that much unused.
	perNote := float64(r.chunks) / float64(r.notes)
	return notes + left, chunks + int(perNote*float64(left)*9/8)
}

// AddFunc is Index.AddFunc for the build's next batch.
func (bd *Build) AddFunc(n int, item func(i int) (Item, bool), analyzed func()) {
	bd.ix.addFunc(n, item, nil, analyzed, bd)
}

// Done drops what the build kept.
func (bd *Build) Done() { bd.builders, bd.blocks, bd.scratch = nil, nil, mergeScratch{} }

func (ix *Index) addFunc(n int, item func(i int) (Item, bool), gone []string, analyzed func(), bd *Build) {
	workers := max(1, min(runtime.GOMAXPROCS(0), (n+31)/32))
	// The builders of a large batch start at the size the last ones grew
	// to: their tables and arrays then grow rarely (growing them was a
	// tenth of the bytes allocated while indexing the generated 100k-note
	// vault).
	var size builderSize
	ix.mu.RLock()
	if n >= hintMin {
		size = ix.hint
	}
	langs := ix.langNotes
	ix.mu.RUnlock()
	builders := make([]*builder, workers)
	for w := range builders {
		if bd != nil && w < len(bd.builders) { // made by this index: its weights and language
			builders[w] = bd.builders[w]
			builders[w].reset()
		} else {
			builders[w] = newBuilder(ix.fw, ix.an.lang, size)
		}
		builders[w].langs = langs
		if bd != nil {
			// An even share of the blocks the last merge read.
			k := len(bd.blocks) / (workers - w)
			builders[w].useSpare(bd.blocks[len(bd.blocks)-k:])
			bd.blocks = bd.blocks[:len(bd.blocks)-k]
		}
	}
	parts := make([]*partial, workers)
	removed := make([][]string, workers)
	var next atomic.Int64
	const block = 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bd := builders[w]
			for {
				s := int(next.Add(block)) - block
				if s >= n {
					break
				}
				for i := s; i < min(s+block, n); i++ {
					it, ok := item(i)
					switch {
					case !ok:
					case it.Note == nil:
						removed[w] = append(removed[w], it.Path)
					default:
						bd.addNote(it.Path, it.Note)
					}
				}
			}
			parts[w] = bd.finish()
		}()
	}
	wg.Wait()
	if analyzed != nil {
		analyzed()
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, p := range gone {
		ix.removeLocked(p)
	}
	for _, r := range removed {
		for _, p := range r {
			ix.removeLocked(p)
		}
	}
	for _, p := range parts {
		for k := range p.notes {
			ix.removeLocked(p.notes[k].path)
		}
	}
	var ms *mergeScratch
	var room *buildRoom
	if bd != nil {
		ms, room = &bd.scratch, &bd.room
	}
	ix.merge(ms, room, parts...)
	if len(ix.links) > 0 {
		var added []string
		for _, p := range parts {
			for k := range p.notes {
				added = append(added, p.notes[k].path)
			}
		}
		ix.rebuildLinkSlots(added)
	}
	ix.maybeCompact()
	if n >= hintMin {
		ix.hint = builderSize{}
		for _, bd := range builders {
			sz := bd.size()
			ix.hint.terms = max(ix.hint.terms, sz.terms)
			ix.hint.stems = max(ix.hint.stems, sz.stems)
		}
	}
	if bd != nil {
		// (A new list: the builders' spares are parts of the last one.)
		var blocks [][]rawPosting
		for _, b := range builders {
			blocks = append(blocks, b.spare...) // not taken
			for _, rl := range [...]*rawList{&b.p.post, &b.p.spost} {
				blocks = append(blocks, rl.freed...)
				rl.freed = nil
			}
			b.spare = nil
		}
		bd.builders, bd.blocks = builders, blocks
	}
}

// hintMin is the smallest batch whose builders are sized from the last
// large batch's (a single note's builder stays small).
const hintMin = 1024

// Trim releases the slack of the posting lists (their growth by appending):
// call it when a build in batches is over. It takes the write lock for
// trimStep lists at a time, so that searches go on meanwhile: the vault
// trims once its first search after the build is answered (at 100k notes,
// trimming was 0.18-0.25 s of the first start).
//
// (Keeping each batch's builders for the next, so that their dictionaries
// and stem caches carry over, was tried: no faster at 10k or 100k notes,
// and 80 MB more peak memory at 100k, the builders' dictionaries growing to
// the whole vocabulary.)
func (ix *Index) Trim() {
	for _, sp := range [...]*space{&ix.exact, &ix.stems} {
		for lo := 0; ; lo += trimStep {
			ix.mu.Lock()
			n := len(sp.post) // a compaction between two steps may change it
			for i := lo; i < min(lo+trimStep, n); i++ {
				sp.post[i].trim()
			}
			ix.mu.Unlock()
			if lo+trimStep >= n {
				break
			}
		}
	}
}

// trimStep is how many lists Trim trims under one hold of the write lock.
const trimStep = 1 << 13

// Remove removes the note at path (no-op when absent).
func (ix *Index) Remove(path string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.removeLocked(path) {
		ix.maybeCompact()
	}
}

func (ix *Index) internStr(s string) string {
	if v, ok := ix.intern[s]; ok {
		return v
	}
	s = strings.Clone(s)
	ix.intern[s] = s
	return s
}

// merge folds partial indexes into the index. Caller holds the write lock and
// has removed the partials' paths.
func (ix *Index) merge(ms *mergeScratch, room *buildRoom, parts ...*partial) {
	// Chunk slots and notes, the arrays grown once (for a build, once for
	// its batches still to come too).
	newNotes, newChunks := 0, 0
	for _, p := range parts {
		newNotes += len(p.notes)
		newChunks += len(p.cidx)
	}
	growNotes, growChunks := newNotes, newChunks
	if room != nil {
		growNotes, growChunks = room.want(newNotes, newChunks)
	}
	ix.notes = slices.Grow(ix.notes, max(0, growNotes-len(ix.freeNotes)))
	ix.cnote = slices.Grow(ix.cnote, growChunks)
	ix.clang = slices.Grow(ix.clang, growChunks)
	ix.cidx = slices.Grow(ix.cidx, growChunks)
	ix.clen = slices.Grow(ix.clen, growChunks)
	chunkBase := make([]uint32, len(parts))
	noteSlots := make([][]uint32, len(parts))
	for pi, p := range parts {
		base := uint32(len(ix.cnote))
		chunkBase[pi] = base
		noteSlot := make([]uint32, len(p.notes))
		noteSlots[pi] = noteSlot
		for ni := range p.notes {
			pn := &p.notes[ni]
			slot := ix.newNoteSlot()
			noteSlot[ni] = slot
			ix.notes[slot] = ix.noteInfoOf(pn, base)
			ix.byPath[ix.notes[slot].path] = slot
			ix.langNotes[pn.lang]++
			ix.live += int(pn.n)
			ix.sumLen += pn.sumLen
		}
		for c := range p.cidx {
			if ln := p.cnote[c]; ln&linkLocal != 0 {
				// A link slot: its note is indexed (see buildLinkSlots).
				pl := &p.links[ln&^linkLocal]
				ix.cnote = append(ix.cnote, ix.byPath[pl.path])
				ix.clang = append(ix.clang, pl.lang)
				continue
			}
			ix.cnote = append(ix.cnote, noteSlot[p.cnote[c]])
			ix.clang = append(ix.clang, p.notes[p.cnote[c]].lang)
		}
		ix.cidx = append(ix.cidx, p.cidx...)
		ix.clen = append(ix.clen, p.clen...)
		for k := range p.links {
			pl := &p.links[k]
			c := base + pl.first
			ix.cidx[c] = linkChunk
			ix.clen[c] = linkSlotLenBase - float32(pl.length)
			li := ix.links[pl.path]
			li.slot, li.length = c, pl.length
			ix.linkLive++
			ix.linkSumLen += pl.length
		}
	}
	// Postings, exact then stems.
	terms := make([][]string, len(parts))
	stems := make([][]string, len(parts))
	selfs := make([][]bool, len(parts))
	for pi, p := range parts {
		terms[pi], stems[pi], selfs[pi] = p.terms, p.stems, p.sself
	}
	gExact := ix.mapTerms(&ix.exact, terms, true, nil, room != nil)
	gStem := ix.mapTerms(&ix.stems, stems, false, selfs, room != nil)
	ix.postings += mergePostings(&ix.exact, ms, parts, gExact, chunkBase, func(p *partial) (*rawList, []tfCounts) { return &p.post, p.big })
	ix.postings += mergePostings(&ix.stems, ms, parts, gStem, chunkBase, func(p *partial) (*rawList, []tfCounts) { return &p.spost, p.sbig })
	// The stem postings not stored (those of a term that is its own stem)
	// count in the stems' df all the same.
	for pi, p := range parts {
		for sid, n := range p.sdf {
			if n == 0 {
				continue
			}
			id := gStem[pi][sid]
			if ix.stems.df[id] == 0 {
				ix.stems.empty--
			}
			ix.stems.df[id] += n
		}
	}
	// The title pairs (searches read them), then the notes' and link
	// slots' term lists: now, or when the index is settled (see
	// DeferTermLists).
	lists := termLists{gExact: gExact, gStem: gStem}
	for pi, p := range parts {
		g := gExact[pi]
		for ni := range p.notes {
			pn := &p.notes[ni]
			slot := noteSlots[pi][ni]
			if pn.pairHi > pn.pairLo {
				info := &ix.notes[slot]
				pairs := make([]uint64, 0, pn.pairHi-pn.pairLo)
				for _, k := range p.pairs[pn.pairLo:pn.pairHi] {
					pairs = append(pairs, titlePair(g[k>>32], g[uint32(k)]))
				}
				info.pairs = sortedUnique(pairs)
				info.pairMask = pairsMask(info.pairs)
			}
			lists.jobs = append(lists.jobs, listJob{terms: pn.terms, stems: pn.stems, part: pi, note: slot})
			pn.terms, pn.stems = nil, nil
		}
		for k := range p.links {
			pl := &p.links[k]
			lists.jobs = append(lists.jobs, listJob{terms: pl.terms, stems: pl.stems, part: pi, link: ix.links[pl.path]})
		}
		p.counts = byteArena{} // the jobs keep what they list
		p.pairs = nil
		p.links = nil
	}
	if ix.deferLists {
		ix.pending = append(ix.pending, lists)
		return
	}
	ix.settle()
	ix.encodeLists(&lists)
}

// termLists are the term lists of the notes and link slots of one merge,
// as the builders kept them (local ids, see appendLocalCount), with each
// partial's map to global ids.
type termLists struct {
	gExact, gStem [][]uint32
	jobs          []listJob
}

// listJob is the term list of a note slot, or of a link slot (link set).
type listJob struct {
	terms, stems []byte
	part         int
	note         uint32
	link         *linkInfo
}

// encodeLists encodes l into its notes and link slots, on every CPU for
// many. Caller holds the lock (read or write) and settleMu, or the write
// lock alone. Only a removal, a compaction and Encode read those lists,
// which a search does not: their fields are written while searches read
// the others.
func (ix *Index) encodeLists(l *termLists) {
	workers := 1
	if len(l.jobs) >= 256 {
		workers = runtime.GOMAXPROCS(0)
	}
	shards(workers, func(w, nw uint32) int {
		var enc termEncoder
		for k := int(w); k < len(l.jobs); k += int(nw) {
			j := &l.jobs[k]
			terms := enc.encode(j.terms, false, l.gExact[j.part])
			stems := enc.encode(j.stems, true, l.gStem[j.part])
			if j.link != nil {
				j.link.terms, j.link.stems = terms, stems
			} else {
				info := &ix.notes[j.note]
				info.terms, info.stems = terms, stems
			}
		}
		return 0
	})
}

// DeferTermLists has the merges from now until Settle leave the term
// lists of the notes (and link slots) they add to Settle: those lists
// (each note's terms with their chunk counts, for a removal) are not
// needed to search, and encoding them was about half of the merge of the
// Obsidian hub's first build, 27-31 ms before its first search could be
// answered. A removal, a drop of a link slot, a compaction and Encode
// settle the index first, so no list is ever read before it is encoded;
// any settling ends the deferral.
func (ix *Index) DeferTermLists() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.deferLists = true
}

// Settle encodes the term lists DeferTermLists put off and ends the
// deferral. It holds the read lock: searches go on meanwhile.
func (ix *Index) Settle() {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.settle()
}

// settle is Settle for a caller that holds the lock (read or write).
func (ix *Index) settle() {
	ix.settleMu.Lock()
	defer ix.settleMu.Unlock()
	for i := range ix.pending {
		ix.encodeLists(&ix.pending[i])
	}
	ix.pending = nil
	ix.deferLists = false
}

func (ix *Index) newNoteSlot() uint32 {
	if n := len(ix.freeNotes); n > 0 {
		s := ix.freeNotes[n-1]
		ix.freeNotes = ix.freeNotes[:n-1]
		return s
	}
	ix.notes = append(ix.notes, noteInfo{})
	return uint32(len(ix.notes) - 1)
}

func (ix *Index) noteInfoOf(pn *partNote, chunkBase uint32) noteInfo {
	n := pn.note
	info := noteInfo{
		path:   pn.path,
		typ:    ix.internStr(markdown.NormalizeType(n.Type)),
		status: ix.internStr(strings.ToLower(strings.TrimSpace(n.Status))),
		lang:   pn.lang,
		mult:   1,
		raw:    vpath.Below(pn.path, RawFolder),
		live:   true,
		first:  chunkBase + pn.first,
		n:      pn.n,
		sumLen: pn.sumLen,
		titles: pn.titles,
	}
	info.titleMask = titlesMask(info.titles)
	if len(n.Tags) > 0 {
		info.tags = make([]string, 0, len(n.Tags))
		for _, t := range n.Tags {
			if t = normTag(t); t != "" {
				info.tags = append(info.tags, ix.internStr(t))
			}
		}
	}
	if info.typ == "moc" || info.typ == "daily" {
		info.mult *= TypeFactor
	}
	if vpath.Below(pn.path, ArchiveFolder) {
		info.mult *= ArchiveFactor
	}
	return info
}

// mapTerms returns the global ids of the partials' terms (one list per
// partial), adding new ones; selfs, for the stem space, holds per partial
// whether each stem is its own stem (see space.self), as the builders found.
// The lookups run on every CPU for a large merge (the map is only read
// then: under the write lock, nothing else touches it); the new terms are
// then added in order, one at a time, into arrays grown once for all of them
// (in a build, at least doubled: see growBuild).
func (ix *Index) mapTerms(sp *space, lists [][]string, fuzzy bool, selfs [][]bool, build bool) [][]uint32 {
	out := make([][]uint32, len(lists))
	total := 0
	for i, l := range lists {
		out[i] = make([]uint32, len(l))
		total += len(l)
	}
	workers := 1
	if total >= parallelMergeMin {
		workers = runtime.GOMAXPROCS(0)
	}
	// Each worker looks up a share of every list (findMany: a group's
	// cache misses waited for together; one after the other, the lookups
	// were a sixth of the 100k-note vault's merges).
	sinks := make([]uint32, workers)
	missing := shards(workers, func(w, nw uint32) int {
		missing := 0
		for li, l := range lists {
			lo, hi := len(l)*int(w)/int(nw), len(l)*int(w+1)/int(nw)
			m, sink := sp.ids.findMany(sp.terms, l[lo:hi], out[li][lo:hi], noNote)
			missing += m
			sinks[w] += sink
		}
		return missing
	})
	if missing > 0 { // at most this many new terms (a term new in two partials counts twice)
		if sp.ids.count() == 0 {
			sp.ids = newIDTable(missing)
		}
		sp.terms = growBuild(sp.terms, missing, build)
		sp.post = growBuild(sp.post, missing, build)
		sp.df = growBuild(sp.df, missing, build)
		if selfs != nil {
			sp.self = growBuild(sp.self, missing, build)
		}
	}
	for li, l := range lists {
		for i, t := range l {
			if out[li][i] == noNote {
				self := false
				if selfs != nil {
					self = selfs[li][i]
				}
				out[li][i] = ix.addTerm(sp, t, fuzzy, self)
			}
		}
	}
	return out
}

// growBuild returns s with room for n more elements. In a build (build
// set) a slice without that room is at least doubled: a vault's vocabulary
// grows at every batch, by less than append's quarter of a large slice at
// a time, so each batch copied the spaces' arrays whole into new memory
// (about three and a half times their final size in all, in the generated
// 100k-note vault's first build); doubled, each term is copied about once,
// and what the build leaves unused (less than half) stays with the index.
func growBuild[T any](s []T, n int, build bool) []T {
	if build && cap(s)-len(s) < n {
		n = max(n, len(s))
	}
	return slices.Grow(s, n)
}

// addTerm returns the id of t, adding it to the space when new (self: see
// space.self, for the stem space).
func (ix *Index) addTerm(sp *space, t string, fuzzy, self bool) uint32 {
	id, ok := sp.ids.findOrAdd(sp.terms, t)
	if ok {
		return id
	}
	// A copy: t is in a builder's arena, with the batch's other terms.
	t = sp.vocab.str(t)
	sp.terms = append(sp.terms, t)
	sp.post = append(sp.post, plist{})
	sp.df = append(sp.df, 0)
	if sp == &ix.stems {
		sp.self = append(sp.self, self)
	}
	sp.empty++ // until its postings arrive
	if fuzzy {
		ix.fz.add(t, id)
	}
	return id
}

// mergePostings appends the partials' postings to the global lists and
// returns how many it added, releasing the partials' blocks as it goes.
//
// Every list has its own allocation. A list grows by append (amortised
// doubling), so merging a note costs O(its postings) whatever the size of the
// vault; a new list is allocated at its size (class). A large merge
// (sortedMerge) first sorts the postings by term, then appends each list's
// at once, the lists shared out on every CPU.
func mergePostings(sp *space, ms *mergeScratch, parts []*partial, gmap [][]uint32, chunkBase []uint32, get func(*partial) (*rawList, []tfCounts)) int {
	total := 0
	// Overflow counts move to the space's table, each partial's at an offset.
	bigBase := make([]tfq, len(parts))
	for pi, p := range parts {
		rl, big := get(p)
		total += rl.n
		bigBase[pi] = tfq(len(sp.big))
		sp.big = append(sp.big, big...)
	}
	if total == 0 {
		return 0
	}
	if total >= parallelMergeMin {
		sortedMerge(sp, ms, parts, gmap, chunkBase, bigBase, total, get)
		return total
	}
	for pi, p := range parts {
		base, bb, g := chunkBase[pi], bigBase[pi], gmap[pi]
		rl, _ := get(p)
		for _, blk := range rl.blocks {
			for _, rp := range blk {
				id := g[rp.term]
				if sp.df[id] == 0 {
					sp.empty--
				}
				sp.df[id]++
				tf := rp.tf
				if tf&tfBig != 0 {
					tf += bb
				}
				sp.post[id].add(rp.chunk+base, tf)
			}
		}
		for b := range rl.blocks {
			rl.release(b)
		}
		rl.blocks, rl.n = nil, 0
	}
	return total
}

// sortedPosting is a posting of sortedMerge's flat array.
type sortedPosting struct {
	chunk uint32
	tf    tfq
}

// sortedMerge is mergePostings for many postings: a counting sort by global
// term id (stable: each term's postings stay in chunk order) into one flat
// array, each partial counted and placed on a CPU of its own and its blocks
// released as it goes, then each list grown
// once for its new postings and appended to, every CPU taking a run of
// terms with about as many postings as the others. Appending the postings
// in the partials' order touched a random list for each one: at a million
// lists (the generated 100k-note vault) nearly every posting was a cache
// miss, a tenth of a build's CPU.
func sortedMerge(sp *space, ms *mergeScratch, parts []*partial, gmap [][]uint32, chunkBase []uint32, bigBase []tfq, total int, get func(*partial) (*rawList, []tfCounts)) {
	nt := len(sp.terms)
	if ms == nil {
		ms = &mergeScratch{}
	}
	ms.grow(len(parts))
	// Each partial is counted and scattered on its own CPU: next[pi][id]
	// is where partial pi's first posting of id goes, after those of the
	// partials before it (whose chunks come first), so each list stays in
	// chunk order. (On one CPU, the scatter alone was a quarter of the
	// generated 100k-note vault's merges.)
	next := make([][]uint32, len(parts))
	par.Run(len(parts), func(pi int) {
		c := ms.counts(pi, nt)
		g := gmap[pi]
		rl, _ := get(parts[pi])
		for _, blk := range rl.blocks {
			for _, rp := range blk {
				c[g[rp.term]]++
			}
		}
		next[pi] = c
	})
	start := reuse(&ms.start, nt+1) // start[id]: the first of id's postings in flat
	pos := uint32(0)
	for id := range nt {
		start[id] = pos
		for _, c := range next {
			n := c[id]
			c[id] = pos
			pos += n
		}
	}
	start[nt] = pos
	flat := reuse(&ms.flat, total) // every place written below
	par.Run(len(parts), func(pi int) {
		base, bb, g, c := chunkBase[pi], bigBase[pi], gmap[pi], next[pi]
		rl, _ := get(parts[pi])
		for b, blk := range rl.blocks {
			for _, rp := range blk {
				id := g[rp.term]
				tf := rp.tf
				if tf&tfBig != 0 {
					tf += bb
				}
				flat[c[id]] = sortedPosting{rp.chunk + base, tf}
				c[id]++
			}
			rl.release(b) // sorted
		}
		rl.blocks, rl.n = nil, 0
	})
	next = nil
	// Runs of terms with about total/workers postings each.
	workers := runtime.GOMAXPROCS(0)
	if sortedMergeWorkers > 0 {
		workers = sortedMergeWorkers
	}
	bounds := make([]uint32, workers+1)
	for w := 1; w < workers; w++ {
		want := uint32(uint64(total) * uint64(w) / uint64(workers))
		k, _ := slices.BinarySearch(start, want)
		bounds[w] = uint32(min(k, nt))
	}
	bounds[workers] = uint32(nt)
	sp.empty -= shards(workers, func(w, _ uint32) int {
		filled := 0 // terms whose df leaves 0
		var scratch []byte
		for id := bounds[w]; id < bounds[w+1]; id++ {
			ps := flat[start[id]:start[id+1]]
			if len(ps) == 0 {
				continue
			}
			scratch = sp.post[id].addAll(ps, scratch)
			if sp.df[id] == 0 {
				filled++
			}
			sp.df[id] += uint32(len(ps))
		}
		return filled
	})
}

// mergeScratch holds sortedMerge's arrays from one merge to the next of a
// Build. Each merge used to make them anew, and on Linux new memory is
// zeroed by the kernel page by page on first touch: in the generated
// 100k-note vault's first build, the flat array's page faults made its
// scatter take 0.8-0.9 s in all instead of about 0.3 s, and the counts' and
// the flat array's making took 0.4-0.5 s more (26 merges, two spaces each).
type mergeScratch struct {
	count [][]uint32 // per partial
	start []uint32
	flat  []sortedPosting
}

// grow makes room for the counts of n partials (before they are taken
// concurrently).
func (ms *mergeScratch) grow(n int) {
	for len(ms.count) < n {
		ms.count = append(ms.count, nil)
	}
}

// counts returns partial pi's counts for n terms, zeroed.
func (ms *mergeScratch) counts(pi, n int) []uint32 {
	c := reuse(&ms.count[pi], n)
	clear(c)
	return c
}

// reuse returns (*buf)[:n], its contents left as they are, after making
// *buf anew (with room for a quarter more: a build's next merges are
// larger) when it is too short.
func reuse[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n, n+n/4)
	} else {
		scratchReused.Add(1)
	}
	return (*buf)[:n]
}

// scratchReused counts the merge arrays taken again (tests).
var scratchReused atomic.Int64

// sortedMergeWorkers, when above 0, is the number of workers of
// sortedMerge (the tests', whose builds run on one CPU).
var sortedMergeWorkers = 0

// parallelMergeMin is the smallest merge that runs on every CPU (a variable
// for the tests).
var parallelMergeMin = 1 << 16

// shards runs fn(w, n) for w in [0, n) on n goroutines (inline when n is 1)
// and returns the sum of the results.
func shards(n int, fn func(w, n uint32) int) int {
	n = max(n, 1)
	res := make([]int, n)
	par.Run(n, func(w int) { res[w] = fn(uint32(w), uint32(n)) })
	sum := 0
	for _, r := range res {
		sum += r
	}
	return sum
}

// removeLocked removes a note; caller holds the write lock.
func (ix *Index) removeLocked(path string) bool {
	slot, ok := ix.byPath[path]
	if !ok {
		return false
	}
	ix.settle() // the note's term list is read below
	if li := ix.links[path]; li != nil {
		ix.dropLinkSlot(li)
	}
	info := &ix.notes[slot]
	ix.dropTerms(info.terms, info.stems, info.lang)
	for c := info.first; c < info.first+info.n; c++ {
		ix.cnote[c] = noNote
		ix.clen[c] = linkDeadLen
	}
	ix.dead += int(info.n)
	ix.live -= int(info.n)
	ix.sumLen -= info.sumLen
	if ix.live == 0 {
		ix.sumLen = 0 // no drift survives an empty index
	}
	ix.langNotes[info.lang]--
	delete(ix.byPath, path)
	*info = noteInfo{}
	ix.freeNotes = append(ix.freeNotes, slot)
	return true
}

// dropTerms takes the postings of removed slots, whose terms and stems are
// listed (see termCount), out of the document frequencies; lang is their
// language, that of their stems. Caller holds the write lock.
func (ix *Index) dropTerms(terms, stems []byte, lang langID) {
	drop := func(sp *space, id, n uint32) {
		sp.df[id] -= n
		if sp.df[id] == 0 {
			sp.empty++
		}
	}
	eachTerm(terms, false, func(e termCount) {
		drop(&ix.exact, e.id, e.stored)
		ix.deadPostings += int(e.stored)
		if e.elided > 0 {
			// The postings of the stem the term is the stem of, elided.
			if sid, ok := ix.stems.id(stemKey(lang, ix.exact.terms[e.id])); ok {
				drop(&ix.stems, sid, e.elided)
			}
		}
	})
	eachTerm(stems, true, func(e termCount) {
		drop(&ix.stems, e.id, e.stored)
		ix.deadPostings += int(e.stored)
	})
}

// selfTerm returns the exact term spelled as stem id when that term is its
// own stem in the stem's language: then, in a chunk of a note in that
// language, the term's posting stands for the stem's when the stem list has
// none for the chunk (the builder stores it once, see elideStems).
func (ix *Index) selfTerm(id uint32) (uint32, bool) {
	if !ix.stems.self[id] {
		return 0, false
	}
	e, ok := ix.exact.id(ix.stems.terms[id][1:])
	return e, ok
}

// Compaction thresholds: more than a quarter dead, and at least this many.
const (
	minDeadPostings = 1 << 14
	minDeadChunks   = 1024
	minEmptyTerms   = 4096
)

func (ix *Index) maybeCompact() {
	chunks := (ix.deadPostings >= minDeadPostings && ix.deadPostings*4 > ix.postings) ||
		(ix.dead >= minDeadChunks && ix.dead*4 > len(ix.cnote))
	if !chunks && !ix.exact.sparse() && !ix.stems.sparse() {
		return
	}
	ix.settle() // compaction renumbers the term lists
	if chunks {
		ix.compactChunks()
	}
	if ix.exact.sparse() {
		ix.compactSpace(&ix.exact, true)
	}
	if ix.stems.sparse() {
		ix.compactSpace(&ix.stems, false)
	}
}

// sparse reports whether more than a quarter of the space's terms (and at
// least minEmptyTerms) have no live chunk left.
func (sp *space) sparse() bool { return sp.empty >= minEmptyTerms && sp.empty*4 > len(sp.terms) }

// compactChunks drops the dead postings and renumbers the live chunk slots
// densely, keeping their order (so every posting list stays sorted).
func (ix *Index) compactChunks() {
	newID := make([]uint32, len(ix.cnote))
	n := uint32(0)
	for c, note := range ix.cnote {
		if note == noNote {
			newID[c] = noNote
			continue
		}
		newID[c] = n
		ix.cnote[n] = note
		ix.cidx[n] = ix.cidx[c]
		ix.clen[n] = ix.clen[c]
		ix.clang[n] = ix.clang[c]
		n++
	}
	ix.cnote = append([]uint32(nil), ix.cnote[:n]...)
	ix.cidx = append([]uint32(nil), ix.cidx[:n]...)
	ix.clen = append([]float32(nil), ix.clen[:n]...)
	ix.clang = append([]langID(nil), ix.clang[:n]...)
	ix.dead = 0
	ix.compactions++
	ix.listGen++
	ix.postings, ix.deadPostings = 0, 0
	var nl plist
	for _, sp := range [...]*space{&ix.exact, &ix.stems} {
		var big []tfCounts
		for t := range sp.post {
			l := &sp.post[t]
			nl.reset()
			it := l.iter()
			for c, tf, ok := it.next(); ok; c, tf, ok = it.next() {
				if id := newID[c]; id != noNote {
					if tf&tfBig != 0 {
						big = append(big, sp.big[tf&^tfBig])
						tf = tfBig | tfq(len(big)-1)
					}
					nl.add(id, tf)
				}
			}
			switch {
			case nl.n == 0:
				*l = plist{}
			case len(nl.data) <= cap(l.data) && len(nl.data) >= cap(l.data)/2:
				l.data = append(l.data[:0], nl.data...)
				l.last, l.n = nl.last, nl.n
			default: // release the slack
				*l = plist{data: slices.Clone(nl.data), last: nl.last, n: nl.n}
			}
			ix.postings += int(nl.n)
		}
		sp.big = big
	}
	for i := range ix.notes {
		if ix.notes[i].live && ix.notes[i].n > 0 {
			ix.notes[i].first = newID[ix.notes[i].first]
		}
	}
	for _, li := range ix.links {
		if li.slot != noNote {
			li.slot = newID[li.slot]
		}
	}
}

// compactSpace drops the terms no live chunk holds and renumbers the rest.
func (ix *Index) compactSpace(sp *space, exact bool) {
	ix.listGen++
	newID := make([]uint32, len(sp.terms))
	live := len(sp.terms) - sp.empty
	ns := space{
		ids:   newIDTable(live),
		terms: make([]string, 0, live),
		post:  make([]plist, 0, live),
		df:    make([]uint32, 0, live),
		big:   sp.big,
	}
	for id, t := range sp.terms {
		if sp.df[id] == 0 {
			newID[id] = noNote
			// only dead postings can be left in its list
			ix.postings -= int(sp.post[id].n)
			ix.deadPostings -= int(sp.post[id].n)
			continue
		}
		nid := uint32(len(ns.terms))
		newID[id] = nid
		t = ns.vocab.str(t) // the dead terms' bytes go with the old blocks
		ns.ids.add(t)
		ns.terms = append(ns.terms, t)
		ns.post = append(ns.post, sp.post[id])
		ns.df = append(ns.df, sp.df[id])
		if !exact {
			ns.self = append(ns.self, sp.self[id])
		}
	}
	*sp = ns
	// A live note's terms are all live, and renumbering keeps their order.
	var tc []termCount
	var scratch []byte
	renumber := func(l *[]byte) {
		tc = tc[:0]
		eachTerm(*l, !exact, func(e termCount) {
			if e.id = newID[e.id]; e.id != noNote {
				tc = append(tc, e)
			}
		})
		// Renumbering keeps the order: tc is still sorted by id.
		scratch = appendTermList(scratch[:0], tc, !exact)
		*l = slices.Clone(scratch)
	}
	for i := range ix.notes {
		info := &ix.notes[i]
		if !info.live {
			continue
		}
		if exact {
			renumber(&info.terms)
			for k, pr := range info.pairs {
				info.pairs[k] = titlePair(newID[pr>>32], newID[uint32(pr)])
			}
			info.pairMask = pairsMask(info.pairs)
		} else {
			renumber(&info.stems)
		}
	}
	for _, li := range ix.links {
		if li.slot == noNote {
			continue
		}
		if exact {
			renumber(&li.terms)
		} else {
			renumber(&li.stems)
		}
	}
	if exact {
		ix.fz.build(sp.terms)
	}
}
