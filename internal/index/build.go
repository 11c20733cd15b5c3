package index

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// rawPosting is one (term, chunk, tf) triple of a partial index, with local
// ids; tf is packed (see tfq) with its overflow in the partial.
type rawPosting struct {
	term  uint32
	chunk uint32
	tf    tfq
}

// Fields, as counted in tfCounts.
const (
	fHeading = iota // heading trail; in a link slot, the link text
	fTitle          // title, file name, aliases (first chunk)
	fTags
	fProse
	fCode
	numFields
)

// tfCounts counts a term's occurrences per field. The field-weighted term
// frequency of the package documentation is computed from it at query time,
// tf_head = heading x w_heading + title x w_title + tags x w_tags and
// tf_body = prose x w_prose + code x w_code: with the default weights these
// are the exact values the float32 sums of the weights gave, and with any
// weights they are at least as exact.
type tfCounts [numFields]uint32

// zero and equal spell the comparisons out: the compiler turns == on a
// 20-byte array into a call to memeqbody (a twelfth of a build's CPU).
func (t *tfCounts) zero() bool { return t[0]|t[1]|t[2]|t[3]|t[4] == 0 }

func (t *tfCounts) equal(o *tfCounts) bool {
	return t[0] == o[0] && t[1] == o[1] && t[2] == o[2] && t[3] == o[3] && t[4] == o[4]
}

func (t *tfCounts) addAll(o *tfCounts) {
	for f := range t {
		t[f] += o[f]
	}
}

// tfq is a tfCounts packed in 32 bits: heading (bits 0-5), title (6-9),
// tags (10-14), code (15-20) and prose (21-30); when a count does not fit,
// the tfBig bit is set and the rest is an index into the counts' overflow
// table (the partial's, then the term space's). Prose keeps the high bits
// so that a single prose occurrence (tfOne) and the stored form (rot) are
// those of the layout without a title field.
type tfq uint32

const (
	tfBig tfq = 1 << 31
	// tfProse is the prose count's bits (21-30)
	tfProse tfq = 1023 << 21
	// Largest count of each field that fits.
	tfHeadingMax, tfTitleMax, tfTagsMax, tfCodeMax, tfProseMax = 63, 15, 31, 63, 1023
)

// pack packs c, appending it to *big when it does not fit.
func pack(c *tfCounts, big *[]tfCounts) tfq {
	if c[fHeading] <= tfHeadingMax && c[fTitle] <= tfTitleMax && c[fTags] <= tfTagsMax && c[fCode] <= tfCodeMax && c[fProse] <= tfProseMax {
		return tfq(c[fHeading] | c[fTitle]<<6 | c[fTags]<<10 | c[fCode]<<15 | c[fProse]<<21)
	}
	*big = append(*big, *c)
	return tfBig | tfq(len(*big)-1)
}

// counts unpacks a packed tf.
func (t tfq) counts(big []tfCounts) tfCounts {
	if t&tfBig != 0 {
		return big[t&^tfBig]
	}
	return tfCounts{fHeading: uint32(t & 63), fTitle: uint32(t >> 6 & 15), fTags: uint32(t >> 10 & 31), fCode: uint32(t >> 15 & 63), fProse: uint32(t >> 21)}
}

// weighted returns tf_head and tf_body of a packed tf.
func (t tfq) weighted(fw *FieldWeights, big []tfCounts) (head, body float64) {
	if t&tfBig == 0 {
		head = float64(t&63)*fw.Heading + float64(t>>6&15)*fw.Title + float64(t>>10&31)*fw.Tags
		body = float64(t>>21)*fw.Prose + float64(t>>15&63)*fw.Code
		return head, body
	}
	c := &big[t&^tfBig]
	head = float64(c[fHeading])*fw.Heading + float64(c[fTitle])*fw.Title + float64(c[fTags])*fw.Tags
	body = float64(c[fProse])*fw.Prose + float64(c[fCode])*fw.Code
	return head, body
}

// byteArena stores byte strings in large blocks: growing it never copies
// (a doubling slice of the notes' counts was a fifth of the bytes allocated
// while indexing the generated 100k-note vault).
type byteArena struct {
	blocks [][]byte
}

const arenaBlock = 1 << 16

// add copies b into the arena and returns the copy.
func (a *byteArena) add(b []byte) []byte { return arenaAdd(&a.blocks, b, arenaBlock) }

// arenaAdd copies v into the last of blocks (a new one of at least size
// elements when it has no room) and returns the copy.
func arenaAdd[T any](blocks *[][]T, v []T, size int) []T {
	out := arenaTake(blocks, len(v), size)
	copy(out, v)
	return out
}

// arenaTake returns n zero elements of the last of blocks (a new one of at
// least size elements when it has no room).
func arenaTake[T any](blocks *[][]T, n, size int) []T {
	k := len(*blocks) - 1
	if k < 0 || cap((*blocks)[k])-len((*blocks)[k]) < n {
		*blocks = append(*blocks, make([]T, 0, max(size, n)))
		k++
	}
	b := (*blocks)[k]
	lo := len(b)
	(*blocks)[k] = b[:lo+n]
	return b[lo : lo+n : lo+n]
}

// sigBlock is how many title signatures a block of them holds (see
// partial.sigs): one allocation for hundreds of notes.
const sigBlock = 1024

// str copies s into the arena and returns the copy.
func (a *byteArena) str(s string) string {
	if s == "" {
		return ""
	}
	b := a.add(unsafe.Slice(unsafe.StringData(s), len(s)))
	return unsafe.String(&b[0], len(b))
}

// rawList is an append-only list of raw postings in blocks, so that growing
// it never copies (measured: doubling a flat slice was two thirds of the
// bytes allocated while indexing).
type rawList struct {
	blocks [][]rawPosting
	n      int
	// spare, when set, holds full-size blocks to fill before allocating
	// new ones (the builder's, see Build); freed gets the full-size blocks
	// a merge has read (see release).
	spare *[][]rawPosting
	freed [][]rawPosting
}

const maxRawBlock = 1 << 13

// rawBlocksReused counts the blocks taken again (tests).
var rawBlocksReused atomic.Int64

func (l *rawList) add(p rawPosting) {
	k := len(l.blocks) - 1
	if k < 0 || len(l.blocks[k]) == cap(l.blocks[k]) {
		size := 256
		if k >= 0 {
			size = min(2*cap(l.blocks[k]), maxRawBlock)
		}
		var blk []rawPosting
		if sp := l.spare; size == maxRawBlock && sp != nil && len(*sp) > 0 {
			blk = (*sp)[len(*sp)-1][:0]
			*sp = (*sp)[:len(*sp)-1]
			rawBlocksReused.Add(1)
		}
		if blk == nil {
			blk = make([]rawPosting, 0, size)
		}
		l.blocks = append(l.blocks, blk)
		k++
	}
	l.blocks[k] = append(l.blocks[k], p)
	l.n++
}

// release drops block b, read, keeping it in freed when it is full-size
// and the list is a Build's (it has spare).
func (l *rawList) release(b int) {
	if blk := l.blocks[b]; cap(blk) == maxRawBlock && l.spare != nil {
		l.freed = append(l.freed, blk)
	}
	l.blocks[b] = nil
}

// elideStems: a stem posting equal to the posting of the term spelled as the
// stem is not stored (a variable for the tests, which compare with the index
// that stores every stem posting).
var elideStems = true

// elideFast: flush elides what it can without reading the stem's state
// (see flush; a variable for the tests, which compare with the general
// way alone).
var elideFast = true

// elideEvery elides in every language's notes, not only the main ones' (see
// builder.major): what indexes built before that rule hold, which a
// snapshot can still bring; for the tests.
var elideEvery = false

// partNote is a note of a partial index; its term lists hold local ids.
type partNote struct {
	path  string
	note  *markdown.Note
	lang  langID
	first uint32 // first local chunk
	n     uint32
	// terms and stems are the distinct terms and stems of the note with
	// their chunk counts (see appendLocalCount), in the partial's counts.
	terms, stems []byte
	sumLen       float64
	// pairs[pairLo:pairHi] of the partial: the note's title pairs (see
	// titlePairs), local ids.
	pairLo, pairHi int
	// titles are the signatures of the note's title, file name and
	// aliases (see titleSig), sorted, without repeats.
	titles []uint64
}

// partLink is the link slot of a note in a partial index (see
// SetLinkTexts): one chunk, at local chunk first.
type partLink struct {
	path         string
	lang         langID // of its stems
	first        uint32
	length       float64
	terms, stems []byte
}

// linkLocal marks a partial's chunk as a link slot: the rest of its cnote
// is the index of its partLink.
const linkLocal = 1 << 31

// partial is the index of a set of notes built by one worker, with its own
// term ids; merge folds it into the Index.
type partial struct {
	terms []string
	stems []string // stem keys
	post  rawList
	spost rawList
	cidx  []uint32 // per local chunk: index in note.Chunks
	clen  []float32
	cnote []uint32 // per local chunk: local note, or linkLocal | local link
	notes []partNote
	links []partLink
	big   []tfCounts // tf overflow of post
	sbig  []tfCounts // tf overflow of spost
	// sdf counts, per local stem, the chunks whose posting of the stem was
	// not stored because it equals the chunk's posting of the exact term
	// spelled as the stem (see elision in the package documentation).
	sdf []uint32
	// sself says, per local stem, whether the stem is its own stem (see
	// space.self), found by the builder rather than in the merge, which
	// runs on one core.
	sself []bool
	// counts holds the notes' term counts, with local ids.
	counts byteArena
	// sigs holds the notes' title signatures (partNote.titles), which the
	// index keeps.
	sigs  [][]uint64
	pairs []uint64 // the notes' title pairs (see partNote)
}

type tfEntry struct {
	term uint32
	tf   tfCounts
	ptf  tfCounts // the part of tf from occurrences without accents
}

// builder analyzes notes into a partial. One per goroutine.
type builder struct {
	fw       FieldWeights
	fallback langID
	p        *partial
	// langs counts the notes of each language: the index's when the
	// builder began (set by its maker), and those analyzed since.
	langs [numLangs]int

	dict  *termTable
	sdict *termTable // stem keys -> local stem ids
	// Words written with accents are stemmed from their accented form too
	// (the stemmers need the accents), so each such form is a "variant" with
	// its own id; vterm maps it to its term.
	vdict *termTable
	vterm []uint32
	// terms and stems hold the state of each local term and stem, all of
	// it side by side: a term's is one cache line (with separate arrays, a
	// builder of a large batch, whose million terms outgrow the CPU caches,
	// missed the cache once per array).
	terms []termState
	stems []stemState
	// stemOf[lang][term] (for languages other than the fallback, whose are
	// in terms), vstemOf[lang][variant]: local stem ids, once computed.
	stemOf  [numLangs][]stemPair
	vstemOf [numLangs][]stemPair
	st      *stemmer

	tok    tokenizer
	stats  textStats
	weight float32 // weight of the field being analyzed
	fld    int     // the field being analyzed (fHeading...)
	length float32 // weighted length of the chunk being analyzed

	// queue holds the tokens of the field being analyzed, looked up
	// together once it ends (see drain); qtext, the bytes of those the
	// tokenizer gave in its scratch buffer. sink sums what the reads ahead
	// read, so that the compiler keeps them.
	queue []queued
	qtext []byte
	sink  uint32
	// spare holds full-size blocks of raw postings a Build gave it.
	spare [][]rawPosting

	touched  []uint32
	vacc     []tfCounts // per variant: tf in the current chunk
	vtouched []uint32
	stouched []uint32
	elTerms  []uint32    // the terms whose elb is not 0
	selfs    []selfEntry // the current chunk's terms that are their own stem
	cands    []elideCand
	// chunkStems holds the stems summed in the current chunk (see flush).
	chunkStems stemBits

	// per note scratch
	ctf    []tfEntry
	ends   []int
	vtf    []tfEntry // variant entries (term = variant id)
	vends  []int
	lens   []float32
	tlist  []uint32
	slist  []uint32
	cbuf   []byte // the note's counts, before they go to the partial
	stamp  uint32
	fmTags []string
	seq    []uint32 // the title words of the note being analyzed, phraseBreak between titles
	// sig is the signature of the title being analyzed (see titleSig),
	// titles those of the note's titles so far.
	sig    uint64
	titles []uint64
	keyBuf []byte // a stem key being looked up (see stemLocal)
}

// termState is what a builder keeps of one local term.
type termState struct {
	acc  tfCounts // tf in the current chunk
	pacc tfCounts // tf of its unaccented occurrences in the current chunk
	seen uint32   // the stamp of the last note listing it
	n    uint32   // the note's chunks holding it
	// el counts the note's chunks where the posting of the stem it is the
	// stem of was elided (see flush).
	el uint32
	// elb sums el over the batch's notes in the fallback language: the
	// stem's df counts them once the batch is done (finish), in one pass
	// over the terms listed in builder.elTerms, instead of a write to the
	// stem's count after every note (a cache miss each, at a million stems,
	// a sixth of flush's time).
	elb  uint32
	stem termStem // its stem in the fallback language, once computed
}

// termStem is a term's stemPair in its termState: a term written without
// accents has no second stem (stemPair.b is -1), and the 4 bytes it would
// take keep elb in the state's cache line.
type termStem struct {
	a          int32
	done, self bool
}

// stemState is what a builder keeps of one local stem.
type stemState struct {
	acc    tfCounts // tf in the current chunk
	seen   uint32   // the stamp of the last note listing it
	stored uint32   // the note's chunks with a stored posting
	// elide says its posting in the current chunk is not stored: that of
	// the term by stands for it.
	elide bool
	by    uint32
}

// builderSize is what a builder grew to: the sizes its successor starts
// with (see Index.hint).
type builderSize struct{ terms, stems int }

func newBuilder(fw FieldWeights, fallback langID, size builderSize) *builder {
	b := &builder{
		fw:       fw,
		fallback: fallback,
		p:        &partial{},
		dict:     newTermTable(size.terms),
		vdict:    newTermTable(0),
		sdict:    newTermTable(size.stems),
		st:       newStemmer(),
	}
	if size.terms > 0 {
		b.terms = make([]termState, 0, size.terms)
	}
	if size.stems > 0 {
		b.p.stems = make([]string, 0, size.stems)
		b.stems = make([]stemState, 0, size.stems)
		b.p.sdf = make([]uint32, 0, size.stems)
		b.p.sself = make([]bool, 0, size.stems)
	}
	b.tok.emit = b.add
	return b
}

// buildersReused counts the builders taken again (tests).
var buildersReused atomic.Int64

// reset empties a merged builder for another batch, keeping the room its
// tables and arrays have.
func (b *builder) reset() {
	b.dict.reset()
	b.vdict.reset()
	b.vterm, b.vacc = b.vterm[:0], b.vacc[:0]
	b.sdict.reset()
	b.terms, b.stems = b.terms[:0], b.stems[:0]
	b.elTerms = b.elTerms[:0] // summed by finish, unless the batch was dropped
	for l := range b.stemOf {
		clear(b.stemOf[l])
		clear(b.vstemOf[l])
	}
	// The merge copied what it kept of the partial's vocabulary (the
	// strings, not these arrays).
	old := b.p
	b.p = &partial{stems: old.stems[:0], sdf: old.sdf[:0], sself: old.sself[:0]}
	b.langs = [numLangs]int{}
	buildersReused.Add(1)
}

// useSpare has the builder's raw postings fill the blocks of spare first.
func (b *builder) useSpare(spare [][]rawPosting) {
	b.spare = spare
	b.p.post.spare, b.p.spost.spare = &b.spare, &b.spare
}

// size returns what the builder grew to.
func (b *builder) size() builderSize {
	return builderSize{terms: len(b.dict.terms), stems: len(b.p.stems)}
}

// queued is a token of the field being analyzed: the token, the word as
// written when it had accents (the tokenizer's orig, "" otherwise), its
// hash in the term table (taken as it is queued) and its id.
type queued struct {
	tok, orig string
	h         uint64
	id        uint32
}

// add is the tokenizer callback: one occurrence of tok in the current field,
// counted at once while the builder's terms fit the CPU caches, else queued
// until the field ends (see drain) unless the table's front holds it. A
// word of the front is a frequent one, whose state is in cache: counted at
// once, it skips the queue and drain's passes over it, which read what is
// in cache already (about 60% of the queued tokens of the generated 100k-note
// vault's builders: one builder analyzing 4,096 of its notes took 6% less
// time, medians of 8 alternated runs). A title word and a word
// written with accents are always queued: count keeps a title's words in
// order and an accented word's form (see countMore).
func (b *builder) add(tok string, scratch bool) {
	b.length += b.weight
	var id uint32
	if len(b.dict.terms) < drainFrom {
		var ok bool
		id, ok = b.dict.id(tok) // a new term is copied: never retain the note's text or the scratch buffer
		if !ok {
			b.terms = append(grow2(b.terms), termState{})
		}
	} else {
		h := b.dict.hash(tok)
		ok := false
		if b.fld != fTitle && b.tok.orig == "" {
			id, ok = b.dict.inFront(h, tok)
		}
		if !ok {
			if scratch {
				tok = b.keep(tok)
			}
			orig := b.tok.orig
			if orig != "" {
				orig = b.keep(orig)
			}
			b.queue = append(b.queue, queued{tok: tok, orig: orig, h: h})
			return
		}
	}
	// count, written out: this is the hot path of a small builder and of
	// the front's words, and count is too large to be inlined (the call was
	// 2-3% of the Obsidian hub's build).
	ts := &b.terms[id]
	if ts.acc.zero() {
		b.touched = append(b.touched, id)
	}
	ts.acc[b.fld]++
	if b.fld == fTitle || b.tok.orig != "" {
		b.countMore(id, tok, b.tok.orig)
		return
	}
	ts.pacc[b.fld]++
}

// keep copies s into qtext, until the queue is drained.
func (b *builder) keep(s string) string {
	if cap(b.qtext)-len(b.qtext) < len(s) {
		// Strings already kept point into the old buffer, which stays theirs.
		b.qtext = make([]byte, 0, max(2*cap(b.qtext), len(s), 4096))
	}
	n := len(b.qtext)
	b.qtext = append(b.qtext, s...)
	return unsafe.String(&b.qtext[n], len(s))
}

// drainFrom is how many terms a builder holds when it starts to queue
// tokens (see drain): its table and their state no longer fit the CPU
// caches (the Obsidian hub's builders hold 22k terms, those of a batch of
// the generated 100k-note vault 88k). With fewer, the queue cost more than
// it saved: the hub's first start took 10-19 ms more. (A variable for the
// tests.)
var drainFrom = frontFrom

// drain counts the queued tokens, in order. The lookups of a large
// builder's terms miss the CPU caches: its table, terms and their state
// are read for all the queue at once, pass after pass, so that the misses
// of many tokens are waited for together instead of one after the other,
// before each token is counted.
func (b *builder) drain() {
	q := b.queue
	if len(q) == 0 {
		return
	}
	t := b.dict
	sink := b.sink
	for i := range q {
		sink += t.touchSlot(q[i].h)
	}
	for i := range q {
		sink += t.touchTerm(q[i].h)
	}
	for i := range q {
		id, ok := t.idHash(q[i].tok, q[i].h) // a new term is copied: never retain the note's text or qtext
		if !ok {
			b.terms = append(grow2(b.terms), termState{})
		}
		q[i].id = id
	}
	for i := range q {
		sink += b.terms[q[i].id].acc[0]
	}
	for i := range q {
		b.count(q[i].id, q[i].tok, q[i].orig)
	}
	b.sink = sink
	b.queue = q[:0]
	b.qtext = b.qtext[:0]
}

// count counts one occurrence of the term id (tok, as written orig) in
// the current field.
func (b *builder) count(id uint32, tok, orig string) {
	ts := &b.terms[id]
	if ts.acc.zero() {
		b.touched = append(b.touched, id)
	}
	ts.acc[b.fld]++
	if b.fld == fTitle || orig != "" {
		b.countMore(id, tok, orig)
		return
	}
	ts.pacc[b.fld]++
}

// countMore is count's part for a title word or a variant.
func (b *builder) countMore(id uint32, tok, orig string) {
	if b.fld == fTitle {
		b.sig = sigAdd(b.sig, tok)
		// CJK bigrams overlap: two of them following each other say no more
		// than the three characters they share, so they break a phrase.
		if r, _ := utf8.DecodeRuneInString(tok); isCJK(r) {
			b.seq = append(b.seq, phraseBreak)
		} else {
			b.seq = append(b.seq, id)
		}
	}
	if orig == "" {
		b.terms[id].pacc[b.fld]++
		return
	}
	v, ok := b.vdict.id(orig)
	if !ok {
		b.vterm = append(b.vterm, id)
		b.vacc = append(b.vacc, tfCounts{})
	}
	if b.vacc[v].zero() {
		b.vtouched = append(b.vtouched, v)
	}
	b.vacc[v][b.fld]++
}

// field analyzes one field (fHeading...) of the current chunk.
func (b *builder) field(text string, w float64, fld int, detect bool) {
	if w <= 0 || text == "" {
		return
	}
	b.weight = float32(w)
	b.fld = fld
	if detect {
		b.tok.stats = &b.stats
	} else {
		b.tok.stats = nil
	}
	b.tok.run(text)
	b.drain()
}

// addNote analyzes one note into the partial.
func (b *builder) addNote(path string, n *markdown.Note) {
	b.stats = textStats{}
	b.ctf, b.ends, b.lens = b.ctf[:0], b.ends[:0], b.lens[:0]
	b.vtf, b.vends = b.vtf[:0], b.vends[:0]
	b.fmTags = frontmatterTags(n.Frontmatter, b.fmTags[:0])
	for ci := range n.Chunks {
		ch := &n.Chunks[ci]
		b.length = 0
		for _, h := range ch.Headings {
			b.field(h, b.fw.Heading, fHeading, true)
		}
		if ci == 0 {
			b.seq, b.titles = b.seq[:0], b.titles[:0]
			b.title(n.Title)
			b.seq = append(b.seq, phraseBreak)
			b.title(fileTitle(path, n.Title))
			for _, a := range n.Aliases {
				b.seq = append(b.seq, phraseBreak)
				b.title(a)
			}
		}
		for _, t := range b.fmTags {
			b.field(t, b.fw.Tags, fTags, false)
		}
		for _, t := range ch.Tags {
			b.field(t, b.fw.Tags, fTags, false)
		}
		b.field(ch.Prose, b.fw.Prose, fProse, true)
		b.field(ch.Code, b.fw.Code, fCode, false)
		b.endChunk()
	}
	lang := detectLang(&b.stats, b.fallback)
	b.langs[lang]++
	p := b.p
	pn := partNote{path: path, note: n, lang: lang, pairLo: len(p.pairs)}
	if len(n.Chunks) > 0 {
		p.pairs = appendTitlePairs(p.pairs, b.seq)
	}
	pn.pairHi = len(p.pairs)
	if len(b.titles) > 0 && len(n.Chunks) > 0 {
		pn.titles = arenaAdd(&p.sigs, sortedUnique(b.titles), sigBlock)
	}
	pn.first, pn.n, pn.sumLen, pn.terms, pn.stems = b.flush(lang, uint32(len(p.notes)))
	p.notes = append(p.notes, pn)
}

// title analyzes one title (the title, the file name or an alias) of the
// note's first chunk, and keeps its signature.
func (b *builder) title(text string) {
	b.sig = sigStart
	b.field(text, b.fw.Title, fTitle, true)
	if b.sig != sigStart {
		b.titles = append(b.titles, b.sig)
	}
}

// major reports whether no language has more notes than lang (see langs).
// Stem postings are elided (see elideStems) in those languages' notes and
// link slots only: a lookup of an elided posting reads the term's list
// whole (see addElided), which is mostly chunks of the main language, so
// for the few notes of another language it was read at every query for a
// handful of postings that cost little to store. Which notes have theirs
// elided changes no score, only what is stored.
func (b *builder) major(lang langID) bool {
	if elideEvery {
		return true
	}
	for _, n := range b.langs {
		if n > b.langs[lang] {
			return false
		}
	}
	return true
}

// addLinkChunk analyzes the link texts of the note at path into one link
// slot (see SetLinkTexts): each text counted linkRepeat(notes) times, as
// words of the note's language lang.
func (b *builder) addLinkChunk(path string, texts []LinkText, lang langID) {
	b.stats = textStats{}
	b.ctf, b.ends, b.lens = b.ctf[:0], b.ends[:0], b.lens[:0]
	b.vtf, b.vends = b.vtf[:0], b.vends[:0]
	b.length = 0
	for _, t := range texts {
		for range linkRepeat(t.Notes) {
			b.field(t.Text, b.fw.Link, fHeading, false)
		}
	}
	b.endChunk()
	p := b.p
	pl := partLink{path: path, lang: lang}
	pl.first, _, pl.length, pl.terms, pl.stems = b.flush(lang, linkLocal|uint32(len(p.links)))
	p.links = append(p.links, pl)
}

// endChunk closes the chunk being analyzed: its term counts, variant counts
// and length join the note's.
func (b *builder) endChunk() {
	for _, id := range b.touched {
		ts := &b.terms[id]
		b.ctf = append(b.ctf, tfEntry{id, ts.acc, ts.pacc})
		ts.acc, ts.pacc = tfCounts{}, tfCounts{}
	}
	b.touched = b.touched[:0]
	b.ends = append(b.ends, len(b.ctf))
	for _, v := range b.vtouched {
		b.vtf = append(b.vtf, tfEntry{v, b.vacc[v], tfCounts{}})
		b.vacc[v] = tfCounts{}
	}
	b.vtouched = b.vtouched[:0]
	b.vends = append(b.vends, len(b.vtf))
	b.lens = append(b.lens, b.length)
}

// flush writes the postings of the chunks analyzed since the note began
// (stems in language lang) into the partial, each chunk owned by cnote (a
// local note, or linkLocal | a local link), and returns the first local
// chunk, the number of chunks, their total length and the note's term and
// stem counts (see appendLocalCount).
//
// An elided stem posting (see elideStems) is counted on the state of the
// term that stands for it (el), and in the term's entry of the note's
// counts. Most are elided without reading the stem's state: in a chunk, a
// term that is its own stem, with no accented occurrence, whose stem no
// other word of the chunk has. Such a candidate is checked against the
// chunk's other stems (chunkStems, a bit set that may say yes wrongly,
// never no), and only a possible match takes the general way, which sums
// the stem's words and compares. On 8,192 notes of the generated 100k-note
// vault, 3.0 of the 3.4 million exact postings have their stem's posting
// elided, and reading the stem's state was a cache miss each.
func (b *builder) flush(lang langID, cnote uint32) (first, n uint32, sum float64, terms, stems []byte) {
	p := b.p
	stemmed := stemFuncs[lang] != nil
	elide := elideStems && b.major(lang)
	fast := elideFast && elide // candidates: see above
	first = uint32(len(p.cidx))
	b.tlist, b.slist = b.tlist[:0], b.slist[:0]
	b.stamp++
	start, vstart := 0, 0
	for ci, end := range b.ends {
		cid := uint32(len(p.cidx))
		p.cidx = append(p.cidx, uint32(ci))
		p.clen = append(p.clen, b.lens[ci])
		p.cnote = append(p.cnote, cnote)
		sum += float64(b.lens[ci])
		if stemmed && lang == b.fallback {
			// The state of the chunk's stems that are summed, read at
			// once (see drain).
			sink := b.sink
			for i := range b.ctf[start:end] {
				e := &b.ctf[start+i]
				if sp := b.terms[e.term].stem; sp.done && sp.a >= 0 && !(fast && sp.self && e.ptf.equal(&e.tf)) {
					sink += b.stems[sp.a].acc[0]
				}
			}
			b.sink = sink
		}
		for i := range b.ctf[start:end] {
			e := &b.ctf[start+i]
			p.post.add(rawPosting{e.term, cid, pack(&e.tf, &p.big)})
			ts := &b.terms[e.term]
			if ts.seen != b.stamp {
				ts.seen = b.stamp
				b.tlist = append(b.tlist, e.term)
			}
			ts.n++
			if stemmed {
				sp := b.stemIDs(lang, e.term)
				switch {
				case fast && sp.self && e.ptf.equal(&e.tf):
					b.cands = append(b.cands, elideCand{ctf: uint32(start + i), stem: uint32(sp.a)})
				default:
					if !e.ptf.zero() {
						b.addStems(sp, e.ptf)
					}
					if sp.self && elide {
						b.selfs = append(b.selfs, selfEntry{stem: uint32(sp.a), term: e.term, tf: e.tf})
					}
				}
			}
		}
		if stemmed {
			for _, e := range b.vtf[vstart:b.vends[ci]] {
				b.addStems(b.variantStemIDs(lang, e.term), e.tf)
			}
		}
		vstart = b.vends[ci]
		// A candidate whose stem no other word of the chunk has: elided.
		// Else the general way (below), which elides it all the same when
		// the set said yes wrongly.
		for _, c := range b.cands {
			e := &b.ctf[c.ctf]
			if !b.chunkStems.has(c.stem) {
				b.terms[e.term].el++
				continue
			}
			b.addStems(stemPair{a: int32(c.stem), b: -1}, e.ptf)
			b.selfs = append(b.selfs, selfEntry{stem: c.stem, term: e.term, tf: e.tf})
		}
		b.cands = b.cands[:0]
		// A stem whose only word in the chunk is the term spelled as the
		// stem has the posting of that term: it is not stored twice.
		for _, e := range b.selfs {
			if ss := &b.stems[e.stem]; ss.acc.equal(&e.tf) {
				ss.elide, ss.by = true, e.term
			}
		}
		b.selfs = b.selfs[:0]
		for _, sid := range b.stouched {
			b.chunkStems.clear(sid)
			ss := &b.stems[sid]
			if ss.elide {
				ss.elide = false
				ss.acc = tfCounts{}
				b.terms[ss.by].el++
				continue
			}
			p.spost.add(rawPosting{sid, cid, pack(&ss.acc, &p.sbig)})
			ss.acc = tfCounts{}
			ss.stored++
			if ss.seen != b.stamp {
				ss.seen = b.stamp
				b.slist = append(b.slist, sid)
			}
		}
		b.stouched = b.stouched[:0]
		start = end
	}
	buf := b.cbuf[:0]
	for _, t := range b.tlist {
		ts := &b.terms[t]
		buf = appendLocalCount(buf, termCount{id: t, stored: ts.n, elided: ts.el}, false)
		if ts.el > 0 {
			// The stem's df counts its elided postings all the same: in
			// the fallback language once the batch is done (see elb).
			if lang == b.fallback {
				if ts.elb == 0 {
					b.elTerms = append(b.elTerms, t)
				}
				ts.elb += ts.el
			} else {
				p.sdf[b.stemIDs(lang, t).a] += ts.el
			}
		}
		ts.n, ts.el = 0, 0
	}
	nt := len(buf)
	for _, s := range b.slist {
		ss := &b.stems[s]
		buf = appendLocalCount(buf, termCount{id: s, stored: ss.stored}, true)
		ss.stored = 0
	}
	b.cbuf = buf
	both := p.counts.add(buf)
	return first, uint32(len(b.ends)), sum, both[:nt], both[nt:]
}

// selfEntry is a term of the current chunk that is its own stem: whether
// its posting stands for the stem's is known once the chunk's words are
// summed (see flush).
type selfEntry struct {
	stem, term uint32
	tf         tfCounts
}

// elideCand is an exact posting of a chunk (its index in ctf) whose stem
// posting may be elided: that of a term that is its own stem (stem), with
// no accented occurrence (see flush).
type elideCand struct {
	ctf, stem uint32
}

// stemBits is a set of stem ids that may say an id is in it wrongly (ids
// are taken modulo its size), never that it is not: enough to send most
// stems past a read of their state (see flush).
type stemBits [64]uint64

func (s *stemBits) set(id uint32)      { s[id>>6&63] |= 1 << (id & 63) }
func (s *stemBits) clear(id uint32)    { s[id>>6&63] &^= 1 << (id & 63) }
func (s *stemBits) has(id uint32) bool { return s[id>>6&63]&(1<<(id&63)) != 0 }

// sigStart is the signature of no word (see titleSig).
const sigStart uint64 = 14695981039346656037

// sigAdd adds a word to a title signature: FNV-1a of the words, each
// followed by a zero byte (no word holds one). Two titles with the same
// words in the same order (as analyzed: stopwords left out, case and
// accents folded) have the same signature, in every process (a snapshot
// keeps them).
func sigAdd(h uint64, w string) uint64 {
	for i := 0; i < len(w); i++ {
		h = (h ^ uint64(w[i])) * 1099511628211
	}
	return h * 1099511628211 // the zero byte: h ^ 0 is h
}

// titleSig returns the signature of a sequence of analyzed words.
func titleSig(words []string) uint64 {
	h := sigStart
	for _, w := range words {
		h = sigAdd(h, w)
	}
	return h
}

// phraseBreak separates two titles (title, file name, aliases) in a word
// sequence.
const phraseBreak = ^uint32(0)

// appendTitlePairs appends the distinct pairs of words that follow each
// other in a title of seq (see titlePair), sorted.
func appendTitlePairs(out []uint64, seq []uint32) []uint64 {
	lo := len(out)
	for i := 0; i+1 < len(seq); i++ {
		if seq[i] != phraseBreak && seq[i+1] != phraseBreak {
			out = append(out, titlePair(seq[i], seq[i+1]))
		}
	}
	return append(out[:lo], sortedUnique(out[lo:])...)
}

// titlePair is the key of two words following each other in a title.
func titlePair(a, b uint32) uint64 { return uint64(a)<<32 | uint64(b) }

// pairMaskBit is the bit of a word in a title pair mask (see
// noteInfo.pairMask).
func pairMaskBit(id uint32) uint64 { return 1 << (id % 64) }

// pairsMask returns the mask of the words of title pairs.
func pairsMask(pairs []uint64) uint64 {
	var m uint64
	for _, p := range pairs {
		m |= pairMaskBit(uint32(p>>32)) | pairMaskBit(uint32(p))
	}
	return m
}

// titleMaskBit is the bit of a title signature in a title mask (see
// noteInfo.titleMask).
func titleMaskBit(sig uint64) uint64 { return 1 << (sig % 64) }

// titlesMask returns the mask of title signatures.
func titlesMask(sigs []uint64) uint64 {
	var m uint64
	for _, s := range sigs {
		m |= titleMaskBit(s)
	}
	return m
}

// sortedUnique sorts s in place and returns it without repeats.
func sortedUnique(s []uint64) []uint64 {
	slices.Sort(s)
	return slices.Compact(s)
}

// finish returns the partial built so far.
func (b *builder) finish() *partial {
	for _, t := range b.elTerms {
		ts := &b.terms[t]
		b.p.sdf[ts.stem.a] += ts.elb
		ts.elb = 0
	}
	b.elTerms = b.elTerms[:0]
	b.p.terms = b.dict.terms
	return b.p
}

// stemPair holds local stem ids: the stem of the folded term and, for a
// variant whose accented form stems differently, the folded stem of that
// form; -1 for none. self: the term (not a variant) is its own stem.
type stemPair struct {
	a, b int32
	done bool
	self bool
}

// addStems adds tf to the current chunk's stems.
func (b *builder) addStems(sp stemPair, tf tfCounts) {
	for _, sid := range [2]int32{sp.a, sp.b} {
		if sid >= 0 {
			ss := &b.stems[sid]
			if ss.acc.zero() {
				b.stouched = append(b.stouched, uint32(sid))
				b.chunkStems.set(uint32(sid))
			}
			ss.acc.addAll(&tf)
		}
	}
}

// stemIDs returns the local stem ids of a local term written without accents.
func (b *builder) stemIDs(l langID, term uint32) stemPair {
	if l == b.fallback {
		ts := &b.terms[term]
		if !ts.stem.done {
			sp := b.termStems(l, term)
			ts.stem = termStem{a: sp.a, done: true, self: sp.self}
		}
		return stemPair{a: ts.stem.a, b: -1, done: true, self: ts.stem.self}
	}
	sp := &growCache(&b.stemOf[l], term, len(b.dict.terms))[term]
	if !sp.done {
		*sp = b.termStems(l, term)
	}
	return *sp
}

// termStems computes the local stem ids of a local term written without
// accents in language l, and whether it is its own stem.
func (b *builder) termStems(l langID, term uint32) stemPair {
	t := b.dict.terms[term]
	sp := b.computeStems(l, t, "")
	sp.self = sp.a >= 0 && b.p.stems[sp.a][1:] == t
	return sp
}

// variantStemIDs returns the local stem ids of a variant.
func (b *builder) variantStemIDs(l langID, v uint32) stemPair {
	cache := growCache(&b.vstemOf[l], v, len(b.vdict.terms))
	if !cache[v].done {
		cache[v] = b.computeStems(l, b.dict.terms[b.vterm[v]], b.vdict.terms[v])
	}
	return cache[v]
}

// grow2 doubles a full slice (append grows a large one by a quarter: the
// builder's arrays of a term's or a stem's state, appended to one entry at
// a time, were copied about five times over).
func grow2[T any](s []T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 256))
	}
	return s
}

// growCache makes (*cache)[i] addressable; n is the current id count.
func growCache(cache *[]stemPair, i uint32, n int) []stemPair {
	if int(i) >= len(*cache) {
		grown := make([]stemPair, n+n/4+16)
		copy(grown, *cache)
		*cache = grown
	}
	return *cache
}

func (b *builder) computeStems(l langID, term, orig string) stemPair {
	sp := stemPair{a: -1, b: -1, done: true}
	if stemmable(term) {
		// stemKeys, without making the keys: most are known already.
		s1 := b.st.stem(l, term)
		sp.a = b.stemLocal(l, s1, s1 == term)
		if orig != "" {
			if s2 := fold(b.st.stem(l, orig)); s2 != s1 {
				sp.b = b.stemLocal(l, s2, false)
			}
		}
	}
	return sp
}

// stemLocal returns the local id of the stem key of stem in language l
// (see stemKey), adding it when new; self says the stem is known to be its
// own stem (it is the stemmable term it was found as the stem of), which
// saves stemming it again. The key is made in a buffer and looked up in the
// builder's table of stem keys (a Go map before: a string each, a third of
// the objects the collector marked during the generated 100k-note vault's
// first build, and its lookups 0.36 s of the build's CPU), which copies it
// only when new.
func (b *builder) stemLocal(l langID, stem string, self bool) int32 {
	b.keyBuf = append(append(b.keyBuf[:0], byte('A'+l)), stem...)
	// The table copies a new key (into its blocks): the buffer is reused.
	sid, ok := b.sdict.id(unsafe.String(&b.keyBuf[0], len(b.keyBuf)))
	if !ok {
		b.p.stems = append(grow2(b.p.stems), b.sdict.terms[sid])
		b.stems = append(grow2(b.stems), stemState{})
		b.p.sdf = append(grow2(b.p.sdf), 0)
		if !self {
			self = stemmable(stem) && b.st.stem(l, stem) == stem
		}
		b.p.sself = append(b.p.sself, self)
	}
	return int32(sid)
}

// frontmatterTags reads the frontmatter `tags` (or `tag`) value: a list or a
// comma/space separated string; '#' stripped, lowercased.
func frontmatterTags(fm map[string]any, out []string) []string {
	for _, key := range [...]string{"tags", "tag"} {
		v, ok := fm[key]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case string:
			out = appendTagString(out, x)
		case []any:
			for _, e := range x {
				switch s := e.(type) {
				case string:
					out = appendTagString(out, s)
				case nil:
				default:
					out = appendTagString(out, fmt.Sprint(s))
				}
			}
		case []string:
			for _, s := range x {
				out = appendTagString(out, s)
			}
		}
	}
	return out
}

func appendTagString(out []string, s string) []string {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if t := normTag(f); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// normTag: trimmed, leading '#' stripped, lowercased.
func normTag(t string) string {
	t = strings.TrimSpace(t)
	t = strings.TrimLeft(t, "#")
	return strings.ToLower(t)
}

// fileTitle returns the file name of path as title text (extension dropped,
// '-' and '_' read as spaces), or "" when it reads the same as the title:
// notes named by an id ("obsidian-excalidraw-plugin.md") or titled otherwise
// are found by their file name too, and a title that is the file name is not
// counted twice.
func fileTitle(path, title string) string {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	name := spaced(base)
	if strings.EqualFold(name, spaced(title)) {
		return ""
	}
	return name
}

// spaced reads '-' and '_' as spaces and collapses runs of white space.
func spaced(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return ' '
		}
		return r
	}, s)), " ")
}
