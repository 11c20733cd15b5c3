package mcpserver

import (
	"github.com/vaultmcp/vaultmcp/internal/api"
)

// The structured content of vault_search is what a program needs to use the
// answer, with nothing the text content already carries in full:
//
//   - every hit's place (path, the quoted lines line..end_line), its title,
//     heading trail, score and flags, in the order of the text;
//   - not its snippet: the text quotes exactly those lines of that note
//     (each prefixed "> ", control characters escaped), and the raw bytes
//     are one vault_get_note or resources/read away. Carrying the snippet
//     twice made it two thirds of the structured content and nearly doubled
//     the answer every client has to read (15.8 kB on the obsidian-hub
//     vault, 9.1 kB without);
//   - the explanation of each hit (what matched where and how, the graph
//     origin) only when the call asks for it with explain: most calls are a
//     model reading the text, which has no use for it;
//   - the suggestions, and the files that could not be indexed: the first
//     maxUnindexedStructured of them with their total, so that a vault with
//     thousands of unindexable files does not repeat them in every answer.
//
// The same answer from any backend: a backend that explains every hit
// (the local vault does, at a few percent of a search) is cut to this here.

// maxUnindexedStructured bounds the unindexed files named in the structured
// content of a search (the text names 3).
const maxUnindexedStructured = 100

// searchOutput is the structured content of vault_search.
type searchOutput struct {
	Query          string      `json:"query" jsonschema:"The query as searched."`
	Results        []searchHit `json:"results" jsonschema:"The hits, best first, in the order of the text content."`
	Suggestions    []string    `json:"suggestions,omitempty" jsonschema:"When nothing matched: vocabulary terms close to the query's words."`
	RawMatches     bool        `json:"raw_matches,omitempty" jsonschema:"When nothing matched without include_raw: raw captures under 01-raw/ match the query (search again with include_raw to see them)."`
	Unindexed      []string    `json:"unindexed,omitempty" jsonschema:"The first of the vault files that could not be indexed."`
	UnindexedTotal int         `json:"unindexed_total,omitempty" jsonschema:"How many vault files could not be indexed."`

	// req and res are what the text is rendered from.
	req api.SearchRequest
	res *api.SearchResult
}

// searchHit is one hit of searchOutput.
type searchHit struct {
	Path      string              `json:"path" jsonschema:"Vault path of the note."`
	Line      int                 `json:"line" jsonschema:"First line quoted in the text content (1-based, frontmatter counted): cite path:line."`
	EndLine   int                 `json:"end_line" jsonschema:"Last line quoted in the text content."`
	Title     string              `json:"title" jsonschema:"Title of the note."`
	Headings  []string            `json:"headings,omitempty" jsonschema:"Heading trail of the section, outermost first."`
	Score     float64             `json:"score" jsonschema:"Relevance score (higher is better)."`
	ViaGraph  bool                `json:"via_graph,omitempty" jsonschema:"Found through a link from or to a direct hit, not by its own words."`
	Fuzzy     bool                `json:"fuzzy,omitempty" jsonschema:"Matched only through spellings close to query words absent from the vault."`
	Truncated bool                `json:"snippet_truncated,omitempty" jsonschema:"The section is longer than the lines quoted."`
	Explain   *api.HitExplanation `json:"explain,omitempty" jsonschema:"Why the hit ranked; only when the call set explain."`
}

// newSearchOutput is the structured content of res, the answer to req.
func newSearchOutput(req api.SearchRequest, res *api.SearchResult) *searchOutput {
	out := &searchOutput{
		Query:       res.Query,
		Results:     make([]searchHit, len(res.Results)),
		Suggestions: res.Suggestions,
		RawMatches:  res.RawMatches,
		req:         req,
		res:         res,
	}
	if out.Query == "" {
		out.Query = req.Query
	}
	// res is read, never changed: a backend may keep it (a cache).
	for i := range res.Results {
		h := &res.Results[i]
		out.Results[i] = searchHit{
			Path: h.Path, Line: h.Line, EndLine: h.EndLine, Title: h.Title, Headings: h.Headings, Score: h.Score,
			ViaGraph: h.ViaGraph, Fuzzy: h.Fuzzy, Truncated: h.Truncated,
		}
		if req.Explain {
			out.Results[i].Explain = h.Explain
		}
	}
	if n := len(res.Unindexed); n > 0 {
		out.Unindexed = res.Unindexed[:min(n, maxUnindexedStructured)]
		out.UnindexedTotal = n
	}
	return out
}
