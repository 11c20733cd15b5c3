// Command vaultmcp gives coding agents long-term memory in an Obsidian vault
// over the Model Context Protocol. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/vaultmcp/vaultmcp/internal/cmdline"
	// Readies the heap of `vaultmcp serve` while the packages initialise.
	_ "github.com/vaultmcp/vaultmcp/internal/earlyheap"
)

// version is set at build time with -ldflags "-X main.version=...".
// Unset, it is what the go command recorded in the binary (see
// buildVersion), so that a binary built or installed as the README says
// does not call itself "dev".
var version = "dev"

func init() {
	bi, ok := debug.ReadBuildInfo()
	version = buildVersion(version, bi, ok)
}

// buildVersion is the version to report: v when the build set one; else
// the main module's version the go command recorded (a tag, or a
// pseudo-version naming the commit, "+dirty" when the work tree had
// changes: what `go install module@version` and a build in a git checkout
// record); else the commit of the vcs settings (a build with
// -buildvcs=true that recorded no version); else v.
func buildVersion(v string, bi *debug.BuildInfo, ok bool) string {
	if v != "dev" || !ok || bi == nil {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		return mv
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return v + "-" + rev + dirty
}

const usage = `vaultmcp — long-term memory for coding agents in an Obsidian vault, over MCP.

Usage:
  vaultmcp [serve] [--vault DIR] [--read-only] [--lang en|pt]   MCP over stdio (default)
  vaultmcp serve --http ADDR [--api-key KEY] [--allow-origin LIST]
                 [--session-timeout 30m] [--max-sessions 1000] [--body-timeout 10s]
                                                                MCP over Streamable HTTP at /mcp
  vaultmcp search [--vault DIR] [--limit N] [--json] [--explain] [-v] [filters] QUERY
                                                                the same search, for a person (exit 1: nothing found)
                  filters: --type T --folder F --tags A,B --status S --include-raw --lang en|pt
  vaultmcp eval --vault DIR --queries FILE.jsonl [--json] [-v]  retrieval quality: hit@1, hit@10, MRR@10 (grep beside)
  vaultmcp bench [--vault DIR] [--sizes 1000,10000,100000] [--out DIR] [--peer qmd] [--json]
                                                                speed and memory figures (see Performance)
  vaultmcp bench team [--vault DIR] [--clients 1,16,64] [--for 10s] [--soak 10m]
                                                                the team server under load (see Team mode)
  vaultmcp team-server --data DIR [--listen ADDR] [--db postgres://... [--advertise URL] [--lease-ttl 10s]]
                                                                shared vaults over REST and MCP (see Team mode)
  vaultmcp team-server project add|list|remove, key add|list|rotate|revoke, audit, backup
                                                                its management commands (team-server -h)
  vaultmcp version

"vaultmcp COMMAND -h" lists the flags of a command.

Environment: VAULT_PATH (or OBSIDIAN_VAULT_PATH), VAULT_READ_ONLY=1 (serve), VAULT_LANG=en|pt, VAULT_AUTO_PUSH=1,
VAULTMCP_API_KEY, VAULTMCP_ALLOWED_ORIGINS, VAULTMCP_SESSION_TIMEOUT, VAULTMCP_MAX_SESSIONS,
VAULTMCP_BODY_TIMEOUT (serve --http), VAULTMCP_LOG_LEVEL=debug|info|warn|error,
VAULTMCP_CACHE_DIR=DIR|off (index snapshots; default the user's cache folder), VAULTMCP_HUGEPAGES=on|off,
NO_COLOR (plain output);
team-server: VAULTMCP_DATA, VAULTMCP_DB, VAULTMCP_OAUTH_ISSUER, VAULTMCP_OAUTH_AUDIENCE.
Remote mode (the tools of a team server's project): TEAM_VAULT_URL, TEAM_VAULT_API_KEY, TEAM_VAULT_PROJECT_ID,
TEAM_VAULT_READ_ONLY=1.
`

// exitError carries an exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func (e *exitError) Unwrap() error { return e.err }

// defaultGOGC is the collector's target when GOGC is not set: the heap may
// grow to 1.5 times what is live between two collections instead of the
// runtime's default 2 times. Measured on the generated 100k-note vault
// (live heap about 570 MiB after the first build): peak RSS 1.45-1.60 GB
// at GOGC=100, 1.20-1.27 GB at 50, 1.14 GB at 35, for a few percent more
// CPU while indexing; a search allocates little, so it costs nothing
// afterwards.
const defaultGOGC = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGOGC)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if !errors.Is(err, errNoMatch) {
			fmt.Fprintln(os.Stderr, "vaultmcp: "+err.Error())
		}
		os.Exit(code)
	}
}

// errHelp is returned by a subcommand that printed its help (-h): the
// command succeeded.
var errHelp = errors.New("help")

// errNoMatch ends a search that found nothing (exit status 1, as grep);
// the output has said so already.
var errNoMatch = errors.New("no match")

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdin, stdout, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd, args := cmdline.Command(args)
	switch cmd {
	case "serve":
		return runServe(ctx, args, stdin, stdout, stderr)
	case "search":
		return runSearch(ctx, args, stdout, stderr)
	case "eval":
		return runEval(ctx, args, stdout, stderr)
	case "bench":
		return runBench(ctx, args, stdout, stderr)
	case "team-server":
		return runTeamServer(ctx, args, stdout, stderr)
	case "version", "--version":
		if len(args) > 0 {
			if cmdline.IsHelp(args[0]) {
				fmt.Fprintln(stdout, "Usage: vaultmcp version   (prints the version of this binary)")
				return nil
			}
			return &exitError{2, fmt.Errorf("version: unexpected argument %q", args[0])}
		}
		fmt.Fprintln(stdout, "vaultmcp "+version)
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return &exitError{2, fmt.Errorf("unknown command %q", cmd)}
	}
}
