package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/cmdline"
	"github.com/vaultmcp/vaultmcp/internal/hugeheap"
	"github.com/vaultmcp/vaultmcp/internal/mcphttp"
	"github.com/vaultmcp/vaultmcp/internal/snapshot"
)

// Config is everything the flags and the environment say.
type Config struct {
	Vault    string
	ReadOnly bool
	Lang     string
	AutoPush bool
	LogLevel slog.Level
	// LogLevelSet says VAULTMCP_LOG_LEVEL chose LogLevel.
	LogLevelSet bool
	// CacheDir holds the index snapshots; "" when they are off.
	CacheDir string
	// StateDir holds the write journal of a vault in no git repository
	// (vault.Options.StateDir); "" when no such folder could be named.
	StateDir string
}

// common registers the flags shared by the subcommands, with defaults from
// the environment.
func (c *Config) common(fs *flag.FlagSet) {
	c.Vault = os.Getenv("VAULT_PATH")
	if c.Vault == "" {
		c.Vault = os.Getenv("OBSIDIAN_VAULT_PATH")
	}
	c.AutoPush = switchOn("VAULT_AUTO_PUSH")
	c.Lang = os.Getenv("VAULT_LANG") // "": tool output in English, the profile detected from the vault
	fs.StringVar(&c.Vault, "vault", c.Vault, "vault folder (default $VAULT_PATH or $OBSIDIAN_VAULT_PATH)")
	fs.StringVar(&c.Lang, "lang", c.Lang, "language of tool output and of new notes: en or pt (default $VAULT_LANG; unset: output in en, notes in the vault's own language)")
}

// server registers the flags of the commands that serve the vault to MCP
// clients, where a read-only mode means something (the write tools are
// left out); the one-off commands never write a note anyway.
func (c *Config) server(fs *flag.FlagSet) {
	c.ReadOnly = switchOn("VAULT_READ_ONLY")
	fs.BoolVar(&c.ReadOnly, "read-only", c.ReadOnly, "do not offer any write tool (default $VAULT_READ_ONLY)")
}

// check validates the config: the vault must be an existing directory.
func (c *Config) check() error {
	if err := c.checkLang(); err != nil {
		return err
	}
	if c.Vault == "" {
		return fmt.Errorf("no vault: set VAULT_PATH (or OBSIDIAN_VAULT_PATH) or pass --vault DIR (vaultmcp --help lists the commands)")
	}
	// The path is quoted: one of blanks, or with a blank at an end, would
	// not show otherwise.
	fi, err := os.Stat(c.Vault)
	if err != nil {
		if os.IsNotExist(err) {
			hint := ""
			if c.Vault == "~" || strings.HasPrefix(c.Vault, "~/") {
				// An MCP client's configuration passes the value as
				// written: no shell expands the ~.
				hint = " (~ is not expanded here: give the full path)"
			}
			return fmt.Errorf("vault %q: no such directory%s", c.Vault, hint)
		}
		return fmt.Errorf("vault %q: %w", c.Vault, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("vault %q: not a directory", c.Vault)
	}
	return c.checkEnv()
}

// checkLang validates the language.
func (c *Config) checkLang() error {
	switch strings.ToLower(c.Lang) {
	case "": // tool output in English, the profile detected from the vault
	case "en", "pt":
		c.Lang = strings.ToLower(c.Lang)
	case "pt-br", "pt_br":
		c.Lang = "pt"
	default:
		return fmt.Errorf("--lang / VAULT_LANG: %q is not supported (use en or pt)", c.Lang)
	}
	return nil
}

// checkEnv reads the cache folder and the log level from the environment.
func (c *Config) checkEnv() error {
	// A switch that is neither yes nor no is not taken for no: a mistyped
	// VAULT_READ_ONLY would serve the writes its user meant to forbid.
	for _, name := range []string{"VAULT_READ_ONLY", "VAULT_AUTO_PUSH"} {
		if _, err := yesNo(name, os.Getenv(name)); err != nil {
			return err
		}
	}
	dir, err := cacheDir(os.Getenv("VAULTMCP_CACHE_DIR"))
	if err != nil {
		return err
	}
	c.CacheDir = dir
	c.StateDir = stateDir()
	c.LogLevel = slog.LevelInfo
	if lv := os.Getenv("VAULTMCP_LOG_LEVEL"); lv != "" {
		if err := c.LogLevel.UnmarshalText([]byte(lv)); err != nil {
			return fmt.Errorf("VAULTMCP_LOG_LEVEL: %q is not a level (debug, info, warn, error)", lv)
		}
		c.LogLevelSet = true
	}
	on, err := cmdline.HugePages(os.Getenv)
	if err != nil {
		return err
	}
	hugeheap.SetEnabled(on)
	return nil
}

// httpConfig holds the limits of serve --http, as given (flag or
// environment), checked by options.
type httpConfig struct {
	sessionTimeout, maxSessions, bodyTimeout, origins string
}

func (h *httpConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&h.sessionTimeout, "session-timeout", envOr("VAULTMCP_SESSION_TIMEOUT", "30m"), "HTTP: close an MCP session idle this long, a duration or off ($VAULTMCP_SESSION_TIMEOUT)")
	fs.StringVar(&h.maxSessions, "max-sessions", envOr("VAULTMCP_MAX_SESSIONS", strconv.Itoa(mcphttp.DefaultMaxSessions)), "HTTP: most MCP sessions open at once; a new one evicts the one idle the longest ($VAULTMCP_MAX_SESSIONS)")
	fs.StringVar(&h.bodyTimeout, "body-timeout", envOr("VAULTMCP_BODY_TIMEOUT", "10s"), "HTTP: a request body must arrive within this, or 408 ($VAULTMCP_BODY_TIMEOUT)")
	fs.StringVar(&h.origins, "allow-origin", os.Getenv("VAULTMCP_ALLOWED_ORIGINS"), "HTTP: origins allowed besides the listen address's own, comma-separated, e.g. https://app.example.com; any other Origin gets 403 (default $VAULTMCP_ALLOWED_ORIGINS)")
}

// options checks the limits; an error names the flag and the value.
func (h *httpConfig) options() (mcphttp.Options, error) {
	var o mcphttp.Options
	switch v := strings.ToLower(strings.TrimSpace(h.sessionTimeout)); v {
	case "off", "never", "0":
		o.SessionIdleTimeout = -1
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return o, fmt.Errorf("--session-timeout / VAULTMCP_SESSION_TIMEOUT: %q is not a duration of at least 1s (e.g. 30m) or off", h.sessionTimeout)
		}
		o.SessionIdleTimeout = d
	}
	n, err := strconv.Atoi(strings.TrimSpace(h.maxSessions))
	if err != nil || n < 1 {
		return o, fmt.Errorf("--max-sessions / VAULTMCP_MAX_SESSIONS: %q is not a count of at least 1", h.maxSessions)
	}
	o.MaxSessions = n
	d, err := time.ParseDuration(strings.TrimSpace(h.bodyTimeout))
	if err != nil || d < 100*time.Millisecond {
		return o, fmt.Errorf("--body-timeout / VAULTMCP_BODY_TIMEOUT: %q is not a duration of at least 100ms (e.g. 10s)", h.bodyTimeout)
	}
	o.BodyTimeout = d
	for _, origin := range strings.Split(h.origins, ",") {
		if origin = strings.TrimSpace(origin); origin != "" {
			if err := mcphttp.CheckOrigin(origin); err != nil {
				return o, fmt.Errorf("--allow-origin / VAULTMCP_ALLOWED_ORIGINS: %q: %w", origin, err)
			}
			o.AllowedOrigins = append(o.AllowedOrigins, origin)
		}
	}
	return o, nil
}

func sessionTimeoutText(d time.Duration) string {
	if d < 0 {
		return "off"
	}
	return d.String()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// cacheDir resolves VAULTMCP_CACHE_DIR: unset, the user's cache folder
// (vaultmcp under $XDG_CACHE_HOME or ~/.cache; no snapshots when there is
// none); "off", the index snapshot is off; otherwise that folder. A value
// starting with ~ is refused, as VAULT_PATH's: an MCP client's
// configuration passes it as written, and taken as relative it made a
// folder named ~ in whatever folder the client started the server in,
// holding the index of the vault.
func cacheDir(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		d, err := snapshot.DefaultDir()
		if err != nil {
			return "", nil
		}
		return d, nil
	case "off", "0", "false", "no", "none":
		return "", nil
	}
	if v == "~" || strings.HasPrefix(v, "~/") {
		return "", fmt.Errorf("VAULTMCP_CACHE_DIR %q: ~ is not expanded here: give the full path", v)
	}
	d, err := filepath.Abs(v)
	if err != nil {
		return "", fmt.Errorf("VAULTMCP_CACHE_DIR: %w", err)
	}
	return d, nil
}

// yesNo reads a switch that must be set right: 1/true/yes/on, or
// 0/false/no/off or empty; anything else is an error naming the variable.
func yesNo(name, s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s: %q is neither yes (1, true, yes, on) nor no (0, false, no, off)", name, s)
}

// switchOn reads the switch in the environment variable name as yesNo
// does; a value that is neither is refused by checkEnv before it is used.
func switchOn(name string) bool {
	on, _ := yesNo(name, os.Getenv(name))
	return on
}

// secretFlag defines a string flag whose default is the environment
// variable env, never shown: the usage (--help, or any mistake on the
// command line, printed to stderr and so to a service's log) prints a
// flag's default, and an API key or a postgres:// URL (its password) is a
// secret.
func secretFlag(fs *flag.FlagSet, p *string, name, env, usage string) {
	*p = os.Getenv(env)
	fs.Var(&hiddenDefault{p: p}, name, usage)
}

// hiddenDefault is a string flag value that shows only a value given on
// the command line (see secretFlag).
type hiddenDefault struct {
	p   *string
	set bool
}

func (h *hiddenDefault) String() string {
	if h == nil || h.p == nil || !h.set {
		return ""
	}
	return *h.p
}

func (h *hiddenDefault) Set(s string) error {
	*h.p, h.set = s, true
	return nil
}

// parseInterleaved parses flags that may come after positional arguments
// ("search 'retry backoff' --json") and returns the positional ones. Asked
// for help (-h, --help), it prints the command's usage on stdout and
// returns errHelp; a bad flag is returned, after the usage is written on
// the flag set's output (stderr).
func parseInterleaved(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if cmdline.IsHelp(a) {
			out := fs.Output()
			fs.SetOutput(stdout)
			fs.Usage()
			fs.SetOutput(out)
			return nil, errHelp
		}
	}
	// The flag package writes a bad flag's error before the usage; main
	// writes the error as the last line, so it is written once: the flag
	// set writes nothing while it parses, and the usage follows here.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(out)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			fs.SetOutput(out)
			fs.Usage()
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// synopses are the first line of each command's help.
var synopses = map[string]string{
	"serve":      "vaultmcp [serve] [--vault DIR] [--read-only] [--lang en|pt] [--http ADDR [--api-key KEY]]",
	"search":     "vaultmcp search [flags] QUERY   (exit status 0: found, 1: nothing found, 2: trouble)",
	"eval":       "vaultmcp eval --vault DIR --queries FILE.jsonl [flags]",
	"bench":      "vaultmcp bench [--vault DIR] [--sizes 1000,10000,100000] [flags]",
	"bench team": "vaultmcp bench team [--vault DIR] [--clients 1,16,64] [--for 10s] [--soak 10m] [flags]",
}

// newFlagSet returns the flag set of a command: errors and the usage that
// follows them go to stderr, the help asked for with -h to stdout (see
// parseInterleaved).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags:\n", synopses[name])
		fs.PrintDefaults()
	}
	return fs
}

func logger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// personLogger is the logger of a command a person runs in a terminal
// (search, eval): on a terminal it prints nothing unless verbose, since
// raw log lines are not for a person (what matters is in the output: the
// files that could not be indexed, the errors); otherwise, and with
// verbose, it prints warnings, or what VAULTMCP_LOG_LEVEL asks for.
func personLogger(c *Config, stderr io.Writer, verbose bool) *slog.Logger {
	if isTerminal(stderr) && !verbose {
		return slog.New(slog.DiscardHandler)
	}
	level := slog.LevelWarn
	if c.LogLevelSet {
		level = c.LogLevel
	}
	return logger(stderr, level)
}

// useColor reports whether output to w may use colour: w is a terminal and
// NO_COLOR (https://no-color.org) is not set.
func useColor(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == ""
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// stateDir is the folder of what vaultmcp keeps that must outlive a reboot
// but is no part of a vault (the write journal of a vault in no git
// repository): $XDG_STATE_HOME/vaultmcp, else ~/.local/state/vaultmcp
// (the XDG default, on macOS as well); on Windows vaultmcp under the local
// application data folder. "" when none can be named (no home folder):
// the journal then stays in the temporary folder.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vaultmcp")
	}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LOCALAPPDATA"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "vaultmcp", "state")
		}
		return ""
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "state", "vaultmcp")
}
