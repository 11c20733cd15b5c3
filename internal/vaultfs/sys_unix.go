//go:build unix

package vaultfs

import (
	"io/fs"
	"os"
	"syscall"
)

// openReadFlags are added to O_RDONLY when a note is opened: a FIFO swapped in
// after the check must not block the open, and a terminal must not become
// the controlling one.
const openReadFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// linkCount returns the number of hard links of the file described by fi
// (an Lstat result of real in r).
func linkCount(_ *os.Root, _ string, fi fs.FileInfo) (uint64, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errNoLinkCount
	}
	return uint64(st.Nlink), nil
}
