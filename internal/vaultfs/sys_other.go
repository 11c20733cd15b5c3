//go:build !unix && !windows

package vaultfs

import (
	"io/fs"
	"os"
)

const openReadFlags = 0

// linkCount is unknown on this platform; writes fail closed.
func linkCount(*os.Root, string, fs.FileInfo) (uint64, error) {
	return 0, errNoLinkCount
}
