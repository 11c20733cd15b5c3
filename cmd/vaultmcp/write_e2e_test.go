package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var shaLine = regexp.MustCompile(`SHA-256: ([0-9a-f]{64})`)

func TestStdioEveryWriteTool(t *testing.T) {
	vault := copyExampleVault(t)
	s := connect(t, "VAULT_PATH="+vault)

	text, st, isErr := call(t, s, "vault_write_note", map[string]any{"path": "02-wiki/go/e2e-note.md", "content": "# E2E note\n\nThe flibbertigibbet pattern.\n", "frontmatter": map[string]any{"tags": []any{"go"}}})
	if isErr || !strings.Contains(text, "Commit: yes") || !strings.Contains(text, "```diff") || st["action"] != "created" {
		t.Fatalf("write: %s", text)
	}
	text, _, _ = call(t, s, "vault_search", map[string]any{"query": "flibbertigibbet"})
	if !strings.Contains(text, "02-wiki/go/e2e-note.md:") {
		t.Fatalf("new note not searchable at once:\n%s", text)
	}
	text, _, isErr = call(t, s, "vault_write_note", map[string]any{"path": "02-wiki/go/e2e-note.md", "content": "# Clobber\n"})
	if !isErr || !strings.Contains(text, "CONFLICT") {
		t.Fatalf("replace without hash: %s", text)
	}
	note, _, _ := call(t, s, "vault_get_note", map[string]any{"path": "02-wiki/go/e2e-note.md"})
	m := shaLine.FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("no SHA-256 in get_note:\n%s", note)
	}
	text, _, isErr = call(t, s, "vault_write_note", map[string]any{"path": "02-wiki/go/e2e-note.md", "content": "# E2E note\n\nThe flibbertigibbet pattern, revised.\n", "expected_sha256": m[1]})
	if isErr || !strings.Contains(text, "Replaced") {
		t.Fatalf("replace: %s", text)
	}
	text, _, isErr = call(t, s, "vault_edit_note", map[string]any{"path": "02-wiki/go/e2e-note.md", "old_text": "revised", "new_text": "edited"})
	if isErr || !strings.Contains(text, "-The flibbertigibbet pattern, revised.") {
		t.Fatalf("edit: %s", text)
	}
	text, st, isErr = call(t, s, "vault_move", map[string]any{"from": "02-wiki/go/e2e-note.md", "to": "02-wiki/http/e2e-moved.md"})
	if isErr || st["action"] != "moved" {
		t.Fatalf("move: %s", text)
	}
	if _, err := os.Stat(filepath.Join(vault, "02-wiki/http/e2e-moved.md")); err != nil {
		t.Fatal(err)
	}
	text, st, isErr = call(t, s, "vault_delete", map[string]any{"path": "02-wiki/http/e2e-moved.md", "confirm": true})
	if isErr || st["action"] != "deleted" || !strings.Contains(text, "git checkout") {
		t.Fatalf("delete: %s", text)
	}
	commit, _ := st["version"].(string)
	text, _, isErr = call(t, s, "vault_undo", map[string]any{"commit": commit})
	if isErr || !strings.Contains(text, "Commit: yes") {
		t.Fatalf("undo: %s", text)
	}
	if _, err := os.Stat(filepath.Join(vault, "02-wiki/http/e2e-moved.md")); err != nil {
		t.Fatalf("undo did not restore the note: %v", err)
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"vault_write_note", map[string]any{"path": "../escape.md", "content": "x"}, "PATH_ESCAPE"},
		{"vault_write_note", map[string]any{"path": "_templates/x.md", "content": "x"}, "PROTECTED_PATH"},
		{"vault_write_note", map[string]any{"path": "99-archive/x.md", "content": "x"}, "PROTECTED_PATH"},
		{"vault_write_note", map[string]any{"path": ".git/x.md", "content": "x"}, "HIDDEN_SEGMENT"},
		{"vault_write_note", map[string]any{"path": "x.sh", "content": "x"}, "INVALID_EXTENSION"},
		{"vault_edit_note", map[string]any{"path": "02-wiki/go/retry-backoff.md", "old_text": "the", "new_text": "x"}, "NOT_UNIQUE"},
		{"vault_edit_note", map[string]any{"path": "02-wiki/go/retry-backoff.md", "old_text": "no such text anywhere", "new_text": "x"}, "NO_MATCH"},
		{"vault_move", map[string]any{"from": "02-wiki/go/retry-backoff.md", "to": "02-wiki/go/context.md"}, "ALREADY_EXISTS"},
		{"vault_move", map[string]any{"from": "02-wiki/go/retry-backoff.md", "to": "02-wiki/brand-new/x.md"}, "NEEDS_CONFIRMATION"},
		{"vault_delete", map[string]any{"path": "02-wiki/go/go-moc.md"}, "REFUSED"},
		{"vault_delete", map[string]any{"path": "02-wiki/go/retry-backoff.md"}, "NEEDS_CONFIRMATION"},
		{"vault_undo", map[string]any{"commit": "zzzz"}, "commit"},
	} {
		text, _, isErr := call(t, s, tc.tool, tc.args)
		if !isErr || !strings.Contains(text, tc.want) || strings.Contains(text, vault) {
			t.Errorf("%s %v: isError=%v %q (want %q)", tc.tool, tc.args, isErr, text, tc.want)
		}
	}
	status, _ := exec.Command("git", "-C", vault, "status", "--porcelain").Output()
	if len(strings.TrimSpace(string(status))) != 0 {
		t.Errorf("work tree not clean after committed writes:\n%s", status)
	}
}

// TestTwoProcessesConcurrentWrites runs two servers on one vault, each
// creating notes from many goroutines at once: nothing may be lost, and every
// commit must hold exactly its own note.
func TestTwoProcessesConcurrentWrites(t *testing.T) {
	vault := copyExampleVault(t)
	const perProcess = 12
	var wg sync.WaitGroup
	for p := 0; p < 2; p++ {
		s := connect(t, "VAULT_PATH="+vault)
		for i := 0; i < perProcess; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path := fmt.Sprintf("01-raw/concurrent/p%d-n%02d.md", p, i)
				text, _, isErr := call(t, s, "vault_write_note", map[string]any{"path": path, "content": fmt.Sprintf("# %s\n", path)})
				if isErr || !strings.Contains(text, "Commit: yes") {
					t.Errorf("%s: %s", path, text)
				}
			}()
		}
	}
	wg.Wait()
	entries, err := os.ReadDir(filepath.Join(vault, "01-raw/concurrent"))
	if err != nil || len(entries) != 2*perProcess {
		t.Fatalf("notes on disk: %d, %v", len(entries), err)
	}
	out, err := exec.Command("git", "-C", vault, "log", "--format=%x00%s", "--name-only", "-n", fmt.Sprint(2*perProcess)).Output()
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimPrefix(string(out), "\x00"), "\x00")
	if len(blocks) != 2*perProcess {
		t.Fatalf("%d commits:\n%s", len(blocks), out)
	}
	for _, b := range blocks {
		lines := strings.Fields(b)
		// "docs(vault): create <path>" then exactly that one path.
		if len(lines) != 4 || lines[2] != lines[3] {
			t.Errorf("commit does not hold exactly its note: %q", b)
		}
	}
}
