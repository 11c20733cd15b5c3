package snapshot

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type record struct {
	U   uint64
	V   int64
	I   int
	B   bool
	X   uint32
	F   float64
	Bs  []byte
	S   string
	Ss  []string
	U32 []uint32
	F32 []float32
}

func (r *record) enc(e *Enc) {
	e.Uvarint(r.U)
	e.Varint(r.V)
	e.Int(r.I)
	e.Bool(r.B)
	e.U32(r.X)
	e.F64(r.F)
	e.Bytes(r.Bs)
	e.String(r.S)
	e.Strings(r.Ss)
	e.U32s(r.U32)
	e.F32s(r.F32)
}

func dec(d *Dec) record {
	var r record
	r.U, r.V, r.I, r.B, r.X, r.F = d.Uvarint(), d.Varint(), d.Int(1<<40), d.Bool(), d.U32(), d.F64()
	r.Bs, r.S, r.Ss, r.U32, r.F32 = d.Bytes(), d.String(), d.Strings(), d.U32s(), d.F32s()
	return r
}

func TestRoundTrip(t *testing.T) {
	recs := []record{
		{},
		{U: math.MaxUint64, V: math.MinInt64, I: 1 << 35, B: true, X: math.MaxUint32, F: -1.5,
			Bs: []byte{0, 1, 255}, S: "é 名 \x00", Ss: []string{"", "a", "名前"}, U32: []uint32{0, 7, math.MaxUint32}, F32: []float32{-1, 0.25, float32(math.Inf(1))}},
		// one-byte and longer varints, lengths and ints alike
		{U: 127, V: -64, I: 128, S: strings.Repeat("x", 127), Ss: []string{strings.Repeat("y", 128), strings.Repeat("z", 300)}},
		{U: 128, V: 64, I: 127, Bs: make([]byte, 128)},
	}
	path := filepath.Join(t.TempDir(), "sub", "x.snap")
	if err := Write(path, "key", func(e *Enc) error {
		for i := range recs {
			recs[i].enc(e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	d, err := Read(path, "key")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range recs {
		got := dec(d)
		// nil and empty read back alike
		norm := func(r *record) {
			if len(r.Bs) == 0 {
				r.Bs = nil
			}
			if len(r.Ss) == 0 {
				r.Ss = nil
			}
			if len(r.U32) == 0 {
				r.U32 = nil
			}
			if len(r.F32) == 0 {
				r.F32 = nil
			}
		}
		norm(&got)
		norm(&want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d: %+v, want %+v", i, got, want)
		}
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	// A byte string read back cannot be appended to in place.
	d, _ = Read(path, "key")
	dec(d)
	r := dec(d)
	if cap(r.Bs) != len(r.Bs) {
		t.Fatalf("Bytes: cap %d, len %d", cap(r.Bs), len(r.Bs))
	}
}

// Lengths beyond the data are errors, not allocations; reads after an
// error return zero values; Done reports leftovers.
func TestDecodeBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		read func(d *Dec)
	}{
		{"huge string length", []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 'a'}, func(d *Dec) { _ = d.String() }},
		{"huge u32s length", []byte{0x80, 0x80, 0x04, 1, 2, 3, 4}, func(d *Dec) { d.U32s() }},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, func(d *Dec) { d.Uvarint() }},
		{"int above max", []byte{0x05}, func(d *Dec) { d.Int(4) }},
		{"int above max, more after", []byte{0x05, 0x01, 0x01, 'a'}, func(d *Dec) { d.Int(4) }},
		{"string past the end, more after", []byte{0x05, 0x01, 0x01}, func(d *Dec) { _ = d.String() }},
		{"bad bool", []byte{2}, func(d *Dec) { d.Bool() }},
		{"short u32", []byte{1, 2}, func(d *Dec) { d.U32() }},
		{"leftover", []byte{1, 2}, func(d *Dec) { d.Bool(); d.Done() }},
	} {
		d := NewDec(tc.b)
		tc.read(d)
		if err := d.Done(); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d.Uvarint() != 0 || d.Int(10) != 0 || d.String() != "" || d.Bytes() != nil || d.U32s() != nil {
			t.Fatalf("%s: reads after an error return values", tc.name)
		}
	}
}

// A write that fails part way leaves the old snapshot and no temporary file.
func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.snap")
	if err := Write(path, "k", func(e *Enc) error { e.String("old"); return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Write(path, "k", func(e *Enc) error { e.String(strings.Repeat("new", 1<<20)); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	oldKept(t, dir, path)
	if _, err := Read(filepath.Join(dir, "none"), "k"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if PathFor("/c", "/v/a", "s") == PathFor("/c", "/v/b", "s") {
		t.Fatal("two vaults, one file")
	}
	if PathFor("/c", "/v/a", "lang=en") == PathFor("/c", "/v/a", "lang=pt") {
		t.Fatal("two settings, one file")
	}
}

// oldKept checks that the snapshot at path still holds "old" and is alone
// in dir (no temporary file left).
func oldKept(t *testing.T, dir, path string) {
	t.Helper()
	d, err := Read(path, "k")
	if err != nil || d.String() != "old" {
		t.Fatalf("old snapshot lost: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}

// TestPeek: Peek takes what Read takes, from the file's first bytes, and
// refuses as Read refuses another key, another format and a file that is
// no snapshot; it gives the file's size. (A damaged payload is Read's to
// find: Peek does not read it.)
func TestPeek(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.snap")
	if err := Write(path, "key", func(e *Enc) error { e.String(strings.Repeat("payload ", 2000)); return nil }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if size, err := Peek(path, "key"); err != nil || size != fi.Size() {
		t.Errorf("Peek = %d, %v; want %d, nil", size, err, fi.Size())
	}
	if _, err := Read(path, "key"); err != nil {
		t.Fatal(err)
	}
	if _, err := Peek(path, "other"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Peek with another key: %v, want ErrInvalid", err)
	}
	if _, err := Peek(filepath.Join(dir, "missing.snap"), "key"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Peek of a missing file: %v, want fs.ErrNotExist", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"another format": func() []byte {
			c := bytes.Clone(b)
			c[len(magic)]++
			return c
		}(),
		"no snapshot":   []byte("# a note\n"),
		"empty":         nil,
		"magic only":    []byte(magic),
		"key cut short": b[:len(magic)+6],
		"another key": func() []byte {
			c := bytes.Clone(b)
			c[len(magic)+5] ^= 1 // the key's first byte
			return c
		}(),
	} {
		p := filepath.Join(dir, "bad.snap")
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Peek(p, "key"); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Peek: %v, want ErrInvalid", name, err)
		}
		if _, err := Read(p, "key"); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Read: %v, want ErrInvalid", name, err)
		}
	}
}
