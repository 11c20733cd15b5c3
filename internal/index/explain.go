package index

import (
	"slices"
	"strings"
)

// Explanation says why a hit ranked: for each query term that matched the
// chunk, the fields where its best match lay and how it matched, and the
// title phrase bonus. It describes what was scored: for a term the index
// keeps the best of its exact, stem and misspelling matches in a chunk (see
// Search), and that one is the one explained.
type Explanation struct {
	Terms []TermMatch
	// TitlePhrase lists the pairs of query words ("front matter") found one
	// after the other in the note's title, file name or an alias, which
	// earned the first chunk the title phrase bonus (TitleBonus, before the
	// note's type and folder factors).
	TitlePhrase []string
	TitleBonus  float64
	// Partial: the query had more than maxExplained terms; those after are
	// scored but not explained.
	Partial bool
}

// TermMatch is how one query term matched a chunk.
type TermMatch struct {
	// Term is the query term as analyzed (lowercase, accents folded).
	Term string
	// Fields where it matched, in this order: "title" (title, file name or
	// alias), "heading", "link_text" (the text of links to the note),
	// "tags", "prose", "code".
	Fields []string
	// Match is "exact", "stem" (only through its stem) or "fuzzy" (only
	// through a misspelling expansion).
	Match string
	// As: for a fuzzy match, the vocabulary words the term was read as that
	// the note holds.
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

// maxExplained is how many query terms (the first ones) an explanation
// covers: one byte each in a chunk's match signature.
const maxExplained = 16

// A match signature byte: the fields of the term's best match, and whether
// it was exact or a stem (neither: a misspelling expansion).
const (
	sigHeading = 1 << iota
	sigTitle
	sigTags
	sigProse
	sigCode
	sigLink
	sigExact
	sigStem
)

// sigFields maps the signature's field bits to names, in TermMatch order.
var sigFields = [...]struct {
	bit  uint8
	name string
}{
	{sigTitle, FieldTitle}, {sigHeading, FieldHeading}, {sigLink, FieldLinkText},
	{sigTags, FieldTags}, {sigProse, FieldProse}, {sigCode, FieldCode},
}

// kindSig returns the kind bits of a winning match (see scratch.win).
func kindSig(w uint64) uint8 {
	var b uint8
	if w&winExact != 0 {
		b |= sigExact
	}
	if w&winStem != 0 {
		b |= sigStem
	}
	return b
}

// matchSig returns the signature byte of a chunk's winning match.
func (ix *Index) matchSig(w uint64) uint8 {
	t := tfq(uint32(w))
	if w == 0 {
		return 0
	}
	big := ix.exact.big
	if w&winStemSpace != 0 {
		big = ix.stems.big
	}
	c := t.counts(big)
	b := kindSig(w)
	for _, f := range [...]struct {
		field int
		bit   uint8
	}{{fHeading, sigHeading}, {fTitle, sigTitle}, {fTags, sigTags}, {fProse, sigProse}, {fCode, sigCode}} {
		if c[f.field] != 0 {
			b |= f.bit
		}
	}
	return b
}

// explain returns the hits with their explanations. Caller holds the read
// lock.
func (ix *Index) explain(s *scratch, terms []qterm, cands []cand) []Hit {
	if len(cands) == 0 {
		return nil
	}
	hits := make([]Hit, len(cands))
	for k := range cands {
		h := &cands[k]
		e := &Explanation{Partial: len(terms) > maxExplained}
		for i := range min(len(terms), maxExplained) {
			b := uint8(h.sig[i/8] >> (uint(i%8) * 8))
			if b == 0 {
				continue
			}
			m := TermMatch{Term: terms[i].term}
			for _, f := range sigFields {
				if b&f.bit != 0 {
					m.Fields = append(m.Fields, f.name)
				}
			}
			switch {
			case b&sigExact != 0:
				m.Match = "exact"
			case b&sigStem != 0:
				m.Match = "stem"
			default:
				m.Match = "fuzzy"
				m.As = ix.expandedAs(s, i, h.Path)
			}
			e.Terms = append(e.Terms, m)
		}
		info := &ix.notes[ix.cnote[h.slot]]
		if len(s.pairs) > 0 && h.slot == info.first && len(info.pairs) > 0 {
			for _, p := range s.pairs {
				if _, ok := slices.BinarySearch(info.pairs, p.key); ok {
					e.TitlePhrase = append(e.TitlePhrase, ix.exact.terms[p.key>>32]+" "+ix.exact.terms[uint32(p.key)])
					e.TitleBonus += p.w
				}
			}
		}
		hits[k] = h.Hit
		hits[k].Explain = e
	}
	return hits
}

// expandedAs returns the misspelling expansions of query term i that the
// note at path holds, alphabetically.
func (ix *Index) expandedAs(s *scratch, i int, path string) []string {
	slot, ok := ix.byPath[path]
	if !ok {
		return nil
	}
	var ids []uint32
	for _, w := range s.words {
		if w.term == i {
			ids = append(ids, w.id)
		}
	}
	var out []string
	has := func(terms []byte) {
		eachTerm(terms, false, func(e termCount) {
			if slices.Contains(ids, e.id) && !slices.Contains(out, ix.exact.terms[e.id]) {
				out = append(out, ix.exact.terms[e.id])
			}
		})
	}
	has(ix.notes[slot].terms)
	if li := ix.links[path]; li != nil && li.slot != noNote {
		has(li.terms)
	}
	slices.SortFunc(out, strings.Compare)
	return out
}
