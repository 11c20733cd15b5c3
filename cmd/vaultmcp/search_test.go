package main

import (
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestPrintResultsEscapes: note text shown in the terminal cannot drive it
// (ANSI escapes) or hide text (bidi overrides).
func TestPrintResultsEscapes(t *testing.T) {
	var b strings.Builder
	printResults(&b, &api.SearchResult{Query: "q", Results: []api.SearchHit{{
		Path: "a.md", Line: 3, Title: "A", Score: 1,
		Snippet: "clear\x1b[2Jscreen\nflip\u202egnirts\tkept",
	}}}, false, false)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Fatalf("raw control characters in %q", out)
	}
	for _, want := range []string{`\x1b[2Jscreen`, `\u202e`, "\tkept", "1. a.md:3 — A"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// The path, the heading trail, the suggestions and the files that
	// could not be indexed are vault text too.
	b.Reset()
	printResults(&b, &api.SearchResult{Query: "q", Results: []api.SearchHit{{
		Path: "evil\x1b[2J.md", Line: 1, Headings: []string{"Top\u202e", "Sub\x07"}, Score: 1, Snippet: "x",
	}}, Unindexed: []string{"bad\x1b]0;title\x07.md"}}, false, false)
	printResults(&b, &api.SearchResult{Query: "q", Suggestions: []string{"sug\u202egest"}}, false, false)
	out = b.String()
	if strings.ContainsAny(out, "\x1b\u202e\x07") {
		t.Fatalf("raw control characters in %q", out)
	}
	for _, want := range []string{`1. evil\x1b[2J.md:1 — Top\u202e > Sub\x07 `, `could not be indexed: bad\x1b]0;title\x07.md`, `vault: sug\u202egest`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
