package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// serve keeps the write journal of a vault in no git repository under
// $XDG_STATE_HOME/vaultmcp (it must outlive a reboot), and nothing of it in
// the vault.
func TestServeJournalInStateDir(t *testing.T) {
	vault := copyExampleVault(t)
	if err := os.RemoveAll(filepath.Join(vault, ".git")); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	s := connect(t, "VAULT_PATH="+vault, "XDG_STATE_HOME="+state)
	text, _, isErr := call(t, s, "vault_write_note", map[string]any{"path": "02-wiki/go/journal-check.md", "content": "# Journal check\n\nA note written to see where the journal goes.\n"})
	if isErr {
		t.Fatalf("write: %s", text)
	}
	journals, _ := filepath.Glob(filepath.Join(state, "vaultmcp", "vaultmcp-*-journal"))
	if len(journals) != 1 {
		t.Fatalf("journal folders under XDG_STATE_HOME: %v, want one", journals)
	}
	if left, _ := filepath.Glob(filepath.Join(journals[0], "*")); len(left) != 0 {
		t.Errorf("records left after the write: %v", left)
	}
	filepath.WalkDir(vault, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "journal") && !strings.Contains(d.Name(), "journal-check") {
			t.Errorf("journal file in the vault: %s", p)
		}
		return nil
	})
}

func TestStateDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the XDG folders are not Windows'")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	if got, want := stateDir(), filepath.Join(home, ".local", "state", "vaultmcp"); got != want {
		t.Errorf("default: %q, want %q", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "/srv/state")
	if got, want := stateDir(), filepath.Join("/srv/state", "vaultmcp"); got != want {
		t.Errorf("XDG_STATE_HOME: %q, want %q", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "relative/state") // not absolute: ignored, as the XDG rules say
	if got, want := stateDir(), filepath.Join(home, ".local", "state", "vaultmcp"); got != want {
		t.Errorf("relative XDG_STATE_HOME: %q, want %q", got, want)
	}
}
