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
