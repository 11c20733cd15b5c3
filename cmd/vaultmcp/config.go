package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/snapshot"
)

// Config is everything the flags and the environment say.
type Config struct {
	Vault    string
	ReadOnly bool
	Lang     string
	AutoPush bool
	LogLevel slog.Level
	// CacheDir holds the index snapshots; "" when they are off.
	CacheDir string
}

// common registers the flags shared by the subcommands, with defaults from
// the environment.
func (c *Config) common(fs *flag.FlagSet) {
	c.Vault = os.Getenv("VAULT_PATH")
	if c.Vault == "" {
		c.Vault = os.Getenv("OBSIDIAN_VAULT_PATH")
	}
	c.ReadOnly = truthy(os.Getenv("VAULT_READ_ONLY"))
	c.AutoPush = truthy(os.Getenv("VAULT_AUTO_PUSH"))
	c.Lang = os.Getenv("VAULT_LANG")
	if c.Lang == "" {
		c.Lang = "en"
	}
	fs.StringVar(&c.Vault, "vault", c.Vault, "vault folder (default $VAULT_PATH or $OBSIDIAN_VAULT_PATH)")
	fs.BoolVar(&c.ReadOnly, "read-only", c.ReadOnly, "do not offer any write tool (default $VAULT_READ_ONLY)")
	fs.StringVar(&c.Lang, "lang", c.Lang, "language of tool output and of new notes: en or pt (default $VAULT_LANG)")
}

// check validates the config: the vault must be an existing directory.
func (c *Config) check() error {
	if err := c.checkLang(); err != nil {
		return err
	}
	if c.Vault == "" {
		return fmt.Errorf("no vault: set VAULT_PATH (or OBSIDIAN_VAULT_PATH) or pass --vault DIR")
	}
	fi, err := os.Stat(c.Vault)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("vault %s: no such directory", c.Vault)
		}
		return fmt.Errorf("vault %s: %w", c.Vault, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("vault %s: not a directory", c.Vault)
	}
	return c.checkEnv()
}

// checkLang validates the language.
func (c *Config) checkLang() error {
	switch strings.ToLower(c.Lang) {
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
	dir, err := cacheDir(os.Getenv("VAULTMCP_CACHE_DIR"))
	if err != nil {
		return err
	}
	c.CacheDir = dir
	c.LogLevel = slog.LevelInfo
	if lv := os.Getenv("VAULTMCP_LOG_LEVEL"); lv != "" {
		if err := c.LogLevel.UnmarshalText([]byte(lv)); err != nil {
			return fmt.Errorf("VAULTMCP_LOG_LEVEL: %q is not a level (debug, info, warn, error)", lv)
		}
	}
	return nil
}

// cacheDir resolves VAULTMCP_CACHE_DIR: unset, the user's cache folder
// (vaultmcp under $XDG_CACHE_HOME or ~/.cache; no snapshots when there is
// none); "off", the index snapshot is off; otherwise that folder.
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
	d, err := filepath.Abs(v)
	if err != nil {
		return "", fmt.Errorf("VAULTMCP_CACHE_DIR: %w", err)
	}
	return d, nil
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// parseInterleaved parses flags that may come after positional arguments
// ("search 'retry backoff' --json") and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
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

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func logger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
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
