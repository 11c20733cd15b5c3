package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
)

// TestPrintResultsEscapes: note text shown in the terminal cannot drive it
// (ANSI escapes) or hide text (bidi overrides).
func TestPrintResultsEscapes(t *testing.T) {
	var b strings.Builder
	printResults(&b, mcpserver.NewSearchText(""), &api.SearchResult{Query: "q", Results: []api.SearchHit{{
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
	printResults(&b, mcpserver.NewSearchText(""), &api.SearchResult{Query: "q", Results: []api.SearchHit{{
		Path: "evil\x1b[2J.md", Line: 1, Headings: []string{"Top\u202e", "Sub\x07"}, Score: 1, Snippet: "x",
	}}, Unindexed: []string{"bad\x1b]0;title\x07.md"}}, false, false)
	printResults(&b, mcpserver.NewSearchText(""), &api.SearchResult{Query: "q", Suggestions: []string{"sug\u202egest"}}, false, false)
	out = b.String()
	if strings.ContainsAny(out, "\x1b\u202e\x07") {
		t.Fatalf("raw control characters in %q", out)
	}
	for _, want := range []string{`1. evil\x1b[2J.md:1 — Top\u202e > Sub\x07 `, `Could not index: bad\x1b]0;title\x07.md`, `vault: sug\u202egest`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// --explain says why each hit ranked: here a note found by the text other
// notes use for it, and a hit found through the graph; --json --explain
// carries the same explanation (and --json alone none).
func TestSearchExplain(t *testing.T) {
	vault := copyExampleVault(t)
	out, err := exec.Command(binary, "search", "--vault", vault, "--explain", "--limit", "8", "checkout project").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. 03-projects/checkout-v2/checkout-v2.md", "in link text: checkout, project", "via graph, "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = exec.Command(binary, "search", "--vault", vault, "--json", "--limit", "1", "exponential backof").Output()
	if err != nil || strings.Contains(string(out), `"explain"`) {
		t.Fatalf("--json without --explain: %v\n%s", err, out)
	}
	out, err = exec.Command(binary, "search", "--vault", vault, "--json", "--explain", "--limit", "1", "exponential backof").Output()
	if err != nil {
		t.Fatal(err)
	}
	var res api.SearchResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != 1 || res.Results[0].Explain == nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	want := api.TermMatch{Term: "backof", Fields: []string{"title", "prose"}, Match: "fuzzy", As: []string{"backoff"}}
	if terms := res.Results[0].Explain.Terms; len(terms) != 2 || !reflect.DeepEqual(terms[1], want) {
		t.Fatalf("explained %+v, want the second term %+v", terms, want)
	}
}

// The explanation lines are the tool's reasons, one a line, in the
// language of the tool output.
func TestPrintResultsExplainLines(t *testing.T) {
	res := &api.SearchResult{Query: "q", Results: []api.SearchHit{{Path: "b.md", Line: 1, Title: "B", Score: 2, ViaGraph: true, Snippet: "x",
		Explain: &api.HitExplanation{
			Terms: []api.TermMatch{
				{Term: "front", Fields: []string{"title", "link_text"}, Match: "exact"},
				{Term: "matters", Fields: []string{"title"}, Match: "stem"},
				{Term: "frontmater", Fields: []string{"prose"}, Match: "fuzzy", As: []string{"frontmatter"}},
			},
			TitlePhrase: []string{"front matter"},
			GraphFrom:   "a.md", GraphLink: "in",
		}}}}
	for lang, want := range map[string]string{
		"en": "1. b.md:1 — B (score 2.00, via graph)\n" +
			"   in title: front, matters (stem)\n" +
			"   in link text: front\n" +
			"   in prose: frontmater (as frontmatter)\n" +
			"   title phrase: front matter\n" +
			"   via graph, links to a.md\n" +
			"   x\n",
		"pt": "1. b.md:1 — B (pontuação 2.00, via grafo)\n" +
			"   em título: front, matters (radical)\n" +
			"   em texto de link: front\n" +
			"   em texto: frontmater (como frontmatter)\n" +
			"   frase do título: front matter\n" +
			"   via grafo, com link para a.md\n" +
			"   x\n",
	} {
		var b strings.Builder
		printResults(&b, mcpserver.NewSearchText(lang), res, false, true)
		if b.String() != want {
			t.Errorf("%s:\n%s\nwant\n%s", lang, b.String(), want)
		}
	}
}

// A search that left matching raw captures out says how to see them, with
// the command line's flag.
func TestPrintResultsRawMatches(t *testing.T) {
	var b strings.Builder
	printResults(&b, mcpserver.NewSearchText("en"), &api.SearchResult{Query: "standup", Results: []api.SearchHit{}, RawMatches: true}, false, false)
	want := "No results for \"standup\".\nRaw captures under 01-raw/ match: search again with --include-raw to see them.\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// Under --lang pt (or VAULT_LANG=pt) the command line says what
// vault_search says in Portuguese.
func TestSearchOutputInLanguage(t *testing.T) {
	vault := copyExampleVault(t)
	out, _ := exec.Command(binary, "search", "--vault", vault, "--lang", "pt", "zzzqqqxx").Output()
	if !strings.HasPrefix(string(out), `Nenhum resultado para "zzzqqqxx".`) {
		t.Errorf("no match under --lang pt:\n%s", out)
	}
	out, err := exec.Command(binary, "search", "--vault", vault, "--lang", "pt", "--limit", "1", "retry backoff").Output()
	if err != nil || !strings.Contains(string(out), "(pontuação ") {
		t.Errorf("a hit under --lang pt: %v\n%s", err, out)
	}
}

// A search that finds nothing still names the files that could not be
// indexed (the note looked for may be one of them), as vault_search does;
// past three names, how many more.
func TestSearchNoMatchNamesUnindexed(t *testing.T) {
	vault := t.TempDir()
	files := map[string]string{
		"a.md": "# Alpha\n\nsome words about retries\n",
		// ':' is refused by the gatekeeper: these files are not indexed.
		"b: one.md": "x\n", "c: two.md": "x\n", "d: three.md": "x\n", "e: four.md": "x\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(vault, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, query := range []string{"zzzqqq", "retries"} {
		cmd := exec.Command(binary, "search", "--vault", vault, query)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		want := "Could not index: b: one.md, c: two.md, d: three.md … and 1 more\n"
		if !strings.HasSuffix(string(out), want) {
			t.Errorf("search %q (exit %d): output lacks the footer %q:\n%s", query, code, want, out)
		}
		if query == "zzzqqq" && (code != 1 || !strings.HasPrefix(string(out), `No results for "zzzqqq".`)) {
			t.Errorf("search %q: exit %d, output:\n%s", query, code, out)
		}
	}
}

// TestEvalRefusesUnknownRelevant: a labelled query whose relevant note the
// vault does not hold (queries written for another vault, a misspelt path)
// is refused, naming the note, instead of counting as a miss and printing
// figures that are wrong without a word.
func TestEvalRefusesUnknownRelevant(t *testing.T) {
	vault := t.TempDir()
	if err := os.WriteFile(filepath.Join(vault, "alpha.md"), []byte("# Alpha\n\nretries with backoff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := filepath.Join(t.TempDir(), "q.jsonl")
	write := func(lines string) {
		if err := os.WriteFile(queries, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"query": "retries", "relevant": "alpha.md"}` + "\n")
	out, errOut, code := runBinary(t, nil, "eval", "--vault", vault, "--queries", queries)
	if code != 0 || !strings.Contains(out, "1 queries") || !strings.Contains(out, "vaultmcp     1.000   1.000   1.000") {
		t.Fatalf("eval: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	write(`{"query": "retries", "relevant": "alpha.md"}` + "\n" + `{"query": "backoff", "relevant": "Alpha.md"}` + "\n" +
		`{"query": "other", "relevant": "02-wiki/missing.md"}` + "\n")
	out, errOut, code = runBinary(t, nil, "eval", "--vault", vault, "--queries", queries)
	want := `2 relevant note(s) are not notes of the vault ` + vault + `: Alpha.md, 02-wiki/missing.md (is it the vault`
	if code != 1 || out != "" || !strings.Contains(errOut, want) {
		t.Fatalf("eval: exit %d, stdout %q, stderr %q, want %q", code, out, errOut, want)
	}
}
