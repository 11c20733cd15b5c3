package index

import (
	"hash/maphash"
)

// termTable interns the terms of one builder: string -> dense id. It is an
// open-addressing table with linear probing that keeps each term's hash, so
// a miss costs one hash and usually one probe, and growing never rehashes a
// string. Together with the stopword table (stopwords.go) it replaced two
// map lookups per token, the hottest path of indexing: indexing the Obsidian
// hub vault went from about 290 ms to about 150 ms.
type termTable struct {
	idTable
	terms []string
	// arena holds the terms (and the builder's stem keys): the index
	// copies those it keeps (see Index.addTerm), so that a batch's blocks
	// go with the batch. Reset drops them rather than writing over a
	// string something may still hold.
	arena byteArena
	// front caches the last term met at each of frontSize places, by hash:
	// allocated once the table outgrows frontFrom terms (a builder of a
	// large batch, whose table no longer fits the CPU caches). Word
	// frequencies being what they are, most lookups are of a few thousand
	// words, which it answers from 128 KiB that stay in cache.
	front *[frontSize]ttFront
}

const frontSize = 1 << 12

// frontFrom is the size from which a table has a front (a variable for the
// tests).
var frontFrom = 1 << 15

type ttFront struct {
	h  uint64
	id uint32
	s  string
}

// ttSlot is one slot: id+1 (0 empty) and the high half of the term's hash,
// side by side, so that a probe reads one cache line before the term itself
// (measured on the generated 100k-note vault, whose builders hold about a
// million terms: the separate hash array was a third of the lookup's cache
// misses).
type ttSlot struct {
	id  uint32
	tag uint32
}

// newTermTable returns a table sized for about n terms.
func newTermTable(n int) *termTable {
	t := &termTable{idTable: newIDTable(n)}
	if n > 0 {
		t.terms = make([]string, 0, n)
	}
	if n >= frontFrom {
		t.front = new([frontSize]ttFront)
	}
	return t
}

// idTable maps the strings of a list to their index in it, the list kept
// by its owner: a termTable's terms, or an index space's (where it replaced
// a Go map, whose string keys the collector read at every cycle and whose
// growth hashed them again: 0.19 s of CPU in the generated 100k-note
// vault's first build). Open addressing with linear probing over slots
// that hold an id and the high half of its string's hash, each id's full
// hash kept for growing. Lookups (find) only read it.
type idTable struct {
	seed   maphash.Seed
	slots  []ttSlot
	mask   uint64
	hashes []uint64 // per id
	// sink sums what the reads ahead of an addAll read, so that the
	// compiler keeps them.
	sink uint32
}

// newIDTable returns a table sized for about n strings.
func newIDTable(n int) idTable {
	t := idTable{seed: maphash.MakeSeed()}
	size := 1 << 12
	for size < 2*n+2 {
		size *= 2
	}
	t.slots = make([]ttSlot, size)
	t.mask = uint64(len(t.slots) - 1)
	if n > 0 {
		t.hashes = make([]uint64, 0, n)
	}
	return t
}

// hash is the hash of s that the table's slots use.
func (t *idTable) hash(s string) uint64 { return maphash.String(t.seed, s) }

// find returns the id of s in list (whose strings the table holds).
func (t *idTable) find(list []string, s string) (uint32, bool) {
	if t.slots == nil {
		return 0, false
	}
	return t.findHash(list, s, t.hash(s))
}

// findGroup is the size of findMany's groups.
const findGroup = 32

// findMany is find for many strings: ids[i] is the id of keys[i], or none
// when list does not hold it; it returns how many are missing, and a byte
// of what it read ahead (sink, for the caller to keep, so that the
// compiler keeps the reads). The strings are looked up a group at a time:
// the group's slots are read, then the strings they point to, before any
// string is compared, so that the cache misses of a group are waited for
// together instead of one after the other (in an index of a million terms
// a lookup can miss the caches three times: its slot, the string's header
// and its bytes).
func (t *idTable) findMany(list, keys []string, ids []uint32, none uint32) (missing int, sink uint32) {
	if t.slots == nil {
		for i := range keys {
			ids[i] = none
		}
		return len(keys), 0
	}
	var hs [findGroup]uint64
	for lo := 0; lo < len(keys); lo += findGroup {
		g := keys[lo:min(lo+findGroup, len(keys))]
		sink += t.hashGroup(g, hs[:len(g)])
		for i := range g {
			if sl := t.slots[hs[i]&t.mask]; sl.id != 0 && sl.tag == uint32(hs[i]>>32) {
				if s := list[sl.id-1]; s != "" {
					sink += uint32(s[0])
				}
			}
		}
		for i, s := range g {
			id, ok := t.findHash(list, s, hs[i])
			if !ok {
				id = none
				missing++
			}
			ids[lo+i] = id
		}
	}
	return missing, sink
}

// hashGroup sets hs[i] to the hash of keys[i] and reads the slot its
// lookup reads first, so that the lookups that follow find the group's
// slots in cache, their misses waited for together; it returns a byte of
// what it read, for the caller to keep.
func (t *idTable) hashGroup(keys []string, hs []uint64) (sink uint32) {
	for i, s := range keys {
		h := t.hash(s)
		hs[i] = h
		sink += t.slots[h&t.mask].tag
	}
	return sink
}

// findHash is find for a string whose hash is h.
func (t *idTable) findHash(list []string, s string, h uint64) (uint32, bool) {
	tag := uint32(h >> 32)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		sl := t.slots[i]
		if sl.id == 0 {
			return 0, false
		}
		if sl.tag == tag && list[sl.id-1] == s {
			return sl.id - 1, true
		}
	}
}

// add records that the next id (the number of ids so far) is that of s,
// which the table does not hold.
func (t *idTable) add(s string) { t.findOrAdd(nil, s) }

// findOrAdd returns the id of s in list and true, or, when the table does
// not hold s, records that the next id (the number of ids so far) is that
// of s and returns it and false. With a nil list s is known to be new, and
// the strings are not compared.
func (t *idTable) findOrAdd(list []string, s string) (uint32, bool) {
	if t.slots == nil {
		*t = newIDTable(0)
	}
	return t.findOrAddHash(list, s, t.hash(s))
}

// findOrAddHash is findOrAdd for a string whose hash is h (the table has
// its slots).
func (t *idTable) findOrAddHash(list []string, s string, h uint64) (uint32, bool) {
	tag := uint32(h >> 32)
	i := h & t.mask
	for ; t.slots[i].id != 0; i = (i + 1) & t.mask {
		if sl := t.slots[i]; list != nil && sl.tag == tag && list[sl.id-1] == s {
			return sl.id - 1, true
		}
	}
	id := uint32(len(t.hashes))
	t.hashes = append(grow2(t.hashes), h)
	t.slots[i] = ttSlot{id + 1, tag}
	if uint64(len(t.hashes))*2 > uint64(len(t.slots)) {
		t.grow()
	}
	return id, false
}

// addAll adds the strings of list to the empty table, in order, each with
// its index as id, and returns the index of the first string already held
// (the same as one before it), or -1. The strings are added a group at a
// time, the group's slots read first (see hashGroup): a start from the
// index snapshot adds a million terms, a cache miss each when added one
// after the other.
func (t *idTable) addAll(list []string) int {
	var hs [findGroup]uint64
	for lo := 0; lo < len(list); lo += findGroup {
		g := list[lo:min(lo+findGroup, len(list))]
		t.sink += t.hashGroup(g, hs[:len(g)])
		for i, s := range g {
			if _, dup := t.findOrAddHash(list[:lo+i], s, hs[i]); dup {
				return lo + i
			}
		}
	}
	return -1
}

// count returns how many ids the table holds.
func (t *idTable) count() int { return len(t.hashes) }

// grow doubles the slots.
func (t *idTable) grow() {
	t.slots = make([]ttSlot, len(t.slots)*2)
	t.mask = uint64(len(t.slots) - 1)
	for id, h := range t.hashes {
		i := h & t.mask
		for t.slots[i].id != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = ttSlot{uint32(id) + 1, uint32(h >> 32)}
	}
}

// id returns the id of tok, adding a copy of it when new.
func (t *termTable) id(tok string) (uint32, bool) {
	return t.idHash(tok, t.hash(tok))
}

// touchSlot reads the slot a lookup of a term of hash h reads first, and
// touchTerm the term it may then compare with, so that a lookup right
// after finds them in cache (see builder.drain); each returns a byte of
// what it read.
func (t *termTable) touchSlot(h uint64) uint32 { return t.slots[h&t.mask].tag }

func (t *termTable) touchTerm(h uint64) uint32 {
	s := t.slots[h&t.mask]
	if s.id != 0 && s.tag == uint32(h>>32) {
		if term := t.terms[s.id-1]; term != "" {
			return uint32(term[0])
		}
	}
	return 0
}

// inFront returns the id of tok, whose hash is h, when the front holds it.
func (t *termTable) inFront(h uint64, tok string) (uint32, bool) {
	if t.front == nil {
		return 0, false
	}
	f := t.frontOf(h)
	return f.id, f.h == h && f.s == tok
}

// frontOf returns the front entry of a term of hash h (the front is made).
func (t *termTable) frontOf(h uint64) *ttFront {
	return &t.front[h>>52] // the top bits: the slots use the low ones
}

// idHash is id for a token whose hash is h.
func (t *termTable) idHash(tok string, h uint64) (uint32, bool) {
	if id, ok := t.inFront(h, tok); ok {
		return id, true
	}
	var f *ttFront
	if t.front != nil {
		f = t.frontOf(h)
	}
	tag := uint32(h >> 32)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s.id == 0 {
			id := uint32(len(t.terms))
			t.terms = append(grow2(t.terms), t.arena.str(tok))
			t.hashes = append(grow2(t.hashes), h)
			t.slots[i] = ttSlot{id + 1, tag}
			if uint64(len(t.terms))*2 > uint64(len(t.slots)) {
				t.grow()
			}
			if f != nil {
				*f = ttFront{h, id, t.terms[id]}
			}
			return id, false
		}
		if s.tag == tag && t.terms[s.id-1] == tok {
			if f != nil {
				*f = ttFront{h, s.id - 1, t.terms[s.id-1]}
			}
			return s.id - 1, true
		}
	}
}

// reset empties the table, keeping its room.
func (t *termTable) reset() {
	clear(t.slots)
	t.terms = t.terms[:0]
	t.hashes = t.hashes[:0]
	t.arena = byteArena{}
	if t.front != nil {
		*t.front = [frontSize]ttFront{}
	}
}

func (t *termTable) grow() {
	if t.front == nil && len(t.terms) >= frontFrom {
		t.front = new([frontSize]ttFront)
	}
	t.idTable.grow()
}
