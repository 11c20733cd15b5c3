package index

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/snapshot"
)

// roundTrip writes ix to a snapshot file and reads it back.
func roundTrip(t *testing.T, ix *Index) *Index {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ix.snap")
	if err := snapshot.Write(path, "k", func(e *snapshot.Enc) error { ix.Encode(e); return nil }); err != nil {
		t.Fatal(err)
	}
	d, err := snapshot.Read(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	return got
}

// A snapshot read back is the same index: the same hits with the same
// scores for every term of the vocabulary, the same statistics, and it keeps
// working as an index (adds, removals, compactions) exactly like the one that
// wrote it.
func TestSnapshotRoundTrip(t *testing.T) {
	items := elisionCorpus()
	ix := New(Options{})
	ix.AddBatch(items)
	// Tombstones, free note slots and an overflow tf in the snapshot.
	for _, it := range items[40:70] {
		ix.Remove(it.Path)
	}
	ix.Add("02-wiki/again.md", prose("plugin server configuração again"))
	got := roundTrip(t, ix)
	if g, w := got.Stats(), ix.Stats(); g.Notes != w.Notes || g.Chunks != w.Chunks || g.Terms != w.Terms || g.Stems != w.Stems || g.Postings != w.Postings || g.AvgChunkLength != w.AvgChunkLength {
		t.Fatalf("stats %+v, written %+v", g, w)
	}
	qs := vocabularyQueries(ix)
	sameScoresExactly(t, "read back", got, ix, qs)

	// Both go on identically.
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 6 {
		for range 25 {
			it := items[r.IntN(len(items))]
			if r.IntN(3) == 0 {
				ix.Remove(it.Path)
				got.Remove(it.Path)
			} else {
				ix.Add(it.Path, it.Note)
				got.Add(it.Path, it.Note)
			}
		}
		sameScoresExactly(t, "after churn", got, ix, qs)
		if round == 3 {
			got = roundTrip(t, got)
			sameScoresExactly(t, "read back again", got, ix, qs)
		}
	}
	if got.compactions == 0 && ix.compactions == 0 {
		t.Log("no compaction during the churn")
	}
}

// Another executable, format or settings, a damaged or truncated file: an
// error, never a panic or a half-read index.
func TestSnapshotRejected(t *testing.T) {
	ix := New(Options{})
	ix.AddBatch(elisionCorpus())
	dir := t.TempDir()
	path := filepath.Join(dir, "ix.snap")
	if err := snapshot.Write(path, "key-a", func(e *snapshot.Enc) error { ix.Encode(e); return nil }); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.Read(path, "key-b"); !errors.Is(err, snapshot.ErrInvalid) {
		t.Fatalf("other key: %v", err)
	}
	if _, err := snapshot.Read(filepath.Join(dir, "none.snap"), "key-a"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	for _, tc := range []struct {
		name string
		mut  func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"one bit flipped", func(b []byte) []byte { b[len(b)/3] ^= 4; return b }},
		{"empty", func([]byte) []byte { return nil }},
		{"not a snapshot", func([]byte) []byte { return []byte("# a note\n") }},
	} {
		b := tc.mut(append([]byte(nil), good...))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := snapshot.Read(path, "key-a"); !errors.Is(err, snapshot.ErrInvalid) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
}

// payload returns the payload of a snapshot file (what Decode reads).
func payload(t *testing.T, ix *Index) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ix.snap")
	if err := snapshot.Write(path, "", func(e *snapshot.Enc) error { ix.Encode(e); return nil }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// magic, format, empty key (one byte), payload, checksum
	return b[8+4+1 : len(b)-4]
}

// Decode checks everything it reads: a payload damaged in a way its checksum
// would not catch (rewritten by hand) is an error, never a panic, and an
// index it accepts can be searched.
func TestSnapshotDecodeDamaged(t *testing.T) {
	items := elisionCorpus()[:60]
	ix := New(Options{})
	ix.AddBatch(items)
	good := payload(t, ix)
	qs := vocabularyQueries(ix)[:12]
	r := rand.New(rand.NewPCG(5, 6))
	rejected := 0
	for i := range 600 {
		b := append([]byte(nil), good...)
		switch i % 3 {
		case 0:
			b[r.IntN(len(b))] = byte(r.IntN(256))
		case 1:
			b = b[:r.IntN(len(b))]
		default:
			for range 4 {
				b[r.IntN(len(b))] ^= byte(1 << r.IntN(8))
			}
		}
		got, err := Decode(snapshot.NewDec(b), Options{})
		if err != nil {
			if !errors.Is(err, snapshot.ErrInvalid) {
				t.Fatalf("damaged payload: error %v does not wrap ErrInvalid", err)
			}
			rejected++
			continue
		}
		for _, q := range qs {
			got.Search(q, Filter{IncludeRaw: true}, 10)
		}
		for _, it := range items[:3] {
			got.Remove(it.Path)
			got.Add(it.Path, it.Note)
		}
	}
	if rejected < 200 {
		t.Fatalf("only %d of 600 damaged payloads rejected", rejected)
	}
}

// sortIDKeys orders by the id in the high 32 bits, whatever the sizes.
func TestSortIDKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tmp []uint64
	for _, n := range []int{0, 1, 5, 95, 96, 97, 300, 1000, 5000} {
		for _, spread := range []uint32{1, 255, 1 << 12, 1 << 20, 1<<32 - 1} {
			keys := make([]uint64, n)
			for k := range keys {
				keys[k] = uint64(r.Uint32N(spread)+0)<<32 | uint64(k)
			}
			var got []uint64
			got, tmp = sortIDKeys(slices.Clone(keys), tmp)
			slices.Sort(keys)
			// ties keep their positions either way: the low bits are distinct
			if !slices.Equal(got, keys) {
				t.Fatalf("n=%d spread=%d: not sorted", n, spread)
			}
		}
	}
}

// The checks of posting and term lists (with their one-byte fast paths)
// accept and refuse what the plain decoding of every varint does, on the
// lists of a real index and on damaged copies of them.
func TestSnapshotChecksAgree(t *testing.T) {
	ix := New(Options{})
	ix.AddBatch(elisionCorpus())
	slots, r := len(ix.cnote), rand.New(rand.NewPCG(7, 8))
	damage := func(b []byte) []byte {
		b = append([]byte(nil), b...)
		switch r.IntN(3) {
		case 0:
			if len(b) > 0 {
				b[r.IntN(len(b))] = byte(r.IntN(256))
			}
		case 1:
			b = b[:r.IntN(len(b)+1)]
		default:
			b = append(b, byte(r.IntN(256)))
		}
		return b
	}
	lists, refused, long := 0, 0, 0
	for _, sp := range []*space{&ix.exact, &ix.stems} {
		for id := range sp.post {
			l := sp.post[id]
			if slices.ContainsFunc(l.data, func(c byte) bool { return c >= 0x80 }) {
				long++
			}
			if err := checkList(&l, slots, len(sp.big)); err != nil {
				t.Fatalf("list of %q refused: %v", sp.terms[id], err)
			}
			for range 8 {
				d := l
				d.data = damage(l.data)
				got, want := checkList(&d, slots, len(sp.big)), checkListPlain(&d, slots, len(sp.big))
				if (got == nil) != (want == nil) {
					t.Fatalf("list of %q damaged to %x: %v, plain decoding %v", sp.terms[id], d.data, got, want)
				}
				lists++
				if got != nil {
					refused++
				}
			}
		}
	}
	for i := range ix.notes {
		n := &ix.notes[i]
		if !n.live {
			continue
		}
		for _, c := range []struct {
			b     []byte
			stems bool
			n     int
		}{{n.terms, false, len(ix.exact.terms)}, {n.stems, true, len(ix.stems.terms)}} {
			if err := checkTermList(c.b, c.stems, c.n); err != nil {
				t.Fatalf("term list of %q refused: %v", n.path, err)
			}
			for range 8 {
				b := damage(c.b)
				got, want := checkTermList(b, c.stems, c.n), checkTermListPlain(b, c.stems, c.n)
				if (got == nil) != (want == nil) {
					t.Fatalf("term list of %q damaged to %x: %v, plain decoding %v", n.path, b, got, want)
				}
			}
		}
	}
	if refused == 0 || refused == lists || long == 0 {
		t.Fatalf("%d of %d damaged lists refused; %d lists with varints of two bytes or more", refused, lists, long)
	}
}

// checkListPlain is checkList decoding every varint with uvarint32.
func checkListPlain(l *plist, slots, big int) error {
	d := l.data
	var c, n uint32
	for i := 0; i < len(d); {
		x, k := uvarint32(d[i:])
		if k <= 0 {
			return fmt.Errorf("bad posting")
		}
		i += k
		if n > 0 && x>>1 == 0 {
			return fmt.Errorf("slots not increasing")
		}
		c += x >> 1
		if int(c) >= slots {
			return fmt.Errorf("slot %d out of range", c)
		}
		if x&1 == 0 {
			y, k := uvarint32(d[i:])
			if k <= 0 {
				return fmt.Errorf("bad tf")
			}
			i += k
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

// checkTermListPlain is checkTermList decoding every varint with uvarint32.
func checkTermListPlain(b []byte, stems bool, n int) error {
	id := uint64(0)
	for i := 0; i < len(b); {
		x, k := uvarint32(b[i:])
		if k <= 0 {
			return fmt.Errorf("bad term list")
		}
		i += k
		extra := 0
		switch {
		case stems && x&1 != 0:
			extra = 1
		case !stems && x&3 == 2:
			extra = 1
		case !stems && x&3 == 3:
			extra = 2
		}
		if stems {
			id += uint64(x >> 1)
		} else {
			id += uint64(x >> 2)
		}
		for range extra {
			_, k := uvarint32(b[i:])
			if k <= 0 {
				return fmt.Errorf("bad term list")
			}
			i += k
		}
		if id >= uint64(n) {
			return fmt.Errorf("term id out of range")
		}
	}
	return nil
}

// TestSnapshotDuplicateTerm: a payload whose vocabulary holds a term twice
// (one term's bytes written over another's of the same length, the rest
// intact) is refused as invalid, naming the term, whichever group of the
// table's grouped insertion the second copy falls in.
func TestSnapshotDuplicateTerm(t *testing.T) {
	ix := New(Options{})
	ix.AddBatch(elisionCorpus()[:60])
	good := payload(t, ix)
	terms := ix.exact.terms
	for _, gap := range []int{1, findGroup + 3} {
		tried := 0
		for b := gap; b < len(terms) && tried < 3; b++ {
			a := b - gap
			if len(terms[a]) != len(terms[b]) || len(terms[b]) < 5 {
				continue
			}
			// The length byte then the bytes, found once: the term's own entry.
			pat := append([]byte{byte(len(terms[b]))}, terms[b]...)
			if bytes.Count(good, pat) != 1 {
				continue
			}
			bad := append([]byte(nil), good...)
			k := bytes.Index(bad, pat)
			copy(bad[k+1:], terms[a])
			_, err := Decode(snapshot.NewDec(bad), Options{})
			if !errors.Is(err, snapshot.ErrInvalid) || !strings.Contains(err.Error(), strconv.Quote(terms[a])+" twice") {
				t.Fatalf("%q written over %q: error %v", terms[a], terms[b], err)
			}
			tried++
		}
		if tried == 0 {
			t.Fatalf("no duplicate %d terms apart tried", gap)
		}
	}
}
