package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// runBinary runs vaultmcp with args and the clean environment plus env,
// and returns its stdout, stderr and exit status.
func runBinary(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// TestHelp: --help, -h and help print the overview on stdout and succeed;
// a command's -h lists its flags, also on stdout.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		out, errOut, code := runBinary(t, nil, args...)
		if code != 0 || !strings.Contains(out, "Usage:\n  vaultmcp [serve]") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	for _, c := range []struct {
		cmd, flag string
	}{{"search", "-limit"}, {"serve", "-http"}, {"eval", "-queries"}, {"bench", "-sizes"}} {
		out, errOut, code := runBinary(t, nil, c.cmd, "-h")
		if code != 0 || !strings.Contains(out, "Usage: vaultmcp") || !strings.Contains(out, c.flag) || errOut != "" {
			t.Errorf("%s -h: exit %d, stdout %q, stderr %q", c.cmd, code, out, errOut)
		}
	}
	// The team server's commands: its overview, then the flags of the
	// command asked about, on stdout, however the help is asked for.
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"team-server", "-h"}, "-oauth-issuer"},
		{[]string{"team-server", "help"}, "-lease-ttl"},
		{[]string{"team-server", "--listen", "127.0.0.1:0", "--help"}, "-tls-cert"},
		{[]string{"team-server", "project", "add", "-h"}, "-remote"},
		{[]string{"team-server", "project", "list", "-h"}, "-db"},
		{[]string{"team-server", "key", "add", "NAME", "-h"}, "-read-only"},
		{[]string{"team-server", "key", "revoke", "--help"}, "-data"},
	} {
		out, errOut, code := runBinary(t, nil, c.args...)
		if code != 0 || !strings.Contains(out, "vaultmcp team-server key add") || !strings.Contains(out, "Flags of ") ||
			!strings.Contains(out, c.flag) || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
	}
	// "project" and "key" alone asked for help list their commands, as
	// team-server -h does, instead of refusing "-h" as an unknown command.
	for _, args := range [][]string{
		{"team-server", "project", "-h"}, {"team-server", "project", "help"},
		{"team-server", "key", "--help"}, {"team-server", "key", "help"},
	} {
		out, errOut, code := runBinary(t, nil, args...)
		if code != 0 || !strings.Contains(out, "vaultmcp team-server project add") || !strings.Contains(out, "vaultmcp team-server key revoke") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestVersion: version and --version print the version and succeed
// (--version, a flag, was taken for serve's and refused).
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := runBinary(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "vaultmcp ") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	// It takes no argument: a flag or a word after it is refused, not
	// ignored; -h says what it does.
	for _, args := range [][]string{{"version", "--json"}, {"version", "extra"}, {"--version", "-v"}} {
		out, errOut, code := runBinary(t, nil, args...)
		if code != 2 || out != "" || errOut != "vaultmcp: version: unexpected argument \""+args[1]+"\"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if out, errOut, code := runBinary(t, nil, "version", "-h"); code != 0 || !strings.HasPrefix(out, "Usage: vaultmcp version") || errOut != "" {
		t.Errorf("version -h: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestBuildVersion: a binary built without -ldflags reports the version
// the go command recorded (a tag or a pseudo-version naming the commit),
// else the commit of its vcs settings, and "dev" only when it has neither.
func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "c53a79238340bfe5d48e3b2c4e5589e5b32c1285"
	for _, c := range []struct {
		v    string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}}, true, "v1.2.3"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}}, true, "v0.9.0"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261205013500-c53a79238340+dirty"}, Settings: vcs(rev, "true")}, true, "v0.0.0-20261205013500-c53a79238340+dirty"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, true, "dev-c53a79238340"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, true, "dev-c53a79238340+dirty"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"dev", nil, false, "dev"},
	} {
		if got := buildVersion(c.v, c.bi, c.ok); got != c.want {
			t.Errorf("buildVersion(%q, %+v) = %q, want %q", c.v, c.bi, got, c.want)
		}
	}
}

// TestReadOnlyOnlyWhereItMeansSomething: --read-only is a flag of serve
// only; search, eval and bench refuse it as an unknown flag.
func TestReadOnlyOnlyWhereItMeansSomething(t *testing.T) {
	vault := copyExampleVault(t)
	for _, cmd := range []string{"search", "eval", "bench"} {
		out, errOut, code := runBinary(t, nil, cmd, "--vault", vault, "--read-only", "x")
		if code != 2 || !strings.Contains(errOut, "flag provided but not defined: -read-only") || out != "" {
			t.Errorf("%s --read-only: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
		if help, _, _ := runBinary(t, nil, cmd, "-h"); strings.Contains(help, "read-only") {
			t.Errorf("%s -h offers --read-only:\n%s", cmd, help)
		}
	}
	if help, _, _ := runBinary(t, nil, "serve", "-h"); !strings.Contains(help, "-read-only") {
		t.Errorf("serve -h lacks --read-only:\n%s", help)
	}
}

// TestSearchLimitAndExitStatus: --limit outside 1..50 is refused as the
// MCP tool refuses it; a search exits 0 when it found something, 1 when
// it found nothing (as grep), 2 on trouble.
func TestSearchLimitAndExitStatus(t *testing.T) {
	vault := copyExampleVault(t)
	env := []string{"VAULTMCP_CACHE_DIR=" + t.TempDir()}
	for _, limit := range []string{"0", "51", "-1"} {
		out, errOut, code := runBinary(t, env, "search", "--vault", vault, "--limit", limit, "retry")
		if code != 2 || strings.TrimSpace(errOut) != "vaultmcp: --limit: must be between 1 and 50" || out != "" {
			t.Errorf("--limit %s: exit %d, stdout %q, stderr %q", limit, code, out, errOut)
		}
	}
	out, _, code := runBinary(t, env, "search", "--vault", vault, "retry backoff")
	if code != 0 || !strings.Contains(out, "1. 02-wiki/") {
		t.Errorf("a match: exit %d\n%s", code, out)
	}
	out, errOut, code := runBinary(t, env, "search", "--vault", vault, "xylophonequartz")
	if code != 1 || !strings.Contains(out, `No results for "xylophonequartz".`) || errOut != "" {
		t.Errorf("no match: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, code = runBinary(t, env, "search", "--json", "--vault", vault, "xylophonequartz")
	if code != 1 || !strings.Contains(out, `"results": []`) {
		t.Errorf("no match, --json: exit %d\n%s", code, out)
	}
	_, errOut, code = runBinary(t, env, "search", "--vault", filepath.Join(vault, "missing"), "retry")
	if code != 2 || !strings.Contains(errOut, "no such directory") {
		t.Errorf("missing vault: exit %d, stderr %q", code, errOut)
	}
}

// TestSearchRefreshesSnapshot: the search command starts from the index
// snapshot and rewrites it when it found changes, so that the next search
// reads only what changed since.
func TestSearchRefreshesSnapshot(t *testing.T) {
	vault := copyExampleVault(t)
	cache := t.TempDir()
	env := []string{"VAULTMCP_CACHE_DIR=" + cache, "VAULTMCP_LOG_LEVEL=info"}
	snap := func() os.FileInfo {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(cache, "index-*.snap"))
		if len(m) != 1 {
			t.Fatalf("snapshot files %v", m)
		}
		fi, err := os.Stat(m[0])
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	_, log, code := runBinary(t, env, "search", "--vault", vault, "retry")
	if code != 0 || !strings.Contains(log, "no index snapshot yet") || !strings.Contains(log, "index snapshot written") {
		t.Fatalf("first search: exit %d\n%s", code, log)
	}
	first := snap()

	_, log, _ = runBinary(t, env, "search", "--vault", vault, "retry")
	if !strings.Contains(log, "index snapshot loaded") || !strings.Contains(log, "read=0") || strings.Contains(log, "index snapshot written") {
		t.Errorf("second search did not start from the snapshot, or rewrote it:\n%s", log)
	}
	if !os.SameFile(snap(), first) { // a rewrite renames a new file in; a read marks it used
		t.Error("an unchanged vault's snapshot was rewritten")
	}

	note := filepath.Join(vault, "02-wiki", "go", "context.md")
	data, _ := os.ReadFile(note)
	later := time.Now().Add(time.Minute)
	os.WriteFile(note, append(data, "\nThe word zanzibarquokka.\n"...), 0o644)
	os.Chtimes(note, later, later)
	out, log, code := runBinary(t, env, "search", "--vault", vault, "zanzibarquokka")
	if code != 0 || !strings.Contains(out, "02-wiki/go/context.md") || !strings.Contains(log, "read=1") || !strings.Contains(log, "index snapshot written") {
		t.Errorf("after an edit: exit %d\n%s\n%s", code, out, log)
	}
	_, log, _ = runBinary(t, env, "search", "--vault", vault, "zanzibarquokka")
	if !strings.Contains(log, "read=0") {
		t.Errorf("the refreshed snapshot was not used:\n%s", log)
	}
}

// TestSearchLogsWhenNotATerminal: with stderr not a terminal (a script, a
// CI log), warnings are logged there; a person's terminal is covered by
// TestSearchOnATerminal.
func TestSearchLogsWhenNotATerminal(t *testing.T) {
	vault := copyExampleVault(t)
	os.WriteFile(filepath.Join(vault, "bad:name.md"), []byte("# Bad\n\nretry\n"), 0o644)
	out, errOut, code := runBinary(t, []string{"VAULTMCP_CACHE_DIR=off"}, "search", "--vault", vault, "retry")
	if code != 0 || !strings.Contains(errOut, "level=WARN") || !strings.Contains(out, "Could not index: bad:name.md") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestHugePagesSetting: VAULTMCP_HUGEPAGES is on or off (either way the
// search answers the same); anything else is refused in one line naming
// the variable.
func TestHugePagesSetting(t *testing.T) {
	vault := copyExampleVault(t)
	var first string
	for _, v := range []string{"on", "off", "OFF", ""} {
		env := []string{"VAULTMCP_CACHE_DIR=off", "VAULTMCP_HUGEPAGES=" + v}
		out, errOut, code := runBinary(t, env, "search", "--vault", vault, "retry backoff")
		if code != 0 || !strings.Contains(out, "1. 02-wiki/") {
			t.Errorf("VAULTMCP_HUGEPAGES=%q: exit %d, stdout %q, stderr %q", v, code, out, errOut)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("VAULTMCP_HUGEPAGES=%q answers otherwise:\n%s\nthan on:\n%s", v, out, first)
		}
	}
	out, errOut, code := runBinary(t, []string{"VAULTMCP_HUGEPAGES=maybe"}, "search", "--vault", vault, "retry")
	if code != 2 || strings.TrimSpace(errOut) != `vaultmcp: VAULTMCP_HUGEPAGES: "maybe" is not on or off` || out != "" {
		t.Errorf("VAULTMCP_HUGEPAGES=maybe: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestBadFlagReportedOnce: a bad flag (unknown, or a value of the wrong
// kind) exits 2 with the command's usage on stderr and the error once, as
// its last line.
func TestBadFlagReportedOnce(t *testing.T) {
	vault := t.TempDir()
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"search", "--vault", vault, "--bogus", "x"}, "flag provided but not defined: -bogus"},
		{[]string{"search", "--vault", vault, "--limit", "abc", "x"}, `invalid value "abc" for flag -limit: parse error`},
		{[]string{"--vault", vault, "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"eval", "--vault", vault, "--json=maybe"}, `invalid boolean value "maybe" for -json: parse error`},
		{[]string{"team-server", "--data", vault, "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		out, errOut, code := runBinary(t, nil, c.args...)
		if code != 2 || out != "" || strings.Count(errOut, c.err) != 1 || !strings.HasSuffix(errOut, "\nvaultmcp: "+c.err+"\n") ||
			!strings.Contains(errOut, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s", c.args, code, out, errOut)
		}
	}
}

// TestCacheDirTildeRefused: VAULTMCP_CACHE_DIR=~/... (as an MCP client's
// configuration passes it, unexpanded) is refused in one line naming the
// variable, and no folder named ~ appears where the command ran.
func TestCacheDirTildeRefused(t *testing.T) {
	vault := copyExampleVault(t)
	wd := t.TempDir()
	cmd := exec.Command(binary, "search", "--vault", vault, "retry")
	cmd.Dir = wd
	cmd.Env = append(cleanEnv(), "VAULTMCP_CACHE_DIR=~/.cache/vaultmcp")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 ||
		strings.TrimSpace(stderr.String()) != `vaultmcp: VAULTMCP_CACHE_DIR "~/.cache/vaultmcp": ~ is not expanded here: give the full path` || stdout.String() != "" {
		t.Errorf("err %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(wd, "~")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder named ~ was made where the command ran: %v", err)
	}
}
