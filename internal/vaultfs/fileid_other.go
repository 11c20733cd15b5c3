//go:build !unix

package vaultfs

import (
	"io/fs"
	"os"
)

// fileID identifies a file: where the identity is not in the stat result
// (Windows keeps it in the FileInfo's unexported fields), the FileInfo
// itself, compared by os.SameFile.
type fileID struct{ fi fs.FileInfo }

// idOf returns the identity of the file fi describes.
func idOf(fi fs.FileInfo) fileID { return fileID{fi} }

// known reports whether id identifies a file.
func (id fileID) known() bool { return id.fi != nil }

// same reports whether fi describes the file id identifies
// (os.SameFile).
func (id fileID) same(fi fs.FileInfo) bool { return id.known() && os.SameFile(fi, id.fi) }
