package gitx

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The fast commit reads and updates the user's index itself instead of
// through git processes. At 100k notes the index is an 8 MB file: `git
// update-index --index-info` read, checked and wrote it in about 70 ms, and
// `git check-ignore` read it again (about 30 ms) only to tell the tracked
// paths from the untracked ones. Here it is read once (about 10 ms),
// answers which paths are tracked, and is written back with exactly the
// committed paths' entries changed, as update-index would leave it:
//
//   - each committed path gets one stage-0 entry with the committed blob and
//     mode and no stat data (git compares the file's content the next time
//     it looks, as after `update-index --cacheinfo`); an entry that already
//     names that blob and mode is kept as it is; a deleted path loses its
//     entry;
//   - every other entry is kept, byte for byte, except that one whose
//     modification time is not older than the index file's has its size
//     zeroed, git's own rule for a "racily clean" entry, so that a change
//     made within the index's timestamp is never taken for clean once the
//     index is newer;
//   - the cache tree (TREE) is kept with the folders on the way to each
//     committed path marked invalid, as git does; the resolve-undo record
//     (REUC) is kept; the entry offset tables (EOIE, IEOT), which the new
//     entries would make wrong, are dropped (git writes them again when
//     configured to);
//   - the index this Repo wrote is kept, decoded, and used by its next
//     commit instead of reading the file again, as long as the file is the
//     one written (same inode, size and modification time: git replaces the
//     index by renaming a new file over it, so any other writer changes
//     them; and the same checksum at its end); at 100k notes that saves
//     reading, checking and decoding 8 MB;
//   - the file is written under index.lock, created exclusively as git's
//     lock is (a git program holding it is waited for, as for update-index),
//     flushed when core.fsync names the index, and renamed into place; the
//     index is read again under the lock when it changed since it was read.
//
// Anything else goes to `git update-index` as before: a shared repository
// (core.sharedRepository: git gives the index the group's permissions), an
// index version other than 2, 3 and 4, a split or sparse index, an
// untracked cache or a file system monitor's state (both tied to the entries in ways only git keeps
// right), any other extension git requires to be understood, a committed
// path with conflict stages (git records them as resolve-undo), a committed
// path that would collide with a folder or a file of the index, an index
// file that is a symbolic link (git replaces its target), or an index that
// cannot be read or checked.

// indexEntry is one entry of the index: its fixed part (stat data, mode,
// object id, flags, and the extended flags of a version 3 entry that has
// them) and its path.
type indexEntry struct {
	fixed []byte
	name  string
	stage uint8
}

// Offsets in an entry's fixed part.
const (
	ixMtime  = 8      // modification time: seconds, then nanoseconds
	ixMode   = 24     // file mode
	ixSize   = 36     // file size
	ixID     = 40     // object id, then the flags
	flagsExt = 0x4000 // the flags: extended flags follow (version 3)
	nameMask = 0x0fff // the flags: the path's length, 0xfff when longer
)

// userIndex is the user's index as read.
type userIndex struct {
	path    string
	info    fs.FileInfo // of the file read: racy entries, and whether it changed since
	version uint32
	idLen   int
	entries []indexEntry
	tree    []byte // the TREE extension's data; nil when there is none
	reuc    []byte // the REUC extension's data; nil when there is none
	// The bytes every entry's fixed part (and tree and reuc) lies in, and
	// a buffer and an entry list no longer used, which the next encode and
	// apply fill instead of allocating: at 100k notes those are 8 MB and
	// 5 MB a commit, each making the collector mark the server's whole heap
	// sooner (half the CPU of a write there).
	buf, spare   []byte
	spareEntries []indexEntry
}

// sha256 reports a repository with SHA-256 object names.
func (ix *userIndex) sha256() bool { return ix.idLen == sha256.Size }

// errIndexUnsupported: the index is one the fast commit leaves to git.
var errIndexUnsupported = errors.New("git index: left to git")

// readUserIndex reads and checks the index at path; errIndexUnsupported
// (wrapped) when it is one to leave to git, fs.ErrNotExist when there is none.
func readUserIndex(path string, sha256 bool) (*userIndex, error) {
	// git resolves a symbolically linked index and replaces its target;
	// a rename here would replace the link: left to git.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, unsupported("a symbolic link")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, info.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	ix, err := parseIndex(data, sha256)
	if err != nil {
		return nil, err
	}
	ix.path, ix.info = path, info
	return ix, nil
}

func newIndexHash(sha256Repo bool) hash.Hash {
	if sha256Repo {
		return sha256.New()
	}
	return sha1.New()
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errIndexUnsupported}, args...)...)
}

// parseIndex decodes an index file's bytes.
func parseIndex(data []byte, sha256Repo bool) (*userIndex, error) {
	idLen := 20
	if sha256Repo {
		idLen = 32
	}
	if len(data) < 12+idLen || string(data[:4]) != "DIRC" {
		return nil, unsupported("not an index file")
	}
	body, sum := data[:len(data)-idLen], data[len(data)-idLen:]
	// A trailer of zeros is an index written with index.skipHash.
	if bytes.Count(sum, []byte{0}) != len(sum) {
		h := newIndexHash(sha256Repo)
		h.Write(body)
		if !bytes.Equal(h.Sum(nil), sum) {
			return nil, unsupported("checksum mismatch")
		}
	}
	ix := &userIndex{version: binary.BigEndian.Uint32(data[4:8]), idLen: idLen, buf: data}
	if ix.version < 2 || ix.version > 4 {
		return nil, unsupported("version %d", ix.version)
	}
	count := int(binary.BigEndian.Uint32(data[8:12]))
	fixedLen := ixID + idLen + 2
	if count > len(body)/fixedLen {
		return nil, unsupported("entry count %d", count)
	}
	ix.entries = make([]indexEntry, count)
	// Every path is a substring of one string: no allocation per entry. A
	// version 4 index stores each path as a part of the previous one and a
	// suffix; those are rebuilt into one buffer first.
	var names []byte
	type span struct{ from, to int }
	var spans []span
	if ix.version == 4 {
		spans = make([]span, count)
	}
	all := string(body)
	pos := 12
	prev := span{}
	for i := range count {
		if pos+fixedLen > len(body) {
			return nil, unsupported("truncated entry")
		}
		flags := binary.BigEndian.Uint16(body[pos+fixedLen-2:])
		fl := fixedLen
		if flags&flagsExt != 0 {
			if ix.version < 3 {
				return nil, unsupported("extended flags in version 2")
			}
			fl += 2
		}
		if pos+fl > len(body) {
			return nil, unsupported("truncated entry")
		}
		ix.entries[i].fixed = body[pos : pos+fl : pos+fl]
		ix.entries[i].stage = uint8(flags >> 12 & 3)
		pos += fl
		if ix.version == 4 {
			strip, n := varintDecode(body[pos:])
			if n <= 0 || strip > prev.to-prev.from {
				return nil, unsupported("bad path prefix")
			}
			pos += n
			nul := bytes.IndexByte(body[pos:], 0)
			if nul < 0 {
				return nil, unsupported("truncated path")
			}
			from := len(names)
			names = append(names, names[prev.from:prev.to-strip]...)
			names = append(names, body[pos:pos+nul]...)
			prev = span{from, len(names)}
			spans[i] = prev
			pos += nul + 1
			continue
		}
		nlen := int(flags & nameMask)
		if nlen == nameMask {
			nul := bytes.IndexByte(body[pos:], 0)
			if nul < 0 {
				return nil, unsupported("truncated path")
			}
			nlen = nul
		}
		if pos+nlen >= len(body) || body[pos+nlen] != 0 {
			return nil, unsupported("bad path")
		}
		ix.entries[i].name = all[pos : pos+nlen]
		// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
		entryLen := (fl + nlen + 8) &^ 7
		pos += entryLen - fl
	}
	if ix.version == 4 {
		s := string(names)
		for i, sp := range spans {
			ix.entries[i].name = s[sp.from:sp.to]
		}
	}
	if pos > len(body) {
		return nil, unsupported("truncated entries")
	}
	for i := 1; i < count; i++ {
		if c := cmpEntries(ix.entries[i-1], ix.entries[i]); c >= 0 {
			return nil, unsupported("entries out of order")
		}
	}
	for pos < len(body) {
		if pos+8 > len(body) {
			return nil, unsupported("truncated extension")
		}
		sig := string(body[pos : pos+4])
		size := int(binary.BigEndian.Uint32(body[pos+4 : pos+8]))
		if size > len(body)-pos-8 {
			return nil, unsupported("extension %q size", sig)
		}
		ext := body[pos+8 : pos+8+size]
		pos += 8 + size
		switch sig {
		case "TREE":
			ix.tree = ext
		case "REUC":
			ix.reuc = ext
		case "EOIE", "IEOT":
			// Offsets of the entries: wrong once they change; optional.
		default:
			// UNTR and FSMN, and every extension git must understand
			// (its name starts with a lowercase letter: link, sdir).
			return nil, unsupported("extension %q", sig)
		}
	}
	return ix, nil
}

// cmpEntries orders entries as git does: by path bytes, then stage.
func cmpEntries(a, b indexEntry) int {
	return cmp.Or(strings.Compare(a.name, b.name), int(a.stage)-int(b.stage))
}

// find returns the position of the first entry whose path is not before name.
func (ix *userIndex) find(name string) int {
	i, _ := slices.BinarySearchFunc(ix.entries, name, func(e indexEntry, n string) int {
		return cmp.Or(strings.Compare(e.name, n), int(e.stage)) // stage 0 first, then its conflicts
	})
	return i
}

// tracked reports whether the index has an entry for name (any stage).
func (ix *userIndex) tracked(name string) bool {
	i := ix.find(name)
	return i < len(ix.entries) && ix.entries[i].name == name
}

// regularMode is the mode of name's stage-0 entry when it is a regular
// file (100644 or 100755).
func (ix *userIndex) regularMode(name string) (uint32, bool) {
	i := ix.find(name)
	if i >= len(ix.entries) || ix.entries[i].name != name || ix.entries[i].stage != 0 {
		return 0, false
	}
	mode := binary.BigEndian.Uint32(ix.entries[i].fixed[ixMode:])
	return mode, mode&0o170000 == 0o100000
}

// indexChange is what a committed path's entry becomes: the blob and mode
// committed, or no entry (a deleted path: no id).
type indexChange struct {
	name string
	mode uint32
	id   []byte // raw
}

func (c indexChange) remove() bool { return c.id == nil }

// indexInfo is changes as git update-index --index-info reads them (ids of
// hexLen digits).
func indexInfo(changes []indexChange, hexLen int) string {
	var b strings.Builder
	for _, c := range changes {
		if c.remove() {
			fmt.Fprintf(&b, "0 %s\t%s\n", strings.Repeat("0", hexLen), c.name)
		} else {
			fmt.Fprintf(&b, "%o %x 0\t%s\n", c.mode, c.id, c.name)
		}
	}
	return b.String()
}

// apply sets the changed paths' entries; errIndexUnsupported when one is
// a case left to update-index (conflict stages, a path that collides with
// a folder or a file of the index).
func (ix *userIndex) apply(changes []indexChange) error {
	changes = slices.Clone(changes)
	slices.SortFunc(changes, func(a, b indexChange) int { return strings.Compare(a.name, b.name) })
	keep := make([]bool, len(changes)) // the entry is already what the change asks
	for ci, c := range changes {
		i := ix.find(c.name)
		if i < len(ix.entries) && ix.entries[i].name == c.name {
			e := ix.entries[i]
			if e.stage != 0 || i+1 < len(ix.entries) && ix.entries[i+1].name == c.name {
				return unsupported("%s has conflict stages", c.name)
			}
			keep[ci] = !c.remove() && binary.BigEndian.Uint32(e.fixed[ixMode:]) == c.mode && bytes.Equal(e.fixed[ixID:ixID+ix.idLen], c.id)
		}
		if c.remove() {
			continue
		}
		// A file where the index has a folder, or under a path the index
		// has as a file: update-index replaces those entries; left to it.
		if j := ix.find(c.name + "/"); j < len(ix.entries) && len(ix.entries[j].name) > len(c.name) && ix.entries[j].name[:len(c.name)+1] == c.name+"/" {
			return unsupported("%s is a folder in the index", c.name)
		}
		for d := c.name; ; {
			k := strings.LastIndexByte(d, '/')
			if k < 0 {
				break
			}
			d = d[:k]
			if ix.tracked(d) {
				return unsupported("%s is a file in the index", d)
			}
		}
	}
	out := ix.spareEntries[:0]
	if cap(out) < len(ix.entries)+len(changes) {
		out = make([]indexEntry, 0, len(ix.entries)+len(changes)+len(ix.entries)/64)
	}
	i := 0
	var invalid []string
	for ci, c := range changes {
		for i < len(ix.entries) && ix.entries[i].name < c.name {
			out = append(out, ix.entries[i])
			i++
		}
		had := i < len(ix.entries) && ix.entries[i].name == c.name
		if keep[ci] {
			out = append(out, ix.entries[i])
			i++
			continue
		}
		if had {
			i++
		}
		if !c.remove() {
			out = append(out, indexEntry{fixed: ix.freshFixed(c), name: c.name})
		}
		if had || !c.remove() {
			invalid = append(invalid, c.name)
		}
	}
	out = append(out, ix.entries[i:]...)
	clear(ix.entries) // the spare holds no bytes alive
	ix.entries, ix.spareEntries = out, ix.entries
	if ix.tree != nil && len(invalid) > 0 {
		// The cache tree is optional: one that cannot be read is dropped
		// (git builds it again on its next commit).
		ix.tree, _ = invalidateCacheTree(ix.tree, ix.idLen, invalid)
	}
	return nil
}

// freshFixed is the fixed part of a new entry: no stat data (as after
// update-index --cacheinfo), the mode and id, stage 0, the path's length.
func (ix *userIndex) freshFixed(c indexChange) []byte {
	b := make([]byte, ixID+ix.idLen+2)
	binary.BigEndian.PutUint32(b[ixMode:], c.mode)
	copy(b[ixID:], c.id)
	binary.BigEndian.PutUint16(b[ixID+ix.idLen:], uint16(min(len(c.name), nameMask)))
	return b
}

// encode is the index file's bytes. An entry whose modification time is not
// older (in seconds) than racyAfter, the time of the index file read, has
// its size zeroed: git then compares its content instead of trusting its
// stat data (its own rule for racily clean entries, here without reading
// the file first, which only costs git a read later).
func (ix *userIndex) encode(racyAfter int64) []byte {
	size := 12 + len(ix.tree) + len(ix.reuc) + 16 + ix.idLen
	for _, e := range ix.entries {
		size += len(e.fixed) + len(e.name) + 8
	}
	b := ix.spare[:0]
	if cap(b) < size {
		b = make([]byte, 0, size+size/64)
	}
	b = append(b, "DIRC"...)
	b = binary.BigEndian.AppendUint32(b, ix.version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ix.entries)))
	prev := ""
	for i, e := range ix.entries {
		at := len(b)
		b = append(b, e.fixed...)
		mode := binary.BigEndian.Uint32(e.fixed[ixMode:])
		if mode&0o170000 != 0o160000 && int64(binary.BigEndian.Uint32(e.fixed[ixMtime:])) >= racyAfter {
			binary.BigEndian.PutUint32(b[at+ixSize:], 0)
		}
		// The entry now lives in the new file's bytes (smudged as written,
		// for the commit that reuses this index; the file read is freed).
		ix.entries[i].fixed = b[at:len(b):len(b)]
		if ix.version == 4 {
			common := 0
			for common < len(prev) && common < len(e.name) && prev[common] == e.name[common] {
				common++
			}
			b = varintAppend(b, uint64(len(prev)-common))
			b = append(b, e.name[common:]...)
			b = append(b, 0)
			prev = e.name
			continue
		}
		b = append(b, e.name...)
		pad := (len(e.fixed)+len(e.name)+8)&^7 - len(e.fixed) - len(e.name)
		for range pad {
			b = append(b, 0)
		}
	}
	for _, ext := range []struct {
		sig  string
		data []byte
	}{{"TREE", ix.tree}, {"REUC", ix.reuc}} {
		if ext.data == nil {
			continue
		}
		b = append(b, ext.sig...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(ext.data)))
		b = append(b, ext.data...)
	}
	// The extensions too now live in b, and the old bytes are the spare.
	at := len(b)
	if ix.reuc != nil {
		ix.reuc = b[at-len(ix.reuc) : at : at]
		at -= len(ix.reuc) + 8
	}
	if ix.tree != nil {
		ix.tree = b[at-len(ix.tree) : at : at]
	}
	h := newIndexHash(ix.sha256())
	h.Write(b)
	b = h.Sum(b)
	ix.buf, ix.spare = b, ix.buf
	return b
}

// varintDecode reads git's offset varint (index version 4's prefix
// lengths); n is 0 when b ends first.
func varintDecode(b []byte) (v, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = int(c & 127)
	n = 1
	for c&128 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		c = b[n]
		n++
		v = (v+1)<<7 | int(c&127)
	}
	return v, n
}

func varintAppend(b []byte, v uint64) []byte {
	var tmp [16]byte
	pos := len(tmp) - 1
	tmp[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		tmp[pos] = 128 | byte(v&127)
	}
	return append(b, tmp[pos:]...)
}

// cacheTree is one folder of the TREE extension: the number of index
// entries it covers (-1 when invalid), its tree id when valid, and its
// subfolders in order.
type cacheTree struct {
	name  string
	count int
	id    []byte
	kids  []*cacheTree
}

// invalidateCacheTree marks invalid the folders on the way to each path
// (and drops a subfolder named by a path), as git does for a changed entry.
func invalidateCacheTree(data []byte, idLen int, paths []string) ([]byte, error) {
	root, rest, err := readCacheTree(data, idLen)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("git index: cache tree: trailing bytes")
	}
	for _, p := range paths {
		t := root
		for {
			t.count, t.id = -1, nil
			k := strings.IndexByte(p, '/')
			if k < 0 {
				k = len(p)
			}
			name := p[:k]
			at := slices.IndexFunc(t.kids, func(c *cacheTree) bool { return c.name == name })
			if k == len(p) {
				if at >= 0 {
					t.kids = slices.Delete(t.kids, at, at+1)
				}
				break
			}
			if at < 0 {
				break
			}
			t, p = t.kids[at], p[k+1:]
		}
	}
	return root.append(nil), nil
}

func readCacheTree(b []byte, idLen int) (*cacheTree, []byte, error) {
	bad := fmt.Errorf("git index: malformed cache tree")
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return nil, nil, bad
	}
	t := &cacheTree{name: string(b[:nul])}
	b = b[nul+1:]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, nil, bad
	}
	countStr, subStr, ok := bytes.Cut(b[:nl], []byte(" "))
	if !ok {
		return nil, nil, bad
	}
	count, err1 := strconv.Atoi(string(countStr))
	sub, err2 := strconv.Atoi(string(subStr))
	if err1 != nil || err2 != nil || sub < 0 || sub > len(b) {
		return nil, nil, bad
	}
	b = b[nl+1:]
	t.count = count
	if count >= 0 {
		if len(b) < idLen {
			return nil, nil, bad
		}
		t.id, b = b[:idLen], b[idLen:]
	}
	for range sub {
		kid, rest, err := readCacheTree(b, idLen)
		if err != nil {
			return nil, nil, err
		}
		t.kids = append(t.kids, kid)
		b = rest
	}
	return t, b, nil
}

func (t *cacheTree) append(b []byte) []byte {
	b = append(b, t.name...)
	b = append(b, 0)
	if t.count < 0 {
		b = append(b, "-1"...)
	} else {
		b = strconv.AppendInt(b, int64(t.count), 10)
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(t.kids)), 10)
	b = append(b, '\n')
	if t.count >= 0 {
		b = append(b, t.id...)
	}
	for _, k := range t.kids {
		b = k.append(b)
	}
	return b
}

// indexPath is the user's index file the fast commit may update itself, ""
// when it is left to git (GIT_INDEX_FILE names another, the lock's path
// could not be told, or core.sharedRepository makes git set the new file's
// mode for the group).
func (s commitSetup) indexPath() string {
	if s.indexLock == "" || !strings.HasSuffix(s.indexLock, ".lock") || s.cfg.shared {
		return ""
	}
	if _, ok := os.LookupEnv("GIT_INDEX_FILE"); ok {
		return ""
	}
	return strings.TrimSuffix(s.indexLock, ".lock")
}

// indexCache holds the index a Repo last wrote.
type indexCache struct {
	mu sync.Mutex
	ix *userIndex
}

// take returns the kept index when the file at path is still the one it
// was written as, and forgets it either way (the commit that takes it
// edits it; it is kept again once written).
func (c *indexCache) take(path string) *userIndex {
	c.mu.Lock()
	ix := c.ix
	c.ix = nil
	c.mu.Unlock()
	if ix == nil || ix.path != path {
		return nil
	}
	if fi, err := os.Stat(path); err != nil || !sameIndexFile(fi, ix.info) {
		return nil
	}
	// And its checksum is the one written (a file system whose times have
	// a coarse grain could show another index of the same size and time
	// on a reused inode).
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sum := make([]byte, ix.idLen)
	if _, err := f.ReadAt(sum, ix.info.Size()-int64(ix.idLen)); err != nil || !bytes.Equal(sum, ix.buf[len(ix.buf)-ix.idLen:]) {
		return nil
	}
	return ix
}

func (c *indexCache) keep(ix *userIndex) {
	c.mu.Lock()
	c.ix = ix
	c.mu.Unlock()
}

func sameIndexFile(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}

// loadIndex is the user's index for a commit: the one this Repo wrote
// last when the file is still that one, else read from the file.
func (r *Repo) loadIndex(path string, sha256 bool) (*userIndex, error) {
	if ix := r.index.take(path); ix != nil {
		indexReused.Add(1)
		return ix, nil
	}
	return readUserIndex(path, sha256)
}

// testHookIndexWrite, when set by a test, is the error of writing the new
// index (a full disk); testHookBeforeIndexLock runs before index.lock is
// taken for the new index.
var (
	testHookIndexWrite      func() error
	testHookBeforeIndexLock func()
)

// indexWritten counts the indexes updated here, indexToGit those left to
// git update-index (tests read them), and
// indexReused those taken from indexCache.
var indexWritten, indexToGit, indexReused atomic.Int64

// pendingIndex is the user's new index, made under index.lock and not yet
// in place: the fast commit makes it while git moves the branch (holding
// the lock meanwhile, as git commit does) and puts it in place once the
// branch moved, or drops it.
type pendingIndex struct {
	ix     *userIndex
	f      *os.File
	lock   string
	data   []byte
	ledger *lockLedger
}

// prepareIndex takes index.lock and makes the index with the changed paths'
// entries set. Any error leaves the index as it was and the lock removed:
// the caller hands the update to git (ErrIndexLocked aside).
func (r *Repo) prepareIndex(ctx context.Context, ix *userIndex, changes []indexChange) (*pendingIndex, error) {
	lock := ix.path + ".lock"
	if testHookBeforeIndexLock != nil {
		testHookBeforeIndexLock()
	}
	gitDir, _ := r.gitDirs()
	ledger := r.ledger(gitDir)
	f, err := r.lockIndexFile(ctx, lock, ledger)
	if err != nil {
		return nil, err
	}
	p := &pendingIndex{f: f, lock: lock, ledger: ledger}
	ledger.took(lock, f)
	// Read again when another program wrote the index since.
	if fi, err := os.Stat(ix.path); err != nil || !sameIndexFile(fi, ix.info) {
		if ix, err = readUserIndex(ix.path, ix.sha256()); err != nil {
			p.abort()
			return nil, err
		}
	}
	if err := ix.apply(changes); err != nil {
		p.abort()
		return nil, err
	}
	p.ix, p.data = ix, ix.encode(ix.info.ModTime().Unix())
	return p, nil
}

// abort drops the new index and releases the lock.
func (p *pendingIndex) abort() {
	p.f.Close()
	os.Remove(p.lock)
	p.ledger.released(p.lock)
}

// write writes the new index into the lock file (flushed when fsync),
// not yet in place. On error the lock is removed.
func (p *pendingIndex) write(fsync bool) error {
	err := func() error {
		if testHookIndexWrite != nil {
			if err := testHookIndexWrite(); err != nil {
				return err
			}
		}
		if _, err := p.f.Write(p.data); err != nil {
			return fmt.Errorf("git index: %w", err)
		}
		if fsync {
			if err := p.f.Sync(); err != nil {
				return fmt.Errorf("git index: %w", err)
			}
		}
		return p.f.Close()
	}()
	if err != nil {
		p.abort()
	}
	return err
}

// testHookIndexInstall, when set by a test, runs before the written index
// is renamed into place (the commit has landed by then).
var testHookIndexInstall func()

// installIndex renames the written index into place, and keeps it for the
// Repo's next commit. On error the index is as it was, the lock removed.
func (r *Repo) installIndex(p *pendingIndex) error {
	if testHookIndexInstall != nil {
		testHookIndexInstall()
	}
	err := os.Rename(p.lock, p.ix.path)
	if err != nil {
		os.Remove(p.lock)
	}
	p.ledger.released(p.lock)
	if err != nil {
		return fmt.Errorf("git index: %w", err)
	}
	if fi, err := os.Stat(p.ix.path); err == nil {
		p.ix.info = fi
		r.index.keep(p.ix)
	}
	return nil
}

// lockIndexFile creates index.lock as git does (exclusively, mode 0666
// less the umask), waiting with runLocked's retries while another program
// holds it.
func (r *Repo) lockIndexFile(ctx context.Context, lock string, ledger *lockLedger) (*os.File, error) {
	var f *os.File
	var err error
	if lerr := r.retryWhileLocked(ctx, "git index", func() bool {
		ledger.intend(lock)
		f, err = os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			ledger.released(lock)
		}
		return errors.Is(err, fs.ErrExist)
	}); lerr != nil {
		return nil, lerr
	}
	if err != nil {
		return nil, fmt.Errorf("git index: %w", err)
	}
	return f, nil
}
