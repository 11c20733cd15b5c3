package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ptVaultFiles is a small Portuguese vault: tipo/criado keys, Notas and
// Capturas sections, and a Templater template.
var ptVaultFiles = map[string]string{
	"00-index/index-knowledge.md":  "---\ntipo: moc\natualizado: 2026-02-01\n---\n# Índice\n\n## Domínios\n\n- [[docker-moc]] — contêineres\n",
	"02-wiki/docker/docker-moc.md": "---\ntipo: moc\ntags: [docker]\ncriado: 2026-02-01\n---\n# Docker\n\n## Notas\n\n- [[camadas]] — cache de camadas\n",
	"02-wiki/docker/camadas.md":    "---\ntipo: wiki\ntags: [docker]\ncriado: 2026-02-01\n---\n# Camadas\n\nO cache de camadas acelera o build.\n",
	"04-daily/2026-01-10.md":       "---\ntipo: daily\n---\n# 2026-01-10\n\n## Capturas\n\n- 09:14 [[camadas]] (pattern)\n",
	"_templates/wiki.md":           "---\ntipo: wiki\ntags: \ncriado: <% tp.date.now(\"YYYY-MM-DD\") %>\n---\n\n# <% tp.file.title %>\n\n## Contexto\n",
}

// writeGitVault writes files into a new git repository with one commit.
func writeGitVault(t *testing.T, files map[string]string) string {
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
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "vault"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// TestStdioPortugueseVaultDetected: with VAULT_LANG unset, the server on a
// Portuguese vault says so in its start log line and writes the vault's own
// keys and sections (tool output stays English); VAULT_LANG=en still wins.
func TestStdioPortugueseVaultDetected(t *testing.T) {
	for _, c := range []struct {
		env       []string
		wantLog   string
		wantKeys  string
		wantDaily string
	}{
		{nil, "profile=pt", "\ntipo: wiki\n", "## Capturas"},
		{[]string{"VAULT_LANG=en"}, `profile=en profile_from="set by --lang or VAULT_LANG"`, "\ntype: wiki\n", "## Captures"},
	} {
		vault := writeGitVault(t, ptVaultFiles)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.Command(binary)
		cmd.Env = append(append(cleanEnv(), "VAULT_PATH="+vault), c.env...)
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			cancel()
			t.Fatalf("connect: %v\n%s", err, stderr)
		}
		text, st, isErr := call(t, s, "vault_learn", map[string]any{
			"title": "Rotação de segredos", "insight": "Rotacione os segredos do registro a cada trimestre.", "context": "auditoria", "domain": "docker",
		})
		s.Close()
		cancel()
		if isErr || !strings.Contains(text, "Commit: yes") {
			t.Fatalf("%v: learn: %s", c.env, text)
		}
		note, err := os.ReadFile(filepath.Join(vault, st["path"].(string)))
		if err != nil || !strings.Contains(string(note), c.wantKeys) || strings.Contains(string(note), "<%") || !strings.Contains(string(note), "\n# Rotação de segredos\n") {
			t.Errorf("%v: note: %v\n%s", c.env, err, note)
		}
		today := time.Now().Format("2006-01-02")
		daily, err := os.ReadFile(filepath.Join(vault, "04-daily", today+".md"))
		if err != nil || !strings.Contains(string(daily), c.wantDaily) {
			t.Errorf("%v: daily note: %v\n%s", c.env, err, daily)
		}
		if log := stderr.String(); !strings.Contains(log, "vault indexed") || !strings.Contains(log, c.wantLog) {
			t.Errorf("%v: the start log does not say %s:\n%s", c.env, c.wantLog, log)
		}
	}
}

// TestEvalVerboseSaysProfile: eval -v names the profile and why.
func TestEvalVerboseSaysProfile(t *testing.T) {
	vault := writeGitVault(t, ptVaultFiles)
	queries := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(queries, []byte(`{"query": "cache de camadas", "relevant": "02-wiki/docker/camadas.md"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "eval", "-v", "--vault", vault, "--queries", queries)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "profile: pt (detected from the vault: ") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestSearchExplainSaysProfile: search --explain names the profile and why
// (and a plain search does not).
func TestSearchExplainSaysProfile(t *testing.T) {
	vault := writeGitVault(t, ptVaultFiles)
	const detected = "profile: pt (detected from the vault: "
	for _, c := range []struct {
		args []string
		env  []string
		want string // "" for no profile line
	}{
		{[]string{"search", "--explain", "--vault", vault, "cache de camadas"}, nil, detected},
		{[]string{"search", "--vault", vault, "cache de camadas"}, nil, ""},
		// Chosen by the flag or the variable, it says so, whichever it was.
		{[]string{"search", "--explain", "--lang", "en", "--vault", vault, "cache de camadas"}, nil, "profile: en (set by --lang or VAULT_LANG)\n"},
		{[]string{"search", "--explain", "--vault", vault, "cache de camadas"}, []string{"VAULT_LANG=en"}, "profile: en (set by --lang or VAULT_LANG)\n"},
	} {
		cmd := exec.Command(binary, c.args...)
		cmd.Env = append(cleanEnv(), c.env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		if c.want == "" {
			if strings.Contains(string(out), "profile: ") {
				t.Errorf("%v: a profile line is shown:\n%s", c.args, out)
			}
		} else if !strings.HasPrefix(string(out), c.want) {
			t.Errorf("%v %v: the output does not start with %q:\n%s", c.env, c.args, c.want, out)
		}
	}
}
