package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// The tool scripts: testdata/scripts/*.txtar, each one request to one tool
// and the answer expected, so that a reviewer reads the contract of DESIGN.md
// section 5 rather than Go plumbing. A script is a txtar archive:
//
//	What the script checks, in a line or a few (the archive's comment).
//	-- env --        optional: VAULT_LANG=pt, VAULT_READ_ONLY=1
//	-- rm --         optional: vault paths removed from the example vault
//	-- vault/PATH -- optional, any number: files laid over the example vault
//	-- setup --      optional: calls made first, one JSON object a line,
//	                 {"tool": ..., "arguments": {...}}; none may fail
//	-- request --    the call: {"tool": ..., "arguments": {...}}; $COMMIT is
//	                 the last commit a setup call made
//	-- answer --     the text content (after "isError: true" when it is one)
//	-- structured -- the structuredContent, as indented JSON
//
// The vault is a git copy of examples/vault with the script's changes,
// committed at a fixed date; the server is the real one (internal/vault
// behind internal/mcpserver) over the in-memory MCP transport, with the
// clock at scriptNow, so dates, names and commit ids are the same on every
// run (commit ids are still written <commit>, so that the answers do not
// depend on the git version). go test ./cmd/vaultmcp -run TestScripts
// -update rewrites the answer and structured sections.

var updateScripts = flag.Bool("update", false, "rewrite the answers of testdata/scripts")

// scriptNow is the clock of every script: Sunday 29 November 2026, 10:30 UTC.
var scriptNow = time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)

// archive is a parsed txtar archive.
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name string
	data string
}

// parseArchive reads the txtar format: a comment, then files, each after a
// marker line "-- name --".
func parseArchive(data string) archive {
	var a archive
	cur := -1
	var b strings.Builder
	flush := func() {
		if cur < 0 {
			a.comment = b.String()
		} else {
			a.files[cur].data = b.String()
		}
		b.Reset()
	}
	for line := range strings.SplitAfterSeq(data, "\n") {
		l := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			flush()
			a.files = append(a.files, archiveFile{name: strings.TrimSpace(l[3 : len(l)-3])})
			cur = len(a.files) - 1
			continue
		}
		b.WriteString(line)
	}
	flush()
	return a
}

// format writes the archive back.
func (a archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.WriteString(f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (a archive) get(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

func (a *archive) set(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, archiveFile{name: name, data: data})
}

// scriptCall is one tool call of a script, or with Method "tools/list"
// the list of tools (the answer names each with its annotations).
type scriptCall struct {
	Method    string         `json:"method,omitempty"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

var commitID = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

func TestScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scripts", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/scripts/*.txtar")
	}
	// Commits at a fixed date by a fixed author, with no configuration of
	// the machine's, so that the vault's history is the same everywhere.
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "script", "GIT_AUTHOR_EMAIL": "script@example.com", "GIT_COMMITTER_NAME": "script", "GIT_COMMITTER_EMAIL": "script@example.com",
		"GIT_AUTHOR_DATE": "2026-11-29T10:30:00Z", "GIT_COMMITTER_DATE": "2026-11-29T10:30:00Z",
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
	} {
		t.Setenv(k, v)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(string(data))
			answer, structured := runScript(t, a)
			if *updateScripts {
				a.set("answer", answer)
				a.set("structured", structured)
				if err := os.WriteFile(file, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want, _ := a.get("answer"); want != answer {
				t.Errorf("answer differs (run go test ./cmd/vaultmcp -run TestScripts -update and review the diff):\n--- want\n%s--- got\n%s", want, answer)
			}
			if want, _ := a.get("structured"); want != structured {
				t.Errorf("structured content differs (run -update and review):\n--- want\n%s--- got\n%s", want, structured)
			}
		})
	}
}

// runScript builds the script's vault, makes its calls and returns the
// request's answer and structured content, normalised.
func runScript(t *testing.T, a archive) (string, string) {
	t.Helper()
	dir := copyExampleVault(t)
	if rm, ok := a.get("rm"); ok {
		for _, p := range strings.Fields(rm) {
			if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				t.Fatal(err)
			}
		}
	}
	changed := false
	for _, f := range a.files {
		p, ok := strings.CutPrefix(f.name, "vault/")
		if !ok {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
		changed = true
	}
	if _, ok := a.get("rm"); ok || changed {
		gitOut(t, dir, "add", "-A")
		gitOut(t, dir, "commit", "-q", "-m", "script files")
	}
	opts := vault.Options{Dir: dir, Now: func() time.Time { return scriptNow }}
	sopts := mcpserver.Options{Version: "test"}
	if env, ok := a.get("env"); ok {
		for _, kv := range strings.Fields(env) {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "VAULT_LANG":
				opts.Lang, sopts.Lang = v, v
			case "VAULT_READ_ONLY":
				on, err := yesNo(k, v)
				if err != nil {
					t.Fatal(err)
				}
				opts.ReadOnly, sopts.ReadOnly = on, on
			default:
				t.Fatalf("env: %s is not a setting scripts know", k)
			}
		}
	}
	ctx := context.Background()
	svc, err := vault.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(svc, sopts).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "script", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		ss.Wait()
	}()

	do := func(c scriptCall) (*mcp.CallToolResult, string) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Arguments})
		if err != nil {
			t.Fatalf("%s: protocol error: %v", c.Tool, err)
		}
		var text strings.Builder
		for _, content := range res.Content {
			if tc, ok := content.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return res, text.String()
	}
	lastCommit := ""
	if setup, ok := a.get("setup"); ok {
		for _, line := range strings.Split(strings.TrimSpace(setup), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var c scriptCall
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				t.Fatalf("setup line %q: %v", line, err)
			}
			res, text := do(c)
			if res.IsError {
				t.Fatalf("setup call %s failed: %s", c.Tool, text)
			}
			if ids := commitID.FindAllString(text, -1); len(ids) > 0 {
				lastCommit = ids[0]
			}
		}
	}
	req, ok := a.get("request")
	if !ok {
		t.Fatal("no request section")
	}
	req = strings.ReplaceAll(req, "$COMMIT", lastCommit)
	var c scriptCall
	if err := json.Unmarshal([]byte(req), &c); err != nil {
		t.Fatalf("request: %v", err)
	}
	if c.Method == "tools/list" {
		return listTools(t, cs), ""
	}
	res, text := do(c)
	answer := text
	if res.IsError {
		answer = "isError: true\n" + text
	}
	if !strings.HasSuffix(answer, "\n") {
		answer += "\n"
	}
	structured := ""
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		structured = buf.String() + "\n"
	}
	norm := func(s string) string { return commitID.ReplaceAllString(s, "<commit>") }
	return norm(answer), norm(structured)
}

// listTools is the answer of tools/list: one tool a line with its hints.
func listTools(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tool := range res.Tools {
		var hints []string
		if a := tool.Annotations; a != nil {
			if a.ReadOnlyHint {
				hints = append(hints, "read-only")
			}
			if a.DestructiveHint != nil && *a.DestructiveHint {
				hints = append(hints, "destructive")
			}
			if a.IdempotentHint {
				hints = append(hints, "idempotent")
			}
		}
		fmt.Fprintf(&b, "%s (%s)\n", tool.Name, strings.Join(hints, ", "))
	}
	return b.String()
}

// TestParseArchive: the txtar reader and writer round-trip.
func TestParseArchive(t *testing.T) {
	src := "comment line\n\n-- a --\nx\n-- b/c.md --\n-- d --\ny\nz\n"
	a := parseArchive(src)
	if a.comment != "comment line\n\n" || len(a.files) != 3 || a.files[0].data != "x\n" || a.files[1].data != "" || a.files[2].data != "y\nz\n" {
		t.Fatalf("%+v", a)
	}
	if a.format() != src {
		t.Errorf("format:\n%q\nwant\n%q", a.format(), src)
	}
	names := []string{}
	for _, f := range a.files {
		names = append(names, f.name)
	}
	if !slices.Equal(names, []string{"a", "b/c.md", "d"}) {
		t.Errorf("names %v", names)
	}
}
