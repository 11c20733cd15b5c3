//go:build unix

package vaultfs

import (
	"io/fs"
	"syscall"
)

// fileID identifies a file: its device and inode, what os.SameFile
// compares on Unix. The zero value is no identity (no file has inode 0).
type fileID struct{ dev, ino uint64 }

// idOf returns the identity of the file fi describes (the zero value when
// fi does not carry one).
func idOf(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
}

// known reports whether id identifies a file.
func (id fileID) known() bool { return id != fileID{} }

// same reports whether fi describes the file id identifies
// (os.SameFile).
func (id fileID) same(fi fs.FileInfo) bool { return id.known() && idOf(fi) == id }
