package index

import (
	"math/bits"
	"unicode/utf8"
)

// fuzzyIndex finds vocabulary terms near a misspelled one. Terms are bucketed
// by length in characters; each entry carries a 64-bit character-set
// signature. One edit changes a word's character set by at most one
// character each way, so a term within distance d differs from the query in
// at most d signature bits each way: that test, on a sequential scan of the
// few length buckets within d, throws out nearly every term for the cost of
// two popcounts, and the bit-parallel edit distance (patternMask) settles
// the rest.
// BenchmarkFuzzy, 300k random terms on the 2-core machine: 60 us a lookup at
// distance 1, 160 us at distance 2.
type fuzzyIndex struct {
	byLen [MaxTokenRunes + 1]fzBucket
}

// fzBucket holds the terms of one length: signatures and ids side by side,
// so the scan reads 8 bytes a term.
type fzBucket struct {
	sigs []uint64
	ids  []uint32
}

// build makes f the index of terms (ids their positions), as adding them
// in order would, each bucket allocated once.
func (f *fuzzyIndex) build(terms []string) {
	lens := make([]uint8, len(terms)) // MaxTokenRunes fits
	var counts [MaxTokenRunes + 1]int
	for id, t := range terms {
		n := min(runeLen(t), MaxTokenRunes)
		lens[id] = uint8(n)
		counts[n]++
	}
	*f = fuzzyIndex{}
	for n, c := range counts {
		if c > 0 {
			f.byLen[n] = fzBucket{sigs: make([]uint64, 0, c), ids: make([]uint32, 0, c)}
		}
	}
	for id, t := range terms {
		b := &f.byLen[lens[id]]
		b.sigs = append(b.sigs, signature(t))
		b.ids = append(b.ids, uint32(id))
	}
}

func (f *fuzzyIndex) add(t string, id uint32) {
	n := min(runeLen(t), MaxTokenRunes)
	f.byLen[n].sigs = append(f.byLen[n].sigs, signature(t))
	f.byLen[n].ids = append(f.byLen[n].ids, id)
}

// signature is the set of characters of t, hashed to 64 bits: a-z, 0-9 and
// '-' have their own bit, any other character shares the remaining 27.
func signature(t string) uint64 {
	var s uint64
	for i := 0; i < len(t); {
		c := t[i]
		var bit uint
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z':
				bit = uint(c - 'a')
			case '0' <= c && c <= '9':
				bit = 26 + uint(c-'0')
			case c == '-':
				bit = 36
			default:
				bit = 37 + uint(c)%27
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(t[i:])
			bit = 37 + uint(r)%27
			i += size
		}
		s |= 1 << bit
	}
	return s
}

// near calls fn for every term (by id) within Levenshtein distance maxDist of
// q (in characters). terms is the vocabulary the ids index.
func (f *fuzzyIndex) near(q string, maxDist int, terms []string, fn func(id uint32, dist int)) {
	var qbuf [MaxTokenRunes + 1]rune
	qr := toRunes(q, qbuf[:0])
	if len(qr) == 0 || len(qr) > MaxTokenRunes {
		return
	}
	var pm patternMask
	pm.init(qr)
	qs := signature(q)
	lo, hi := max(len(qr)-maxDist, 0), min(len(qr)+maxDist, MaxTokenRunes)
	for l := lo; l <= hi; l++ {
		bk := &f.byLen[l]
		ids := bk.ids[:len(bk.sigs)]
		for i, sig := range bk.sigs {
			if bits.OnesCount64(qs&^sig) > maxDist || bits.OnesCount64(sig&^qs) > maxDist {
				continue
			}
			if d := pm.distance(terms[ids[i]]); d <= maxDist {
				fn(ids[i], d)
			}
		}
	}
}

// patternMask is a query prepared for the bit-parallel edit distance of
// Myers and Hyyrö: per character, the bit set of its positions in the query.
// One text character costs a dozen word operations instead of a row of the
// dynamic programme.
type patternMask struct {
	m     int
	ascii [utf8.RuneSelf]uint64
	other []runeMask
}

type runeMask struct {
	r    rune
	mask uint64
}

func (p *patternMask) init(q []rune) {
	p.m = len(q)
	for i, r := range q {
		if r < utf8.RuneSelf {
			p.ascii[r] |= 1 << i
			continue
		}
		found := false
		for k := range p.other {
			if p.other[k].r == r {
				p.other[k].mask |= 1 << i
				found = true
			}
		}
		if !found {
			p.other = append(p.other, runeMask{r, 1 << i})
		}
	}
}

func (p *patternMask) eq(r rune) uint64 {
	if r < utf8.RuneSelf {
		return p.ascii[r]
	}
	for _, o := range p.other {
		if o.r == r {
			return o.mask
		}
	}
	return 0
}

// distance returns the Levenshtein distance between the pattern (1 to 64
// characters) and t.
func (p *patternMask) distance(t string) int {
	m := p.m
	var mask uint64 = 1<<m - 1
	if m == 64 {
		mask = ^uint64(0)
	}
	top := uint64(1) << (m - 1)
	pv, mv := mask, uint64(0)
	score := m
	for _, r := range t {
		eq := p.eq(r)
		xv := eq | mv
		xh := (((eq & pv) + pv) ^ pv) | eq
		ph := mv | ^(xh | pv)
		mh := pv & xh
		if ph&top != 0 {
			score++
		} else if mh&top != 0 {
			score--
		}
		ph = ph<<1 | 1
		mh <<= 1
		pv = (mh | ^(xv | ph)) & mask
		mv = ph & xv & mask
	}
	return score
}

func toRunes(s string, buf []rune) []rune {
	for _, r := range s {
		buf = append(buf, r)
	}
	return buf
}
