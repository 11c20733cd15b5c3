package vault

import (
	"context"
	"os"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/evaluate"
)

// TestRetrievalFloor guards search quality on the bundled example vault with
// its labelled queries: a change to the analyzer, the scoring or the graph
// expansion that loses relevant notes fails here. The floors sit a little
// under the measured figures (hit@1 0.860, hit@10 1.000, MRR@10 0.917).
func TestRetrievalFloor(t *testing.T) {
	f, err := os.Open("../../eval/example.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	queries, err := evaluate.ReadQueries(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Options{Dir: "../../examples/vault", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, outs, err := evaluate.Run(context.Background(), queries, evaluate.SearchRanker(s))
	if err != nil {
		t.Fatal(err)
	}
	if m.Hit1 < 0.82 || m.Hit10 < 0.96 || m.MRR10 < 0.88 {
		for _, o := range outs {
			if o.Rank != 1 {
				t.Logf("rank %d for %q (want %s)", o.Rank, o.Query.Query, o.Query.Relevant)
			}
		}
		t.Fatalf("retrieval fell: %+v", m)
	}
}
