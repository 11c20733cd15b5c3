//go:build !unix && !windows

package vaultfs

import (
	"errors"
	"io/fs"
	"os"
)

const openReadFlags = 0

// entryInfo is r.Lstat(e.Name()) for an entry e that ReadDir listed in r.
func entryInfo(r *os.Root, e fs.DirEntry) (fs.FileInfo, error) { return r.Lstat(e.Name()) }

// linkCount is unknown on this platform; writes fail closed.
func linkCount(*os.Root, string, fs.FileInfo) (uint64, error) {
	return 0, errNoLinkCount
}

// syncDir is not available on this platform; a write there is as durable as
// the file system makes a rename.
func syncDir(*os.Root) error { return nil }

// linkUnsupported reports a failure that means there are no hard links.
func linkUnsupported(err error) bool { return errors.Is(err, errors.ErrUnsupported) }
