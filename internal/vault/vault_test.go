package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/index"
)

// files of a small vault in the numbered layout.
var testVault = map[string]string{
	"00-index/index-knowledge.md":  "---\ntype: moc\n---\n# Knowledge index\n\n- [[go-moc]] — Go\n",
	"02-wiki/go/go-moc.md":         "---\ntype: moc\n---\n# Go\n\n## Notes\n\n- [[retry-backoff]] — retries\n- [[context-cancel]] — cancellation\n",
	"02-wiki/go/retry-backoff.md":  "---\ntype: wiki\ntags: [go, resilience]\nstatus: stable\n---\n# Retry with exponential backoff\n\nRetry transient failures with exponential backoff and jitter.\n\n## Jitter\n\nFull jitter spreads the retries of many clients.\nSee [[context-cancel]] and [[context-cancel|cancel]].\n\n## Budget\n\nStop retrying when the deadline is near.\n",
	"02-wiki/go/context-cancel.md": "---\ntype: wiki\ntags: [go]\nstatus: draft\n---\n# Context cancellation\n\nPass ctx first; check ctx.Done in loops.\n",
	"02-wiki/db/pool.md":           "---\ntype: wiki\ntags: [postgres]\n---\n# Connection pool sizing\n\nSize the pool from the number of cores. Broken: [[nowhere]].\n",
	"01-raw/inbox/idea.md":         "# Idea\n\nbackoff idea in the raw inbox\n",
	"99-archive/old-retry.md":      "---\ntype: wiki\n---\n# Old retry advice\n\nRetry with backoff forever (superseded).\n",
	"_templates/wiki.md":           "# {{title}}\n\nbackoff template\n",
	".obsidian/x.md":               "backoff hidden\n",
	"attachments/a.png":            "PNG",
}

func writeVault(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func openTest(t *testing.T, dir string, watch bool) *Service {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, Watch: watch, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func search(t *testing.T, s *Service, req api.SearchRequest) *api.SearchResult {
	t.Helper()
	res, err := s.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search(%+v): %v", req, err)
	}
	return res
}

func paths(res *api.SearchResult) []string {
	var out []string
	for _, h := range res.Results {
		out = append(out, h.Path)
	}
	return out
}

func TestSearchRanksAndQuotes(t *testing.T) {
	s := openTest(t, writeVault(t, testVault), false)
	res := search(t, s, api.SearchRequest{Query: "retry backoff"})
	if len(res.Results) == 0 || res.Results[0].Path != "02-wiki/go/retry-backoff.md" {
		t.Fatalf("top = %v", paths(res))
	}
	for _, h := range res.Results {
		switch {
		case strings.HasPrefix(h.Path, "01-raw/"), strings.HasPrefix(h.Path, "_templates/"), strings.HasPrefix(h.Path, ".obsidian/"):
			t.Errorf("excluded note returned: %s", h.Path)
		}
		if h.Line < 1 || h.EndLine < h.Line || h.Snippet == "" {
			t.Errorf("bad hit %+v", h)
		}
	}
	top := res.Results[0]
	data, _ := os.ReadFile(filepath.Join(s.FS().Dir(), top.Path))
	lines := strings.Split(string(data), "\n")
	if got := strings.Split(top.Snippet, "\n")[0]; got != lines[top.Line-1] {
		t.Errorf("snippet starts with %q, but line %d is %q", got, top.Line, lines[top.Line-1])
	}
	// The archived note ranks below the live one.
	arch, live := -1, -1
	for i, p := range paths(res) {
		switch p {
		case "99-archive/old-retry.md":
			arch = i
		case "02-wiki/go/retry-backoff.md":
			if live < 0 {
				live = i
			}
		}
	}
	if arch >= 0 && arch < live {
		t.Errorf("archived note ranked above live one: %v", paths(res))
	}
	raw := search(t, s, api.SearchRequest{Query: "raw inbox idea", IncludeRaw: true})
	if len(raw.Results) == 0 || raw.Results[0].Path != "01-raw/inbox/idea.md" {
		t.Errorf("include_raw: %v", paths(raw))
	}
}

func TestSearchGraphExpansion(t *testing.T) {
	s := openTest(t, writeVault(t, testVault), false)
	res := search(t, s, api.SearchRequest{Query: "jitter spreads", Limit: 10})
	var via *api.SearchHit
	for i, h := range res.Results {
		if h.Path == "02-wiki/go/context-cancel.md" {
			via = &res.Results[i]
		}
	}
	if via == nil || !via.ViaGraph {
		t.Fatalf("neighbour not found via graph: %+v", res.Results)
	}
	if via.Score >= res.Results[0].Score {
		t.Errorf("graph hit %v should score below its source %v", via.Score, res.Results[0].Score)
	}
}

func TestSearchFiltersAndValidation(t *testing.T) {
	s := openTest(t, writeVault(t, testVault), false)
	for _, tc := range []struct {
		req  api.SearchRequest
		want []string // every result path must start with one of these
	}{
		{api.SearchRequest{Query: "retry", Folder: "02-wiki/go"}, []string{"02-wiki/go/"}},
		{api.SearchRequest{Query: "pool cores", Tags: []string{"POSTGRES"}}, []string{"02-wiki/db/pool.md"}},
		{api.SearchRequest{Query: "ctx", Status: "draft"}, []string{"02-wiki/go/context-cancel.md"}},
		{api.SearchRequest{Query: "retry", Type: "wiki"}, []string{"02-wiki/", "99-archive/"}},
	} {
		res := search(t, s, tc.req)
		if len(res.Results) == 0 {
			t.Errorf("%+v: no results", tc.req)
		}
		for _, h := range res.Results {
			ok := false
			for _, w := range tc.want {
				ok = ok || strings.HasPrefix(h.Path, w)
			}
			if !ok {
				t.Errorf("%+v: unexpected %s", tc.req, h.Path)
			}
		}
	}
	for _, tc := range []struct {
		req   api.SearchRequest
		field string
	}{
		{api.SearchRequest{Query: "  "}, "query"},
		{api.SearchRequest{Query: "x", Limit: 51}, "limit"},
		{api.SearchRequest{Query: "x", Limit: -1}, "limit"},
		{api.SearchRequest{Query: "x", Folder: "../etc"}, "folder"},
	} {
		_, err := s.Search(context.Background(), tc.req)
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Field != tc.field {
			t.Errorf("%+v: err = %v, want field %s", tc.req, err, tc.field)
		}
	}
	// A misspelling matches through expansion (and then has no suggestions).
	fz := search(t, s, api.SearchRequest{Query: "backof"})
	if len(fz.Results) == 0 || fz.Results[0].Path != "02-wiki/go/retry-backoff.md" || !fz.Results[0].Fuzzy || len(fz.Suggestions) != 0 {
		t.Errorf("misspelled backoff: %+v", fz)
	}
	sug := search(t, s, api.SearchRequest{Query: "zzjitterq"})
	if len(sug.Results) != 0 {
		t.Errorf("nonsense matched: %v", paths(sug))
	}
}

func TestSearchNeverServesStale(t *testing.T) {
	dir := writeVault(t, testVault)
	s := openTest(t, dir, false) // no watcher: re-validation alone must keep results true
	target := filepath.Join(dir, "02-wiki/db/pool.md")
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	res := search(t, s, api.SearchRequest{Query: "connection pool sizing"})
	for _, h := range res.Results {
		if h.Path == "02-wiki/db/pool.md" {
			t.Fatalf("deleted note returned: %+v", h)
		}
	}
	rb := filepath.Join(dir, "02-wiki/go/retry-backoff.md")
	body := strings.Replace(testVault["02-wiki/go/retry-backoff.md"], "Full jitter spreads", "Decorrelated jitter spreads", 1)
	if err := os.WriteFile(rb, []byte(body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = search(t, s, api.SearchRequest{Query: "jitter spreads"})
	if len(res.Results) == 0 || !strings.Contains(res.Results[0].Snippet, "Decorrelated") {
		t.Fatalf("changed note quoted stale: %+v", res.Results)
	}
}

func TestWatcherKeepsIndexFresh(t *testing.T) {
	dir := writeVault(t, testVault)
	s := openTest(t, dir, true)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	has := func(q, p string) bool {
		for _, h := range search(t, s, api.SearchRequest{Query: q}).Results {
			if h.Path == p {
				return true
			}
		}
		return false
	}
	// A new note in a new nested folder.
	if err := os.MkdirAll(filepath.Join(dir, "02-wiki/k8s/deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "02-wiki/k8s/deep/probes.md"), []byte("# Liveness probes\n\nkubelet restarts zorblax containers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("new note searchable", func() bool { return has("zorblax", "02-wiki/k8s/deep/probes.md") })
	// A rename through an editor-style temp file.
	tmp := filepath.Join(dir, "02-wiki/k8s/deep/.probes.md.tmp")
	if err := os.WriteFile(tmp, []byte("# Liveness probes\n\nkubelet restarts quuxify containers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "02-wiki/k8s/deep/probes.md")); err != nil {
		t.Fatal(err)
	}
	waitFor("edit searchable", func() bool { return has("quuxify", "02-wiki/k8s/deep/probes.md") })
	// A folder renamed within the vault: its notes are found at the new
	// path, and the old one is forgotten.
	if err := os.Rename(filepath.Join(dir, "02-wiki/k8s/deep"), filepath.Join(dir, "02-wiki/k8s/probes")); err != nil {
		t.Fatal(err)
	}
	waitFor("renamed folder searchable", func() bool {
		return has("quuxify", "02-wiki/k8s/probes/probes.md") && !has("quuxify", "02-wiki/k8s/deep/probes.md")
	})
	// A folder with notes moved in from outside the vault.
	outside := filepath.Join(t.TempDir(), "incoming")
	if err := os.MkdirAll(filepath.Join(outside, "nested"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "nested", "moved.md"), []byte("# Moved in\n\nthe frobnicate runbook\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(outside, filepath.Join(dir, "02-wiki/k8s/incoming")); err != nil {
		t.Skipf("cannot rename across the temp folders here: %v", err)
	}
	waitFor("moved-in folder searchable", func() bool { return has("frobnicate", "02-wiki/k8s/incoming/nested/moved.md") })
	// Removing the folder removes its notes.
	if err := os.RemoveAll(filepath.Join(dir, "02-wiki/k8s")); err != nil {
		t.Fatal(err)
	}
	waitFor("removed folder forgotten", func() bool {
		// (A folder under which no note lies is refused, naming it.)
		_, err := s.List(context.Background(), api.ListRequest{Folder: "02-wiki/k8s"})
		return api.CodeOf(err) == api.CodeInvalidArgument && strings.Contains(err.Error(), `no note lies under "02-wiki/k8s"`)
	})
}

// TestGetNoteProblems: a note whose frontmatter was ignored says why, so a
// reader can tell a broken frontmatter from a missing one.
func TestGetNoteProblems(t *testing.T) {
	dupes := "---\n"
	for range api.MaxNoteProblems + 5 {
		dupes += "k: 1\n"
	}
	s := openTest(t, writeVault(t, map[string]string{
		"bad.md":   "---\ntype: [wiki\n---\n# Bad\n",
		"alias.md": "---\na: &x [1]\nb: *x\n---\n# Alias\n",
		"big.md":   "---\ntype: wiki\nbig: " + strings.Repeat("x", 70<<10) + "\n---\n# Big\n",
		"dupes.md": dupes + "---\n# Dupes\n",
		"ok.md":    "---\ntype: wiki\n---\n# Ok\n",
	}), false)
	for _, tc := range []struct {
		path, want string
		n          int
	}{
		{"bad.md", "invalid YAML frontmatter", 1},
		{"alias.md", "aliases", 1},
		{"big.md", "64 KiB", 1},
		{"dupes.md", "duplicate frontmatter key", api.MaxNoteProblems},
		{"ok.md", "", 0},
	} {
		n, err := s.GetNote(context.Background(), api.NoteRequest{Path: tc.path})
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Problems) != tc.n || tc.n > 0 && !strings.Contains(n.Problems[0], tc.want) {
			t.Errorf("%s: problems %q, want %d naming %q", tc.path, n.Problems, tc.n, tc.want)
		}
	}
}

// TestNotFoundNamesNearNote: a read of a path that names no note, but
// differs from one only in letter case or names it as a link would, is
// NOT_FOUND naming that note.
func TestNotFoundNamesNearNote(t *testing.T) {
	s := openTest(t, writeVault(t, testVault), false)
	ctx := context.Background()
	for _, tc := range []struct{ path, near string }{
		{"02-wiki/go/Context-Cancel.md", "02-wiki/go/context-cancel.md"},
		{"context-cancel.md", "02-wiki/go/context-cancel.md"},
		{"02-wiki/db/retry-backoff.md", "02-wiki/go/retry-backoff.md"},
		{"missing.md", ""},
		{"a.md", ""}, // attachments/a.png is no note
	} {
		_, gerr := s.GetNote(ctx, api.NoteRequest{Path: tc.path})
		_, berr := s.Backlinks(ctx, api.BacklinksRequest{Path: tc.path})
		for _, err := range []error{gerr, berr} {
			if api.CodeOf(err) != api.CodeNotFound {
				t.Fatalf("%s: %v, want NOT_FOUND", tc.path, err)
			}
			hint := strings.Contains(err.Error(), "did you mean")
			if tc.near == "" && hint || tc.near != "" && !strings.HasSuffix(err.Error(), "; did you mean \""+tc.near+"\"?") {
				t.Errorf("%s: %v, want a hint of %q", tc.path, err, tc.near)
			}
		}
	}
}

// TestGetNoteLinkTargetsKeepAnchors: a link's target is shown as written,
// its heading or block anchor included.
func TestGetNoteLinkTargetsKeepAnchors(t *testing.T) {
	s := openTest(t, writeVault(t, map[string]string{
		"a.md": "# A\n\n## Setup\n\nx ^b1\n",
		"n.md": "# N\n\n[[a#Setup]] [[a#^b1]] [[#Local]] [x](a.md#Setup) [[gone#Setup]]\n\n## Local\n",
	}), false)
	n, err := s.GetNote(context.Background(), api.NoteRequest{Path: "n.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range n.Links {
		got = append(got, l.Target+" -> "+l.Path)
	}
	for _, l := range n.BrokenLinks {
		got = append(got, l.Target+" (broken)")
	}
	want := []string{"a#Setup -> a.md", "a#^b1 -> a.md", "#Local -> n.md", "a.md#Setup -> a.md", "gone#Setup (broken)"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("links %q, want %q", got, want)
	}
}

func TestGetNote(t *testing.T) {
	files := map[string]string{}
	for k, v := range testVault {
		files[k] = v
	}
	big := "---\ntype: wiki\n---\n# Big\n\n" + strings.Repeat("é", 45000) + "\n"
	files["big.md"] = big
	s := openTest(t, writeVault(t, files), false)
	n, err := s.GetNote(context.Background(), api.NoteRequest{Path: "./02-wiki\\go//retry-backoff.md"})
	if err != nil {
		t.Fatal(err)
	}
	if n.Path != "02-wiki/go/retry-backoff.md" || n.Title != "Retry with exponential backoff" || n.Frontmatter["status"] != "stable" || n.Frontmatter["tags"] != "go, resilience" {
		t.Fatalf("note = %+v", n)
	}
	if len(n.Links) != 2 || n.Links[0].Path != "02-wiki/go/context-cancel.md" || n.Content != testVault["02-wiki/go/retry-backoff.md"] || len(n.SHA256) != 64 {
		t.Fatalf("links/content: %+v", n)
	}
	p, _ := s.GetNote(context.Background(), api.NoteRequest{Path: "02-wiki/db/pool.md"})
	if len(p.BrokenLinks) != 1 || p.BrokenLinks[0].Target != "nowhere" {
		t.Fatalf("broken = %+v", p.BrokenLinks)
	}
	// Paging by characters.
	var got strings.Builder
	off := 0
	for pages := 0; ; pages++ {
		pg, err := s.GetNote(context.Background(), api.NoteRequest{Path: "big.md", Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(pg.Content)
		if pg.NextOffset == 0 {
			break
		}
		if pages > 5 || len([]rune(pg.Content)) != api.NotePageChars {
			t.Fatalf("page %d has %d chars", pages, len([]rune(pg.Content)))
		}
		off = pg.NextOffset
	}
	if got.String() != big {
		t.Fatal("pages do not add up to the note")
	}
	for _, tc := range []struct {
		req  api.NoteRequest
		code string
	}{
		{api.NoteRequest{Path: "../outside.md"}, "PATH_ESCAPE"},
		{api.NoteRequest{Path: "missing.md"}, "NOT_FOUND"},
		{api.NoteRequest{Path: ".obsidian/x.md"}, "HIDDEN_SEGMENT"},
		{api.NoteRequest{Path: "attachments/a.png"}, "INVALID_EXTENSION"},
		{api.NoteRequest{Path: "big.md", Offset: -1}, api.CodeInvalidArgument},
		{api.NoteRequest{Path: "big.md", Offset: 10_000_000}, api.CodeInvalidArgument},
	} {
		_, err := s.GetNote(context.Background(), tc.req)
		if api.CodeOf(err) != tc.code {
			t.Errorf("%+v: err = %v, want %s", tc.req, err, tc.code)
		}
		if err != nil && strings.Contains(err.Error(), s.FS().Dir()) {
			t.Errorf("error shows the vault path: %v", err)
		}
	}
}

func TestFrontmatterBounds(t *testing.T) {
	fm := map[string]any{"long": strings.Repeat("x", 600)}
	for i := 0; i < 40; i++ {
		fm[fmt.Sprintf("k%02d", i)] = "v"
	}
	out, truncated := boundFrontmatter(fm)
	if !truncated || len(out) > fmMaxKeys {
		t.Fatalf("keys %d truncated %v", len(out), truncated)
	}
	if v, ok := out["long"]; ok && len([]rune(v)) > fmMaxValue {
		t.Fatalf("value not bounded: %d", len([]rune(v)))
	}
}

func TestListBacklinksGraph(t *testing.T) {
	s := openTest(t, writeVault(t, testVault), false)
	ctx := context.Background()
	lst, err := s.List(ctx, api.ListRequest{Type: "wiki"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range lst.Notes {
		got = append(got, n.Path)
	}
	want := "02-wiki/db/pool.md,02-wiki/go/context-cancel.md,02-wiki/go/retry-backoff.md,99-archive/old-retry.md"
	if strings.Join(got, ",") != want {
		t.Fatalf("list = %v", got)
	}
	bl, err := s.Backlinks(ctx, api.BacklinksRequest{Path: "02-wiki/go/context-cancel.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(bl.Backlinks) != 2 || bl.Backlinks[1].Path != "02-wiki/go/retry-backoff.md" || len(bl.Backlinks[1].Lines) != 1 {
		t.Fatalf("backlinks = %+v", bl.Backlinks)
	}
	if _, err := s.Backlinks(ctx, api.BacklinksRequest{Path: "nope.md"}); api.CodeOf(err) != "NOT_FOUND" {
		t.Fatalf("missing note: %v", err)
	}
	g, err := s.Graph(ctx, api.GraphRequest{IncludeBroken: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.BrokenCount != 1 || g.NodeCount != len(g.Nodes) || g.EdgeCount != len(g.Edges) {
		t.Fatalf("graph counts %+v", g)
	}
	small, err := s.Graph(ctx, api.GraphRequest{MaxNodes: 2})
	if err != nil || !small.Truncated || len(small.Nodes) != 2 {
		t.Fatalf("max_nodes: %+v %v", small, err)
	}
	for _, e := range small.Edges {
		if e.From != small.Nodes[0].Path && e.From != small.Nodes[1].Path {
			t.Fatalf("edge to a dropped node: %+v", e)
		}
	}
	if _, err := s.Graph(ctx, api.GraphRequest{MaxNodes: 99999}); api.CodeOf(err) != api.CodeInvalidArgument {
		t.Fatalf("max_nodes bound: %v", err)
	}
}

func TestHistory(t *testing.T) {
	dir := writeVault(t, testVault)
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "initial vault")
	s := openTest(t, dir, false)
	h, err := s.History(context.Background(), api.HistoryRequest{Path: "02-wiki/go/retry-backoff.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Versions) != 1 || h.Versions[0].Message != "initial vault" || len(h.Versions[0].ID) != 40 {
		t.Fatalf("history %+v", h)
	}
	if _, err := s.History(context.Background(), api.HistoryRequest{Path: "../x.md"}); api.CodeOf(err) != "PATH_ESCAPE" {
		t.Fatalf("escape: %v", err)
	}
	// Not a git repository: empty history, no error.
	plain := openTest(t, writeVault(t, testVault), false)
	h, err = plain.History(context.Background(), api.HistoryRequest{Path: "02-wiki/go/retry-backoff.md"})
	if err != nil || len(h.Versions) != 0 {
		t.Fatalf("plain folder: %+v %v", h, err)
	}
}

// TestHistoryOfNoNote: a path that exists but is no note (a folder named
// like one, a link leaving the vault) has no history to show, while a
// deleted note keeps its own.
func TestHistoryOfNoNote(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"notes.md/.hidden/secret.txt": "s\n",
		"notes.md/a.md":               "# A\n",
		"sub/b.md":                    "# B\n",
		"gone.md":                     "# Gone\n",
	})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "o.md"), []byte("# O\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "o.md"), filepath.Join(dir, "out.md")); err != nil {
		t.Fatal(err)
	}
	gitInit(t, dir)
	gitRun(t, dir, "rm", "-q", "gone.md")
	gitRun(t, dir, "commit", "-q", "-m", "delete gone")
	s := openTest(t, dir, false)
	ctx := context.Background()
	// A folder named as folders are (no extension) is told as a folder too.
	for p, code := range map[string]string{"notes.md": "NOT_A_NOTE", "out.md": "SYMLINK_ESCAPE", "notes.md/.hidden": "HIDDEN_SEGMENT", "sub": "NOT_A_NOTE"} {
		if h, err := s.History(ctx, api.HistoryRequest{Path: p}); api.CodeOf(err) != code {
			t.Errorf("%s: %+v %v, want %s", p, h, err, code)
		}
	}
	h, err := s.History(ctx, api.HistoryRequest{Path: "gone.md"})
	if err != nil || len(h.Versions) != 2 {
		t.Fatalf("deleted note: %+v %v", h, err)
	}
}

func TestShareAndWindow(t *testing.T) {
	for _, tc := range []struct {
		budget int
		sizes  []int
		want   []int
	}{
		{100, []int{10, 20}, []int{10, 20}},
		{100, []int{10, 200}, []int{10, 90}},
		{100, []int{300, 300}, []int{50, 50}},
		{10, []int{1, 100, 100}, []int{1, 5, 4}},
		{0, []int{5}, []int{0}},
	} {
		got := share(tc.budget, tc.sizes)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("share(%d, %v) = %v, want %v", tc.budget, tc.sizes, got, tc.want)
		}
	}
}

func TestCutRunes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"héllo", -1, ""},
		{"héllo", 0, ""},
		{"héllo", 2, "hé"},
		{"héllo", 5, "héllo"},
		{"héllo", 9, "héllo"},
		{"", 3, ""},
	} {
		if got := cutRunes(tc.s, tc.n); got != tc.want {
			t.Errorf("cutRunes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestWindowPicksMatchingLines(t *testing.T) {
	terms := index.NewAnalyzer("en").NewCounter([]string{"jitter", "backoff"})
	lines := []string{"intro line one", "intro line two", "use backoff", "with jitter", "closing words here"}
	got, first := window(lines, 10, 25, terms)
	if first != 12 || strings.Join(got, "|") != "use backoff|with jitter" {
		t.Fatalf("window = %q from line %d", got, first)
	}
	// A single line longer than the budget is cut.
	got, first = window([]string{"x", strings.Repeat("jitter ", 20)}, 1, 10, terms)
	if first != 2 || len([]rune(got[0])) != 10 || !strings.HasSuffix(got[0], "…") {
		t.Fatalf("cut line = %q from %d", got, first)
	}
	// A long line whose match lies far in is cut around the match, at word
	// boundaries.
	long := strings.Repeat("lorem ipsum dolor ", 40) + "the backoff doubles " + strings.Repeat("sit amet ", 30)
	got, _ = window([]string{long}, 1, 80, terms)
	if n := len([]rune(got[0])); n > 80 || !strings.Contains(got[0], "the backoff doubles") || !strings.HasPrefix(got[0], "…") || !strings.HasSuffix(got[0], "…") {
		t.Fatalf("cut around the match = %q (%d characters)", got[0], n)
	}
	if inner := strings.Trim(got[0], "…"); strings.HasPrefix(inner, "orem") || strings.HasPrefix(inner, "psum") || strings.HasSuffix(inner, "si") || strings.HasSuffix(inner, "ame") {
		t.Errorf("cut mid-word: %q", got[0])
	}
	// The match near the end: the line's end is quoted, without a closing "…".
	got, _ = window([]string{strings.Repeat("lorem ipsum ", 30) + "with jitter"}, 1, 40, terms)
	if !strings.HasSuffix(got[0], "with jitter") || !strings.HasPrefix(got[0], "…") || len([]rune(got[0])) > 40 {
		t.Errorf("match at the end = %q", got[0])
	}
}

// TestSearchDuringIndexingWaitsWithProgress: an operation that arrives while
// the first build runs waits for it and reports progress, ending with every
// note indexed.
func TestSearchDuringIndexingWaitsWithProgress(t *testing.T) {
	release := make(chan struct{})
	testHookBuildStart = func() { <-release }
	defer func() { testHookBuildStart = nil }()
	s, err := Open(context.Background(), Options{Dir: writeVault(t, testVault)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	type call struct{ done, total int }
	calls := make(chan call, 100)
	ctx := api.WithProgress(context.Background(), func(done, total int, _ string) { calls <- call{done, total} })
	result := make(chan *api.SearchResult, 1)
	go func() {
		res, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"})
		if err != nil {
			t.Error(err)
		}
		result <- res
	}()
	select {
	case <-calls: // the search is waiting and has reported progress
	case <-time.After(5 * time.Second):
		t.Fatal("no progress while the build was held")
	}
	select {
	case <-result:
		t.Fatal("search answered before the index was built")
	default:
	}
	close(release)
	res := <-result
	if len(res.Results) == 0 || res.Results[0].Path != "02-wiki/go/retry-backoff.md" {
		t.Fatalf("results after waiting: %v", paths(res))
	}
	var last call
	for len(calls) > 0 {
		last = <-calls
	}
	if last.total == 0 || last.done != last.total {
		t.Fatalf("last progress %+v", last)
	}
}

// TestRawMatchesHint: a search that finds nothing because what matches is
// under 01-raw/ (left out without include_raw) says so, and only then.
func TestRawMatchesHint(t *testing.T) {
	_, s := openLearn(t, map[string]string{
		"01-raw/meeting.md":   "# Meeting\n\nzark today\n",
		"02-wiki/go/retry.md": "# Retry\n\nzerk backoff\n",
	}, learnOpts{})
	for _, c := range []struct {
		req     api.SearchRequest
		results int
		raw     bool
	}{
		{api.SearchRequest{Query: "zark"}, 0, true},
		{api.SearchRequest{Query: "zark", IncludeRaw: true}, 1, false},
		{api.SearchRequest{Query: "zark", Folder: "02-wiki"}, 0, false},
		{api.SearchRequest{Query: "zerk"}, 1, false},
		{api.SearchRequest{Query: "qqqxyz"}, 0, false},
	} {
		res := search(t, s, c.req)
		if len(res.Results) != c.results || res.RawMatches != c.raw {
			t.Errorf("%+v: results %v, raw matches %v; want %d and %v", c.req, paths(res), res.RawMatches, c.results, c.raw)
		}
	}
}

// TestSuggestionsAreFindable: the similar terms of a search that found
// nothing are terms the same search (its filters, the 01-raw rule) would
// find. A term only raw captures hold, suggested without include_raw, sent
// the caller to a second search that found nothing, and with no suggestion.
func TestSuggestionsAreFindable(t *testing.T) {
	_, s := openLearn(t, map[string]string{
		"01-raw/meeting.md":       "# Meeting\n\nzark today\n",
		"03-projects/plan.md":     "# Plan\n\nzirk weekly\n",
		"02-wiki/go/retry.md":     "# Retry\n\nzerk backoff\n",
		"02-wiki/go/go-moc.md":    "---\ntype: moc\n---\n# Go\n\nzurk\n\n- [[retry]]\n",
		"02-wiki/http/timeout.md": "# Timeout\n\ndeadline\n",
	}, learnOpts{})
	for _, c := range []struct {
		req  api.SearchRequest
		want []string
	}{
		{api.SearchRequest{Query: "zrk"}, []string{"zerk", "zirk", "zurk"}},
		{api.SearchRequest{Query: "zrk", IncludeRaw: true}, []string{"zark", "zerk", "zirk", "zurk"}},
		{api.SearchRequest{Query: "zrk", Folder: "01-raw"}, []string{"zark"}},
		{api.SearchRequest{Query: "zrk", Folder: "02-wiki/go"}, []string{"zerk", "zurk"}},
		{api.SearchRequest{Query: "zrk", Type: "moc"}, []string{"zurk"}},
		{api.SearchRequest{Query: "zrk", Folder: "02-wiki/http"}, nil},
	} {
		res := search(t, s, c.req)
		if len(res.Results) != 0 || !slices.Equal(res.Suggestions, c.want) {
			t.Errorf("%+v: results %v, suggestions %q, want %q", c.req, paths(res), res.Suggestions, c.want)
		}
	}
}
