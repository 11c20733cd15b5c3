//go:build windows

package vaultfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

const openReadFlags = 0

// entryInfo is r.Lstat(e.Name()) for an entry e that ReadDir listed in r.
func entryInfo(r *os.Root, e fs.DirEntry) (fs.FileInfo, error) { return r.Lstat(e.Name()) }

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

// syncDir does nothing on Windows, which offers no fsync of a folder
// (FlushFileBuffers needs write access to the handle); a rename there is as
// durable as the file system's own metadata journal makes it.
func syncDir(*os.Root) error { return nil }

// linkUnsupported reports a CreateHardLink failure that means the file
// system has no hard links (FAT, exFAT, some network shares).
func linkUnsupported(err error) bool {
	const errorInvalidFunction = syscall.Errno(1)
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, errorInvalidFunction)
}
