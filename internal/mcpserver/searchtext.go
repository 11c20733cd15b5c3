package mcpserver

import (
	"slices"
	"strconv"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// SearchText renders the parts of a search answer in one language, from
// the tool output's catalogue: vault_search's text uses them, and so does
// the command line's `vaultmcp search`, which lays them out for a person
// (numbered hits, colour, one explanation per line) but says the same words
// in the same language. Vault text in them (queries, terms, paths) is
// escaped as in every answer.
type SearchText struct{ m *messages }

// NewSearchText returns the texts of lang ("en", "pt", any tag of them; an
// unknown or empty one gives English).
func NewSearchText(lang string) SearchText { return SearchText{newMessages(lang)} }

// None says that nothing matched query.
func (t SearchText) None(query string) string { return t.m.get(msgSearchNone, quote(query)) }

// Suggestions names the vault's terms close to the query's.
func (t SearchText) Suggestions(terms []string) string {
	return t.m.get(msgSearchSuggestions, escapedList(terms))
}

// RawMatches says that raw captures match a search that left them out;
// option is how the caller asks for them (include_raw: true over MCP,
// --include-raw on the command line).
func (t SearchText) RawMatches(option string) string { return t.m.get(msgSearchRaw, option) }

// Notes is what the line of a hit says in parentheses: its score, whether
// it came through the graph, whether its snippet was cut.
func (t SearchText) Notes(h *api.SearchHit) string {
	s := t.m.get(msgSearchScore, strconv.FormatFloat(h.Score, 'f', 2, 64))
	if h.ViaGraph {
		s += ", " + t.m.get(msgSearchViaGraph)
	}
	if h.Truncated {
		s += ", " + t.m.get(msgSearchTruncated)
	}
	return s
}

// Why lists why a hit ranked (search explain=true): per field, the query
// terms matched there (a stem or close-spelling match says so), then
// whether the query is the note's title, the title phrases and the graph
// origin.
func (t SearchText) Why(e *api.HitExplanation) []string {
	m := t.m
	var parts []string
	for _, f := range whyFields {
		var terms []string
		for _, tm := range e.Terms {
			if !slices.Contains(tm.Fields, f.name) {
				continue
			}
			term := escape(tm.Term)
			switch tm.Match {
			case "stem":
				term = m.get(msgWhyStem, term)
			case "fuzzy":
				term = m.get(msgWhyFuzzy, term, escapedList(tm.As))
			}
			terms = append(terms, term)
		}
		if len(terms) > 0 {
			parts = append(parts, m.get(msgWhyField, m.get(f.id), strings.Join(terms, ", ")))
		}
	}
	if e.FullTitle {
		parts = append(parts, m.get(msgWhyFullTitle))
	}
	if len(e.TitlePhrase) > 0 {
		parts = append(parts, m.get(msgWhyPhrase, escapedList(e.TitlePhrase)))
	}
	if e.GraphFrom != "" {
		id := msgWhyGraphBoth
		switch e.GraphLink {
		case "out":
			id = msgWhyGraphOut
		case "in":
			id = msgWhyGraphIn
		}
		parts = append(parts, m.get(id, escape(e.GraphFrom)))
	}
	return parts
}

// Unindexed names the files that could not be indexed, the first few of
// them and how many more.
func (t SearchText) Unindexed(paths []string) string {
	var b strings.Builder
	writeListLine(&b, t.m, msgUnindexed, paths, maxUnindexedShown)
	return strings.TrimSuffix(b.String(), "\n")
}
