package vault

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestDecide covers every decision on ranked results made up for it,
// including the ones the real ranking cannot produce (a top result reached
// through the graph scores at most 0.4 times its source, so it is never
// first) and the bound on the ratio when the runner-up lies beyond the cut.
func TestDecide(t *testing.T) {
	hit := func(p string, score float64, via bool) api.SearchHit {
		return api.SearchHit{Path: p, Score: score, ViaGraph: via}
	}
	info := func(p string) ([]string, bool) {
		switch p {
		case "02-wiki/go/a.md":
			return []string{"go", "resilience"}, false
		case "02-wiki/db/b.md":
			return []string{"postgres"}, false
		case "02-wiki/go/go-moc.md":
			return nil, true
		case "02-wiki/db/c.md":
			return []string{"gotcha", "postgres"}, false
		}
		return nil, false
	}
	in := &learning{domain: "go", tags: []string{"Postgres"}}
	many := []api.SearchHit{hit("02-wiki/db/b.md", 10, false)}
	for range learnSearchLimit - 1 {
		many = append(many, hit("02-wiki/db/b.md", 5, false))
	}
	cases := []struct {
		name  string
		hits  []api.SearchHit
		in    *learning
		code  string
		cand  string
		ratio float64
		why   string
	}{
		{"nothing", nil, in, api.LearnNoMatch, "", 0, "no match"},
		{"outside", []api.SearchHit{hit("03-projects/p.md", 9, false)}, in, api.LearnOutsideWiki, "03-projects/p.md", 0, "outside 02-wiki"},
		{"archive", []api.SearchHit{hit("99-archive/02-wiki/x.md", 9, false)}, in, api.LearnOutsideWiki, "99-archive/02-wiki/x.md", 0, "outside"},
		{"via graph", []api.SearchHit{hit("02-wiki/go/a.md", 9, true), hit("02-wiki/db/b.md", 1, false)}, in, api.LearnViaGraph, "02-wiki/go/a.md", 0, "via graph"},
		{"moc", []api.SearchHit{hit("02-wiki/go/go-moc.md", 9, false)}, in, api.LearnStructural, "02-wiki/go/go-moc.md", 0, "map of content"},
		{"misspelling only", []api.SearchHit{{Path: "02-wiki/go/a.md", Score: 9, Fuzzy: true}}, in, api.LearnNoMatch, "02-wiki/go/a.md", 0, "matched only through similar spellings"},
		{"ratio low", []api.SearchHit{hit("02-wiki/go/a.md", 9, false), hit("02-wiki/go/a.md", 8, false), hit("02-wiki/db/b.md", 6.8, true), hit("02-wiki/db/b.md", 5.5, false)},
			in, api.LearnRatioLow, "02-wiki/go/a.md", 1.63, "ratio 1.63 below 1.8 over the runner-up 02-wiki/db/b.md"},
		{"ratio just below", []api.SearchHit{hit("02-wiki/go/a.md", 1.7999, false), hit("02-wiki/db/b.md", 1, false)}, in, api.LearnRatioLow, "02-wiki/go/a.md", 1.79, "ratio 1.79 below"},
		{"ratio bound beyond the cut", many, in, api.LearnDuplicate, "02-wiki/db/b.md", 2, "duplicate of 02-wiki/db/b.md (ratio 2.00"},
		{"ratio bound too low", append([]api.SearchHit{hit("02-wiki/db/b.md", 8.5, false)}, many[1:]...), in, api.LearnRatioLow, "02-wiki/db/b.md", 1.7, "ratio 1.70 below 1.8 over the results after it"},
		{"no overlap", []api.SearchHit{hit("02-wiki/go/a.md", 9, false), hit("02-wiki/db/b.md", 1, false)},
			&learning{domain: "db", tags: []string{"ops"}}, api.LearnNoOverlap, "02-wiki/go/a.md", 9, "shares no tag and lies outside 02-wiki/db"},
		{"same domain", []api.SearchHit{hit("02-wiki/go/a.md", 9, false), hit("02-wiki/db/b.md", 5, false)},
			&learning{domain: "go"}, api.LearnDuplicate, "02-wiki/go/a.md", 1.8, "duplicate of 02-wiki/go/a.md (ratio 1.80 over the runner-up, in the same domain)"},
		{"shared tag", []api.SearchHit{hit("02-wiki/db/b.md", 9, false), hit("02-wiki/go/a.md", 2, false)},
			in, api.LearnDuplicate, "02-wiki/db/b.md", 4.5, "shares the tag Postgres"},
		{"a shared kind tag is no overlap", []api.SearchHit{hit("02-wiki/db/c.md", 9, false)},
			&learning{domain: "go", tags: []string{"Gotcha", "decision"}}, api.LearnNoOverlap, "02-wiki/db/c.md", 0, "shares no tag"},
		{"a subject tag next to a kind tag", []api.SearchHit{hit("02-wiki/db/c.md", 9, false)},
			&learning{domain: "go", tags: []string{"gotcha", "postgres"}}, api.LearnDuplicate, "02-wiki/db/c.md", 0, "shares the tag postgres"},
		{"alone", []api.SearchHit{hit("02-wiki/db/b.md", 9, false), hit("02-wiki/db/b.md", 3, false), hit("02-wiki/go/a.md", 2, true)},
			in, api.LearnDuplicate, "02-wiki/db/b.md", 0, "no other note matched"},
		{"alone, one word in common", []api.SearchHit{explained("02-wiki/go/a.md", 9, "link:code", "link:prose")},
			&learning{domain: "go"}, api.LearnNoMatch, "02-wiki/go/a.md", 0, `shares only "link" with the learning`},
		{"one word and a misspelling", []api.SearchHit{explained("02-wiki/go/a.md", 9, "retry:prose", "jiter:fuzzy")},
			&learning{domain: "go"}, api.LearnNoMatch, "02-wiki/go/a.md", 0, `shares only "retry"`},
		{"two words, one through its stem", []api.SearchHit{explained("02-wiki/go/a.md", 9, "retry:prose", "clients:stem")},
			&learning{domain: "go"}, api.LearnDuplicate, "02-wiki/go/a.md", 0, "no other note matched, in the same domain"},
	}
	for _, c := range cases {
		v := decide(c.hits, learnSearchLimit, c.in, info)
		if v.code != c.code || v.candidate != c.cand || math.Abs(v.ratio-c.ratio) > 1e-9 || !strings.Contains(v.reason, c.why) {
			t.Errorf("%s: %+v, want %s %s %v %q", c.name, v, c.code, c.cand, c.ratio, c.why)
		}
	}
}

// explained is a hit whose explanation lists term:match pairs (the match
// "code", "prose" standing for an exact match in that field).
func explained(p string, score float64, terms ...string) api.SearchHit {
	h := api.SearchHit{Path: p, Score: score, Explain: &api.HitExplanation{}}
	for _, tm := range terms {
		term, how, _ := strings.Cut(tm, ":")
		m := api.TermMatch{Term: term, Match: "exact", Fields: []string{how}}
		if how == "fuzzy" || how == "stem" {
			m.Match, m.Fields = how, []string{"prose"}
		}
		h.Explain.Terms = append(h.Explain.Terms, m)
	}
	return h
}

// TestLearnDecisionsOnRealSearch runs each decision the ranking can reach on
// a real vault, and checks where the insight went.
func TestLearnDecisionsOnRealSearch(t *testing.T) {
	cases := []struct {
		name     string
		req      api.LearnRequest
		decision string
		mode     string
		path     string
		cand     string
	}{
		{"no match", api.LearnRequest{Title: "Xylophone quintessence", Insight: "Flibbertigibbet gobbledygook.", Domain: "go"},
			api.LearnNoMatch, api.LearnCreated, "02-wiki/go/xylophone-quintessence.md", ""},
		{"top outside 02-wiki", api.LearnRequest{Title: "Ledger reconciler", Insight: "The ledger reconciler invoices customers nightly.", Domain: "go"},
			api.LearnOutsideWiki, api.LearnCreated, "02-wiki/go/ledger-reconciler.md", "03-projects/billing.md"},
		{"top is a map of content", api.LearnRequest{Title: "Zymurgy", Insight: "Zymurgy fermentation brewing.", Domain: "go"},
			api.LearnStructural, api.LearnCreated, "02-wiki/go/zymurgy.md", "02-wiki/go/go-moc.md"},
		{"ratio too low", api.LearnRequest{Title: "Quokka wallaby", Insight: "Quokka wallaby thresholds need tuning.", Domain: "go", Tags: []string{"go"}},
			api.LearnRatioLow, api.LearnCreated, "02-wiki/go/quokka-wallaby.md", ""},
		{"no tag or domain overlap", api.LearnRequest{Title: "Pool from cores", Insight: "Size the pool from the number of cores.", Domain: "go", Tags: []string{"perf"}},
			api.LearnNoOverlap, api.LearnCreated, "02-wiki/go/pool-from-cores.md", "02-wiki/db/pool.md"},
		{"duplicate by tag", api.LearnRequest{Title: "Pool from cores", Insight: "Size the pool from the number of cores, plus one.", Domain: "go", Tags: []string{"Postgres"}},
			api.LearnDuplicate, api.LearnAppended, "02-wiki/db/pool.md", "02-wiki/db/pool.md"},
		{"duplicate by domain", api.LearnRequest{Title: "Jitter for many clients", Insight: "Full jitter spreads the retries of many clients; cap it.", Domain: "go"},
			api.LearnDuplicate, api.LearnAppended, "02-wiki/go/retry-backoff.md", "02-wiki/go/retry-backoff.md"},
		{"one word in common", api.LearnRequest{Title: "Cancellation of xylophones", Insight: "Quintessential flibbertigibbets.", Domain: "go"},
			api.LearnNoMatch, api.LearnCreated, "02-wiki/go/cancellation-of-xylophones.md", "02-wiki/go/context-cancel.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, s := openLearn(t, learnVault, learnOpts{})
			res := learn(t, s, c.req)
			if res.Decision != c.decision || res.Mode != c.mode || res.Action != c.mode || res.Path != c.path || (c.cand != "" && res.Candidate != c.cand) {
				t.Fatalf("got %s %s %s (candidate %s, reason %q)", res.Decision, res.Mode, res.Path, res.Candidate, res.Reason)
			}
			if res.Reason == "" || !res.Committed || len(res.Warnings) != 0 {
				t.Fatalf("result %+v", res)
			}
			if !strings.Contains(read(t, dir, c.path), c.req.Insight) {
				t.Fatalf("insight not in %s", c.path)
			}
			if got := strings.TrimSpace(gitRun(t, dir, "log", "-1", "--format=%s")); got != "docs(vault): "+c.req.Title {
				t.Errorf("commit message %q", got)
			}
			if files := lastCommitFiles(t, dir); !slices.Equal(files, res.Files) {
				t.Errorf("commit holds %v, result says %v", files, res.Files)
			}
			if c.decision == api.LearnRatioLow && (res.Ratio <= 0 || res.Ratio >= api.LearnDuplicateRatio || !strings.Contains(res.Reason, "below 1.8")) {
				t.Errorf("ratio %v, reason %q", res.Ratio, res.Reason)
			}
			if c.mode == api.LearnAppended {
				if !strings.Contains(read(t, dir, c.path), "\n## 2026-11-29 — "+c.req.Title+"\n\n"+c.req.Insight+"\n") {
					t.Errorf("no dated section:\n%s", read(t, dir, c.path))
				}
				if !slices.Equal(res.Propagated, []string{"04-daily/2026-11-29.md"}) {
					t.Errorf("an appended learning propagated to %v", res.Propagated)
				}
			} else if !slices.Contains(res.Propagated, "02-wiki/go/go-moc.md") || slices.Contains(res.Propagated, knowledgeIndex) {
				t.Errorf("a new note in an existing domain propagated to %v", res.Propagated)
			}
		})
	}
}
