package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unicode"

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

// fillNil fills every nil slice marshalled as null, at any depth (through
// pointers, slices and recursive types), and nothing else.
func TestFillNil(t *testing.T) {
	type leaf struct {
		Always []string `json:"always"`
		Maybe  []string `json:"maybe,omitempty"`
		Zero   []string `json:"zero,omitzero"`
		Hidden []string `json:"-"`
	}
	type node struct {
		Leaf     leaf    `json:"leaf"`
		Leaves   []leaf  `json:"leaves"`
		Ptr      *leaf   `json:"ptr,omitempty"`
		Children []*node `json:"children,omitempty"`
		Name     string  `json:"name"`
	}
	v := &node{Leaves: []leaf{{}}, Ptr: &leaf{}, Children: []*node{{Children: []*node{{}}}}}
	fillNil(v)
	got, _ := json.Marshal(v)
	want := `{"leaf":{"always":[]},"leaves":[{"always":[]}],"ptr":{"always":[]},"children":[{"leaf":{"always":[]},"leaves":[],` +
		`"children":[{"leaf":{"always":[]},"leaves":[],"name":""}],"name":""}],"name":""}`
	if string(got) != want {
		t.Errorf("fillNil:\n got %s\nwant %s", got, want)
	}
	if v.Leaf.Maybe != nil || v.Leaf.Zero != nil || v.Leaf.Hidden != nil {
		t.Error("fillNil filled an omitted field")
	}
	fillNil((*node)(nil)) // no panic
}

// hidden's table says of every rune what the Unicode tables say.
func TestHiddenTable(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if hidden(r) != hiddenRune(r) {
			t.Fatalf("hidden(%U) = %v, the Unicode tables say %v", r, hidden(r), hiddenRune(r))
		}
	}
}
