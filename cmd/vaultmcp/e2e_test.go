package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/envvars"
	"github.com/vaultmcp/vaultmcp/internal/gittest"
)

// binary is the vaultmcp executable built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vaultmcp-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "vaultmcp")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building vaultmcp: " + err.Error())
	}
	// Index snapshots of the test vaults go to the temporary folder, never
	// to the user's cache.
	os.Setenv("VAULTMCP_CACHE_DIR", filepath.Join(dir, "cache"))
	// git reads none of the machine's configuration (after the build:
	// the go command keeps its own).
	cleanup, err := gittest.Isolate()
	if err != nil {
		panic(err)
	}
	code := m.Run()
	cleanup()
	os.RemoveAll(dir)
	os.Exit(code)
}

// copyExampleVault copies examples/vault into a temporary git repository.
func copyExampleVault(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "examples", "vault")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "example vault"}} {
		cmd := exec.Command("git", append([]string{"-C", dst}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dst
}

func connect(t *testing.T, env ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.Command(binary)
	cmd.Env = append(cleanEnv(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// cleanEnv is the environment without any vault setting of the developer's.
func cleanEnv() []string { return envvars.Clean(os.Environ()) }

func call(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	var structured map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &structured)
	}
	return text.String(), structured, res.IsError
}

func TestStdioEveryReadTool(t *testing.T) {
	vault := copyExampleVault(t)
	s := connect(t, "VAULT_PATH="+vault)
	if ins := s.InitializeResult().Instructions; !strings.Contains(ins, "vault_search") || !strings.Contains(ins, "path:line") {
		t.Errorf("instructions: %q", ins)
	}
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
		readTool := !strings.Contains("vault_write_note vault_edit_note vault_move vault_delete vault_undo vault_learn", tool.Name)
		if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != readTool {
			t.Errorf("%s: read-only hint should be %v", tool.Name, readTool)
		}
	}
	for _, want := range []string{"vault_search", "vault_get_note", "vault_list", "vault_backlinks", "vault_graph", "vault_history"} {
		if !names[want] {
			t.Errorf("tool %s missing", want)
		}
	}

	text, st, isErr := call(t, s, "vault_search", map[string]any{"query": "retry backoff"})
	if isErr || !strings.Contains(text, `result(s) for "retry backoff"`) || !strings.Contains(text, "\n> ") {
		t.Fatalf("search: %v\n%s", isErr, text)
	}
	results, _ := st["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("search structured: %v", st)
	}
	top := results[0].(map[string]any)["path"].(string)
	if !strings.Contains(text, top+":") {
		t.Errorf("text does not cite %s:\n%s", top, text)
	}
	if strings.Contains(text, vault) {
		t.Errorf("output shows the vault's absolute path")
	}

	text, st, isErr = call(t, s, "vault_get_note", map[string]any{"path": top})
	if isErr || !strings.HasPrefix(text, top+" — ") || st["sha256"] == "" {
		t.Fatalf("get_note: %v\n%s", isErr, text)
	}
	raw, _ := os.ReadFile(filepath.Join(vault, top))
	if !strings.Contains(text, string(raw)) {
		t.Errorf("get_note does not carry the raw note")
	}

	text, st, isErr = call(t, s, "vault_list", map[string]any{"type": "moc"})
	if isErr || !strings.Contains(text, "note(s):") || len(st["notes"].([]any)) < 2 {
		t.Fatalf("list: %v\n%s", isErr, text)
	}

	text, _, isErr = call(t, s, "vault_backlinks", map[string]any{"path": top})
	if isErr || !strings.Contains(text, top) {
		t.Fatalf("backlinks: %v\n%s", isErr, text)
	}

	text, st, isErr = call(t, s, "vault_graph", map[string]any{"include_broken": true})
	if isErr || !strings.HasPrefix(text, "Graph: ") || st["broken_count"].(float64) < 1 {
		t.Fatalf("graph: %v\n%s", isErr, text)
	}

	text, st, isErr = call(t, s, "vault_history", map[string]any{"path": top})
	if isErr || len(st["versions"].([]any)) != 1 || !strings.Contains(text, "example vault") {
		t.Fatalf("history: %v\n%s", isErr, text)
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"vault_search", map[string]any{"query": ""}, "query"},
		{"vault_search", map[string]any{"query": "x", "limit": 99}, "limit"},
		{"vault_get_note", map[string]any{"path": "../../etc/passwd"}, "PATH_ESCAPE"},
		{"vault_get_note", map[string]any{"path": "/etc/passwd"}, "PATH_ESCAPE"},
		{"vault_get_note", map[string]any{"path": ".git/config"}, "HIDDEN_SEGMENT"},
		{"vault_get_note", map[string]any{"path": "nope.md"}, "NOT_FOUND"},
		{"vault_backlinks", map[string]any{"path": "a\x00.md"}, "INVALID_PATH"},
		{"vault_graph", map[string]any{"max_nodes": 0.5}, ""},
	} {
		text, _, isErr := call(t, s, tc.tool, tc.args)
		if !isErr || !strings.Contains(text, tc.want) || strings.Contains(text, "\n") || strings.Contains(text, vault) {
			t.Errorf("%s %v: isError=%v text=%q (want one line with %q)", tc.tool, tc.args, isErr, text, tc.want)
		}
	}
}

func TestStdioPortuguese(t *testing.T) {
	s := connect(t, "VAULT_PATH="+copyExampleVault(t), "VAULT_LANG=pt")
	text, _, isErr := call(t, s, "vault_list", map[string]any{"type": "moc"})
	if isErr || !strings.Contains(text, "nota(s)") {
		t.Fatalf("pt list: %s", text)
	}
}

func TestReadOnlyRegistersNoWriteTool(t *testing.T) {
	s := connect(t, "VAULT_PATH="+copyExampleVault(t), "VAULT_READ_ONLY=1")
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 6 {
		t.Errorf("read-only server offers %d tools", len(tools.Tools))
	}
	for _, tool := range tools.Tools {
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("read-only server offers %s", tool.Name)
		}
	}
}

func TestVaultPathErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file.md")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		// A person who types vaultmcp alone is told where the commands are.
		{nil, nil, "no vault: set VAULT_PATH (or OBSIDIAN_VAULT_PATH) or pass --vault DIR (vaultmcp --help lists the commands)"},
		{[]string{"VAULT_PATH=" + filepath.Join(t.TempDir(), "missing")}, nil, "no such directory"},
		{[]string{"VAULT_PATH=" + file}, nil, "not a directory"},
		{[]string{"OBSIDIAN_VAULT_PATH=" + file}, nil, "not a directory"},
		{nil, []string{"--vault", file}, "not a directory"},
		{[]string{"VAULT_PATH=" + t.TempDir(), "VAULT_LANG=fr"}, nil, "VAULT_LANG"},
		// The path is quoted (blanks show), and a ~ that no shell expanded
		// (an MCP client's configuration) is named as the reason.
		{[]string{"VAULT_PATH=  "}, nil, `vault "  ": no such directory`},
		{[]string{"VAULT_PATH=~/no-such-vault-here"}, nil, `vault "~/no-such-vault-here": no such directory (~ is not expanded here: give the full path)`},
	} {
		cmd := exec.Command(binary, tc.args...)
		cmd.Env = append(cleanEnv(), tc.env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("%v %v: err = %v, want exit 1", tc.env, tc.args, err)
		}
		if stdout.Len() != 0 || !strings.Contains(stderr.String(), tc.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%v %v: stdout=%q stderr=%q", tc.env, tc.args, stdout.String(), stderr.String())
		}
	}
}

func TestSearchCommand(t *testing.T) {
	vault := copyExampleVault(t)
	out, err := exec.Command(binary, "search", "--vault", vault, "retry backoff").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "1. 02-wiki/") || !strings.Contains(string(out), "score ") {
		t.Fatalf("search output:\n%s", out)
	}
	out, err = exec.Command(binary, "search", "retry backoff", "--json", "--limit", "2", "--vault", vault).Output()
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results []struct {
			Path string `json:"path"`
			Line int    `json:"line"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != 2 || res.Results[0].Line < 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	cmd := exec.Command(binary, "search", "--vault", vault)
	if err := cmd.Run(); err == nil {
		t.Fatal("search without a query succeeded")
	}
}

func TestEvalCommand(t *testing.T) {
	out, err := exec.Command(binary, "eval", "--vault", filepath.Join("..", "..", "examples", "vault"), "--queries", filepath.Join("..", "..", "eval", "example.jsonl")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"hit@1", "MRR@10", "vaultmcp", "grep"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("eval output lacks %q:\n%s", want, out)
		}
	}
}
