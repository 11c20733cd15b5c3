package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/envvars"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/teamserver"
)

// readReadme returns the repository's README.
func readReadme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeSetUp: the README tells a newcomer what the set-up needs and
// what happens, in step with the code: the C compiler the race detector
// needs (and CI installs), where go install puts the binary and that GUI
// clients need its absolute path, the identity commits fall back to.
func TestReadmeSetUp(t *testing.T) {
	text := readReadme(t)
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	setup := text[strings.Index(text, "## Set-up"):strings.Index(text, "## Tools")]
	for _, want := range []string{
		"go test -race -count=1 ./...                           # the tests (what CI runs; needs gcc for -race)",
		"C compiler",
		"$(go env GOPATH)/bin",
		"absolute path",
		"`" + gitx.FallbackName + " <" + gitx.FallbackEmail + ">`",
	} {
		if !strings.Contains(setup, want) {
			t.Errorf("the README's set-up lacks %q", want)
		}
	}
	if strings.Contains(text, "later, `vault_learn`") || strings.Contains(text, "later,\n`vault_learn`") {
		t.Error("the README still calls vault_learn a later addition")
	}
	if !strings.Contains(string(ci), "command -v gcc") || !strings.Contains(string(ci), "apt-get install -y gcc") {
		t.Error(".ci/run does not install a C compiler when one is missing")
	}
}

// TestReadmeCommandLine: the README's overview of the command line is the
// one `vaultmcp --help` prints, line for line.
func TestReadmeCommandLine(t *testing.T) {
	text := readReadme(t)
	sec := text[strings.Index(text, "## Command line"):]
	lo := strings.Index(sec, "```\n") + len("```\n")
	block := sec[lo : lo+strings.Index(sec[lo:], "```")]
	u := usage[strings.Index(usage, "Usage:\n")+len("Usage:\n"):]
	u = u[:strings.Index(u, "\n\n")+1]
	var want strings.Builder
	for _, l := range strings.SplitAfter(u, "\n") {
		want.WriteString(strings.TrimPrefix(l, "  "))
	}
	if block != want.String() {
		t.Errorf("the README's command line block differs from the usage text:\n--- README\n%s--- usage (de-indented)\n%s", block, want.String())
	}
}

// TestReadmeEnvironment: every variable that configures vaultmcp (the one
// list, envvars.Settings, which TestEveryVariableIsCleaned holds to the code) has a
// row in the README's Environment table.
func TestReadmeEnvironment(t *testing.T) {
	text := readReadme(t)
	sec := text[strings.Index(text, "## Environment"):]
	sec = sec[:strings.Index(sec, "\n## ")]
	var rows strings.Builder
	for _, l := range strings.Split(sec, "\n") {
		if strings.HasPrefix(l, "| `") {
			cell, _, _ := strings.Cut(l[2:], " |")
			rows.WriteString(cell + "\n")
		}
	}
	for _, v := range append([]string{"VAULTMCP_CACHE_DIR", "GOGC", "GOMEMLIMIT", "VAULTMCP_TEST_PG"}, envvars.Settings...) {
		if !strings.Contains(rows.String(), "`"+v+"`") {
			t.Errorf("the README's Environment table has no row for %s", v)
		}
	}
}

// TestUsageNamesEveryVariable: the Environment paragraph of vaultmcp --help
// names every variable that configures vaultmcp (envvars.Settings), but for
// the crash hook of the tests.
func TestUsageNamesEveryVariable(t *testing.T) {
	env := usage[strings.Index(usage, "Environment:"):]
	for _, v := range append([]string{"VAULTMCP_CACHE_DIR"}, envvars.Settings...) {
		if v == "VAULTMCP_TEST_CRASH" {
			continue
		}
		if !strings.Contains(env, v) {
			t.Errorf("vaultmcp --help does not name %s", v)
		}
	}
}

// TestReadmeFlags: every flag a command takes (as its -h lists it) is
// named in the README.
func TestReadmeFlags(t *testing.T) {
	text := readReadme(t)
	for _, cmd := range [][]string{
		{"serve"}, {"search"}, {"eval"}, {"bench"}, {"bench", "team"}, {"team-server"},
		{"team-server", "project", "add"}, {"team-server", "key", "add"}, {"team-server", "audit"}, {"team-server", "backup"},
	} {
		help, _, code := runBinary(t, nil, append(cmd, "-h")...)
		if code != 0 {
			t.Fatalf("%v -h: exit %d", cmd, code)
		}
		for _, l := range strings.Split(help, "\n") {
			if !strings.HasPrefix(l, "  -") {
				continue
			}
			name := strings.Fields(l[3:])[0]
			named := false
			for _, form := range []string{"--" + name, "-" + name} {
				for i := 0; !named; {
					j := strings.Index(text[i:], form)
					if j < 0 {
						break
					}
					i += j + len(form)
					before := byte(' ')
					if k := i - len(form) - 1; k >= 0 {
						before = text[k]
					}
					after := byte(' ')
					if i < len(text) {
						after = text[i]
					}
					word := func(c byte) bool { return c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
					named = !word(before) && !word(after)
				}
			}
			if !named {
				t.Errorf("%v: the README does not name --%s", cmd, name)
			}
		}
	}
}

// TestReadmeSystemdUnit: the Deployment section's systemd unit restarts the
// replica after a pause long enough that a database not answering yet does
// not spend systemd's start limit (five starts in ten seconds) at once, and
// gives a stop the time the server takes to finish its requests.
func TestReadmeSystemdUnit(t *testing.T) {
	text := readReadme(t)
	start := strings.Index(text, "```ini\n")
	if start < 0 {
		t.Fatal("the README has no systemd unit")
	}
	unit := text[start+len("```ini\n"):]
	unit = unit[:strings.Index(unit, "```")]
	settings := map[string]string{}
	for _, line := range strings.Split(unit, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			settings[k] = v
		}
	}
	if settings["Restart"] == "" {
		t.Fatal("the unit does not restart the replica")
	}
	pause, err := time.ParseDuration(settings["RestartSec"])
	if err != nil || pause*5 < 10*time.Second {
		t.Errorf("RestartSec=%q: five restarts must take more than systemd's 10 s start interval", settings["RestartSec"])
	}
	stop, err := time.ParseDuration(settings["TimeoutStopSec"] + "s")
	if err != nil || stop <= teamserver.ShutdownGrace {
		t.Errorf("TimeoutStopSec=%q: must exceed the server's shutdown grace (%v)", settings["TimeoutStopSec"], teamserver.ShutdownGrace)
	}
}
