// Package envvars names the environment variables that configure vaultmcp,
// so that whatever starts vaultmcp as a child process (the end-to-end tests,
// the benchmarks' stdio client) gives it a clean environment: none of the
// user's own settings (their vault, VAULT_READ_ONLY, a team server's URL)
// leaks into a run that must not see them. It is the one list; the test of
// cmd/vaultmcp checks that every variable the command reads is on it.
package envvars

import "strings"

// Settings are the variables that choose the vault, the mode and the
// behaviour of vaultmcp (README, Environment). Not on the list, because a
// caller sets them on purpose or they are the Go runtime's:
// VAULTMCP_CACHE_DIR, GOGC, GOMEMLIMIT, and git's own variables.
var Settings = []string{
	"VAULT_PATH", "OBSIDIAN_VAULT_PATH", "VAULT_READ_ONLY", "VAULT_LANG", "VAULT_AUTO_PUSH",
	"VAULTMCP_API_KEY", "VAULTMCP_LOG_LEVEL", "VAULTMCP_HUGEPAGES",
	"VAULTMCP_SESSION_TIMEOUT", "VAULTMCP_MAX_SESSIONS", "VAULTMCP_BODY_TIMEOUT", "VAULTMCP_ALLOWED_ORIGINS",
	"VAULTMCP_DATA", "VAULTMCP_DB", "VAULTMCP_OAUTH_ISSUER", "VAULTMCP_OAUTH_AUDIENCE", "VAULTMCP_TEST_CRASH", "NO_COLOR",
	"TEAM_VAULT_URL", "TEAM_VAULT_API_KEY", "TEAM_VAULT_PROJECT_ID", "TEAM_VAULT_READ_ONLY",
}

// Clean returns env (KEY=value entries, as os.Environ gives them) without
// the Settings.
func Clean(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !IsSetting(k) {
			out = append(out, kv)
		}
	}
	return out
}

// IsSetting reports whether the variable named k is one of the Settings.
func IsSetting(k string) bool {
	for _, s := range Settings {
		if s == k {
			return true
		}
	}
	return false
}
