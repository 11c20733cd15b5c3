package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/evaluate"
	"github.com/vaultmcp/vaultmcp/internal/gcpause"
	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// openVault opens the service and waits for the index, showing progress on a
// terminal. The index snapshot is used and, when this start found changes,
// rewritten as the service closes (after the answer), so that the next
// command starts from it. Logs: see personLogger.
func openVault(ctx context.Context, c *Config, stderr io.Writer, verbose bool) (*vault.Service, error) {
	svc, err := vault.Open(ctx, vault.Options{Dir: c.Vault, Lang: c.Lang, Logger: personLogger(c, stderr, verbose),
		CacheDir: c.CacheDir, StateDir: c.StateDir, CacheWriteOnClose: true, PauseGC: gcpause.DefaultLimit})
	if err != nil {
		return nil, err
	}
	wctx := ctx
	if isTerminal(stderr) {
		wctx = api.WithProgress(ctx, func(done, total int, _ string) {
			if total > 0 {
				fmt.Fprintf(stderr, "\rindexing %d/%d notes", done, total)
			}
		})
	}
	err = svc.Ready(wctx)
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		svc.Close()
		return nil, err
	}
	return svc, nil
}

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c Config
	fs := newFlagSet("search", stderr)
	c.common(fs)
	var req api.SearchRequest
	var tags stringList
	asJSON := fs.Bool("json", false, "print the result as JSON")
	verbose := fs.Bool("v", false, "show warnings (logs) on a terminal too")
	explain := fs.Bool("explain", false, "say why each hit ranked: the query terms matched per field, stem and misspelling matches, title phrases, graph origin; and which profile the vault is in")
	fs.IntVar(&req.Limit, "limit", api.DefaultSearchLimit, fmt.Sprintf("number of results (1-%d)", api.MaxSearchLimit))
	fs.StringVar(&req.Type, "type", "", "only notes of this type")
	fs.StringVar(&req.Folder, "folder", "", "only notes under this folder")
	fs.StringVar(&req.Status, "status", "", "only notes with this status")
	fs.Var(&tags, "tags", "only notes with all these tags (comma-separated)")
	fs.BoolVar(&req.IncludeRaw, "include-raw", false, "also search 01-raw/")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return &exitError{2, err}
	}
	req.Query = strings.Join(pos, " ")
	req.Tags = tags
	req.Explain = *explain
	if strings.TrimSpace(req.Query) == "" {
		return &exitError{2, fmt.Errorf("search: no query (usage: vaultmcp search [--vault DIR] QUERY)")}
	}
	if req.Limit < 1 || req.Limit > api.MaxSearchLimit {
		return &exitError{2, fmt.Errorf("--limit: must be between 1 and %d", api.MaxSearchLimit)}
	}
	// As grep: 0 something found, 1 nothing found, 2 trouble.
	if err := c.check(); err != nil {
		return &exitError{2, err}
	}
	svc, err := openVault(ctx, &c, stderr, *verbose)
	if err != nil {
		return &exitError{2, err}
	}
	defer svc.Close()
	res, err := svc.Search(ctx, req)
	if err != nil {
		return &exitError{2, err}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		if *explain {
			writeProfileLine(stdout, svc)
		}
		printResults(stdout, mcpserver.NewSearchText(c.Lang), res, useColor(stdout), *explain)
	}
	if err == nil && len(res.Results) == 0 {
		err = &exitError{1, errNoMatch}
	}
	return err
}

// printResults renders results for a person: path:line, heading trail, score
// and the snippet indented, in the words of the tool output's language
// (t: --lang or VAULT_LANG, as vault_search's). Vault text (paths, headings,
// snippets, terms) is escaped as the MCP answers escape it, so that it
// cannot drive the terminal.
func printResults(w io.Writer, t mcpserver.SearchText, res *api.SearchResult, color, explain bool) {
	esc := mcpserver.Escape
	bold, dim, reset := "", "", ""
	if color {
		bold, dim, reset = "\033[1m", "\033[2m", "\033[0m"
	}
	if len(res.Results) == 0 {
		fmt.Fprintln(w, t.None(res.Query))
		if len(res.Suggestions) > 0 {
			fmt.Fprintln(w, t.Suggestions(res.Suggestions))
		}
		if res.RawMatches {
			fmt.Fprintln(w, t.RawMatches("--include-raw"))
		}
	}
	for i := range res.Results {
		h := &res.Results[i]
		if i > 0 {
			fmt.Fprintln(w)
		}
		where := strings.Join(h.Headings, " > ")
		if where == "" {
			where = h.Title
		}
		fmt.Fprintf(w, "%s%d. %s:%d%s — %s %s(%s)%s\n", bold, i+1, esc(h.Path), h.Line, reset, esc(where), dim, t.Notes(h), reset)
		if explain && h.Explain != nil {
			// One reason a line (the tool's text joins them in one).
			for _, l := range t.Why(h.Explain) {
				fmt.Fprintf(w, "   %s%s%s\n", dim, l, reset)
			}
		}
		for _, l := range strings.Split(h.Snippet, "\n") {
			fmt.Fprintf(w, "   %s\n", esc(l))
		}
	}
	if len(res.Unindexed) > 0 {
		fmt.Fprintf(w, "\n%s\n", t.Unindexed(res.Unindexed))
	}
}

// firstThree lists the first three of paths, each through esc, and says
// how many more there are.
func firstThree(paths []string, esc func(string) string) string {
	s := esc(strings.Join(paths[:min(len(paths), 3)], ", "))
	if n := len(paths); n > 3 {
		s += fmt.Sprintf(" … and %d more", n-3)
	}
	return s
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c Config
	fs := newFlagSet("eval", stderr)
	c.common(fs)
	queriesPath := fs.String("queries", "", "labelled queries, JSONL: {\"query\": \"...\", \"relevant\": \"path.md\"} a line")
	baseline := fs.Bool("baseline", true, "also rank by grep match count, for comparison")
	verbose := fs.Bool("v", false, "list every query whose note is not first, and show warnings (logs) on a terminal")
	asJSON := fs.Bool("json", false, "print the metrics as JSON")
	if _, err := parseInterleaved(fs, args, stdout); err != nil {
		return &exitError{2, err}
	}
	if *queriesPath == "" {
		return &exitError{2, fmt.Errorf("eval: --queries FILE.jsonl is required")}
	}
	if err := c.check(); err != nil {
		return err
	}
	f, err := os.Open(*queriesPath)
	if err != nil {
		return fmt.Errorf("--queries: %w", err)
	}
	queries, err := evaluate.ReadQueries(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("--queries %s: %w", *queriesPath, err)
	}
	svc, err := openVault(ctx, &c, stderr, *verbose)
	if err != nil {
		return err
	}
	defer svc.Close()
	// A relevant note the vault does not hold (a file of queries run on
	// another vault, a misspelt path) could only count as a miss: the
	// figures would be wrong without a word. Refused, naming them.
	list, err := svc.List(ctx, api.ListRequest{})
	if err != nil {
		return err
	}
	notes := make(map[string]bool, len(list.Notes))
	for _, n := range list.Notes {
		notes[n.Path] = true
	}
	var missing []string
	for _, q := range queries {
		if !notes[q.Relevant] && !slices.Contains(missing, q.Relevant) {
			missing = append(missing, q.Relevant)
		}
	}
	if n := len(missing); n > 0 {
		return fmt.Errorf("--queries %s: %d relevant note(s) are not notes of the vault %s: %s (is it the vault these queries were written for?)",
			*queriesPath, n, c.Vault, firstThree(missing, mcpserver.Escape))
	}
	m, outs, err := evaluate.Run(ctx, queries, evaluate.SearchRanker(svc))
	if err != nil {
		return err
	}
	report := map[string]evaluate.Metrics{"vaultmcp": m}
	if *baseline {
		notes, err := svc.NoteTexts(ctx)
		if err != nil {
			return err
		}
		bm, _, err := evaluate.Run(ctx, queries, evaluate.GrepRanker(notes, index.NewAnalyzer(c.Lang).QueryTerms))
		if err != nil {
			return err
		}
		report["grep"] = bm
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	fmt.Fprintf(stdout, "%d queries\n%-10s %7s %7s %7s\n", m.Queries, "ranker", "hit@1", "hit@10", "MRR@10")
	for _, name := range []string{"vaultmcp", "grep"} {
		if r, ok := report[name]; ok {
			fmt.Fprintf(stdout, "%-10s %7.3f %7.3f %7.3f\n", name, r.Hit1, r.Hit10, r.MRR10)
		}
	}
	if *verbose {
		writeProfileLine(stdout, svc)
		for _, o := range outs {
			if o.Rank != 1 {
				top := ""
				if len(o.Top) > 0 {
					top = o.Top[0]
				}
				fmt.Fprintf(stdout, "rank %2d  %-50q want %s, got %s\n", o.Rank, o.Query.Query, o.Query.Relevant, top)
			}
		}
	}
	return nil
}
