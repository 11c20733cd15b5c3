package vaultfs

import (
	"os"
	"syscall"
	"time"
)

// On Linux a DirReader opens, stats, reads and closes a note with four system
// calls on the folder's descriptor, without an *os.File: the os package
// registers every file it opens with the runtime's poller, which a regular
// file refuses (epoll_ctl fails with EPERM on Linux), one wasted system call
// a note; and the read stops once the size fstat gave has been read by a
// short read, without the read that returns end of file. Measured on the
// Obsidian hub's first build (6,570 notes, strace -c): 6,690 failed
// epoll_ctl and 13,286 reads before, none and 6,721 after.

// readDir is a folder a DirReader holds open: opened through the root (so
// it cannot lead out of the vault), and its descriptor.
type readDir struct {
	f  *os.File
	fd int
}

func openReadDir(root *os.Root, dir string) (readDir, bool) {
	f, fd, ok := openDirFD(root, dir)
	return readDir{f: f, fd: fd}, ok
}

// openDirFD opens the folder dir through root and returns it with its
// descriptor (valid while the file is open). A dir that is not a folder
// opens too: every openat relative to it then fails, and the caller takes
// the root's way.
func openDirFD(root *os.Root, dir string) (*os.File, int, bool) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, -1, false
	}
	fd := -1
	if c, err := f.SyscallConn(); err != nil || c.Control(func(u uintptr) { fd = int(u) }) != nil {
		f.Close()
		return nil, -1, false
	}
	return f, fd, true
}

func (h readDir) close() { h.f.Close() }

// read reads the note w, named name in the folder, if it is the very file
// Walk saw (fstat: a regular file with the walk's device and inode, within
// MaxNoteSize; in a read-only vault, with no other hard link), and
// otherwise, or on any failure, reads it with ReadNote and its full
// checks. The folder must stay open until read returns (the caller holds
// it).
func (h readDir) read(v *Vault, w FileInfo, name string) ([]byte, FileInfo, error) {
	if data, fi, ok := h.readFast(v, w, name); ok {
		return data, fi, nil
	}
	return v.ReadNote(w.Path)
}

func (h readDir) readFast(v *Vault, w FileInfo, name string) ([]byte, FileInfo, bool) {
	var fd int
	var err error
	for {
		fd, err = syscall.Openat(h.fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|openReadFlags, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, FileInfo{}, false // ELOOP for a symbolic link: ReadNote judges it
	}
	return readFD(v, w, fd)
}

// readFD reads the note w from fd, a file just opened for it (and closes
// fd), if it is the very file Walk saw (fstat: a regular file with the
// walk's device and inode, within MaxNoteSize; in a read-only vault, with no
// other hard link); ok is false otherwise and on any failure.
func readFD(v *Vault, w FileInfo, fd int) (data []byte, fi FileInfo, ok bool) {
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := ignoringEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil ||
		st.Mode&syscall.S_IFMT != syscall.S_IFREG || (fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}) != w.walked ||
		st.Size > MaxNoteSize || v.readOnly && st.Nlink > 1 {
		return nil, FileInfo{}, false
	}
	size := int(st.Size)
	buf := make([]byte, 0, size+1)
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, FileInfo{}, false
		}
		want := cap(buf) - len(buf)
		buf = buf[:len(buf)+n]
		// End of file, or the size fstat gave read by a short read (a
		// regular file reads short only at its end): done. A file that
		// grew since fills the buffer and is read on.
		if n == 0 || len(buf) == size && n < want {
			break
		}
		if len(buf) == cap(buf) {
			if len(buf) > MaxNoteSize {
				return nil, FileInfo{}, false
			}
			buf = append(buf, 0)[:len(buf)]
		}
	}
	return buf, FileInfo{Path: w.Path, Size: st.Size, ModTime: time.Unix(st.Mtim.Unix()), IsNote: true, walked: w.walked}, true
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}
