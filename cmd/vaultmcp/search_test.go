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
	}}}, false)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Fatalf("raw control characters in %q", out)
	}
	for _, want := range []string{`\x1b[2Jscreen`, `\u202e`, "\tkept", "1. a.md:3 — A"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
