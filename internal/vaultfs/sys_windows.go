//go:build windows

package vaultfs

import (
	"io/fs"
	"os"
	"syscall"
)

const openReadFlags = 0

// linkCount opens the file through the root and asks Windows for its number
// of links (a FileInfo from Lstat does not carry it on Windows).
func linkCount(r *os.Root, real string, _ fs.FileInfo) (uint64, error) {
	f, err := r.Open(real)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d); err != nil {
		return 0, err
	}
	return uint64(d.NumberOfLinks), nil
}
