//go:build unix

package vaultfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openReadFlags are added to O_RDONLY when a note is opened: a FIFO swapped in
// after the check must not block the open, and a terminal must not become
// the controlling one.
const openReadFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// entryInfo is r.Lstat(e.Name()) for an entry e that ReadDir listed in the
// folder r: on Unix, ReadDir of a folder opened through a root already
// made that very lstat, relative to the folder (fstatat; it never resolves
// a path by name), and e.Info returns its result; a second one was a third
// of the time of a walk.
func entryInfo(_ *os.Root, e fs.DirEntry) (fs.FileInfo, error) { return e.Info() }

// linkCount returns the number of hard links of the file described by fi
// (an Lstat result of real in r).
func linkCount(_ *os.Root, _ string, fi fs.FileInfo) (uint64, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errNoLinkCount
	}
	return uint64(st.Nlink), nil
}

// syncDir fsyncs the folder r, making a rename, link or removal in it
// durable. File systems that cannot fsync a folder (EINVAL, ENOTSUP) are
// not an error: there is nothing more to do on them.
func syncDir(r *os.Root) error {
	f, err := r.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	err = f.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}

// linkUnsupported reports a link(2) failure that means the file system has
// no hard links (EPERM on FAT and exFAT, ENOTSUP or ENOSYS on some network
// and FUSE file systems), as opposed to a failure of this link.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, errors.ErrUnsupported)
}
