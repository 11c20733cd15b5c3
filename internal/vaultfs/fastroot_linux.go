package vaultfs

import (
	"io/fs"
	"os"
	"path"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux, Vault.ReadWalked opens a walked note with one openat2 beneath
// the vault's folder, refusing any symbolic link and any "..": a note whose
// path crosses a link, or a kernel without openat2 (before 5.6), takes the
// root's way, which opens each folder of the path in turn. The file opened
// is then checked and read as a DirReader reads one (readFD): the very file
// Walk saw, with no *os.File. Measured on the Obsidian hub (strace of a
// search quoting a note three folders deep): ten system calls a hit before
// (two folder opens and their closes, the open, a failed epoll_ctl, fstat,
// two reads, close), four after.

// The gatekeeper's checks take the same way (walkPath, readTarget,
// syncFile): a path none of whose components is a symbolic link is looked
// at with one openat2 (O_PATH, no link resolved: a final link is opened
// itself and declined) and an fstat, where the root's Lstat of each
// component in turn opens every folder before it (a note three folders
// deep: three Lstats, three folder opens and their closes), and the file
// checked is opened the same way. A path that crosses a link, a missing
// component, anything the kernel declines takes the root's way with every
// check as before, so the answer is the same; only how many system calls
// it takes changes. Measured on the move of the Obsidian hub's most linked
// note (2,693 notes rewritten): see docs/performance.md.

// fastRoot is the vault's folder held open for openat2.
type fastRoot struct {
	f  *os.File
	fd int
}

// noOpenat2 is set once openat2 is found missing (ENOSYS) or refused by a
// sandbox (EPERM).
var noOpenat2 atomic.Bool

func openFastRoot(root *os.Root) fastRoot {
	f, fd, _ := openDirFD(root, ".")
	return fastRoot{f: f, fd: fd}
}

func (r fastRoot) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// readWalked reads the walked note w by its path beneath the vault's folder;
// ok is false when it cannot (see above), for the root's way.
func (r fastRoot) readWalked(v *Vault, w FileInfo) ([]byte, FileInfo, bool) {
	if r.f == nil || noOpenat2.Load() {
		return nil, FileInfo{}, false
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | openReadFlags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	var err error
	for {
		fd, err = unix.Openat2(r.fd, w.Path, &how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if err == syscall.ENOSYS || err == syscall.EPERM {
			noOpenat2.Store(true)
		}
		return nil, FileInfo{}, false
	}
	return readFD(v, w, fd)
}

// fastOpens counts the paths opened by openat2 for a check or a read
// (tests).
var fastOpens atomic.Int64

// open opens rel (clean and vault-relative) beneath the vault's folder with
// flags, no symbolic link resolved on the way or at the end (O_NOFOLLOW);
// ok is false when it cannot (see above), with the kernel's answer (nil
// when openat2 is not to be used).
func (r fastRoot) open(rel string, flags int) (fd int, ok bool, err error) {
	if r.f == nil || noOpenat2.Load() {
		return -1, false, nil
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(r.fd, rel, &how)
		switch err {
		case nil:
			fastOpens.Add(1)
			return fd, true, nil
		case syscall.EINTR:
			continue
		case syscall.ENOSYS, syscall.EPERM:
			noOpenat2.Store(true)
			return -1, false, nil
		}
		return -1, false, err
	}
}

// lstat is the root's Lstat of rel when no component of it is a symbolic
// link (the file is opened with O_PATH, which reads nothing and cannot
// block); ok is false otherwise, and for a symbolic link at the end.
// missing (with ok) says rel does not exist (ENOENT: some component of it
// is missing, the kernel does not say which).
func (r fastRoot) lstat(rel string) (fi fs.FileInfo, missing, ok bool) {
	fd, ok, err := r.open(rel, unix.O_PATH)
	if !ok {
		return nil, err == syscall.ENOENT, err == syscall.ENOENT
	}
	f := os.NewFile(uintptr(fd), path.Base(rel))
	fi, err = f.Stat()
	f.Close()
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return nil, false, false
	}
	return fi, false, true
}

// openFile is the root's OpenFile of rel (an existing file) when no
// component of it is a symbolic link; ok is false otherwise.
func (r fastRoot) openFile(rel string, flags int) (*os.File, bool) {
	fd, ok, _ := r.open(rel, flags)
	if !ok {
		return nil, false
	}
	return os.NewFile(uintptr(fd), path.Base(rel)), true
}
