package vault

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopHitsIsTheSortedPrefix: the bounded selection keeps exactly the
// first limit hits of the full sort, ties (the many equal scores a hub's
// neighbours inherit) broken by path and chunk the same way, and mayTake
// never refuses a hit that offer would keep.
func TestTopHitsIsTheSortedPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := r.IntN(400)
		out := make([]scored, n)
		for i := range out {
			out[i] = scored{path: fmt.Sprintf("n%03d.md", r.IntN(150)), chunk: r.IntN(3), score: float64(r.IntN(8)) / 2}
		}
		limit := 1 + r.IntN(12)
		want := slices.Clone(out)
		slices.SortFunc(want, cmpScored)
		want = want[:min(limit, len(want))]
		top := topHits{limit: limit}
		for _, x := range out {
			before := slices.Clone(top.h)
			may := top.mayTake(x.score, x.path) || x.chunk != 0
			top.offer(x)
			if !may && !slices.Equal(keptKeys(before), keptKeys(top.h)) {
				t.Fatalf("mayTake refused %+v, which offer kept", x)
			}
		}
		got := top.sorted()
		if !slices.EqualFunc(got, want, func(a, b scored) bool { return a.path == b.path && a.chunk == b.chunk && a.score == b.score }) {
			t.Fatalf("trial %d (n %d, limit %d): got %v, want %v", trial, n, limit, got, want)
		}
	}
}

func keptKeys(h []scored) []string {
	var out []string
	for _, x := range h {
		out = append(out, fmt.Sprintf("%s#%d", x.path, x.chunk))
	}
	slices.Sort(out)
	return out
}
