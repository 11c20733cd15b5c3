package vault

import (
	"context"
	"os"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/evaluate"
)

// TestRetrievalFloor guards search quality on the bundled example vault with
// its labelled queries: a change to the analyzer, the scoring, the link text,
// the title phrases or the graph expansion that loses relevant notes fails
// here. The floors sit a little under the measured figures (README,
// "Retrieval quality").
func TestRetrievalFloor(t *testing.T) {
	s, err := Open(context.Background(), Options{Dir: "../../examples/vault", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, set := range []struct {
		file                string
		hit1, hit10, mrr10  float64 // floors
		measured1, measured float64 // hit@1 and MRR@10 when the floors were set
	}{
		// descriptions, questions, misspellings, a few titles
		{"example.jsonl", 0.87, 0.98, 0.92, 0.895, 0.938},
		// other names: link texts, aliases, abbreviations, short phrases
		{"example-names.jsonl", 0.95, 1.0, 0.97, 1.0, 1.0},
	} {
		t.Run(set.file, func(t *testing.T) {
			f, err := os.Open("../../eval/" + set.file)
			if err != nil {
				t.Fatal(err)
			}
			queries, err := evaluate.ReadQueries(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			m, outs, err := evaluate.Run(context.Background(), queries, evaluate.SearchRanker(s))
			if err != nil {
				t.Fatal(err)
			}
			if m.Hit1 < set.hit1 || m.Hit10 < set.hit10 || m.MRR10 < set.mrr10 {
				for _, o := range outs {
					if o.Rank != 1 {
						t.Logf("rank %d for %q (want %s)", o.Rank, o.Query.Query, o.Query.Relevant)
					}
				}
				t.Fatalf("retrieval fell: %+v (measured hit@1 %.3f, MRR@10 %.3f)", m, set.measured1, set.measured)
			}
		})
	}
}
