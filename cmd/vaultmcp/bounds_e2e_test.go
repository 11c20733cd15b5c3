//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdioReadOnlyHardLink drives the binary with VAULT_READ_ONLY=1 on a
// vault holding leak.md, a hard link to a file outside it: the note is not
// indexed, the search footer names it, vault_get_note refuses it with a
// clear error, and nothing of the outside file is ever sent. Without
// VAULT_READ_ONLY the same note is read as before.
func TestStdioReadOnlyHardLink(t *testing.T) {
	vault := copyExampleVault(t)
	const word = "wombatoutsideword"
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("# Secret\n\n"+word+" is outside the vault.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(vault, "leak.md")); err != nil {
		t.Fatal(err)
	}

	ro := connect(t, "VAULT_PATH="+vault, "VAULT_READ_ONLY=1")
	text, _, isErr := call(t, ro, "vault_search", map[string]any{"query": word})
	if isErr || !strings.HasPrefix(text, "No results") || !strings.Contains(text, "Could not index: leak.md") {
		t.Errorf("read-only search for the outside word:\n%s", text)
	}
	text, structured, isErr := call(t, ro, "vault_search", map[string]any{"query": "retry backoff"})
	if isErr || !strings.Contains(text, "Could not index: leak.md") {
		t.Errorf("read-only search footer:\n%s", text)
	}
	if u, _ := structured["unindexed"].([]any); len(u) != 1 || u[0] != "leak.md" {
		t.Errorf("structured unindexed = %v", structured["unindexed"])
	}
	text, _, isErr = call(t, ro, "vault_get_note", map[string]any{"path": "leak.md"})
	if !isErr || !strings.HasPrefix(text, "NOT_A_NOTE: path: ") || !strings.Contains(text, "hard links") || strings.Contains(text, "\n") {
		t.Errorf("read-only vault_get_note(leak.md): error %v\n%s", isErr, text)
	}
	if strings.Contains(text, word) || strings.Contains(text, vault) {
		t.Errorf("the refusal leaks: %s", text)
	}

	rw := connect(t, "VAULT_PATH="+vault)
	text, _, isErr = call(t, rw, "vault_get_note", map[string]any{"path": "leak.md"})
	if isErr || !strings.Contains(text, word) {
		t.Errorf("read-write vault_get_note(leak.md): error %v\n%s", isErr, text)
	}
}

// TestStdioPathBounds sends the path of 2,046 folders of issue 9 to the
// binary: vault_write_note refuses it at once with INVALID_PATH naming the
// limit, and no folder appears in the vault.
func TestStdioPathBounds(t *testing.T) {
	vault := copyExampleVault(t)
	s := connect(t, "VAULT_PATH="+vault)
	deep := strings.Repeat("deep/", 2046) + "x.md"
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"vault_write_note", map[string]any{"path": deep, "content": "# x\n"}},
		{"vault_write_note", map[string]any{"path": strings.Repeat("d/", 64) + "x.md", "content": "# x\n"}},
		{"vault_get_note", map[string]any{"path": deep}},
	} {
		text, _, isErr := call(t, s, tc.tool, tc.args)
		if !isErr || !strings.HasPrefix(text, "INVALID_PATH: path: ") || !(strings.Contains(text, "1024 bytes") || strings.Contains(text, "64 segments")) {
			t.Errorf("%s: error %v: %s", tc.tool, isErr, text)
		}
	}
	for _, name := range []string{"deep", "d"} {
		if _, err := os.Lstat(filepath.Join(vault, name)); !os.IsNotExist(err) {
			t.Errorf("folder %s created: %v", name, err)
		}
	}
}
