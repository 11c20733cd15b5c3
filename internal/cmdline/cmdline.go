// Package cmdline reads what a vaultmcp command line asks for before any
// flag is parsed: the command it runs, whether serve runs in remote mode,
// and the huge-pages switch. The main package dispatches on it, and
// package earlyheap, which decides from its initialisation (before main
// runs), reads the command line the same way through it.
package cmdline

import (
	"fmt"
	"strings"
)

// IsHelp reports whether a is a request for help (-h, -help, --help).
func IsHelp(a string) bool {
	switch a {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// Command returns the command that args (the program's name left out)
// run and the arguments left for it: the first argument when it is not a
// flag, or is a request for help or the version; otherwise serve, the
// default command, with every argument.
func Command(args []string) (cmd string, rest []string) {
	if len(args) > 0 && (len(args[0]) > 0 && args[0][0] != '-' || IsHelp(args[0]) || args[0] == "--version") {
		return args[0], args[1:]
	}
	return "serve", args
}

// Remote reports whether serve runs in remote mode (the tools of a team
// server) in an environment read by getenv: TEAM_VAULT_URL or
// TEAM_VAULT_API_KEY set to more than blanks.
func Remote(getenv func(string) string) bool {
	return strings.TrimSpace(getenv("TEAM_VAULT_URL")) != "" || strings.TrimSpace(getenv("TEAM_VAULT_API_KEY")) != ""
}

// HugePages reads VAULTMCP_HUGEPAGES in an environment read by getenv: on
// (also when unset or blank) or off, in any case; anything else is an
// error naming the variable.
func HugePages(getenv func(string) string) (bool, error) {
	switch v := getenv("VAULTMCP_HUGEPAGES"); strings.ToLower(strings.TrimSpace(v)) {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, fmt.Errorf("VAULTMCP_HUGEPAGES: %q is not on or off", v)
	}
}
