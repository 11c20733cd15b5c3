package index

import (
	"fmt"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// rawPosting is one (term, chunk, tf) triple of a partial index, with local ids.
type rawPosting struct {
	term  uint32
	chunk uint32
	tf    tfPair
}

// tfPair is a field-weighted term frequency split by field group: head (the
// heading trail, title, file name, aliases and tags) and body (prose and
// code), which BM25F normalises by the chunk length with different b.
type tfPair struct{ head, body float32 }

func (t tfPair) zero() bool { return t.head == 0 && t.body == 0 }

// add adds w to the head or the body part.
func (t *tfPair) add(head bool, w float32) {
	if head {
		t.head += w
	} else {
		t.body += w
	}
}

// rawList is an append-only list of raw postings in blocks, so that growing
// it never copies (measured: doubling a flat slice was two thirds of the
// bytes allocated while indexing).
type rawList struct {
	blocks [][]rawPosting
	n      int
}

const maxRawBlock = 1 << 13

func (l *rawList) add(p rawPosting) {
	k := len(l.blocks) - 1
	if k < 0 || len(l.blocks[k]) == cap(l.blocks[k]) {
		size := 256
		if k >= 0 {
			size = min(2*cap(l.blocks[k]), maxRawBlock)
		}
		l.blocks = append(l.blocks, make([]rawPosting, 0, size))
		k++
	}
	l.blocks[k] = append(l.blocks[k], p)
	l.n++
}

// partNote is a note of a partial index; its term lists hold local ids.
type partNote struct {
	path  string
	note  *markdown.Note
	lang  langID
	first uint32 // first local chunk
	n     uint32
	// terms and stems list the term of each of the note's postings (a term
	// once per chunk holding it), so removing the note decrements each df
	// without searching the posting lists.
	terms  []uint32
	stems  []uint32
	sumLen float64
}

// partial is the index of a set of notes built by one worker, with its own
// term ids; merge folds it into the Index.
type partial struct {
	terms []string
	stems []string // stem keys
	post  rawList
	spost rawList
	cidx  []uint32 // per local chunk: index in note.Chunks
	clen  []float32
	cnote []uint32 // per local chunk: local note
	notes []partNote
}

type tfEntry struct {
	term uint32
	tf   tfPair
	ptf  tfPair // the part of tf from occurrences without accents
}

// builder analyzes notes into a partial. One per goroutine.
type builder struct {
	fw       FieldWeights
	fallback langID
	p        *partial

	dict  *termTable
	sdict map[string]uint32
	// Words written with accents are stemmed from their accented form too
	// (the stemmers need the accents), so each such form is a "variant" with
	// its own id; vterm maps it to its term.
	vdict *termTable
	vterm []uint32
	// stemOf[lang][term], vstemOf[lang][variant]: local stem ids, once computed.
	stemOf  [numLangs][]stemPair
	vstemOf [numLangs][]stemPair
	st      *stemmer

	tok    tokenizer
	stats  textStats
	weight float32 // weight of the field being analyzed
	head   bool    // the field being analyzed is in the head group
	length float32 // weighted length of the chunk being analyzed

	acc      []tfPair // per local term: tf in the current chunk
	pacc     []tfPair // per local term: tf of its unaccented occurrences
	touched  []uint32
	vacc     []tfPair // per variant: tf in the current chunk
	vtouched []uint32
	sacc     []tfPair // per local stem: tf in the current chunk
	stouched []uint32

	// per note scratch
	ctf    []tfEntry
	ends   []int
	vtf    []tfEntry // variant entries (term = variant id)
	vends  []int
	lens   []float32
	tlist  []uint32
	slist  []uint32
	fmTags []string
}

func newBuilder(fw FieldWeights, fallback langID) *builder {
	b := &builder{
		fw:       fw,
		fallback: fallback,
		p:        &partial{},
		dict:     newTermTable(),
		vdict:    newTermTable(),
		sdict:    make(map[string]uint32),
		st:       newStemmer(),
	}
	b.tok.emit = b.add
	return b
}

// add is the tokenizer callback: one occurrence of tok in the current field.
func (b *builder) add(tok string, scratch bool) {
	b.length += b.weight
	id, ok := b.dict.id(tok) // a new term is copied: never retain the note's text or the scratch buffer
	if !ok {
		b.acc = append(b.acc, tfPair{})
		b.pacc = append(b.pacc, tfPair{})
	}
	if b.acc[id].zero() {
		b.touched = append(b.touched, id)
	}
	b.acc[id].add(b.head, b.weight)
	if b.tok.orig == "" {
		b.pacc[id].add(b.head, b.weight)
		return
	}
	v, ok := b.vdict.id(b.tok.orig)
	if !ok {
		b.vterm = append(b.vterm, id)
		b.vacc = append(b.vacc, tfPair{})
	}
	if b.vacc[v].zero() {
		b.vtouched = append(b.vtouched, v)
	}
	b.vacc[v].add(b.head, b.weight)
}

// field analyzes one field of the current chunk; head selects the field
// group.
func (b *builder) field(text string, w float64, head, detect bool) {
	if w <= 0 || text == "" {
		return
	}
	b.weight = float32(w)
	b.head = head
	if detect {
		b.tok.stats = &b.stats
	} else {
		b.tok.stats = nil
	}
	b.tok.run(text)
}

// addNote analyzes one note into the partial.
func (b *builder) addNote(path string, n *markdown.Note) {
	p := b.p
	b.stats = textStats{}
	b.ctf, b.ends, b.lens = b.ctf[:0], b.ends[:0], b.lens[:0]
	b.vtf, b.vends = b.vtf[:0], b.vends[:0]
	b.fmTags = frontmatterTags(n.Frontmatter, b.fmTags[:0])
	for ci := range n.Chunks {
		ch := &n.Chunks[ci]
		b.length = 0
		for _, h := range ch.Headings {
			b.field(h, b.fw.Heading, true, true)
		}
		if ci == 0 {
			b.field(n.Title, b.fw.Heading, true, true)
			b.field(fileTitle(path, n.Title), b.fw.Heading, true, true)
			for _, a := range n.Aliases {
				b.field(a, b.fw.Heading, true, true)
			}
		}
		for _, t := range b.fmTags {
			b.field(t, b.fw.Tags, true, false)
		}
		for _, t := range ch.Tags {
			b.field(t, b.fw.Tags, true, false)
		}
		b.field(ch.Prose, b.fw.Prose, false, true)
		b.field(ch.Code, b.fw.Code, false, false)
		for _, id := range b.touched {
			b.ctf = append(b.ctf, tfEntry{id, b.acc[id], b.pacc[id]})
			b.acc[id], b.pacc[id] = tfPair{}, tfPair{}
		}
		b.touched = b.touched[:0]
		b.ends = append(b.ends, len(b.ctf))
		for _, v := range b.vtouched {
			b.vtf = append(b.vtf, tfEntry{v, b.vacc[v], tfPair{}})
			b.vacc[v] = tfPair{}
		}
		b.vtouched = b.vtouched[:0]
		b.vends = append(b.vends, len(b.vtf))
		b.lens = append(b.lens, b.length)
	}
	lang := detectLang(&b.stats, b.fallback)
	stems := stemFuncs[lang] != nil

	local := uint32(len(p.notes))
	first := uint32(len(p.cidx))
	b.tlist, b.slist = b.tlist[:0], b.slist[:0]
	var sum float64
	start, vstart := 0, 0
	for ci, end := range b.ends {
		cid := uint32(len(p.cidx))
		p.cidx = append(p.cidx, uint32(ci))
		p.clen = append(p.clen, b.lens[ci])
		p.cnote = append(p.cnote, local)
		sum += float64(b.lens[ci])
		for _, e := range b.ctf[start:end] {
			p.post.add(rawPosting{e.term, cid, e.tf})
			b.tlist = append(b.tlist, e.term)
			if stems && !e.ptf.zero() {
				b.addStems(b.stemIDs(lang, e.term), e.ptf)
			}
		}
		if stems {
			for _, e := range b.vtf[vstart:b.vends[ci]] {
				b.addStems(b.variantStemIDs(lang, e.term), e.tf)
			}
		}
		vstart = b.vends[ci]
		for _, sid := range b.stouched {
			p.spost.add(rawPosting{sid, cid, b.sacc[sid]})
			b.sacc[sid] = tfPair{}
			b.slist = append(b.slist, sid)
		}
		b.stouched = b.stouched[:0]
		start = end
	}
	p.notes = append(p.notes, partNote{
		path:   path,
		note:   n,
		lang:   lang,
		first:  first,
		n:      uint32(len(b.ends)),
		terms:  append([]uint32(nil), b.tlist...),
		stems:  append([]uint32(nil), b.slist...),
		sumLen: sum,
	})
}

// finish returns the partial built so far.
func (b *builder) finish() *partial {
	b.p.terms = b.dict.terms
	return b.p
}

// stemPair holds local stem ids: the stem of the folded term and, for a
// variant whose accented form stems differently, the folded stem of that
// form; -1 for none.
type stemPair struct {
	a, b int32
	done bool
}

// addStems adds tf to the current chunk's stems.
func (b *builder) addStems(sp stemPair, tf tfPair) {
	for _, sid := range [2]int32{sp.a, sp.b} {
		if sid >= 0 {
			if b.sacc[sid].zero() {
				b.stouched = append(b.stouched, uint32(sid))
			}
			b.sacc[sid].head += tf.head
			b.sacc[sid].body += tf.body
		}
	}
}

// stemIDs returns the local stem ids of a local term written without accents.
func (b *builder) stemIDs(l langID, term uint32) stemPair {
	cache := growCache(&b.stemOf[l], term, len(b.dict.terms))
	if !cache[term].done {
		cache[term] = b.computeStems(l, b.dict.terms[term], "")
	}
	return cache[term]
}

// variantStemIDs returns the local stem ids of a variant.
func (b *builder) variantStemIDs(l langID, v uint32) stemPair {
	cache := growCache(&b.vstemOf[l], v, len(b.vdict.terms))
	if !cache[v].done {
		cache[v] = b.computeStems(l, b.dict.terms[b.vterm[v]], b.vdict.terms[v])
	}
	return cache[v]
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
		k1, k2 := stemKeys(b.st, l, term, orig)
		sp.a = b.stemLocal(k1)
		if k2 != "" {
			sp.b = b.stemLocal(k2)
		}
	}
	return sp
}

func (b *builder) stemLocal(key string) int32 {
	sid, ok := b.sdict[key]
	if !ok {
		sid = uint32(len(b.p.stems))
		b.sdict[key] = sid
		b.p.stems = append(b.p.stems, key)
		b.sacc = append(b.sacc, tfPair{})
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
