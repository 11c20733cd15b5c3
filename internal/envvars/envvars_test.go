package envvars

import (
	"slices"
	"testing"
)

// TestClean drops every setting, keeps the rest as they are.
func TestClean(t *testing.T) {
	env := []string{"HOME=/h", "VAULT_PATH=/v", "VAULT_LANG=pt", "PATH=/bin", "TEAM_VAULT_URL=http://x", "VAULTMCP_CACHE_DIR=/c", "VAULT_PATHX=1", "EMPTY="}
	got := Clean(env)
	want := []string{"HOME=/h", "PATH=/bin", "VAULTMCP_CACHE_DIR=/c", "VAULT_PATHX=1", "EMPTY="}
	if !slices.Equal(got, want) {
		t.Errorf("Clean = %q, want %q", got, want)
	}
	for _, s := range Settings {
		if !IsSetting(s) || len(Clean([]string{s + "=x"})) != 0 {
			t.Errorf("%s not cleaned", s)
		}
	}
}
