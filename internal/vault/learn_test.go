package vault

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// learnNow is the clock of every learning test: 29 Nov 2026, 10:30 UTC.
var learnNow = time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)

// learnVault is a numbered vault with two domains and notes built so that
// each decision of vault_learn has a query that leads to it.
var learnVault = map[string]string{
	"00-index/index-knowledge.md": "---\ntype: moc\n---\n# Knowledge index\n\n- [[go-moc]] — Go\n- [[db-moc]] — Databases\n",
	"02-wiki/go/go-moc.md": "---\ntype: moc\nupdated: 2026-01-01\n---\n# Go\n\n## Notes\n\n- [[retry-backoff]] — retries\n- [[context-cancel]] — cancellation\n\n" +
		"## See also\n\n- [[db-moc]]\n\nZymurgy fermentation brewing.\n",
	"02-wiki/go/retry-backoff.md":  "---\ntype: wiki\ntags: [go, resilience]\nupdated: 2026-01-01\n---\n# Retry with exponential backoff\n\nRetry transient failures with exponential backoff and jitter.\n\n## Jitter\n\nFull jitter spreads the retries of many clients.\n",
	"02-wiki/go/context-cancel.md": "---\ntype: wiki\ntags: [go]\n---\n# Context cancellation\n\nPass ctx first; check ctx.Done in loops.\n",
	"02-wiki/go/gc.md":             "---\ntype: wiki\ntags: [go]\n---\n# GC tuning\n\nQuokka wallaby thresholds need tuning.\n",
	"02-wiki/db/db-moc.md":         "---\ntype: moc\n---\n# Databases\n\n## Notes\n\n- [[pool]] — pool sizing\n- [[vacuum]] — vacuum\n",
	"02-wiki/db/pool.md":           "---\ntype: wiki\ntags: [postgres]\n---\n# Connection pool sizing\n\nSize the pool from the number of cores.\n",
	"02-wiki/db/vacuum.md":         "---\ntype: wiki\ntags: [postgres]\n---\n# Vacuum\n\nQuokka wallaby thresholds need tuning.\n",
	"03-projects/billing.md":       "---\ntype: project\n---\n# Billing\n\nThe ledger reconciler invoices customers nightly.\n",
	"01-raw/inbox/idea.md":         "# Idea\n\nA raw idea.\n",
	"99-archive/old.md":            "# Old\n\nOld advice.\n",
	"_templates/wiki.md":           "---\ntype: wiki\ntags: [draft]\nstatus: draft\ncreated: \"{{date}}\"\n---\n# {{title}}\n\n## Details\n\n## Links\n",
}

// with returns a copy of files with changes applied ("" removes a file).
func with(files map[string]string, changes map[string]string) map[string]string {
	out := make(map[string]string, len(files)+len(changes))
	for k, v := range files {
		out[k] = v
	}
	for k, v := range changes {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// learnOpts configure a test vault.
type learnOpts struct {
	lang  string
	noGit bool
	setup func(dir string) // runs before the first commit and the open
}

// openLearn writes files into a git repository (one commit) and opens it
// with the learning clock.
func openLearn(t *testing.T, files map[string]string, o learnOpts) (string, *Service) {
	t.Helper()
	dir := writeVault(t, files)
	if o.setup != nil {
		o.setup(dir)
	}
	if o.noGit {
		t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	} else {
		gitInit(t, dir)
	}
	s, err := Open(context.Background(), Options{Dir: dir, Lang: o.lang, Now: func() time.Time { return learnNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, s
}

func learn(t *testing.T, s *Service, req api.LearnRequest) *api.LearnResult {
	t.Helper()
	res, err := s.Learn(context.Background(), req)
	if err != nil {
		t.Fatalf("Learn(%q): %v", req.Title, err)
	}
	return res
}

func headCommit(t *testing.T, dir string) string {
	return strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
}

func exists(dir, rel string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil
}

func hasWarning(res *api.LearnResult, parts ...string) bool {
	for _, w := range res.Warnings {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w, p)
		}
		if all {
			return true
		}
	}
	return false
}

func TestSlugify(t *testing.T) {
	cases := map[string]string{
		"Retry with backoff":            "retry-with-backoff",
		"  --Hello, World!--  ":         "hello-world",
		"Café à la crème":               "cafe-a-la-creme",
		"Ação e reação":                 "acao-e-reacao",
		"Straße, Æsir, Øre, Łódź":       "strasse-aesir-ore-lodz",
		"C++ & Go: 2 tips":              "c-go-2-tips",
		"日本語":                           "",
		"!!!":                           "",
		"x" + strings.Repeat("-y", 60):  "x" + strings.Repeat("-y", 39),
		strings.Repeat("ab ", 40) + "c": strings.TrimRight(strings.Repeat("ab-", 27), "-"),
	}
	for in, want := range cases {
		got := slugify(in)
		if got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
		if len(got) > maxSlugLen || strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Errorf("slugify(%q) = %q breaks the rules", in, got)
		}
	}
}

func TestLearnValidation(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	head := headCommit(t, dir)
	ok := api.LearnRequest{Title: "T", Insight: "I", Context: "C", Domain: "go"}
	mod := func(f func(r *api.LearnRequest)) api.LearnRequest {
		r := ok
		f(&r)
		return r
	}
	cases := []struct {
		req         api.LearnRequest
		code, field string
		msg         string
	}{
		{mod(func(r *api.LearnRequest) { r.Title = " \n\t" }), api.CodeInvalidArgument, "title", "must not be empty"},
		{mod(func(r *api.LearnRequest) { r.Title = "!!! ???" }), api.CodeInvalidArgument, "title", "letter or digit"},
		{mod(func(r *api.LearnRequest) { r.Title = "日本語のメモ" }), api.CodeInvalidArgument, "title", "letter or digit"},
		{mod(func(r *api.LearnRequest) { r.Title = "bell\a" }), api.CodeInvalidArgument, "title", "control"},
		{mod(func(r *api.LearnRequest) { r.Title = "rlo\u202e" }), api.CodeInvalidArgument, "title", "control"},
		{mod(func(r *api.LearnRequest) { r.Title = strings.Repeat("t", 201) }), api.CodeInvalidArgument, "title", "at most 200"},
		{mod(func(r *api.LearnRequest) { r.Title = "bad \xff" }), api.CodeInvalidArgument, "title", "UTF-8"},
		{mod(func(r *api.LearnRequest) { r.Insight = "  " }), api.CodeInvalidArgument, "insight", "must not be empty"},
		{mod(func(r *api.LearnRequest) { r.Insight = "nul\x00" }), api.CodeInvalidArgument, "insight", "control"},
		{mod(func(r *api.LearnRequest) { r.Context = "esc\x1b[2J" }), api.CodeInvalidArgument, "context", "control"},
		{mod(func(r *api.LearnRequest) { r.Domain = "" }), api.CodeInvalidArgument, "domain", "must not be empty"},
		{mod(func(r *api.LearnRequest) { r.Domain = "my domain" }), api.CodeInvalidArgument, "domain", "without spaces"},
		{mod(func(r *api.LearnRequest) { r.Domain = "go/sub" }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = `a\b` }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = "c:" }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = "what?" }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = ".." }), api.CodeInvalidArgument, "domain", "dot"},
		{mod(func(r *api.LearnRequest) { r.Domain = ".obsidian" }), api.CodeInvalidArgument, "domain", "dot"},
		{mod(func(r *api.LearnRequest) { r.Domain = strings.Repeat("d", 65) }), api.CodeInvalidArgument, "domain", "at most 64"},
		{mod(func(r *api.LearnRequest) { r.Domain, r.ConfirmNewDomain = "node_modules", true }), "PROTECTED_PATH", "domain", "node_modules"},
		{mod(func(r *api.LearnRequest) { r.Domain, r.ConfirmNewDomain = "_Templates", true }), "PROTECTED_PATH", "domain", "_templates"},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"ok", " "} }), api.CodeInvalidArgument, "tags", "empty tag"},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"two words"} }), api.CodeInvalidArgument, "tags", "one word"},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"a,b"} }), api.CodeInvalidArgument, "tags", "one word"},
		{mod(func(r *api.LearnRequest) { r.Tags = make([]string, 51) }), api.CodeInvalidArgument, "tags", "at most 50"},
		{mod(func(r *api.LearnRequest) { r.Links = []string{"[[]]"} }), api.CodeInvalidArgument, "links", "empty link"},
		{mod(func(r *api.LearnRequest) { r.Links = []string{"a]]b"} }), api.CodeInvalidArgument, "links", "note name"},
		{mod(func(r *api.LearnRequest) { r.Project = "p\x00" }), api.CodeInvalidArgument, "project", "control"},
		{mod(func(r *api.LearnRequest) { r.Domain = "ops" }), api.CodeNeedsConfirm, "confirm_new_domain", `"ops" would be a new domain (existing: db, go)`},
	}
	for _, c := range cases {
		_, err := s.Learn(context.Background(), c.req)
		var ae *api.Error
		if err == nil || api.CodeOf(err) != c.code || !errors.As(err, &ae) || ae.Field != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v, want %s %s %q", c.req, err, c.code, c.field, c.msg)
		}
	}
	if headCommit(t, dir) != head || exists(dir, "04-daily") || exists(dir, "02-wiki/ops") {
		t.Fatal("a refused learning changed the vault")
	}
	if out := gitRun(t, dir, "status", "--porcelain"); out != "" {
		t.Fatalf("work tree changed:\n%s", out)
	}
}

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
	}
	for _, c := range cases {
		v := decide(c.hits, learnSearchLimit, c.in, info)
		if v.code != c.code || v.candidate != c.cand || math.Abs(v.ratio-c.ratio) > 1e-9 || !strings.Contains(v.reason, c.why) {
			t.Errorf("%s: %+v, want %s %s %v %q", c.name, v, c.code, c.cand, c.ratio, c.why)
		}
	}
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

// TestLearnCreatesFromTemplate checks a new note byte for byte (template
// filled, frontmatter merged, insight after the title, links in the
// template's Links section), its MOC line, and the new daily note.
func TestLearnCreatesFromTemplate(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	res := learn(t, s, api.LearnRequest{
		Title: "Xylophone quintessence", Insight: "Flibbertigibbet gobbledygook. A second sentence.", Context: "found while testing",
		Domain: "go", Project: "billing", Tags: []string{"#Pattern", "draft"}, Links: []string{"[[retry-backoff]]", "context-cancel#Loops", "missing-note"},
	})
	want := "---\ntype: wiki\ntags: [draft, Pattern]\nstatus: draft\ncreated: 2026-11-29\n---\n# Xylophone quintessence\n\n" +
		"Flibbertigibbet gobbledygook. A second sentence.\n\n**Context:** found while testing\n\n## Details\n\n## Links\n\n" +
		"- [[retry-backoff]]\n- [[context-cancel#Loops]]\n- [[missing-note]]\n"
	if got := read(t, dir, res.Path); got != want {
		t.Fatalf("note:\n%s\nwant:\n%s", got, want)
	}
	if res.SHA256 != sha256Hex([]byte(want)) {
		t.Errorf("sha256 %s", res.SHA256)
	}
	moc := read(t, dir, "02-wiki/go/go-moc.md")
	wantMOC := strings.Replace(strings.Replace(learnVault["02-wiki/go/go-moc.md"], "updated: 2026-01-01", "updated: 2026-11-29", 1),
		"- [[context-cancel]] — cancellation\n", "- [[context-cancel]] — cancellation\n- [[xylophone-quintessence]] — Flibbertigibbet gobbledygook.\n", 1)
	if moc != wantMOC {
		t.Errorf("MOC:\n%s\nwant:\n%s", moc, wantMOC)
	}
	daily := "---\ntype: daily\ntags: []\ncreated: 2026-11-29\n---\n## Captures\n\n- 10:30 [[xylophone-quintessence]] (pattern, billing)\n"
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != daily {
		t.Errorf("daily:\n%s\nwant:\n%s", got, daily)
	}
	if !slices.Equal(res.Propagated, []string{"02-wiki/go/go-moc.md", "04-daily/2026-11-29.md"}) {
		t.Errorf("propagated %v", res.Propagated)
	}
	if !hasWarning(res, "[[missing-note]]") || hasWarning(res, "retry-backoff") || hasWarning(res, "context-cancel") {
		t.Errorf("warnings %v", res.Warnings)
	}
	if read(t, dir, "00-index/index-knowledge.md") != learnVault["00-index/index-knowledge.md"] {
		t.Error("the knowledge index changed for an existing domain")
	}
	// The new note is searchable at once, and its MOC line resolves to it.
	if r := search(t, s, api.SearchRequest{Query: "flibbertigibbet"}); len(r.Results) == 0 || r.Results[0].Path != res.Path {
		t.Errorf("not searchable: %v", paths(r))
	}
	if bl, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: res.Path}); err != nil || len(bl.Backlinks) != 2 {
		t.Errorf("backlinks of the new note: %+v %v", bl, err)
	}
	for _, diffPart := range []string{"+++ b/02-wiki/go/xylophone-quintessence.md", "+- [[xylophone-quintessence]]", "+++ b/04-daily/2026-11-29.md"} {
		if !strings.Contains(res.Diff, diffPart) {
			t.Errorf("diff lacks %q", diffPart)
		}
	}
}

func TestFillTemplate(t *testing.T) {
	now := time.Date(2026, 3, 7, 9, 5, 4, 0, time.UTC)
	cases := map[string]string{
		"# {{title}} / {{Title}} / {{ title }}": "# T: x / T: x / T: x",
		"{{date}} {{time}}":                     "2026-03-07 09:05",
		"{{date:YYYY/MM/DD}} {{DATE:D.M.YY}}":   "2026/03/07 7.3.26",
		"{{date:dddd, MMMM D [at] HH:mm:ss}}":   "Saturday, March 7 at 09:05:04",
		"{{time:h:mm A}} {{date:ddd MMM}}":      "9:05 AM Sat Mar",
		"{{unknown}} {{date:[YYYY]}} {{":        "{{unknown}} YYYY {{",
	}
	for in, want := range cases {
		if got := fillTemplate(in, "T: x", now, false); got != want {
			t.Errorf("fillTemplate(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fillTemplate("title: {{title}}", `a "b": c`, now, true); got != `title: "a \"b\": c"` {
		t.Errorf("quoted title: %s", got)
	}
}

// TestLearnTemplateEdgeCases: a title that breaks the template's YAML when
// filled in plain, and a template without a title heading or frontmatter.
func TestLearnTemplateEdgeCases(t *testing.T) {
	files := with(learnVault, map[string]string{"_templates/wiki.md": "---\ntitle: {{title}}\naliases: []\n---\n# {{title}}\n"})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Xylophonic: quibbles", Insight: "Flibbertigibbet.", Domain: "go"})
	want := "---\ntitle: 'Xylophonic: quibbles'\naliases: []\ntype: wiki\ntags: []\ncreated: 2026-11-29\n---\n# Xylophonic: quibbles\n\nFlibbertigibbet.\n"
	if got := read(t, dir, res.Path); got != want || res.Path != "02-wiki/go/xylophonic-quibbles.md" || len(res.Warnings) != 0 {
		t.Fatalf("%s %v:\n%s", res.Path, res.Warnings, got)
	}

	files = with(learnVault, map[string]string{"_templates/wiki.md": "Intro line {{date:YYYY}}\n\n## Notes\n"})
	dir, s = openLearn(t, files, learnOpts{})
	res = learn(t, s, api.LearnRequest{Title: "Gobbledygook", Insight: "Flibbertigibbet.", Context: "ctx", Domain: "go", Links: []string{"gc"}})
	want = "---\ntype: wiki\ntags: []\ncreated: 2026-11-29\n---\n# Gobbledygook\n\nFlibbertigibbet.\n\n**Context:** ctx\n\nIntro line 2026\n\n## Notes\n\n## Links\n\n- [[gc]]\n"
	if got := read(t, dir, res.Path); got != want {
		t.Fatalf("no heading in the template:\n%s\nwant:\n%s", got, want)
	}
}

func TestLearnNewDomain(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	head := headCommit(t, dir)
	req := api.LearnRequest{Title: "Liveness probes", Insight: "Liveness probes must not check dependencies. Readiness probes may.", Context: "outage", Domain: "k8s"}
	_, err := s.Learn(context.Background(), req)
	if api.CodeOf(err) != api.CodeNeedsConfirm || !strings.Contains(err.Error(), "existing: db, go") || !strings.Contains(err.Error(), "confirm_new_domain") {
		t.Fatalf("new domain without confirmation: %v", err)
	}
	if headCommit(t, dir) != head || exists(dir, "02-wiki/k8s") {
		t.Fatal("refusal wrote something")
	}
	req.ConfirmNewDomain = true
	res := learn(t, s, req)
	if res.Path != "02-wiki/k8s/liveness-probes.md" || res.Mode != api.LearnCreated || res.Domain != "k8s" {
		t.Fatalf("result %+v", res)
	}
	wantMOC := "---\ntype: moc\ntags: [k8s]\ncreated: 2026-11-29\n---\n# k8s\n\n## Notes\n\n- [[liveness-probes]] — Liveness probes must not check dependencies.\n"
	if got := read(t, dir, "02-wiki/k8s/k8s-moc.md"); got != wantMOC {
		t.Errorf("MOC:\n%s\nwant:\n%s", got, wantMOC)
	}
	if got := read(t, dir, knowledgeIndex); got != learnVault[knowledgeIndex]+"- [[k8s-moc]] — k8s\n" {
		t.Errorf("index:\n%s", got)
	}
	want := []string{"00-index/index-knowledge.md", "02-wiki/k8s/k8s-moc.md", "02-wiki/k8s/liveness-probes.md", "04-daily/2026-11-29.md"}
	if !slices.Equal(res.Files, want) || !slices.Equal(lastCommitFiles(t, dir), want) {
		t.Errorf("files %v, commit %v", res.Files, lastCommitFiles(t, dir))
	}
	if !slices.Equal(res.Propagated, []string{"02-wiki/k8s/k8s-moc.md", knowledgeIndex, "04-daily/2026-11-29.md"}) {
		t.Errorf("propagated %v", res.Propagated)
	}
	if n := strings.Count(gitRun(t, dir, "log", "--format=%s", head+"..HEAD"), "\n"); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	// The domain exists now: another learning needs no confirmation, and a
	// different letter case files it under the same folder.
	res = learn(t, s, api.LearnRequest{Title: "Zeppelin timeouts", Insight: "Quixotic zeppelin timeouts.", Domain: "K8S"})
	if res.Path != "02-wiki/k8s/zeppelin-timeouts.md" || res.Domain != "k8s" || slices.Contains(res.Propagated, knowledgeIndex) {
		t.Errorf("second learning %+v", res)
	}
	if strings.Count(read(t, dir, knowledgeIndex), "k8s-moc") != 1 {
		t.Error("index line duplicated")
	}
}

// TestLearnAppendVersusCreate learns near-duplicates: a repeat of a
// learning in the same domain is appended to the note it created, a
// similar one filed in another domain without a shared tag gets its own
// note, and a retried call adds nothing.
func TestLearnAppendVersusCreate(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	first := learn(t, s, api.LearnRequest{Title: "Quorum leases", Insight: "Hold one quorum lease per leader so that two leaders never write at once.", Context: "payments", Domain: "go", Tags: []string{"decision"}})
	if first.Mode != api.LearnCreated || first.Path != "02-wiki/go/quorum-leases.md" {
		t.Fatalf("first %+v", first)
	}
	second := learn(t, s, api.LearnRequest{Title: "Quorum lease renewal", Insight: "Renew the quorum lease before it lapses, at a third of its term.", Context: "review", Domain: "go", Links: []string{"retry-backoff"}})
	if second.Mode != api.LearnAppended || second.Path != first.Path || second.Decision != api.LearnDuplicate {
		t.Fatalf("near-duplicate in the same domain: %+v", second)
	}
	note := read(t, dir, first.Path)
	section := "\n## 2026-11-29 — Quorum lease renewal\n\nRenew the quorum lease before it lapses, at a third of its term.\n\n**Context:** review\n\n**Links:** [[retry-backoff]]\n"
	if !strings.HasSuffix(note, section) || !strings.Contains(note, "Hold one quorum lease") {
		t.Fatalf("appended note:\n%s", note)
	}
	if strings.Count(read(t, dir, "02-wiki/go/go-moc.md"), "quorum-leases") != 1 {
		t.Error("an appended learning changed the MOC")
	}
	daily := read(t, dir, "04-daily/2026-11-29.md")
	if strings.Count(daily, "[[quorum-leases]]") != 2 || !strings.Contains(daily, "(decision)") {
		t.Errorf("daily:\n%s", daily)
	}
	// A retried call: the note already holds the insight, nothing changes.
	head := headCommit(t, dir)
	again := learn(t, s, api.LearnRequest{Title: "Quorum lease renewal", Insight: "Renew the quorum lease before it lapses, at a third of its term.", Context: "review", Domain: "go"})
	if again.Committed || len(again.Files) != 0 || again.Path != first.Path || !hasWarning(again, "already holds this insight") || headCommit(t, dir) != head {
		t.Fatalf("retry: %+v", again)
	}
	if got := read(t, dir, "04-daily/2026-11-29.md"); strings.Count(got, "[[quorum-leases]]") != 2 {
		t.Errorf("retry duplicated the capture:\n%s", got)
	}
	third := learn(t, s, api.LearnRequest{Title: "Quorum leases", Insight: "Hold one quorum lease per leader so that two leaders never write at once.", Context: "payments", Domain: "db"})
	if third.Mode != api.LearnCreated || third.Decision != api.LearnNoOverlap || third.Path != "02-wiki/db/quorum-leases.md" {
		t.Fatalf("same words in another domain: %+v", third)
	}
	// The MOC line leads to this note (the one in the MOC's own folder).
	if !strings.Contains(read(t, dir, "02-wiki/db/db-moc.md"), "- [[quorum-leases]] — Hold one quorum lease") {
		t.Errorf("db MOC:\n%s", read(t, dir, "02-wiki/db/db-moc.md"))
	}
}

// mkfifo makes a named pipe with the system's mkfifo (the test is skipped
// where there is none).
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if _, err := exec.LookPath("mkfifo"); err != nil {
		t.Skip("no mkfifo on this system")
	}
	if out, err := exec.Command("mkfifo", p).CombinedOutput(); err != nil {
		t.Fatalf("mkfifo: %v %s", err, out)
	}
}

// TestLearnEscapeRoutes puts a real FIFO, symbolic link, folder or hard link
// where the note would go, or makes the chosen note unwritable: the insight
// always lands in a note, and a warning says where.
func TestLearnEscapeRoutes(t *testing.T) {
	const primary = "02-wiki/go/zeppelin-quirks.md"
	const dated = "02-wiki/go/zeppelin-quirks-2026-11-29.md"
	req := api.LearnRequest{Title: "Zeppelin quirks", Insight: "Quixotic zeppelins hover sideways.", Context: "a drill", Domain: "go"}
	abs := func(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	// A project note that matches the learning best, so that the note with
	// the slug's name is not the one the decision picks.
	const zeppelins = "# Zeppelin quirks in the airship project\n\nQuixotic zeppelins hover sideways, zeppelin quirks everywhere.\n"
	cases := []struct {
		name  string
		files map[string]string
		req   api.LearnRequest
		setup func(t *testing.T, dir string)
		path  string
		mode  string
		warn  []string
		check func(t *testing.T, dir string)
	}{
		{
			name:  "a note with the slug's name exists",
			files: with(learnVault, map[string]string{primary: "# Unrelated\n\nNothing alike here.\n"}),
			req:   req, path: primary, mode: api.LearnAppended,
			warn: []string{"a note named zeppelin-quirks already exists", primary, "appended"},
			check: func(t *testing.T, dir string) {
				if got := read(t, dir, primary); got != "# Unrelated\n\nNothing alike here.\n\n## 2026-11-29 — Zeppelin quirks\n\nQuixotic zeppelins hover sideways.\n\n**Context:** a drill\n" {
					t.Errorf("appended:\n%s", got)
				}
			},
		},
		{
			name:  "the note with the slug's name is read-only",
			files: with(learnVault, map[string]string{primary: "# Unrelated\n\nNothing alike here.\n"}),
			setup: func(t *testing.T, dir string) { os.Chmod(abs(dir, primary), 0o444) },
			req:   req, path: dated, mode: api.LearnCreated,
			warn: []string{"already exists (" + primary + ") but could not be written", "PERMISSION_DENIED", dated},
		},
		{
			name:  "the duplicate is read-only",
			files: learnVault,
			setup: func(t *testing.T, dir string) { os.Chmod(abs(dir, "02-wiki/db/pool.md"), 0o444) },
			req:   api.LearnRequest{Title: "Pool from cores", Insight: "Size the pool from the number of cores, plus one.", Domain: "db"},
			path:  "02-wiki/db/pool-from-cores-2026-11-29.md", mode: api.LearnCreated,
			warn: []string{"02-wiki/db/pool.md could not be written", "PERMISSION_DENIED", "02-wiki/db/pool-from-cores-2026-11-29.md"},
			check: func(t *testing.T, dir string) {
				if read(t, dir, "02-wiki/db/pool.md") != learnVault["02-wiki/db/pool.md"] {
					t.Error("the read-only note changed")
				}
				if !strings.Contains(read(t, dir, "02-wiki/db/db-moc.md"), "- [[pool-from-cores-2026-11-29]] — Size the pool") {
					t.Error("the dated note is not in the MOC")
				}
			},
		},
		{
			name:  "the duplicate has another hard link",
			files: learnVault,
			setup: func(t *testing.T, dir string) {
				if err := os.Link(abs(dir, "02-wiki/db/pool.md"), filepath.Join(t.TempDir(), "pool-elsewhere.md")); err != nil {
					t.Skip("no hard links here:", err)
				}
			},
			req:  api.LearnRequest{Title: "Pool from cores", Insight: "Size the pool from the number of cores, plus one.", Domain: "db"},
			path: "02-wiki/db/pool-from-cores-2026-11-29.md", mode: api.LearnCreated,
			warn: []string{"02-wiki/db/pool.md could not be written", "hard links", "02-wiki/db/pool-from-cores-2026-11-29.md"},
		},
		{
			name: "a FIFO at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) { mkfifo(t, abs(dir, primary)) },
			warn:  []string{primary + " is taken by something that is not a note", "FIFO", dated},
			check: func(t *testing.T, dir string) {
				if fi, err := os.Lstat(abs(dir, primary)); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
					t.Errorf("the FIFO was touched: %v", err)
				}
			},
		},
		{
			name: "a symbolic link at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink("gc.md", abs(dir, primary)); err != nil {
					t.Skip("no symbolic links here:", err)
				}
			},
			warn: []string{primary + " is taken by something that is not a note", "symbolic link", dated},
			check: func(t *testing.T, dir string) {
				if read(t, dir, "02-wiki/go/gc.md") != learnVault["02-wiki/go/gc.md"] {
					t.Error("the link's target changed")
				}
			},
		},
		{
			name: "a folder at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) { os.Mkdir(abs(dir, primary), 0o755) },
			warn:  []string{primary + " is taken by something that is not a note", "folder", dated},
		},
		{
			name: "a hard link at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) {
				if err := os.Link(abs(dir, "03-projects/billing.md"), abs(dir, primary)); err != nil {
					t.Skip("no hard links here:", err)
				}
			},
			warn: []string{primary + " is taken by something that is not a note", "hard links", dated},
			check: func(t *testing.T, dir string) {
				if read(t, dir, "03-projects/billing.md") != learnVault["03-projects/billing.md"] {
					t.Error("the other name of the hard link changed")
				}
			},
		},
		{
			name:  "the dated name is taken too",
			files: with(learnVault, map[string]string{dated: "# Taken\n"}),
			setup: func(t *testing.T, dir string) {
				mkfifo(t, abs(dir, primary))
				os.MkdirAll(abs(dir, "02-wiki/go/zeppelin-quirks-2026-11-29-2.md"), 0o755)
			},
			req: req, path: "02-wiki/go/zeppelin-quirks-2026-11-29-3.md", mode: api.LearnCreated,
			warn: []string{"02-wiki/go/zeppelin-quirks-2026-11-29-3.md"},
			check: func(t *testing.T, dir string) {
				if read(t, dir, dated) != "# Taken\n" {
					t.Error("the note at the dated name changed")
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, s := openLearn(t, with(c.files, map[string]string{"03-projects/airships.md": zeppelins}), learnOpts{setup: func(dir string) {
				if c.setup != nil {
					c.setup(t, dir)
				}
			}})
			res := learn(t, s, c.req)
			if res.Path != c.path || res.Mode != c.mode || !res.Committed {
				t.Fatalf("went to %s (%s), want %s (%s); warnings %v", res.Path, res.Mode, c.path, c.mode, res.Warnings)
			}
			if !hasWarning(res, c.warn...) {
				t.Errorf("warnings %q lack %q", res.Warnings, c.warn)
			}
			if !strings.Contains(read(t, dir, c.path), c.req.Insight) {
				t.Errorf("the insight is not in %s", c.path)
			}
			if files := lastCommitFiles(t, dir); !slices.Contains(files, c.path) || !slices.Equal(files, res.Files) {
				t.Errorf("commit %v, result %v", files, res.Files)
			}
			if c.check != nil {
				c.check(t, dir)
			}
		})
	}
}

// TestLearnConcurrent learns the same title from many goroutines of one
// server: every insight is kept, in one note, each in its own commit.
func TestLearnConcurrent(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	head := headCommit(t, dir)
	const n = 4
	insights := []string{"Zephyr alpha quibbles.", "Zephyr bravo quibbles.", "Zephyr charlie quibbles.", "Zephyr delta quibbles."}
	var wg sync.WaitGroup
	results := make([]*api.LearnResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.Learn(context.Background(), api.LearnRequest{Title: "Zephyr quibbles", Insight: insights[i], Domain: "go"})
		}()
	}
	wg.Wait()
	created := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if r.Mode == api.LearnCreated {
			created++
		}
		if r.Path != "02-wiki/go/zephyr-quibbles.md" || !r.Committed {
			t.Errorf("learning %d: %+v", i, r)
		}
	}
	note := read(t, dir, "02-wiki/go/zephyr-quibbles.md")
	for _, ins := range insights {
		if strings.Count(note, ins) != 1 {
			t.Errorf("%q is in the note %d times:\n%s", ins, strings.Count(note, ins), note)
		}
	}
	if created != 1 {
		t.Errorf("%d learnings created the note", created)
	}
	if got := strings.Count(gitRun(t, dir, "log", "--format=%s", head+"..HEAD"), "docs(vault): Zephyr quibbles"); got != n {
		t.Errorf("%d commits, want %d", got, n)
	}
}

// TestLearnBareVault: a vault without 00-index, 04-daily, _templates or
// MOCs gets what a learning needs, and never an error.
func TestLearnBareVault(t *testing.T) {
	dir, s := openLearn(t, map[string]string{"02-wiki/go/a.md": "# A\n\nSome text.\n", "notes.md": "# Loose\n"}, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Quibble", Insight: "Zephyrs quibble.", Domain: "go"})
	if res.Path != "02-wiki/go/quibble.md" || res.Mode != api.LearnCreated {
		t.Fatalf("%+v", res)
	}
	want := "---\ntype: wiki\ntags: []\ncreated: 2026-11-29\n---\n# Quibble\n\nZephyrs quibble.\n"
	if got := read(t, dir, res.Path); got != want {
		t.Errorf("note:\n%s", got)
	}
	// The domain had no MOC: made, with its knowledge-index line.
	if !strings.Contains(read(t, dir, "02-wiki/go/go-moc.md"), "- [[quibble]] — Zephyrs quibble.") ||
		!strings.Contains(read(t, dir, knowledgeIndex), "- [[go-moc]] — go") || !exists(dir, "04-daily/2026-11-29.md") {
		t.Errorf("propagation %v", res.Propagated)
	}
	// No 02-wiki at all: the first domain needs confirmation, then is made.
	dir, s = openLearn(t, map[string]string{"README.md": "# Readme\n"}, learnOpts{})
	_, err := s.Learn(context.Background(), api.LearnRequest{Title: "First", Insight: "The first insight.", Domain: "go"})
	if api.CodeOf(err) != api.CodeNeedsConfirm || !strings.Contains(err.Error(), "no domain exists yet") {
		t.Fatalf("first domain: %v", err)
	}
	res = learn(t, s, api.LearnRequest{Title: "First", Insight: "The first insight.", Domain: "go", ConfirmNewDomain: true})
	if !slices.Equal(res.Files, []string{knowledgeIndex, "02-wiki/go/first.md", "02-wiki/go/go-moc.md", "04-daily/2026-11-29.md"}) || len(res.Warnings) != 0 {
		t.Errorf("files %v warnings %v", res.Files, res.Warnings)
	}
}

func TestLearnNotAGitRepository(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{noGit: true})
	res := learn(t, s, api.LearnRequest{Title: "Zephyr quibbles", Insight: "Zephyrs quibble.", Domain: "go"})
	if res.Committed || res.Version != "" || !hasWarning(res, "not a git repository") || res.Diff == "" {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(read(t, dir, "02-wiki/go/zephyr-quibbles.md"), "Zephyrs quibble.") || exists(dir, ".git") {
		t.Fatal("not written, or a repository appeared")
	}
}

// TestLearnPortuguese: the Portuguese profile writes tipo/criado/atualizado,
// **Contexto:**, ## Capturas and ## Notas.
func TestLearnPortuguese(t *testing.T) {
	files := with(learnVault, map[string]string{
		"_templates/wiki.md":          "",
		"00-index/index-knowledge.md": "",
		"02-wiki/go/go-moc.md":        "---\ntipo: moc\natualizado: 2026-01-01\n---\n# Go\n\n## Notas\n\n- [[retry-backoff]] — retries\n",
		"04-daily/2026-11-29.md":      "---\ntipo: daily\n---\n## Capturas\n\n- 08:00 [[gc]] (learning)\n\n## Tarefas\n\n- [ ] revisar\n",
	})
	dir, s := openLearn(t, files, learnOpts{lang: "pt"})
	res := learn(t, s, api.LearnRequest{Title: "Ação rápida", Insight: "Zéfiros discutem. Segunda frase.", Context: "revisão", Domain: "go", Tags: []string{"gotcha"}, Links: []string{"gc"}})
	want := "---\ntipo: wiki\ntags: [gotcha]\ncriado: 2026-11-29\n---\n# Ação rápida\n\nZéfiros discutem. Segunda frase.\n\n**Contexto:** revisão\n\n## Links\n\n- [[gc]]\n"
	if res.Path != "02-wiki/go/acao-rapida.md" || read(t, dir, res.Path) != want {
		t.Fatalf("%s:\n%s\nwant:\n%s", res.Path, read(t, dir, res.Path), want)
	}
	wantMOC := "---\ntipo: moc\natualizado: 2026-11-29\n---\n# Go\n\n## Notas\n\n- [[retry-backoff]] — retries\n- [[acao-rapida]] — Zéfiros discutem.\n"
	if got := read(t, dir, "02-wiki/go/go-moc.md"); got != wantMOC {
		t.Errorf("MOC:\n%s", got)
	}
	wantDaily := "---\ntipo: daily\n---\n## Capturas\n\n- 08:00 [[gc]] (learning)\n- 10:30 [[acao-rapida]] (gotcha)\n\n## Tarefas\n\n- [ ] revisar\n"
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != wantDaily {
		t.Errorf("daily:\n%s", got)
	}
	// Appending, and a new domain with its map of content and a new index.
	res = learn(t, s, api.LearnRequest{Title: "Mais zéfiros", Insight: "Zéfiros discutem muito.", Context: "café", Domain: "go"})
	if res.Path != "02-wiki/go/acao-rapida.md" || !strings.HasSuffix(read(t, dir, res.Path), "\n## 2026-11-29 — Mais zéfiros\n\nZéfiros discutem muito.\n\n**Contexto:** café\n") {
		t.Errorf("append %+v:\n%s", res, read(t, dir, res.Path))
	}
	res = learn(t, s, api.LearnRequest{Title: "Sondas", Insight: "Quixotescas sondas.", Domain: "infra", ConfirmNewDomain: true})
	if got := read(t, dir, "02-wiki/infra/infra-moc.md"); got != "---\ntipo: moc\ntags: [infra]\ncriado: 2026-11-29\n---\n# infra\n\n## Notas\n\n- [[sondas]] — Quixotescas sondas.\n" {
		t.Errorf("new MOC:\n%s", got)
	}
	if got := read(t, dir, knowledgeIndex); got != "---\ntipo: moc\ntags: [index]\ncriado: 2026-11-29\n---\n# Índice do conhecimento\n\n- [[infra-moc]] — infra\n" {
		t.Errorf("new index:\n%s", got)
	}

	// A template written with English keys gets the Portuguese ones.
	dir, s = openLearn(t, with(files, map[string]string{"_templates/wiki.md": "---\ntype: wiki\ncreated: \"{{date}}\"\nstatus: rascunho\n---\n# {{title}}\n"}), learnOpts{lang: "pt"})
	res = learn(t, s, api.LearnRequest{Title: "Zéfiro", Insight: "Zéfiros.", Domain: "go"})
	if got := read(t, dir, res.Path); got != "---\ntipo: wiki\ntags: []\nstatus: rascunho\ncriado: 2026-11-29\n---\n# Zéfiro\n\nZéfiros.\n" {
		t.Errorf("from an English template:\n%s", got)
	}

	// A new daily note in Portuguese.
	dir, s = openLearn(t, with(files, map[string]string{"04-daily/2026-11-29.md": ""}), learnOpts{lang: "pt"})
	learn(t, s, api.LearnRequest{Title: "Zéfiro", Insight: "Zéfiros.", Domain: "go", Project: "cobrança"})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "---\ntipo: daily\ntags: []\ncriado: 2026-11-29\n---\n## Capturas\n\n- 10:30 [[zefiro]] (learning, cobrança)\n" {
		t.Errorf("new daily:\n%s", got)
	}
}

// TestLearnDailyNote: an existing daily note gets the line under its
// captures section (added when missing), CRLF kept; a daily template is used
// for a new one.
func TestLearnDailyNote(t *testing.T) {
	files := with(learnVault, map[string]string{"04-daily/2026-11-29.md": "# Friday\r\n\r\nMet the team.\r\n"})
	dir, s := openLearn(t, files, learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Zephyr", Insight: "Zephyrs quibble.", Domain: "go", Tags: []string{"state", "decision"}})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "# Friday\r\n\r\nMet the team.\r\n\r\n## Captures\r\n\r\n- 10:30 [[zephyr]] (decision)\r\n" {
		t.Errorf("daily:\n%q", got)
	}
	files = with(learnVault, map[string]string{"_templates/daily.md": "---\ntype: daily\ncreated: \"{{date}}\"\n---\n\n# {{date:dddd D MMMM}}\n\n## Captures\n\n## Notes\n"})
	dir, s = openLearn(t, files, learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Zephyr", Insight: "Zephyrs quibble.", Domain: "go"})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "---\ntype: daily\ncreated: \"2026-11-29\"\n---\n\n# Sunday 29 November\n\n## Captures\n\n- 10:30 [[zephyr]] (learning)\n\n## Notes\n" {
		t.Errorf("daily from template:\n%s", got)
	}
}

// TestLearnPropagationIdempotent: a MOC that already lists the note (a
// planned, so far broken link) is not written again, and nothing is
// duplicated.
func TestLearnPropagationIdempotent(t *testing.T) {
	files := with(learnVault, map[string]string{
		"02-wiki/go/go-moc.md":   "---\ntype: moc\n---\n# Go\n\n## Notes\n\n- [[zephyr-notes]] — planned\n",
		"04-daily/2026-11-29.md": "## Captures\n\n- 10:30 [[zephyr-notes]] (learning)\n",
	})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Zephyr notes", Insight: "Zephyrs quibble.", Domain: "go"})
	if res.Path != "02-wiki/go/zephyr-notes.md" || len(res.Propagated) != 0 || !slices.Equal(res.Files, []string{res.Path}) {
		t.Fatalf("%+v", res)
	}
	if read(t, dir, "02-wiki/go/go-moc.md") != files["02-wiki/go/go-moc.md"] || read(t, dir, "04-daily/2026-11-29.md") != files["04-daily/2026-11-29.md"] {
		t.Error("a file was rewritten with a line it already had")
	}
}

func TestLearnKeepsCRLF(t *testing.T) {
	files := with(learnVault, map[string]string{"02-wiki/go/windows.md": "---\r\ntype: wiki\r\nupdated: 2026-01-01\r\n---\r\n# Zephyr windows\r\n\r\nZephyr windows quibble loudly."})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "More", Insight: "Zephyr windows quibble loudly at night.", Context: "c", Domain: "go"})
	want := "---\r\ntype: wiki\r\nupdated: 2026-11-29\r\n---\r\n# Zephyr windows\r\n\r\nZephyr windows quibble loudly.\r\n\r\n## 2026-11-29 — More\r\n\r\nZephyr windows quibble loudly at night.\r\n\r\n**Context:** c\r\n"
	if res.Path != "02-wiki/go/windows.md" || read(t, dir, res.Path) != want {
		t.Fatalf("%s %q", res.Path, read(t, dir, res.Path))
	}
}

// TestLearnUndo: one vault_undo takes a whole learning back: the new note,
// the new MOC, the knowledge-index line and the daily note.
func TestLearnUndo(t *testing.T) {
	dir, s := openLearn(t, with(learnVault, map[string]string{"04-daily/2026-11-29.md": "## Captures\n\n- 08:00 [[gc]] (learning)\n"}), learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Probes", Insight: "Quixotic probes.", Domain: "k8s", ConfirmNewDomain: true})
	if len(res.Files) != 4 || res.Version == "" {
		t.Fatalf("%+v", res)
	}
	u, err := s.Undo(context.Background(), api.UndoRequest{Version: res.Version})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Committed || !slices.Equal(u.Files, res.Files) {
		t.Errorf("undo %+v", u)
	}
	if exists(dir, "02-wiki/k8s/probes.md") || exists(dir, "02-wiki/k8s/k8s-moc.md") ||
		read(t, dir, knowledgeIndex) != learnVault[knowledgeIndex] || read(t, dir, "04-daily/2026-11-29.md") != "## Captures\n\n- 08:00 [[gc]] (learning)\n" {
		t.Error("undo did not restore every file")
	}
	if out := gitRun(t, dir, "status", "--porcelain"); out != "" {
		t.Errorf("work tree:\n%s", out)
	}
	if r := search(t, s, api.SearchRequest{Query: "quixotic probes"}); len(r.Results) != 0 {
		t.Errorf("undone note still found: %v", paths(r))
	}
	// The domain is gone with it.
	if _, err := s.Learn(context.Background(), api.LearnRequest{Title: "Probes", Insight: "Quixotic probes.", Domain: "k8s"}); api.CodeOf(err) != api.CodeNeedsConfirm {
		t.Errorf("domain after undo: %v", err)
	}
}

func TestLearnReadOnly(t *testing.T) {
	dir := writeVault(t, learnVault)
	s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Learn(context.Background(), api.LearnRequest{Title: "T", Insight: "I", Domain: "go"}); api.CodeOf(err) != api.CodeReadOnly {
		t.Fatalf("%v", err)
	}
}

// BenchmarkLearn measures one learning end to end on a committed vault (the
// generated one, or a copy of $VAULTMCP_CORPUS): search, decision, new note,
// map of content, daily note and the git commit. Each learning is a new
// subject, so each one creates a note.
func BenchmarkLearn(b *testing.B) {
	src := benchVault(b)
	dir := src
	if os.Getenv("VAULTMCP_CORPUS") != "" {
		dir = b.TempDir()
		copyTree(b, src, dir)
	}
	gitInit(b, dir)
	s, err := Open(context.Background(), Options{Dir: dir, Now: func() time.Time { return learnNow }})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		word := slugify(strings.Repeat("q", 1+i%7)) + strconv.Itoa(i)
		res, err := s.Learn(context.Background(), api.LearnRequest{
			Title: "Benchmark " + word, Insight: "Retry the " + word + " with backoff and jitter before giving up.",
			Context: "benchmark", Domain: "bench", ConfirmNewDomain: true,
		})
		if err != nil || !res.Committed {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
