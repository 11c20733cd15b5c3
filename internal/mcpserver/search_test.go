package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// The structured content of a search carries each hit's place, title,
// headings, score and flags, not its snippet (quoted in the text), and the
// explanations only when asked.
func TestSearchStructured(t *testing.T) {
	hits := `[
		{"path": "02-wiki/ops/deploy.md", "line": 12, "end_line": 17, "title": "Deploy", "headings": ["Deploy", "Steps"], "score": 7.9431%s},
		{"path": "03-projects/site.md", "line": 1, "end_line": 3, "title": "Site", "score": 3.177, "via_graph": true, "snippet_truncated": true%s}
	]`
	explained := fmt.Sprintf(hits, `, "explain": {"terms": [
			{"term": "deploy\u202e", "fields": ["title", "heading", "prose"], "match": "exact"},
			{"term": "steps", "fields": ["heading"], "match": "stem"},
			{"term": "stpes", "fields": ["prose", "code"], "match": "fuzzy", "as": ["steps", "step\u001b"]}],
			"title_phrase": ["deploy steps"]}`,
		`, "explain": {"graph_from": "02-wiki/ops/deploy\u202e.md", "graph_link": "in"}`)
	for _, c := range []struct {
		req  api.SearchRequest
		want string
	}{
		{api.SearchRequest{Query: "deploy"}, `{"query": "deploy\u202e steps\u001b", "results": ` + fmt.Sprintf(hits, "", "") +
			`, "unindexed": ["a.md", "b\u202e.md", "c.md", "d.md", "e.md"], "unindexed_total": 5}`},
		{api.SearchRequest{Query: "deploy", Explain: true}, `{"query": "deploy\u202e steps\u001b", "results": ` + explained +
			`, "unindexed": ["a.md", "b\u202e.md", "c.md", "d.md", "e.md"], "unindexed_total": 5}`},
	} {
		res := searchFixture()
		var want any
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if got := jsonValue(t, newSearchOutput(c.req, res)); !reflect.DeepEqual(got, want) {
			t.Errorf("explain %v:\n got %v\nwant %v", c.req.Explain, got, want)
		}
		if !reflect.DeepEqual(res, searchFixture()) {
			t.Errorf("explain %v: the backend's result was changed", c.req.Explain)
		}
	}
}

// The unindexed files named in the structured content are bounded, with
// their total; no result is [] (never null), and the query asked is named
// when the backend's result has none.
func TestSearchStructuredBounds(t *testing.T) {
	res := &api.SearchResult{Suggestions: []string{"kubernetes"}}
	for i := range maxUnindexedStructured + 5 {
		res.Unindexed = append(res.Unindexed, fmt.Sprintf("f%03d.md", i))
	}
	out := newSearchOutput(api.SearchRequest{Query: "kubernets"}, res)
	if len(out.Unindexed) != maxUnindexedStructured || out.UnindexedTotal != maxUnindexedStructured+5 {
		t.Errorf("%d unindexed named of %d", len(out.Unindexed), out.UnindexedTotal)
	}
	b, _ := json.Marshal(out)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["query"] != "kubernets" || back["results"] == nil || len(back["results"].([]any)) != 0 {
		t.Errorf("structured content %s", b)
	}
}
