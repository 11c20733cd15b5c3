//go:build unix

package vaultfs

import (
	"io/fs"
	"syscall"
)

// fileID identifies a file: its device and inode, what os.SameFile
// compares on Unix.
type fileID struct{ dev, ino uint64 }

// idOf returns the identity of the file fi describes (false when fi does
// not carry one).
func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}

// same reports whether fi describes the file id identifies
// (os.SameFile).
func (id fileID) same(fi fs.FileInfo) bool {
	o, ok := idOf(fi)
	return ok && o == id
}
