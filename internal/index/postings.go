package index

import (
	"encoding/binary"
	"slices"
)

// plist is a posting list, compressed: per posting, in chunk slot order,
// uvarint(gap<<1 | one), gap being the chunk slot minus the previous
// posting's (the first posting's minus 0) and one saying that the tf is a
// single prose occurrence (tfOne, the most common tf by far); otherwise
// uvarint(rot(tf)) follows. rot moves the prose count to the low bits, so a
// tf of a few prose occurrences is one byte.
//
// Measured on the Obsidian hub vault and the generated 10k-note vault: 1.8
// and 1.7 bytes a posting against 8 for the (slot, tf) pairs they replace,
// for searches at the same speed (the lists are read from start to end
// anyway).
type plist struct {
	data []byte
	last uint32 // chunk slot of the last posting
	n    uint32 // postings, dead included
}

// tfOne is the packed tf of a single prose occurrence.
const tfOne = tfq(1 << 21)

// rot and unrot map a packed tf to and from its stored form.
func rot(t tfq) uint32 {
	return uint32(t>>21&0x3FF) | uint32(t&0x1FFFFF)<<10 | uint32(t&tfBig)
}

func unrot(r uint32) tfq {
	return tfq(r>>10&0x1FFFFF) | tfq(r&0x3FF)<<21 | tfq(r)&tfBig
}

// add appends the posting (c, t); c must be above the last posting's slot.
func (l *plist) add(c uint32, t tfq) {
	gap := c - l.last
	if t == tfOne {
		l.data = binary.AppendUvarint(l.data, uint64(gap)<<1|1)
	} else {
		l.data = binary.AppendUvarint(l.data, uint64(gap)<<1)
		l.data = binary.AppendUvarint(l.data, uint64(rot(t)))
	}
	l.last = c
	l.n++
}

// addAll appends the postings ps, in chunk order, each above the last
// posting's slot: add for a run of them. They are encoded into scratch (a
// buffer the caller keeps from run to run, returned grown) and appended at
// once, the list's fields written back once. add wrote the list's slice back
// after every posting, and while the collector marks, each write of its
// pointer into the list (which lives in the heap) is a write barrier: 0.8%
// of the generated 100k-note vault's first start went to those of the
// merges. Appending the encoded run, rather than growing the list by its
// size first (slices.Grow), also spares a pass that sized the run and the
// zeroing of the room it was then written over.
func (l *plist) addAll(ps []sortedPosting, scratch []byte) []byte {
	d, last := scratch[:0], l.last
	for _, p := range ps {
		gap := p.chunk - last
		if p.tf == tfOne {
			d = binary.AppendUvarint(d, uint64(gap)<<1|1)
		} else {
			d = binary.AppendUvarint(d, uint64(gap)<<1)
			d = binary.AppendUvarint(d, uint64(rot(p.tf)))
		}
		last = p.chunk
	}
	l.data = append(l.data, d...) // a new list: allocated at its size class
	l.last = last
	l.n += uint32(len(ps))
	return d
}

// trim drops the list's slack when it is more than an eighth of its length.
func (l *plist) trim() {
	if cap(l.data)-len(l.data) > len(l.data)/8 {
		l.data = slices.Clip(slices.Clone(l.data))
	}
}

// reset empties the list, keeping its memory.
func (l *plist) reset() {
	l.data, l.last, l.n = l.data[:0], 0, 0
}

// piter reads a plist from the start.
type piter struct {
	d []byte
	i int
	c uint32
}

func (l *plist) iter() piter { return piter{d: l.data} }

// next returns the next posting; ok is false at the end.
func (it *piter) next() (c uint32, t tfq, ok bool) {
	if it.i >= len(it.d) {
		return 0, 0, false
	}
	x := uint32(it.d[it.i])
	it.i++
	if x >= 0x80 {
		x, it.i = uvarintRest(it.d, it.i, x)
	}
	it.c += x >> 1
	if x&1 != 0 {
		return it.c, tfOne, true
	}
	y := uint32(it.d[it.i])
	it.i++
	if y >= 0x80 {
		y, it.i = uvarintRest(it.d, it.i, y)
	}
	return it.c, unrot(y), true
}

// nextSlot reads the posting of a plist's data d at i that follows a
// posting at chunk slot c, without its tf: it returns the posting's slot
// and where the next posting begins. Small enough to be inlined, unlike
// piter.next, for the loops that only need the slots.
func nextSlot(d []byte, i int, c uint32) (uint32, int) {
	x := uint32(d[i])
	i++
	if x >= 0x80 {
		x, i = uvarintRest(d, i, x)
	}
	if x&1 == 0 {
		for d[i] >= 0x80 {
			i++
		}
		i++
	}
	return c + x>>1, i
}

// uvarintRest finishes a uvarint whose first byte, x, has its high bit set;
// d[i:] holds the rest. The values are at most 32 bits.
func uvarintRest(d []byte, i int, x uint32) (uint32, int) {
	x &= 0x7F
	for s := 7; ; s += 7 {
		b := d[i]
		i++
		x |= uint32(b&0x7F) << s
		if b < 0x80 {
			return x, i
		}
	}
}

// A note's term lists say which terms and stems it holds and in how many of
// its chunks, so that removing it decrements every df without reading a
// posting list. They are sorted by id and stored compressed, gap being an
// entry's id minus the previous one's (the first's minus 0):
//
//   - terms: uvarint(gap<<2 | kind) per term: kind 0, the term is in one
//     chunk; kind 1, in one chunk, where the posting of the stem it is the
//     stem of was elided (see elideStems); kind 2, uvarint(chunks) follows;
//     kind 3, uvarint(chunks) and uvarint(elided) follow, elided being the
//     chunks where its stem's posting was elided;
//   - stems: uvarint(gap<<1 | more) per stem, more saying uvarint(chunks)
//     follows (otherwise one chunk): the chunks with a stored posting.
//
// An elided posting is always that of the term spelled as its stem, so the
// term's entry counts it (the stem is found by its key, the note's language
// and the term), and a stem whose postings in the note are all elided has
// no entry. Format 4 of the snapshot gave each stem an entry, elided or
// stored: on 8,192 notes of the generated 100k-note vault this form lists
// 294,000 stems where that one listed about 2.5 million, on the Obsidian
// hub 214,000 where it listed about 517,000.
type termCount struct {
	id     uint32
	stored uint32 // the chunks with a stored posting
	elided uint32 // terms: the chunks where the posting of their stem was elided
}

// appendTermList encodes tc (sorted by id, ids distinct); stems says which
// form.
func appendTermList(b []byte, tc []termCount, stems bool) []byte {
	prev := uint32(0)
	for _, e := range tc {
		gap := uint64(e.id - prev)
		prev = e.id
		switch {
		case stems && e.stored == 1:
			b = binary.AppendUvarint(b, gap<<1)
		case stems:
			b = binary.AppendUvarint(b, gap<<1|1)
			b = binary.AppendUvarint(b, uint64(e.stored))
		case e.stored == 1 && e.elided <= 1:
			b = binary.AppendUvarint(b, gap<<2|uint64(e.elided))
		case e.elided == 0:
			b = binary.AppendUvarint(b, gap<<2|2)
			b = binary.AppendUvarint(b, uint64(e.stored))
		default:
			b = binary.AppendUvarint(b, gap<<2|3)
			b = binary.AppendUvarint(b, uint64(e.stored))
			b = binary.AppendUvarint(b, uint64(e.elided))
		}
	}
	return b
}

// eachTerm calls fn for every entry of an encoded term list.
func eachTerm(b []byte, stems bool, fn func(termCount)) {
	id := uint32(0)
	for i := 0; i < len(b); {
		x, n := binary.Uvarint(b[i:])
		i += n
		e := termCount{stored: 1}
		if stems {
			id += uint32(x >> 1)
			if x&1 != 0 {
				v, n := binary.Uvarint(b[i:])
				i += n
				e.stored = uint32(v)
			}
		} else {
			id += uint32(x >> 2)
			switch x & 3 {
			case 1:
				e.elided = 1
			case 2, 3:
				v, n := binary.Uvarint(b[i:])
				i += n
				e.stored = uint32(v)
				if x&3 == 3 {
					w, m := binary.Uvarint(b[i:])
					i += m
					e.elided = uint32(w)
				}
			}
		}
		e.id = id
		fn(e)
	}
}

// termEncoder turns a note's counts as the builder kept them (local ids,
// see appendLocalCount) into its encoded term list, with global ids. Its
// buffers are reused from note to note.
type termEncoder struct {
	tc        []termCount
	keys, tmp []uint64
	out       []termCount
	buf       []byte
}

// encode returns the exactly sized term list of the entries in local,
// mapped through g and sorted by id (this runs for every note of a build:
// see sortIDKeys).
func (te *termEncoder) encode(local []byte, stems bool, g []uint32) []byte {
	te.tc = globalCounts(local, stems, g, te.tc)
	te.keys = te.keys[:0]
	for k, e := range te.tc {
		te.keys = append(te.keys, uint64(e.id)<<32|uint64(k))
	}
	te.keys, te.tmp = sortIDKeys(te.keys, te.tmp)
	te.out = te.out[:0]
	for _, key := range te.keys {
		te.out = append(te.out, te.tc[uint32(key)])
	}
	te.buf = appendTermList(te.buf[:0], te.out, stems)
	if len(te.buf) == 0 {
		return nil
	}
	return slices.Clone(te.buf)
}

// appendLocalCount appends one entry of a note's counts as the builder keeps
// them until the merge (local ids, in the order met): uvarint(id),
// uvarint(stored) and, for a term, uvarint(elided).
func appendLocalCount(b []byte, e termCount, stem bool) []byte {
	b = binary.AppendUvarint(b, uint64(e.id))
	b = binary.AppendUvarint(b, uint64(e.stored))
	if !stem {
		b = binary.AppendUvarint(b, uint64(e.elided))
	}
	return b
}

// globalCounts decodes the entries appendLocalCount wrote into tc, with
// their ids mapped through g.
func globalCounts(b []byte, stem bool, g []uint32, tc []termCount) []termCount {
	tc = tc[:0]
	for i := 0; i < len(b); {
		var e termCount
		v, n := binary.Uvarint(b[i:])
		i += n
		e.id = g[v]
		v, n = binary.Uvarint(b[i:])
		i += n
		e.stored = uint32(v)
		if !stem {
			v, n = binary.Uvarint(b[i:])
			i += n
			e.elided = uint32(v)
		}
		tc = append(tc, e)
	}
	return tc
}

// sortIDKeys sorts keys holding an id in their high 32 bits by that id,
// using tmp as scratch; it returns the sorted keys and the scratch. Short
// lists go to pdqsort; longer ones (a note has a few hundred distinct terms)
// to a least-significant-digit radix sort on the bytes of the id that vary,
// which on the generated 100k-note vault took the sorting of the notes' term
// lists from 2.0 s to about 0.5 s of CPU.
func sortIDKeys(keys, tmp []uint64) ([]uint64, []uint64) {
	if len(keys) < 96 {
		slices.Sort(keys)
		return keys, tmp
	}
	var or, and uint64 = 0, ^uint64(0)
	for _, k := range keys {
		or |= k
		and &= k
	}
	tmp = slices.Grow(tmp[:0], len(keys))[:len(keys)]
	for shift := uint(32); shift < 64; shift += 8 {
		if (or^and)>>shift&0xFF == 0 {
			continue // the same byte in every key
		}
		var count [257]int
		for _, k := range keys {
			count[k>>shift&0xFF+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, k := range keys {
			d := k >> shift & 0xFF
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys, tmp
}
