package index

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
)

// maxExpansions bounds the vocabulary terms one misspelled query term is
// expanded to (closest first, then the most frequent).
const maxExpansions = 10

// Search returns the direct chunk hits for query, best first (ties: path
// ascending, then chunk ascending), at most max (max <= 0: all of them).
// Filters apply before the cut; chunks under 01-raw/ are left out unless
// f.IncludeRaw; the final score is multiplied by 0.3 for notes of type moc or
// daily and by 0.4 under 99-archive/.
//
// Per query term, a chunk scores max(exact, StemWeight x stem, FuzzyWeight x
// best misspelling expansion), each a BM25F term score (see the package
// documentation); a chunk's score is the sum over terms.
// Expansions are tried only for a term absent from the vocabulary: at
// distance 1 for terms of 4+ characters, 2 for 8+, and only the nearest
// of them (a term one edit away leaves out those two away: the misspelling
// "templator" is expanded to templater, not also to templates, which its
// stem still matches; on the Obsidian hub's labelled set, hit@10 0.840 ->
// 0.860 and MRR@10 0.762 -> 0.764, the nine other sets unchanged). The hits carry no explanation (see
// SearchExplained).
func (ix *Index) Search(query string, f Filter, max int) []Hit {
	return ix.search(query, f, max, false)
}

// SearchExplained is Search with each hit's Explain: how it scored. Its
// hits and scores are Search's; the explanations scan the lists again for
// the hits alone.
func (ix *Index) SearchExplained(query string, f Filter, max int) []Hit {
	return ix.search(query, f, max, true)
}

func (ix *Index) search(query string, f Filter, max int, explain bool) []Hit {
	terms, seq := ix.an.querySeq(query)
	if len(terms) == 0 {
		return nil
	}
	pf := prepareFilter(f)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 {
		return nil
	}
	s := getScratch(len(ix.cnote))
	defer putScratch(s)
	sc := ix.newScorer(s)
	var st *stemmer
	s.words, s.calls = s.words[:0], s.calls[:0]
	for i, qt := range terms {
		q := qt.term
		scored := noNote // the exact term scored at weight 1
		if id, ok := ix.exact.id(q); ok && ix.exact.df[id] > 0 {
			sc.add(&ix.exact, id, 1, true)
			s.calls = append(s.calls, scoreCall{term: i, kind: matchExact, id: id, w: 1})
			scored = id
			s.words = append(s.words, queryWord{i, id, sc.weightOf(1, ix.exact.df[id])})
		} else {
			for _, id := range ix.expansions(q) {
				sc.add(&ix.exact, id, ix.fuzzyWeight, false)
				s.calls = append(s.calls, scoreCall{term: i, kind: matchFuzzy, id: id, w: ix.fuzzyWeight})
			}
		}
		if stemmable(q) {
			for l := langNone + 1; l < numLangs; l++ {
				if ix.langNotes[l] == 0 || stemFuncs[l] == nil {
					continue
				}
				if st == nil {
					st = newStemmer()
				}
				k1, k2 := stemKeys(st, l, q, qt.orig)
				for _, k := range [2]string{k1, k2} {
					if id, ok := ix.stems.id(k); ok && ix.stems.df[id] > 0 {
						sc.add(&ix.stems, id, ix.stemWeight, true)
						ix.addElided(&sc, id, l, scored)
						s.calls = append(s.calls, scoreCall{term: i, kind: matchStem, id: id, w: ix.stemWeight, lang: l, scored: scored})
					}
				}
			}
		}
		if i < len(terms)-1 {
			ix.endTerm(s)
		} else {
			// The last term's scores stay in acc.term: collect adds them
			// as it reads each chunk, which saves a pass over its chunks.
			ix.foldLinks(s)
		}
	}
	s.pairs, s.pairMax, s.pairMaxW = s.pairs[:0], 0, 0
	if len(seq) > 1 {
		s.queryPairs(seq, TitlePhraseWeight)
	}
	s.fullTitle(terms, seq, FullTitleWeight)
	cands := ix.collect(s, &pf, max)
	if explain {
		return ix.explain(&sc, terms, cands)
	}
	if len(cands) == 0 {
		return nil
	}
	hits := make([]Hit, len(cands))
	for k := range cands {
		hits[k] = cands[k].Hit
	}
	return hits
}

// scoreCall is one posting list scored for a query term, kept for explain:
// the exact term id (an exact match or a misspelling expansion), or the
// stem id of a stem match in language lang (with the postings elided
// from it; scored is the exact term scored at weight 1 for the query term).
type scoreCall struct {
	term   int
	kind   matchKind
	id     uint32
	w      float64
	lang   langID
	scored uint32
}

// matchKind is how a query term matched.
type matchKind uint8

const (
	matchFuzzy matchKind = iota
	matchStem
	matchExact
)

// queryWord is the vocabulary term of a query term found as written, with
// its weight: the factor of its term score. (Misspelling expansions earn no
// title phrase bonus: measured, they changed no ranking of the labelled
// queries, and a misspelled word has up to ten.)
type queryWord struct {
	term int // index of the query term
	id   uint32
	w    float64
}

// queryPair is a pair of vocabulary terms that, following each other in a
// note's title, earn the note's first chunk the title phrase bonus w.
type queryPair struct {
	key uint64 // titlePair
	w   float64
}

// queryPairs sets s.pairs to the pairs of the words of each two query
// terms that follow each other in the query (seq), each weighing weight x
// the mean of its words' weights, and s.pairMax to their sum.
func (s *scratch) queryPairs(seq []int, weight float64) {
	for j := 0; j+1 < len(seq); j++ {
		for _, a := range s.words {
			if a.term != seq[j] {
				continue
			}
			for _, b := range s.words {
				if b.term != seq[j+1] {
					continue
				}
				key, w := titlePair(a.id, b.id), weight*(a.w+b.w)/2
				if k := slices.IndexFunc(s.pairs, func(p queryPair) bool { return p.key == key }); k >= 0 {
					s.pairs[k].w = max(s.pairs[k].w, w)
					continue
				}
				s.pairs = append(s.pairs, queryPair{key, w})
			}
		}
	}
	s.pairMasks = s.pairMasks[:0]
	for _, p := range s.pairs {
		s.pairMax += p.w
		s.pairMaxW = max(s.pairMaxW, p.w)
		s.pairMasks = append(s.pairMasks, pairMaskBit(uint32(p.key>>32))|pairMaskBit(uint32(p.key)))
	}
}

// fullTitle sets the full title bonus: a note whose title, file name or
// an alias is the query (the same words in the same order, as analyzed)
// earns its first chunk weight x the sum of the query words' weights. Only
// a query whose every term was found as written can earn it.
func (s *scratch) fullTitle(terms []qterm, seq []int, weight float64) {
	s.qsig, s.titleB = 0, 0
	sum := 0.0
	for i := range terms {
		found := false
		for _, w := range s.words {
			if w.term == i {
				sum, found = sum+w.w, true
				break
			}
		}
		if !found {
			return
		}
	}
	h := sigStart
	for _, i := range seq {
		h = sigAdd(h, terms[i].term)
	}
	s.qsig, s.titleB = h, weight*sum
}

// isTitle reports whether the query is one of the note's titles (see
// fullTitle).
func (s *scratch) isTitle(info *noteInfo) bool {
	if info.titleMask&titleMaskBit(s.qsig) == 0 {
		return false
	}
	_, ok := slices.BinarySearch(info.titles, s.qsig)
	return ok
}

// mayHold reports whether a note whose title pairs have mask m may hold a
// query pair other than the first (see noteInfo.pairMask).
func (s *scratch) mayHold(m uint64) bool {
	for _, pm := range s.pairMasks[1:] {
		if m&pm == pm {
			return true
		}
	}
	return false
}

// titleBonus is the title phrase bonus of a note whose first chunk has
// match signature sig: the weights of the query pairs its title pairs
// (sorted) hold.
func (s *scratch) titleBonus(pairs []uint64) float64 {
	// In query order, so that the sum does not depend on the term ids.
	b := 0.0
	for _, p := range s.pairs {
		if _, ok := slices.BinarySearch(pairs, p.key); ok {
			b += p.w
		}
	}
	return b
}

// maxBonus bounds the title phrase bonus of a note with n title pairs.
func (s *scratch) maxBonus(n int) float64 {
	return min(s.pairMax, float64(n)*s.pairMaxW)
}

// expansions returns the vocabulary terms a term absent from the vocabulary
// is expanded to.
func (ix *Index) expansions(q string) []uint32 {
	n := runeLen(q)
	if n == 1 {
		return ix.cjkExpansions(q)
	}
	if n < 4 {
		return nil
	}
	d := 1
	if n >= 8 {
		d = 2
	}
	type cand struct {
		id   uint32
		dist int
	}
	var cs []cand
	ix.fz.near(q, d, ix.exact.terms, func(id uint32, dist int) {
		if ix.exact.df[id] > 0 {
			cs = append(cs, cand{id, dist})
		}
	})
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		if c := cmp.Compare(ix.exact.df[b.id], ix.exact.df[a.id]); c != 0 {
			return c
		}
		return strings.Compare(ix.exact.terms[a.id], ix.exact.terms[b.id])
	})
	out := make([]uint32, 0, min(len(cs), maxExpansions))
	for _, c := range cs[:min(len(cs), maxExpansions)] {
		if c.dist > cs[0].dist {
			break // the nearest spellings only (see Search)
		}
		out = append(out, c.id)
	}
	return out
}

// cjkExpansions expands a query of one CJK character, q, to the words of
// the vocabulary that hold it: CJK text is indexed as overlapping bigrams
// (see the analyzer), so a character searched alone ("链", "猫") is in the
// vocabulary only where it stood alone in a note, and found nothing where
// it is part of a word ("链接"). The bigrams holding it are its nearest
// spellings (one character added), the most frequent first, scored as any
// close spelling. Another single character gives none: it is not a
// misspelling of anything.
func (ix *Index) cjkExpansions(q string) []uint32 {
	r, _ := utf8.DecodeRuneInString(q)
	if !isCJK(r) {
		return nil
	}
	bk := &ix.fz.byLen[2]
	bit := signature(q)
	var ids []uint32
	for i, sig := range bk.sigs {
		if sig&bit == 0 {
			continue
		}
		id := bk.ids[i]
		if ix.exact.df[id] > 0 && strings.Contains(ix.exact.terms[id], q) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b uint32) int {
		if c := cmp.Compare(ix.exact.df[b], ix.exact.df[a]); c != 0 {
			return c
		}
		return strings.Compare(ix.exact.terms[a], ix.exact.terms[b])
	})
	return ids[:min(len(ids), maxExpansions)]
}

// Suggest returns, when no analyzed term of query is in the vocabulary, up to
// max vocabulary terms within Levenshtein distance 2 of the query terms,
// closest first, then alphabetically; nil otherwise. A term that shares no
// character with the query term (every character replaced: "00" for "링크",
// "三" for "链") is no spelling of it and is not suggested: the distance
// must be below the longer one's length.
func (ix *Index) Suggest(query string, max int) []string {
	terms := ix.an.QueryTerms(query)
	if len(terms) == 0 || max <= 0 {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, q := range terms {
		if id, ok := ix.exact.id(q); ok && ix.exact.df[id] > 0 {
			return nil
		}
	}
	best := make(map[uint32]int)
	for _, q := range terms {
		n := runeLen(q)
		ix.fz.near(q, 2, ix.exact.terms, func(id uint32, d int) {
			if ix.exact.df[id] == 0 || d >= n && d >= runeLen(ix.exact.terms[id]) {
				return
			}
			if old, ok := best[id]; !ok || d < old {
				best[id] = d
			}
		})
	}
	if len(best) == 0 {
		return nil
	}
	type cand struct {
		term string
		dist int
	}
	cs := make([]cand, 0, len(best))
	for id, d := range best {
		cs = append(cs, cand{ix.exact.terms[id], d})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		return strings.Compare(a.term, b.term)
	})
	out := make([]string, 0, min(max, len(cs)))
	for _, c := range cs[:min(max, len(cs))] {
		out = append(out, c.term)
	}
	return out
}

// Matches reports whether the note indexed at path passes the filter
// (including the 01-raw rule); false when no note is indexed there.
func (ix *Index) Matches(path string, f Filter) bool {
	return ix.Matcher(f)(path)
}

// Matcher returns Matches for f with f prepared once, for a caller that
// tests many notes (vault_list, vault_graph): preparing it for each note
// made a filter of many tags cost notes x tags (100,000 tags on 6,570
// notes: over two minutes).
func (ix *Index) Matcher(f Filter) func(path string) bool {
	pf := prepareFilter(f)
	return func(path string) bool {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		slot, ok := ix.byPath[path]
		return ok && pf.pass(&ix.notes[slot])
	}
}

// EachMatch calls fn with the path of every indexed note that passes the
// filter (including the 01-raw rule), in no particular order, holding the
// index's read lock (fn must not call the index). It reads the notes'
// records in the order they are stored, where Matcher on every path finds
// each by its path: at 100,000 notes a list of one type took 75-85 ms that
// way, most of it cache misses and the lock taken for each note.
func (ix *Index) EachMatch(f Filter, fn func(path string)) {
	pf := prepareFilter(f)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for i := range ix.notes {
		if n := &ix.notes[i]; n.live && pf.pass(n) {
			fn(n.path)
		}
	}
}

// idf is BM25's ln(1 + (N - df + 0.5) / (df + 0.5)).
func idf(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

type scorer struct {
	s    *scratch
	clen []float32
	fw   *FieldWeights
	n    float64
	// A chunk of weighted length l normalises its body tf by
	// (bodyBase + bodyPerLen x l) / k1 and its head tf by
	// (headBase + headPerLen x l) / k1; a link slot of weighted length l
	// its link tf by (linkBase + linkPerLen x l) / k1.
	bodyBase, bodyPerLen float64
	headBase, headPerLen float64
	linkBase, linkPerLen float64
}

func (ix *Index) newScorer(s *scratch) scorer {
	// N counts the link slots with the chunks: a term's df does, so a
	// word in nearly every chunk and link slot keeps a positive idf.
	n := float64(ix.live + ix.linkLive)
	avg := ix.sumLen / float64(ix.live)
	if avg <= 0 {
		avg = 1
	}
	avgLink := 1.0
	if ix.linkLive > 0 && ix.linkSumLen > 0 {
		avgLink = ix.linkSumLen / float64(ix.linkLive)
	}
	return scorer{
		s: s, clen: ix.clen, fw: &ix.fw, n: n,
		bodyBase: k1 * (1 - bBody), bodyPerLen: k1 * bBody / avg,
		headBase: k1 * (1 - bHead), headPerLen: k1 * bHead / avg,
		linkBase: k1 * (1 - bLink), linkPerLen: k1 * bLink / avgLink,
	}
}

// add scores the posting list of term id of a space for the current query
// term: each chunk keeps the best of its matches for the term. Dead chunks
// (negative length) are skipped.
func (sc *scorer) add(sp *space, id uint32, w float64, strong bool) {
	sc.addList(&sp.post[id], sp.big, w, sp.df[id], strong)
}

// weightOf is the factor of a term of weight w and document frequency df.
func (sc *scorer) weightOf(w float64, df uint32) float64 {
	return w * idf(sc.n, float64(df)) * (k1 + 1)
}

// addElided scores, for stem id of language l, the stem postings that the
// builder did not store: the postings of the term spelled as the stem (when
// it is its own stem), in chunks of notes in language l that the stem's list
// does not hold. With the stored ones, they are the stem's postings.
//
// When that term is the exact term the query scored (scored) and the stem's
// factor (StemWeight x its idf) is at most the term's (so whenever the
// stem's df is at least the term's, as in a vault of one language; not
// always when the term is also in notes of other languages), they are
// skipped: each would score the same tf as the term's posting in the same
// chunk with a factor no larger, and every later step of the score is
// monotone, so it cannot beat the exact score the chunk already keeps.
func (ix *Index) addElided(sc *scorer, id uint32, l langID, scored uint32) {
	e, ok := ix.selfTerm(id)
	if !ok || e == scored && sc.weightOf(ix.stemWeight, ix.stems.df[id]) <= sc.weightOf(1, ix.exact.df[e]) {
		return
	}
	clen, clang := ix.clen, ix.clang
	// The stem's df counts its live postings, stored and elided: those
	// stored are counted first (its own list is short beside the term's
	// when the language has few notes), so that the term's list is read
	// only until the elided ones are all found, and not at all when there
	// is none. In a vault of several languages the term's list is mostly
	// chunks of the others, read once per language for nothing before.
	sd := ix.stems.post[id].data
	// The stored postings' slots are marked, and counted when live.
	mark := sc.s.marks(len(clen))
	live := uint32(0)
	first, c := uint32(0), uint32(0)
	for i := 0; i < len(sd); {
		c, i = nextSlot(sd, i, c)
		mark[c>>6] |= 1 << (c & 63)
		if clen[c] != linkDeadLen {
			live++
		}
	}
	if len(sd) > 0 {
		first, _ = nextSlot(sd, 0, 0)
		defer clear(mark[first>>6 : c>>6+1])
	}
	df := ix.stems.df[id]
	if df <= live {
		return
	}
	// The term's list, scored but for the chunks of other languages, the
	// stored and the dead, until the elided postings are all found.
	sc.scoreList(ix.exact.post[e].data, ix.exact.big, ix.stemWeight, df, true, &elision{lang: l, clang: clang, mark: mark, left: df - live})
}

// elision selects, of a term's posting list, the postings elided from a
// stem's (see addElided): those of chunks in language lang not marked in
// mark (a bit per chunk slot: the stem's stored postings) and not dead,
// the first left of them.
type elision struct {
	lang  langID
	clang []langID
	mark  []uint64
	left  uint32
}

// addList scores a posting list of a term of weight w and document
// frequency df (see add). Link slots count only for a term whose idf is at
// least linkMinIdf.
func (sc *scorer) addList(l *plist, big []tfCounts, w float64, df uint32, strong bool) {
	sc.scoreList(l.data, big, w, df, strong, nil)
}

// scoreList is addList for the list data d, or, with el, for the postings
// of d that el selects.
func (sc *scorer) scoreList(d []byte, big []tfCounts, w float64, df uint32, strong bool, el *elision) {
	s := sc.s
	wi, links := sc.factor(w, df)
	clen := sc.clen
	wH, wTi, wT, wP, wC, wL := sc.fw.Heading, sc.fw.Title, sc.fw.Tags, sc.fw.Prose, sc.fw.Code, sc.fw.Link
	bodyBase, bodyPerLen, headBase, headPerLen := sc.bodyBase, sc.bodyPerLen, sc.headBase, sc.headPerLen
	accs := s.acc
	c := uint32(0)
	for i := 0; i < len(d); {
		// One posting of the plist (decoded here rather than through
		// piter.next, which does not inline).
		x := uint32(d[i])
		i++
		if x >= 0x80 {
			x, i = uvarintRest(d, i, x)
		}
		c += x >> 1
		t := tfOne
		if x&1 == 0 {
			y := uint32(d[i])
			i++
			if y >= 0x80 {
				y, i = uvarintRest(d, i, y)
			}
			t = unrot(y)
		}
		cl := clen[c]
		if el != nil {
			if el.clang[c] != el.lang || el.mark[c>>6]&(1<<(c&63)) != 0 || cl == linkDeadLen {
				continue
			}
			if el.left--; el.left == 0 {
				d = d[:i] // the last one: the loop ends after it
			}
		}
		var v float64
		if cl >= 0 && t&^tfProse == 0 {
			// Prose only, the most common posting: with tb = prose x
			// w_prose and th = 0, the score below is wi x tb / (tb + kb).
			kb := bodyBase + bodyPerLen*float64(cl)
			tb := float64(t>>21) * wP
			v = wi * tb / (tb + kb)
		} else if cl >= 0 {
			// With kb = k1 x (1 - bBody + bBody x l/avg) and kh likewise,
			// tf~ = k1 x (tb/kb + th/kh) and wi x tf~/(tf~ + k1) is, over
			// one division, wi x num / (num + kb x kh) with num = tb x kh +
			// th x kb.
			cl64 := float64(cl)
			kb := bodyBase + bodyPerLen*cl64
			kh := headBase + headPerLen*cl64
			var th, tb float64
			if t&tfBig == 0 {
				th = float64(t&63)*wH + float64(t>>6&15)*wTi + float64(t>>10&31)*wT
				tb = float64(t>>21)*wP + float64(t>>15&63)*wC
			} else {
				th, tb = t.weighted(sc.fw, big)
			}
			num := tb*kh + th*kb
			v = wi * num / (num + kb*kh)
		} else if cl == linkDeadLen || !links {
			continue
		} else {
			// A link slot: only the link field, whose count is kept as the
			// heading count; tf~ = k1 x tl/kl and wi x tf~/(tf~ + k1) is
			// wi x tl / (tl + kl). Its chunks are listed apart (foldLinks
			// folds them into their notes' first chunks).
			kl := sc.linkBase + sc.linkPerLen*float64(linkSlotLenBase-cl)
			tl := float64(t.counts(big)[fHeading]) * wL
			v = wi * tl / (tl + kl)
			a := &accs[c]
			if v > a.term {
				if a.term == 0 {
					s.linkTouched = append(s.linkTouched, c)
				}
				a.term = v
			}
			if strong {
				a.strong = true
			}
			continue
		}
		a := &accs[c]
		if v > a.term {
			if a.term == 0 {
				s.termTouched = append(s.termTouched, c)
			}
			a.term = v
		}
		if strong {
			a.strong = true
		}
	}
}

// factor returns the factor of a term of weight w and document frequency
// df, and whether link slots count for it (its idf is at least linkMinIdf).
func (sc *scorer) factor(w float64, df uint32) (float64, bool) {
	id := idf(sc.n, float64(df))
	return w * id * (k1 + 1), id >= linkMinIdf
}

// value is the score addList gives posting (c, t) of a list with factor
// wi (links: link slots count), 0 for a dead slot or an uncounted link
// slot: for explain, which scores a few postings again.
func (sc *scorer) value(c uint32, t tfq, big []tfCounts, wi float64, links bool) float64 {
	cl := sc.clen[c]
	switch {
	case cl >= 0 && t&^tfProse == 0:
		kb := sc.bodyBase + sc.bodyPerLen*float64(cl)
		tb := float64(t>>21) * sc.fw.Prose
		return wi * tb / (tb + kb)
	case cl >= 0:
		cl64 := float64(cl)
		kb := sc.bodyBase + sc.bodyPerLen*cl64
		kh := sc.headBase + sc.headPerLen*cl64
		th, tb := t.weighted(sc.fw, big)
		num := tb*kh + th*kb
		return wi * num / (num + kb*kh)
	case cl == linkDeadLen || !links:
		return 0
	}
	kl := sc.linkBase + sc.linkPerLen*float64(linkSlotLenBase-cl)
	tl := float64(t.counts(big)[fHeading]) * sc.fw.Link
	return wi * tl / (tl + kl)
}

// scratch holds the per-query accumulators, dense over chunk slots and reset
// through their touched lists, pooled between queries.
type scratch struct {
	acc         []acc // per chunk slot
	termTouched []uint32
	touched     []uint32
	calls       []scoreCall // the lists scored, for explain
	mark        []uint64    // addElided's marks, a bit per chunk slot, all clear between calls
	linkTouched []uint32    // the link slots the current term matched
	// the title phrase bonus of the query (see queryPairs)
	words     []queryWord
	pairs     []queryPair // in query order
	pairMasks []uint64    // their masks (see mayHold)
	pairMax   float64     // their weights' sum
	pairMaxW  float64     // and largest
	// the full title bonus (see fullTitle): the query's signature, and
	// the bonus (0: none)
	qsig   uint64
	titleB float64
}

// acc is a chunk's score for the current term and for the query, and
// whether a strong match (not a misspelling's) scored it: kept together,
// so that a chunk's scoring, the end of a term and the collection of hits
// each touch one cache line of it, not three arrays' lines.
type acc struct {
	term, total float64
	strong      bool
}

// marks returns the scratch's marks, room for n chunk slots.
func (s *scratch) marks(n int) []uint64 {
	if w := (n + 63) / 64; len(s.mark) < w {
		s.mark = make([]uint64, w+w/4)
	}
	return s.mark
}

// scratches keeps the scratches of searches that ended, for the next ones.
//
// Not a sync.Pool: a pool drops what it holds at every other collection,
// and hands a goroutine on one CPU nothing that was put back from another
// (each CPU's first slot is its own). A scratch's accumulators are 24
// bytes a chunk slot, 11 MB at the generated 100k-note vault's 389,000
// chunks, and a new one is fresh memory the kernel backs a page at a
// time as the search first touches it: on the 2-core machine vaultmcp is
// measured on, one of the first searches after a start from the snapshot
// took 30-50 ms instead of 6-10 (page faults in scoreList), and the same
// came back after collections. Kept here, a scratch is made once for as
// many searches as run at once, up to maxKeptScratches; more at once
// are made for the moment and left to the collector.
var scratches struct {
	mu   sync.Mutex
	free []*scratch
}

// maxKeptScratches is how many scratches of ended searches are kept: as
// many as searches run at once on a few cores (a team server admits one
// search a core at a time), but no more than 4, since each holds room for
// the largest vault searched (on a machine of many cores, a scratch kept
// for each would hold hundreds of megabytes for good).
var maxKeptScratches = min(max(2, runtime.GOMAXPROCS(0)), 4)

// getScratch returns a scratch with room for n chunk slots: one kept
// from an earlier search, or a new one.
func getScratch(n int) *scratch {
	scratches.mu.Lock()
	var s *scratch
	if k := len(scratches.free); k > 0 {
		s = scratches.free[k-1]
		scratches.free[k-1] = nil
		scratches.free = scratches.free[:k-1]
	}
	scratches.mu.Unlock()
	if s == nil {
		s = new(scratch)
	}
	if len(s.acc) < n {
		n += n / 4
		s.acc = make([]acc, n)
	}
	return s
}

// putScratch keeps s (reset: see collect) for a later search, unless
// maxKeptScratches are kept already.
func putScratch(s *scratch) {
	scratches.mu.Lock()
	defer scratches.mu.Unlock()
	if len(scratches.free) < maxKeptScratches {
		scratches.free = append(scratches.free, s)
	}
}

// endTerm adds the current term's scores to the query's.
func (ix *Index) endTerm(s *scratch) {
	ix.foldLinks(s)
	for _, c := range s.termTouched {
		a := &s.acc[c]
		if a.total == 0 {
			s.touched = append(s.touched, c)
		}
		a.total += a.term
		a.term = 0
	}
	s.termTouched = s.termTouched[:0]
}

// foldLinks folds the current term's link slot scores into their notes'
// first chunks.
func (ix *Index) foldLinks(s *scratch) {
	// A link slot's score for the term joins its note's first chunk's: the
	// better of the two, plus linkOverlap x the other.
	for _, l := range s.linkTouched {
		d := ix.notes[ix.cnote[l]].first
		al, ad := &s.acc[l], &s.acc[d]
		vl, vd := al.term, ad.term
		al.term = 0
		if vd == 0 {
			s.termTouched = append(s.termTouched, d)
			ad.term = vl
		} else {
			ad.term = max(vd, vl) + linkOverlap*min(vd, vl)
		}
		if al.strong {
			ad.strong, al.strong = true, false
		}
	}
	s.linkTouched = s.linkTouched[:0]
}

// collect applies the filter and note factors, picks the best max hits and
// resets the scratch. The last term's scores are still in acc.term (see
// search): a chunk's score is its total plus its term, the sum endTerm
// would have made. The last term's chunks are read first, then those of
// the earlier terms, each chunk once (one read cleared its scores, so a
// second read finds 0, which no scored chunk has).
func (ix *Index) collect(s *scratch, pf *preparedFilter, max int) []cand {
	var h hitHeap
	h.max = max
	bonus := len(s.pairs) > 0
	pm0 := ^uint64(0) // the first pair's mask (the common case inline)
	if bonus {
		pm0 = s.pairMasks[0]
	}
	// The note factors are at most 1 and the title phrase bonus at most
	// pairMax, and only a note's first chunk (the chunk of index 0) earns
	// it, so a chunk whose score plus its bonus's bound is below the worst
	// kept hit is passed over before its note is looked at (a random
	// read). (With pairMax for every chunk, most of the chunks of a
	// two-word query on the Obsidian hub were looked at.)
	maxBonus := s.titleB
	if bonus {
		maxBonus += s.pairMax
	}
	cidx := ix.cidx
	for _, list := range [2][]uint32{s.termTouched, s.touched} {
		for _, c := range list {
			a := &s.acc[c]
			score, strong := a.total+a.term, a.strong
			if score == 0 {
				continue // read with the last term's chunks
			}
			a.total, a.term, a.strong = 0, 0, false
			if h.full() {
				bound := score
				if cidx[c] == 0 {
					bound += maxBonus
				}
				if bound < h.items[0].Score {
					continue
				}
			}
			info := &ix.notes[ix.cnote[c]]
			if s.titleB > 0 && c == info.first && s.isTitle(info) {
				score += s.titleB
			}
			if bonus && c == info.first && (info.pairMask&pm0 == pm0 || s.mayHold(info.pairMask)) && !(h.full() && (score+s.maxBonus(len(info.pairs)))*info.mult < h.items[0].Score) {
				score += s.titleBonus(info.pairs)
			}
			score *= info.mult
			if h.full() && score <= h.items[0].Score {
				if score < h.items[0].Score {
					continue // below the worst kept hit: no need to look further
				}
				// A tie with the worst kept hit, common where many chunks
				// score alike (nine offers in ten on the hub): the path
				// decides, as in offer, before the chunk's index is read.
				if strings.Compare(info.path, h.items[0].Path) > 0 {
					continue
				}
			}
			if !pf.pass(info) {
				continue
			}
			h.offer(cand{Hit{Path: info.path, Chunk: int(ix.cidx[c]), Score: score, Fuzzy: !strong}, c})
		}
	}
	s.touched, s.termTouched = s.touched[:0], s.termTouched[:0]
	out := h.items
	slices.SortFunc(out, func(a, b cand) int { return cmpHit(a.Hit, b.Hit) })
	return out
}

// cand is a hit while the best are being picked, with its chunk slot.
type cand struct {
	Hit
	slot uint32
}

// cmpHit orders hits best first: score descending, then path and chunk ascending.
func cmpHit(a, b Hit) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(a.Chunk, b.Chunk)
}

// worse: a ranks below b.
func worse(a, b Hit) bool { return cmpHit(a, b) > 0 }

// hitHeap keeps the best max hits: a min-heap whose root is the worst kept.
type hitHeap struct {
	items []cand
	max   int
}

func (h *hitHeap) full() bool { return h.max > 0 && len(h.items) == h.max }

func (h *hitHeap) offer(x cand) {
	if h.max <= 0 || len(h.items) < h.max {
		h.items = append(h.items, x)
		if h.max > 0 {
			h.up(len(h.items) - 1)
		}
		return
	}
	if !worse(h.items[0].Hit, x.Hit) {
		return
	}
	h.items[0] = x
	h.down(0)
}

func (h *hitHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h.items[i].Hit, h.items[p].Hit) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *hitHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h.items[r].Hit, h.items[l].Hit) {
			m = r
		}
		if !worse(h.items[m].Hit, h.items[i].Hit) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// preparedFilter is a Filter normalised once per query.
type preparedFilter struct {
	typ, status, folder string
	tags                []string
	raw                 bool
}

func prepareFilter(f Filter) preparedFilter {
	pf := preparedFilter{
		typ:    markdown.NormalizeType(f.Type),
		status: strings.ToLower(strings.TrimSpace(f.Status)),
		raw:    f.IncludeRaw,
	}
	folder := strings.ReplaceAll(strings.TrimSpace(f.Folder), "\\", "/")
	for strings.HasPrefix(folder, "./") {
		folder = folder[2:]
	}
	folder = strings.Trim(folder, "/")
	if folder == "." {
		folder = ""
	}
	pf.folder = folder
	// Asking for a folder inside 01-raw is asking for raw notes.
	if vpath.Within(folder, RawFolder) {
		pf.raw = true
	}
	// Split as a frontmatter's tags string is: no tag holds a comma or a
	// space, so "go, concurrency" can only mean both tags.
	for _, t := range f.Tags {
		pf.tags = appendTagString(pf.tags, t)
	}
	// A tag asked twice is checked once.
	slices.Sort(pf.tags)
	pf.tags = slices.Compact(pf.tags)
	return pf
}

func (pf *preparedFilter) pass(n *noteInfo) bool {
	if n.raw && !pf.raw {
		return false
	}
	if pf.typ != "" && n.typ != pf.typ {
		return false
	}
	if pf.status != "" && n.status != pf.status {
		return false
	}
	if pf.folder != "" && !vpath.Below(n.path, pf.folder) {
		return false
	}
	for _, t := range pf.tags {
		if !hasTag(n.tags, t) {
			return false
		}
	}
	return true
}

// hasTag: t is one of tags, or the parent of a nested one ("a" of "a/b").
func hasTag(tags []string, t string) bool {
	for _, nt := range tags {
		if nt == t || (len(nt) > len(t) && nt[len(t)] == '/' && strings.HasPrefix(nt, t)) {
			return true
		}
	}
	return false
}
