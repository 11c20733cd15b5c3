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
