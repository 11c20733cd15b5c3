package index

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// build gives the index adding the terms one by one gives, then both find
// the same terms near a query.
func TestFuzzyBuild(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alpha := []rune("abcdefghijklmnopqrstuvwxyz0123456789-éñ名前ü")
	var terms []string
	for range 3000 {
		var b strings.Builder
		for range 1 + r.IntN(MaxTokenRunes) {
			b.WriteRune(alpha[r.IntN(len(alpha))])
		}
		terms = append(terms, b.String())
	}
	var added, built fuzzyIndex
	for id, tm := range terms {
		added.add(tm, uint32(id))
	}
	built.build(terms)
	for n := range built.byLen {
		a, b := added.byLen[n], built.byLen[n]
		if len(a.sigs) != len(b.sigs) || len(a.sigs) > 0 && (!reflect.DeepEqual(a.sigs, b.sigs) || !reflect.DeepEqual(a.ids, b.ids)) {
			t.Fatalf("bucket %d: added %d terms, built %d", n, len(a.sigs), len(b.sigs))
		}
	}
	for _, q := range terms[:50] {
		var fa, fb []uint32
		added.near(q, 2, terms, func(id uint32, _ int) { fa = append(fa, id) })
		built.near(q, 2, terms, func(id uint32, _ int) { fb = append(fb, id) })
		if !reflect.DeepEqual(fa, fb) || len(fa) == 0 {
			t.Fatalf("near %q: %v and %v", q, fa, fb)
		}
	}
	// Built again, then added to, as the index does after a compaction.
	built.build(terms[:10])
	built.add(terms[10], 10)
	if got := len(built.byLen[min(runeLen(terms[10]), MaxTokenRunes)].ids); got == 0 {
		t.Fatal("a term added after build is not found")
	}
	n := 0
	for _, b := range built.byLen {
		n += len(b.ids)
	}
	if n != 11 {
		t.Fatalf("%d terms after build of 10 and one add", n)
	}
}
