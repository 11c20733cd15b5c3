package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The term table against a map, through growth, with its front cache (past
// frontFrom terms) serving repeated and colliding lookups.
func TestTermTable(t *testing.T) {
	tt := newTermTable(0)
	want := map[string]uint32{}
	r := rand.New(rand.NewPCG(8, 9))
	words := make([]string, 3*frontFrom)
	for i := range words {
		words[i] = fmt.Sprintf("w%x-%d", r.Uint64(), i)
	}
	for round := range 4 {
		for i, w := range words {
			// a Zipf-like mix: the first few hundred words again and again
			if i%3 == 0 {
				w = words[r.IntN(300)]
			}
			id, ok := tt.id(w)
			wid, seen := want[w]
			if ok != seen {
				t.Fatalf("round %d: %q: found %v, want %v", round, w, ok, seen)
			}
			if !seen {
				want[w] = id
				wid = id
			}
			if id != wid || tt.terms[id] != w {
				t.Fatalf("round %d: %q: id %d (%q), want %d", round, w, id, tt.terms[id], wid)
			}
		}
	}
	if tt.front == nil {
		t.Fatal("front cache never allocated")
	}
	if len(tt.terms) != len(want) {
		t.Fatalf("%d terms, want %d", len(tt.terms), len(want))
	}
}

// TestIDTable: an idTable over a list finds every string it was given at
// its index, through growth from the zero value and from a size hint,
// tells a string it holds from one it does not, and findOrAdd adds only
// what is new.
func TestIDTable(t *testing.T) {
	for _, start := range []idTable{{}, newIDTable(100)} {
		tab := start
		var list []string
		for i := range 20000 {
			s := fmt.Sprintf("w%d", i*7)
			if id, found := tab.findOrAdd(list, s); found || int(id) != len(list) {
				t.Fatalf("new %q: id %d, found %v", s, id, found)
			}
			list = append(list, s)
			if i%3 == 0 { // again: found, not added
				if id, found := tab.findOrAdd(list, s); !found || int(id) != i {
					t.Fatalf("%q again: id %d, found %v", s, id, found)
				}
			}
		}
		if tab.count() != len(list) {
			t.Fatalf("%d ids for %d strings", tab.count(), len(list))
		}
		for i, s := range list {
			if id, ok := tab.find(list, s); !ok || int(id) != i {
				t.Fatalf("find %q: %d %v, want %d", s, id, ok, i)
			}
			if _, ok := tab.find(list, s+"x"); ok {
				t.Fatalf("found %q, never added", s+"x")
			}
		}
	}
	var zero idTable
	if _, ok := zero.find(nil, "a"); ok {
		t.Fatal("the zero table found a string")
	}
}

// TestFindMany: findMany gives, for keys present and absent mixed in
// groups of every fill (fewer keys than a group, a group and one more,
// many groups), the ids find gives, none for the absent ones, and counts
// those; on the zero table every key is missing.
func TestFindMany(t *testing.T) {
	var tab idTable
	var list []string
	for i := range 5000 {
		s := fmt.Sprintf("t%d", i*3)
		tab.findOrAdd(list, s)
		list = append(list, s)
	}
	const none = ^uint32(0)
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, findGroup - 1, findGroup, findGroup + 1, 10*findGroup + 7} {
		keys := make([]string, n)
		absent := 0
		for i := range keys {
			if r.IntN(3) == 0 {
				keys[i] = fmt.Sprintf("t%d", r.IntN(15000)*3+1) // never added
				absent++
			} else {
				keys[i] = list[r.IntN(len(list))]
			}
		}
		ids := make([]uint32, n)
		missing, _ := tab.findMany(list, keys, ids, none)
		if missing != absent {
			t.Fatalf("%d keys: %d missing, want %d", n, missing, absent)
		}
		for i, k := range keys {
			want, ok := tab.find(list, k)
			if !ok {
				want = none
			}
			if ids[i] != want {
				t.Fatalf("%d keys: %q: id %d, want %d", n, k, ids[i], want)
			}
		}
	}
	var zero idTable
	ids := []uint32{7, 7}
	if missing, _ := zero.findMany(nil, []string{"a", "b"}, ids, none); missing != 2 || ids[0] != none || ids[1] != none {
		t.Fatalf("zero table: %d missing, ids %v", missing, ids)
	}
}

// TestAddAll: addAll gives every string of a list its index as id, across
// groups and the table's growth (from a table sized for a few), and reports
// the first string already held.
func TestAddAll(t *testing.T) {
	list := make([]string, 100*findGroup+5) // past half of the smallest table's 4,096 slots: it grows
	for i := range list {
		list[i] = fmt.Sprintf("s%d", i*11)
	}
	for _, size := range []int{len(list), 3} {
		tab := newIDTable(size)
		if dup := tab.addAll(list); dup != -1 {
			t.Fatalf("size %d: duplicate at %d", size, dup)
		}
		if tab.count() != len(list) {
			t.Fatalf("size %d: %d ids for %d strings", size, tab.count(), len(list))
		}
		for i, s := range list {
			if id, ok := tab.find(list, s); !ok || int(id) != i {
				t.Fatalf("size %d: %q: %d %v, want %d", size, s, id, ok, i)
			}
		}
	}
	withDup := append(append([]string{}, list[:2*findGroup]...), list[7], "new")
	tab := newIDTable(len(withDup))
	if dup := tab.addAll(withDup); dup != 2*findGroup {
		t.Fatalf("duplicate reported at %d, want %d", dup, 2*findGroup)
	}
}

// BenchmarkIDTableBuild: a table of 1.5 million terms (about the generated
// 100k-note vault's vocabulary), as a start from the snapshot builds it,
// a term at a time with findOrAdd and in groups with addAll.
func BenchmarkIDTableBuild(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	terms := make([]string, 1_500_000)
	for i := range terms {
		terms[i] = fmt.Sprintf("%x", r.Uint64()>>20)
	}
	b.Run("findOrAdd", func(b *testing.B) {
		for b.Loop() {
			t := newIDTable(len(terms))
			for id, s := range terms {
				t.findOrAdd(terms[:id], s)
			}
		}
	})
	b.Run("addAll", func(b *testing.B) {
		for b.Loop() {
			t := newIDTable(len(terms))
			t.addAll(terms)
		}
	})
}
