package evaluate

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestReadQueries(t *testing.T) {
	qs, err := ReadQueries(strings.NewReader("# comment\n{\"query\":\"a b\",\"relevant\":\"x.md\"}\n\n{\"query\":\"c\",\"relevant\":\"y.md\"}\n"))
	if err != nil || len(qs) != 2 || qs[1].Relevant != "y.md" {
		t.Fatalf("got %v, %v", qs, err)
	}
	for _, bad := range []string{"{\"query\":\"a\"}\n", "not json\n", ""} {
		if _, err := ReadQueries(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadQueries(%q) accepted", bad)
		}
	}
	_, err = ReadQueries(strings.NewReader("{\"query\":\"a\",\"relevant\":\"x.md\"}\nbroken\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error should name line 2: %v", err)
	}
}

func TestRunMetrics(t *testing.T) {
	ranks := map[string][]string{
		"first":  {"a.md", "b.md"},
		"second": {"b.md", "a.md"},
		"miss":   {"b.md", "c.md"},
		"none":   nil,
	}
	qs := []Query{{"first", "a.md"}, {"second", "a.md"}, {"miss", "a.md"}, {"none", "a.md"}}
	m, outs, err := Run(context.Background(), qs, func(_ context.Context, q string) ([]string, error) { return ranks[q], nil })
	if err != nil {
		t.Fatal(err)
	}
	if m.Queries != 4 || m.Hit1 != 0.25 || m.Hit10 != 0.5 || math.Abs(m.MRR10-(1+0.5)/4) > 1e-9 {
		t.Fatalf("metrics %+v", m)
	}
	if outs[1].Rank != 2 || outs[2].Rank != 0 {
		t.Fatalf("outcomes %+v", outs)
	}
}

func TestGrepRanker(t *testing.T) {
	r := GrepRanker(map[string]string{
		"one.md":   "retry retry retry",
		"two.md":   "Retry with backoff",
		"three.md": "nothing here",
	}, strings.Fields)
	got, _ := r(context.Background(), "retry backoff")
	if strings.Join(got, ",") != "one.md,two.md" {
		t.Fatalf("got %v", got)
	}
}
