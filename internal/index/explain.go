package index

import (
	"cmp"
	"slices"
)

// Explanation says why a hit ranked: for each query term that matched the
// chunk, the fields where its best match lay and how it matched, and the
// title phrase bonus. It describes what was scored: for a term the index
// keeps the best of its exact, stem and misspelling matches in a chunk (see
// Search), and that one is explained, with the note's link text when it
// counted too.
type Explanation struct {
	Terms []TermMatch
	// TitlePhrase lists the pairs of query words ("front matter") found one
	// after the other in the note's title, file name or an alias, which
	// earned the first chunk the title phrase bonus (TitleBonus, before the
	// note's type and folder factors).
	TitlePhrase []string
	TitleBonus  float64
	// FullTitle says the note's title, file name or an alias is the query
	// (its words, in order, as analyzed), which earned the first chunk the
	// full title bonus (FullTitleBonus, before the note's factors).
	FullTitle      bool
	FullTitleBonus float64
}

// TermMatch is how one query term matched a chunk.
type TermMatch struct {
	// Term is the query term as analyzed (lowercase, accents folded).
	Term string
	// Fields where it matched, in this order: "title" (title, file name or
	// alias), "heading", "link_text" (the text of links to the note, in the
	// note's first chunk), "tags", "prose", "code". Shared between
	// explanations: read it, never modify it.
	Fields []string
	// Match is "exact", "stem" (only through its stem) or "fuzzy" (only
	// through a misspelling expansion).
	Match string
	// As: for a fuzzy match, the vocabulary words it was read as.
	As []string
}

// Field names of a TermMatch.
const (
	FieldTitle    = "title"
	FieldHeading  = "heading"
	FieldLinkText = "link_text"
	FieldTags     = "tags"
	FieldProse    = "prose"
	FieldCode     = "code"
)

// Search keeps no trace of how each chunk matched (recording it cost a
// third more time per search, every posting of every list paying for the
// few hits explained); explain looks the hits' postings up again instead,
// in the query's lists, through a skip table per long list (see seek).

// explainTarget is a chunk slot explain looks for: a hit's own chunk, or
// the link slot of a hit that is its note's first chunk.
type explainTarget struct {
	slot uint32
	hit  int
	link bool
}

// termBest is the best match of one query term in one target so far.
type termBest struct {
	v    float64
	tf   tfCounts
	kind matchKind
	id   uint32 // the exact term of a fuzzy match
}

// explain returns the hits with their explanations. Caller holds the read
// lock.
func (ix *Index) explain(sc *scorer, terms []qterm, cands []cand) []Hit {
	if len(cands) == 0 {
		return nil
	}
	s := sc.s
	var tg []explainTarget
	for k := range cands {
		c := cands[k].slot
		tg = append(tg, explainTarget{c, k, false})
		if info := &ix.notes[ix.cnote[c]]; c == info.first {
			if li := ix.links[info.path]; li != nil && li.slot != noNote {
				tg = append(tg, explainTarget{li.slot, k, true})
			}
		}
	}
	slices.SortFunc(tg, func(a, b explainTarget) int { return cmp.Compare(a.slot, b.slot) })
	best := make([]termBest, len(tg)) // per target, for the current term
	stored := make([]bool, len(tg))   // per target: in the current stem list
	hits := make([]Hit, len(cands))
	exps := make([]Explanation, len(cands))
	for k := range cands {
		hits[k] = cands[k].Hit
		hits[k].Explain = &exps[k]
	}
	// Each hit's TermMatches in one array, a term at most once per hit.
	nt := len(terms)
	tms := make([]TermMatch, 0, len(cands)*nt)
	for k := range exps {
		exps[k].Terms = tms[k*nt : k*nt : (k+1)*nt]
	}
	for i, qt := range terms {
		clear(best)
		for _, call := range s.calls {
			if call.term != i {
				continue
			}
			if call.kind != matchStem {
				wi, links := sc.factor(call.w, ix.exact.df[call.id])
				ix.explainList(sc, false, call.id, listScan{wi: wi, links: links, kind: call.kind, id: call.id}, tg, best)
				continue
			}
			clear(stored)
			wi, links := sc.factor(call.w, ix.stems.df[call.id])
			ix.explainList(sc, true, call.id, listScan{wi: wi, links: links, kind: matchStem, mark: stored}, tg, best)
			// The postings elided from the stem's list (see addElided).
			e, ok := ix.selfTerm(call.id)
			if !ok || e == call.scored && sc.weightOf(ix.stemWeight, ix.stems.df[call.id]) <= sc.weightOf(1, ix.exact.df[e]) {
				continue
			}
			ix.explainList(sc, false, e, listScan{wi: wi, links: links, kind: matchStem, skip: stored, lang: call.lang}, tg, best)
		}
		// One TermMatch per hit the term matched.
		for k := range cands {
			var own, link *termBest
			for j := range tg {
				if tg[j].hit != k || best[j].v == 0 {
					continue
				}
				if tg[j].link {
					link = &best[j]
				} else {
					own = &best[j]
				}
			}
			if own == nil && link == nil {
				continue
			}
			m := TermMatch{Term: qt.term}
			kind := matchFuzzy
			for _, b := range [2]*termBest{own, link} {
				if b != nil {
					kind = max(kind, b.kind)
				}
			}
			var fields uint8
			if own != nil {
				fields = fieldBits(&own.tf)
			}
			if link != nil {
				fields |= bitLinkText
			}
			m.Fields = fieldNames[fields]
			m.Match = [...]string{matchFuzzy: "fuzzy", matchStem: "stem", matchExact: "exact"}[kind]
			if kind == matchFuzzy {
				for _, b := range [2]*termBest{own, link} {
					if b != nil && !slices.Contains(m.As, ix.exact.terms[b.id]) {
						m.As = append(m.As, ix.exact.terms[b.id])
					}
				}
				slices.Sort(m.As)
			}
			exps[k].Terms = append(exps[k].Terms, m)
		}
	}
	for k := range cands {
		c := cands[k].slot
		info := &ix.notes[ix.cnote[c]]
		if s.titleB > 0 && c == info.first && s.isTitle(info) {
			exps[k].FullTitle, exps[k].FullTitleBonus = true, s.titleB
		}
		if len(s.pairs) == 0 || c != info.first || len(info.pairs) == 0 {
			continue
		}
		for _, p := range s.pairs { // in query order
			if _, ok := slices.BinarySearch(info.pairs, p.key); ok {
				exps[k].TitlePhrase = append(exps[k].TitlePhrase, ix.exact.terms[p.key>>32]+" "+ix.exact.terms[uint32(p.key)])
			}
		}
		exps[k].TitleBonus = s.titleBonus(info.pairs)
	}
	return hits
}

// listScan is how explainList reads one list: its factor and whether link
// slots count (see scorer.factor), the kind of match and exact term id it
// stands for, and for a stem: mark, set for the targets the stem's list
// holds, or, reading the exact list the stem's elided postings come from,
// skip (those marks) and lang (the stem's language, the only one elided).
type listScan struct {
	wi    float64
	links bool
	kind  matchKind
	id    uint32
	mark  []bool
	skip  []bool
	lang  langID
}

// explainList scores the postings at the targets tg of the list of term
// id (of the stem space with stems), keeping each target's best in best.
func (ix *Index) explainList(sc *scorer, stems bool, id uint32, ls listScan, tg []explainTarget, best []termBest) {
	sp := &ix.exact
	if stems {
		sp = &ix.stems
	}
	l := &sp.post[id]
	for j := range tg {
		c := tg[j].slot
		if ls.skip != nil && (ls.skip[j] || ix.clang[c] != ls.lang) {
			continue
		}
		t, ok := ix.seek(stems, id, l, c)
		if !ok {
			continue
		}
		if ls.mark != nil {
			ls.mark[j] = true
		}
		if v := sc.value(c, t, sp.big, ls.wi, ls.links); v > best[j].v {
			best[j] = termBest{v: v, tf: t.counts(sp.big), kind: ls.kind, id: ls.id}
		}
	}
}

// Skip tables: for a list of more than skipEvery postings, the running
// slot and byte offset before every skipEvery-th posting, so that seek
// decodes at most skipEvery postings. They are built the first time
// explain seeks in a list and kept (in Index.skips) while the list is
// unchanged: a table records the list's length and the index's listGen
// (bumped when compaction renumbers slots or terms), and a table that no
// longer matches is built again.
const skipEvery = 32

type skipTable struct {
	gen  uint64
	n    uint32
	size int
	at   []skipEntry
}

type skipEntry struct{ base, off uint32 }

// maxSkipBytes bounds the skip tables kept: past it, they are dropped.
const maxSkipBytes = 16 << 20

// seek returns the tf of the posting of list l (term id; stems: of the
// stem space) at slot c. Caller holds the read lock.
func (ix *Index) seek(stems bool, id uint32, l *plist, c uint32) (tfq, bool) {
	if c > l.last || l.n == 0 {
		return 0, false
	}
	it := l.iter()
	if l.n > 2*skipEvery {
		tab := ix.skipTableOf(stems, id, l)
		// The last entry whose base is below c: the posting at c, if any,
		// comes after it.
		k, _ := slices.BinarySearchFunc(tab.at, c, func(e skipEntry, c uint32) int { return cmp.Compare(e.base, c) })
		if k > 0 {
			e := tab.at[k-1]
			it.i, it.c = int(e.off), e.base
		}
	}
	for s, t, ok := it.next(); ok && s <= c; s, t, ok = it.next() {
		if s == c {
			return t, true
		}
	}
	return 0, false
}

// skipTableOf returns the current skip table of a list, building it when
// needed.
func (ix *Index) skipTableOf(stems bool, id uint32, l *plist) *skipTable {
	key := uint64(id)
	if stems {
		key |= 1 << 32
	}
	if v, ok := ix.skips.Load(key); ok {
		if tab := v.(*skipTable); tab.gen == ix.listGen && tab.n == l.n && tab.size == len(l.data) {
			return tab
		}
	}
	tab := &skipTable{gen: ix.listGen, n: l.n, size: len(l.data), at: make([]skipEntry, 0, l.n/skipEvery)}
	it := l.iter()
	for k := uint32(0); ; k++ {
		if k > 0 && k%skipEvery == 0 {
			tab.at = append(tab.at, skipEntry{base: it.c, off: uint32(it.i)})
		}
		if _, _, ok := it.next(); !ok {
			break
		}
	}
	if ix.skipBytes.Add(int64(8*len(tab.at))) > maxSkipBytes {
		ix.skips.Clear()
		ix.skipBytes.Store(int64(8 * len(tab.at)))
	}
	ix.skips.Store(key, tab)
	return tab
}

// Field bits of a TermMatch, in its order.
const (
	bitTitle = 1 << iota
	bitHeading
	bitLinkText
	bitTags
	bitProse
	bitCode
	numFieldBits = iota
)

// fieldBits returns the bits of the fields with a count.
func fieldBits(c *tfCounts) uint8 {
	var b uint8
	for _, f := range [...]struct {
		field int
		bit   uint8
	}{{fTitle, bitTitle}, {fHeading, bitHeading}, {fTags, bitTags}, {fProse, bitProse}, {fCode, bitCode}} {
		if c[f.field] != 0 {
			b |= f.bit
		}
	}
	return b
}

// fieldNames are the Fields of each combination of field bits (shared by
// every TermMatch: never modify them).
var fieldNames = func() (tab [1 << numFieldBits][]string) {
	names := [numFieldBits]string{FieldTitle, FieldHeading, FieldLinkText, FieldTags, FieldProse, FieldCode}
	for m := range tab {
		for b, name := range names {
			if m&(1<<b) != 0 {
				tab[m] = append(tab[m], name)
			}
		}
	}
	return tab
}()
