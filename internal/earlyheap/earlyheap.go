// Package earlyheap begins readying the heap of a `vaultmcp serve` process
// in huge pages (hugeheap.StartEarly) from its package initialisation.
//
// Why: the first index build readies its heap once its walk has seen enough
// notes, and until that is done every 4 KiB the walk takes for the first
// time is a page fault (about 11 µs each on the 2-core virtual machine
// vaultmcp is measured on). Go initialises the binary's packages one after
// the other on one core, about 10 ms of them after this one; readying on
// the other core meanwhile (its collection and the mapping of 512 MiB of
// address space take 7-17 ms there) means the walk already allocates in
// huge pages. Measured on the Obsidian hub, first starts alternated with
// and without it: a median paired difference of -8.4 and -7.0 ms (two
// series of 31).
//
// When: only for `serve` (named, or the default command: no argument, or a
// flag first), not in remote mode (TEAM_VAULT_URL or TEAM_VAULT_API_KEY
// set: no index is built), and not when VAULTMCP_HUGEPAGES is set to
// anything but on (off turns huge pages off; anything else is an error the
// command reports). The vault takes the burst when it opens (it ends it,
// and uses it for a start from the snapshot too); readying that nothing
// takes costs address space only. Not in a binary built with the race
// detector (a test build): every byte of heap the detector watches has
// shadow memory beside it, and readying 512 MiB there cost about 260 MiB
// of resident memory for a server on the small example vault, where it
// saves nothing. Import it for its side effect from the
// main package, and from nowhere else: a package's initialisation cannot
// see flags, so the decision rests on the arguments as they are.
package earlyheap

import (
	"os"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/cmdline"
	"github.com/vaultmcp/vaultmcp/internal/hugeheap"
)

// Bytes is what is readied: the first build's heap (the vault package's
// buildHeapMax, which a test keeps equal).
const Bytes = 512 << 20

func init() {
	if !raceBuild && wanted(os.Args, os.Getenv) {
		hugeheap.StartEarly(Bytes)
	}
}

// wanted says whether a process run with args and an environment read by
// getenv readies its heap early: it runs serve (as the main package reads
// its command line: package cmdline), not in remote mode, with huge pages
// on, and is not a Go test binary (-test. flags: the main package's
// tests).
func wanted(args []string, getenv func(string) string) bool {
	if len(args) > 0 {
		args = args[1:] // the program's name
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-test.") {
		return false
	}
	cmd, _ := cmdline.Command(args)
	on, err := cmdline.HugePages(getenv)
	return cmd == "serve" && !cmdline.Remote(getenv) && on && err == nil
}
