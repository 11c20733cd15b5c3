package index

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"github.com/vaultmcp/vaultmcp/internal/snapshot"
)

// Settings names what an index's contents depend on besides the notes: the
// profile language and the weights. A snapshot is only read by an index
// with the same settings.
func (ix *Index) Settings() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return "index lang=" + langCodes[ix.an.lang] + " stem=" + f(ix.stemWeight) + " fuzzy=" + f(ix.fuzzyWeight) +
		" fields=" + f(ix.fw.Heading) + "," + f(ix.fw.Title) + "," + f(ix.fw.Tags) + "," + f(ix.fw.Prose) + "," + f(ix.fw.Code) + "," + f(ix.fw.Link)
}

// Encode writes the whole index (tombstones included, so that reading it
// back gives the same index) to a snapshot, settled first (see
// DeferTermLists). It holds the read lock.
func (ix *Index) Encode(e *snapshot.Enc) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.settle() // the term lists are written below
	encodeSpace(e, &ix.exact, false)
	encodeSpace(e, &ix.stems, true)
	e.U32s(ix.cnote)
	e.U32s(ix.cidx)
	e.F32s(ix.clen)
	e.Bytes(unsafe.Slice((*byte)(unsafe.SliceData(ix.clang)), len(ix.clang)))
	e.Int(ix.dead)
	e.Int(ix.postings)
	e.Int(ix.deadPostings)
	e.Int(ix.compactions)
	e.Int(len(ix.notes))
	for i := range ix.notes {
		n := &ix.notes[i]
		e.Bool(n.live)
		if !n.live {
			continue
		}
		e.String(n.path)
		e.String(n.typ)
		e.String(n.status)
		e.Strings(n.tags)
		e.Int(int(n.lang))
		e.F64(n.mult)
		e.Bool(n.raw)
		e.U32(n.first)
		e.U32(n.n)
		e.Bytes(n.terms)
		e.Bytes(n.stems)
		e.F64(n.sumLen)
		e.Int(len(n.pairs))
		for _, pr := range n.pairs {
			e.Uvarint(pr)
		}
		e.Int(len(n.titles))
		for _, t := range n.titles {
			e.Uvarint(t)
		}
	}
	e.U32s(ix.freeNotes)
	e.Int(ix.live)
	e.F64(ix.sumLen)
	for _, n := range ix.langNotes {
		e.Int(n)
	}
	paths := make([]string, 0, len(ix.links))
	for p := range ix.links {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	e.Int(len(paths))
	for _, p := range paths {
		li := ix.links[p]
		e.String(p)
		e.Int(len(li.texts))
		for _, t := range li.texts {
			e.String(t.Text)
			e.Int(t.Notes)
		}
		e.U32(li.slot)
		e.Bytes(li.terms)
		e.Bytes(li.stems)
		e.F64(li.length)
	}
	e.Int(ix.linkLive)
	e.F64(ix.linkSumLen)
}

func encodeSpace(e *snapshot.Enc, sp *space, stems bool) {
	e.Strings(sp.terms)
	for i := range sp.post {
		l := &sp.post[i]
		e.Bytes(l.data)
		e.Uvarint(uint64(l.last))
		e.Uvarint(uint64(l.n))
	}
	e.U32s(sp.df)
	e.Int(sp.empty)
	e.Int(len(sp.big))
	for _, c := range sp.big {
		for _, x := range c {
			e.U32(x)
		}
	}
	if stems {
		self := make([]byte, len(sp.self))
		for i, b := range sp.self {
			if b {
				self[i] = 1
			}
		}
		e.Bytes(self)
	}
}

// Decode reads an index written by Encode into a new index with opts, which
// must have the settings of the index that wrote it (see Settings). Every
// list is checked (well-formed, sorted, ids and slots in range, counts
// matching), so a damaged snapshot is an error, never a panic later.
func Decode(d *snapshot.Dec, opts Options) (*Index, error) {
	ix := New(opts)
	if err := decodeSpace(d, &ix.exact, false); err != nil {
		return nil, err
	}
	if err := decodeSpace(d, &ix.stems, true); err != nil {
		return nil, err
	}
	ix.cnote = d.U32s()
	ix.cidx = d.U32s()
	ix.clen = d.F32s()
	clang := d.Bytes()
	ix.clang = make([]langID, len(clang))
	for i, b := range clang {
		ix.clang[i] = langID(b)
	}
	ix.dead = d.Int(1 << 40)
	ix.postings = d.Int(1 << 40)
	ix.deadPostings = d.Int(1 << 40)
	ix.compactions = d.Int(1 << 40)
	if err := d.Err(); err != nil {
		return nil, err
	}
	slots := len(ix.cnote)
	if len(ix.cidx) != slots || len(ix.clen) != slots || len(ix.clang) != slots {
		return nil, fmt.Errorf("%w: chunk arrays of different lengths", snapshot.ErrInvalid)
	}
	ix.notes = make([]noteInfo, d.Len(1))
	var sigs [][]uint64 // the notes' title signatures, in blocks
	for i := range ix.notes {
		n := &ix.notes[i]
		if n.live = d.Bool(); !n.live {
			continue
		}
		n.path = d.String()
		n.typ = ix.internStr(d.String())
		n.status = ix.internStr(d.String())
		n.tags = d.Strings()
		for k, t := range n.tags {
			n.tags[k] = ix.internStr(t)
		}
		n.lang = langID(d.Int(int(numLangs) - 1))
		n.mult = d.F64()
		n.raw = d.Bool()
		n.first = d.U32()
		n.n = d.U32()
		n.terms = d.Bytes()
		n.stems = d.Bytes()
		n.sumLen = d.F64()
		if k := d.Len(1); k > 0 {
			n.pairs = make([]uint64, k)
			for j := range n.pairs {
				n.pairs[j] = d.Uvarint()
			}
		}
		if k := d.Len(1); k > 0 {
			n.titles = arenaTake(&sigs, k, sigBlock)
			for j := range n.titles {
				n.titles[j] = d.Uvarint()
			}
		}
		if d.Err() != nil {
			return nil, d.Err()
		}
		for j, t := range n.titles {
			if j > 0 && t <= n.titles[j-1] {
				return nil, fmt.Errorf("%w: note %q: title signatures", snapshot.ErrInvalid, n.path)
			}
		}
		for j, pr := range n.pairs {
			if pr>>32 >= uint64(len(ix.exact.terms)) || uint32(pr) >= uint32(len(ix.exact.terms)) || j > 0 && pr <= n.pairs[j-1] {
				return nil, fmt.Errorf("%w: note %q: title pairs", snapshot.ErrInvalid, n.path)
			}
		}
		n.pairMask = pairsMask(n.pairs)
		n.titleMask = titlesMask(n.titles)
		if uint64(n.first)+uint64(n.n) > uint64(slots) {
			return nil, fmt.Errorf("%w: note %q: chunks out of range", snapshot.ErrInvalid, n.path)
		}
		for k := range n.n {
			if ix.cidx[n.first+k] != k || ix.cnote[n.first+k] != uint32(i) {
				return nil, fmt.Errorf("%w: note %q: chunk slots do not match", snapshot.ErrInvalid, n.path)
			}
		}
		k := len(ix.byPath)
		ix.byPath[n.path] = uint32(i)
		if len(ix.byPath) == k {
			return nil, fmt.Errorf("%w: note %q twice", snapshot.ErrInvalid, n.path)
		}
	}
	ix.freeNotes = d.U32s()
	ix.live = d.Int(slots)
	ix.sumLen = d.F64()
	for l := range ix.langNotes {
		ix.langNotes[l] = d.Int(len(ix.notes))
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	for _, f := range ix.freeNotes {
		if int(f) >= len(ix.notes) || ix.notes[f].live {
			return nil, fmt.Errorf("%w: free note slot %d", snapshot.ErrInvalid, f)
		}
	}
	for c, note := range ix.cnote {
		if note != noNote && (int(note) >= len(ix.notes) || !ix.notes[note].live) {
			return nil, fmt.Errorf("%w: chunk %d of no note", snapshot.ErrInvalid, c)
		}
	}
	if err := ix.decodeLinks(d); err != nil {
		return nil, err
	}
	// Checking every posting and every note's term list is most of the
	// decoding: on every CPU.
	errs := make([]error, runtime.GOMAXPROCS(0))
	shards(len(errs), func(w, nw uint32) int {
		for i := int(w); i < len(ix.notes) && errs[w] == nil; i += int(nw) {
			if n := &ix.notes[i]; n.live {
				errs[w] = checkTermList(n.terms, false, len(ix.exact.terms))
				if errs[w] == nil {
					errs[w] = checkTermList(n.stems, true, len(ix.stems.terms))
				}
			}
		}
		return 0
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, sp := range [...]*space{&ix.exact, &ix.stems} {
		errs := make([]error, runtime.GOMAXPROCS(0))
		shards(len(errs), func(w, nw uint32) int {
			for id := int(w); id < len(sp.post) && errs[w] == nil; id += int(nw) {
				if err := checkList(&sp.post[id], slots, len(sp.big)); err != nil {
					errs[w] = fmt.Errorf("%w: term %q: %v", snapshot.ErrInvalid, sp.terms[id], err)
				}
			}
			return 0
		})
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	ix.fz.build(ix.exact.terms)
	return ix, nil
}

// decodeLinks reads the link texts and checks their slots: each live link
// slot belongs to the note at its path, and every link slot of the chunk
// arrays to exactly one path.
func (ix *Index) decodeLinks(d *snapshot.Dec) error {
	n := d.Len(6)
	slots := len(ix.cnote)
	owned := make(map[uint32]bool)
	for range n {
		p := d.String()
		li := &linkInfo{texts: make([]LinkText, d.Len(2))}
		for i := range li.texts {
			li.texts[i] = LinkText{Text: d.String(), Notes: d.Int(1<<31 - 1)}
		}
		li.slot = d.U32()
		li.terms, li.stems = d.Bytes(), d.Bytes()
		li.length = d.F64()
		if err := d.Err(); err != nil {
			return err
		}
		if _, dup := ix.links[p]; dup || p == "" || len(li.texts) == 0 {
			return fmt.Errorf("%w: link texts of %q", snapshot.ErrInvalid, p)
		}
		if li.slot != noNote {
			note, ok := ix.byPath[p]
			if int(li.slot) >= slots || !ok || ix.cnote[li.slot] != note || ix.cidx[li.slot] != linkChunk ||
				ix.clen[li.slot] > linkSlotLenBase || owned[li.slot] {
				return fmt.Errorf("%w: link slot of %q", snapshot.ErrInvalid, p)
			}
			owned[li.slot] = true
			if err := checkTermList(li.terms, false, len(ix.exact.terms)); err != nil {
				return err
			}
			if err := checkTermList(li.stems, true, len(ix.stems.terms)); err != nil {
				return err
			}
		}
		ix.links[p] = li
	}
	ix.linkLive = d.Int(slots)
	ix.linkSumLen = d.F64()
	if err := d.Err(); err != nil {
		return err
	}
	live := 0
	for c := range ix.cidx {
		if ix.cidx[c] == linkChunk && ix.cnote[c] != noNote {
			if !owned[uint32(c)] {
				return fmt.Errorf("%w: link slot %d of no path", snapshot.ErrInvalid, c)
			}
			live++
		}
	}
	if live != ix.linkLive {
		return fmt.Errorf("%w: link slot count", snapshot.ErrInvalid)
	}
	return nil
}

func decodeSpace(d *snapshot.Dec, sp *space, stems bool) error {
	sp.terms = d.Strings()
	sp.post = make([]plist, len(sp.terms))
	for i := range sp.post {
		l := &sp.post[i]
		l.data = d.Bytes()
		l.last = uint32(d.Int(1<<32 - 1))
		l.n = uint32(d.Int(1<<32 - 1))
	}
	sp.df = d.U32s()
	sp.empty = d.Int(len(sp.terms))
	sp.big = make([]tfCounts, d.Len(16))
	for i := range sp.big {
		for f := range sp.big[i] {
			sp.big[i][f] = d.U32()
		}
	}
	if stems {
		self := d.Bytes()
		sp.self = make([]bool, len(self))
		for i, b := range self {
			sp.self[i] = b == 1
		}
	}
	if err := d.Err(); err != nil {
		return err
	}
	if len(sp.df) != len(sp.terms) || (stems && len(sp.self) != len(sp.terms)) {
		return fmt.Errorf("%w: term arrays of different lengths", snapshot.ErrInvalid)
	}
	sp.ids = newIDTable(len(sp.terms))
	if id := sp.ids.addAll(sp.terms); id >= 0 {
		return fmt.Errorf("%w: term %q twice", snapshot.ErrInvalid, sp.terms[id])
	}
	return nil
}

// checkList checks that a posting list is well formed: complete varints,
// slots strictly increasing and below slots, overflow indexes below big,
// and n and last as stored.
func checkList(l *plist, slots, big int) error {
	d := l.data
	var c, n uint32
	for i := 0; i < len(d); {
		x := uint32(d[i]) // most postings are a byte or two
		if x < 0x80 {
			i++
		} else {
			var k int
			if x, k = uvarint32(d[i:]); k <= 0 {
				return fmt.Errorf("bad posting")
			}
			i += k
		}
		if n > 0 && x>>1 == 0 {
			return fmt.Errorf("slots not increasing")
		}
		c += x >> 1
		if int(c) >= slots {
			return fmt.Errorf("slot %d out of range", c)
		}
		if x&1 == 0 {
			var y uint32
			if i < len(d) && d[i] < 0x80 {
				y = uint32(d[i])
				i++
			} else {
				var k int
				if y, k = uvarint32(d[i:]); k <= 0 {
					return fmt.Errorf("bad tf")
				}
				i += k
			}
			if t := unrot(y); t&tfBig != 0 && int(t&^tfBig) >= big {
				return fmt.Errorf("tf overflow index out of range")
			}
		}
		n++
	}
	if n != l.n || (n > 0 && c != l.last) {
		return fmt.Errorf("count or last slot does not match")
	}
	return nil
}

// uvarint32 reads a uvarint of at most 32 bits; k <= 0 when malformed.
func uvarint32(b []byte) (uint32, int) {
	var x uint64
	for i := 0; i < len(b) && i < 5; i++ {
		x |= uint64(b[i]&0x7F) << (7 * i)
		if b[i] < 0x80 {
			if x > 1<<32-1 {
				return 0, -1
			}
			return uint32(x), i + 1
		}
	}
	return 0, -1
}

// checkTermList checks an encoded note term list: well formed, ids below n.
func checkTermList(b []byte, stems bool, n int) error {
	id := uint64(0)
	for i := 0; i < len(b); {
		x := uint32(b[i]) // most are a byte
		if x < 0x80 {
			i++
		} else {
			var k int
			if x, k = uvarint32(b[i:]); k <= 0 {
				return fmt.Errorf("%w: bad term list", snapshot.ErrInvalid)
			}
			i += k
		}
		extra := 0
		if stems {
			id += uint64(x >> 1)
			extra = int(x & 1)
		} else {
			id += uint64(x >> 2)
			extra = max(0, int(x&3)-1) // kinds 2 and 3: 1 and 2 counts follow
		}
		for range extra {
			if i < len(b) && b[i] < 0x80 {
				i++
				continue
			}
			_, k := uvarint32(b[i:])
			if k <= 0 {
				return fmt.Errorf("%w: bad term list", snapshot.ErrInvalid)
			}
			i += k
		}
		if id >= uint64(n) {
			return fmt.Errorf("%w: term id out of range", snapshot.ErrInvalid)
		}
	}
	return nil
}
