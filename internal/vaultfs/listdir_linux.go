package vaultfs

import (
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"
	"unsafe"
)

// listDir lists the folder f (opened through r) from its directory entries
// alone, one getdents64 call for many entries, with each entry's type and
// inode as the listing gives them, and returns them with the folder's
// device. (os.File.ReadDir of a folder opened through an os.Root lstats
// every entry: on the Obsidian hub that was 6,570 fstatat calls, most of
// the walk's 45-60 ms.) An entry whose type the file system does not give
// (DT_UNKNOWN) is statted here, as ReadDir would. ok is false when the
// folder cannot be listed this way; the caller then uses ReadDir. What was
// listed before a failure is returned with the error.
func listDir(f *os.File, r *os.Root) (entries []fs.DirEntry, dev uint64, ok bool, err error) {
	c, cerr := f.SyscallConn()
	if cerr != nil {
		return nil, 0, false, nil
	}
	var st syscall.Stat_t
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var slab []rawEntry
	var serr error
	cerr = c.Read(func(fd uintptr) bool {
		if serr = ignoringEINTR(func() error { return syscall.Fstat(int(fd), &st) }); serr != nil {
			return true
		}
		for {
			var n int
			n, serr = syscall.Getdents(int(fd), buf)
			if serr == syscall.EINTR {
				continue
			}
			if serr != nil || n <= 0 {
				return true
			}
			entries = appendDirents(entries, buf[:n], r, &slab)
		}
	})
	if cerr != nil {
		return nil, 0, false, nil
	}
	if serr != nil && entries == nil {
		return nil, 0, false, nil
	}
	return entries, uint64(st.Dev), true, serr
}

// rawEntry is one entry of listDir: fs.DirEntry with the entry's inode;
// Info lstats it through the folder's root.
type rawEntry struct {
	name string
	typ  fs.FileMode
	ino  uint64
	r    *os.Root
	info fs.FileInfo // for an entry of unknown type, statted by listDir
}

func (e *rawEntry) Name() string      { return e.name }
func (e *rawEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *rawEntry) Type() fs.FileMode { return e.typ }
func (e *rawEntry) Info() (fs.FileInfo, error) {
	if e.info != nil {
		return e.info, nil
	}
	return e.r.Lstat(e.name)
}

// listedFile returns the identity of e, an entry listDir listed in a
// folder of device dev, when the listing said it is a regular file.
func listedFile(e fs.DirEntry, dev uint64) (fileID, bool) {
	re, ok := e.(*rawEntry)
	if !ok || !re.typ.IsRegular() || re.info != nil || re.ino == 0 {
		return fileID{}, false
	}
	return fileID{dev: dev, ino: re.ino}, true
}

// direntBufs holds the buffers listDir reads entries into: one a walk
// would otherwise take fresh for every folder, while the collector is
// paused (the first build).
var direntBufs = sync.Pool{New: func() any {
	b := make([]byte, 16<<10)
	return &b
}}

// appendDirents appends the entries of one getdents64 buffer (records of
// d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name NUL-terminated),
// leaving out "." and "..". The entries are taken from slab, a new one
// made when it is full (one allocation for many entries), and out is
// doubled when full (append grows a long slice by a quarter at a time).
func appendDirents(out []fs.DirEntry, b []byte, r *os.Root, slab *[]rawEntry) []fs.DirEntry {
	const nameOff = 19
	for len(b) >= nameOff {
		reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		ino := *(*uint64)(unsafe.Pointer(&b[0]))
		dt := b[18]
		name := b[nameOff:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		b = b[reclen:]
		if string(name) == "." || string(name) == ".." {
			continue
		}
		if len(*slab) == cap(*slab) {
			*slab = make([]rawEntry, 0, min(max(2*cap(*slab), 32), 1024))
		}
		*slab = append(*slab, rawEntry{name: string(name), ino: ino, r: r})
		e := &(*slab)[len(*slab)-1]
		switch dt {
		case syscall.DT_REG:
			e.typ = 0
		case syscall.DT_DIR:
			e.typ = fs.ModeDir
		case syscall.DT_LNK:
			e.typ = fs.ModeSymlink
		case syscall.DT_FIFO:
			e.typ = fs.ModeNamedPipe
		case syscall.DT_SOCK:
			e.typ = fs.ModeSocket
		case syscall.DT_CHR:
			e.typ = fs.ModeDevice | fs.ModeCharDevice
		case syscall.DT_BLK:
			e.typ = fs.ModeDevice
		default:
			fi, err := r.Lstat(e.name)
			if err != nil {
				continue // gone since listed, or unreadable: as ReadDir skips it
			}
			e.info, e.typ = fi, fi.Mode().Type()
		}
		if len(out) == cap(out) {
			out = slices.Grow(out, max(len(out), 32))
		}
		out = append(out, e)
	}
	return out
}
