// Package evaluate measures retrieval quality: hit@1, hit@10 and MRR@10 of
// the vault search over a labelled query set, side by side with a baseline
// of grep ranked by match count (what an agent does without this server).
package evaluate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Query is one labelled query: the note a person means by it.
type Query struct {
	Query    string `json:"query"`
	Relevant string `json:"relevant"`
}

// ReadQueries reads a JSONL file of queries; blank lines and lines starting
// with '#' or '//' are skipped. Errors name the line.
func ReadQueries(r io.Reader) ([]Query, error) {
	var out []Query
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") || strings.HasPrefix(text, "//") {
			continue
		}
		var q Query
		if err := json.Unmarshal([]byte(text), &q); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if strings.TrimSpace(q.Query) == "" || strings.TrimSpace(q.Relevant) == "" {
			return nil, fmt.Errorf("line %d: both \"query\" and \"relevant\" are required", line)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no queries")
	}
	return out, nil
}

// Metrics are the averages over a query set.
type Metrics struct {
	Queries int     `json:"queries"`
	Hit1    float64 `json:"hit_at_1"`
	Hit10   float64 `json:"hit_at_10"`
	MRR10   float64 `json:"mrr_at_10"`
}

// Outcome is the rank of the relevant note for one query (0 = not in the top 10).
type Outcome struct {
	Query Query    `json:"query"`
	Rank  int      `json:"rank"`
	Top   []string `json:"top"`
}

// Ranker returns note paths, best first, for a query.
type Ranker func(ctx context.Context, query string) ([]string, error)

// SearchRanker ranks notes with the backend's search: the distinct note paths
// of the results, in order.
func SearchRanker(b api.Backend) Ranker {
	return func(ctx context.Context, q string) ([]string, error) {
		res, err := b.Search(ctx, api.SearchRequest{Query: q, Limit: api.MaxSearchLimit})
		if err != nil {
			return nil, err
		}
		var paths []string
		seen := make(map[string]bool)
		for _, h := range res.Results {
			if !seen[h.Path] {
				seen[h.Path] = true
				paths = append(paths, h.Path)
			}
		}
		return paths, nil
	}
}

// Run evaluates every query with rank and returns the metrics at cut-off 10.
func Run(ctx context.Context, queries []Query, rank Ranker) (Metrics, []Outcome, error) {
	m := Metrics{Queries: len(queries)}
	outs := make([]Outcome, 0, len(queries))
	for _, q := range queries {
		paths, err := rank(ctx, q.Query)
		if err != nil {
			return m, nil, fmt.Errorf("query %q: %w", q.Query, err)
		}
		o := Outcome{Query: q}
		for i, p := range paths {
			if i == 10 {
				break
			}
			o.Top = append(o.Top, p)
			if o.Rank == 0 && p == q.Relevant {
				o.Rank = i + 1
			}
		}
		if o.Rank == 1 {
			m.Hit1++
		}
		if o.Rank >= 1 {
			m.Hit10++
			m.MRR10 += 1 / float64(o.Rank)
		}
		outs = append(outs, o)
	}
	if n := float64(len(queries)); n > 0 {
		m.Hit1 /= n
		m.Hit10 /= n
		m.MRR10 /= n
	}
	return m, outs, nil
}

// GrepRanker is the baseline: every note ranked by how many times the
// query's words occur in it (case-insensitive substring counts summed, as
// `grep -o -i WORD | wc -l` per word would give), ties by path. words turns a
// query into the words an agent would grep for (the meaningful ones: the
// caller passes the analyzer's query terms, so stopwords are not counted).
func GrepRanker(notes map[string]string, words func(string) []string) Ranker {
	lower := make(map[string]string, len(notes))
	paths := make([]string, 0, len(notes))
	for p, text := range notes {
		lower[p] = strings.ToLower(text)
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return func(_ context.Context, q string) ([]string, error) {
		words := words(q)
		type scored struct {
			path  string
			count int
		}
		var hits []scored
		for _, p := range paths {
			c := 0
			for _, w := range words {
				c += strings.Count(lower[p], w)
			}
			if c > 0 {
				hits = append(hits, scored{p, c})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].count > hits[j].count })
		out := make([]string, 0, 10)
		for i := 0; i < len(hits) && i < 10; i++ {
			out = append(out, hits[i].path)
		}
		return out, nil
	}
}
