package gitx

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A commit of many new blobs (a move rewrites every note linking to the
// moved one) writes them as one pack with its index instead of one loose
// object each, as git itself keeps a push of that many objects as a pack
// (transfer.unpackLimit, 100): two files instead of thousands, each of
// which cost a new file in the object folder, a link and a removal (on
// ext4 without a journal, about 0.3 ms a file), and no loose objects
// piling up towards git's automatic collection (gc.auto, 6,700). The
// pack is what git writes for such objects: version 2, each object
// whole (no deltas) and deflated, the SHA-1 (or SHA-256) of the whole as
// its trailer and name; its index is version 2 (the sorted ids, the CRC-32
// of each entry, the offsets). Both are written to temporary files in the
// pack folder, flushed to disk as git's default flushes packs (unless
// core.fsync leaves packs out), and renamed into place, the index last
// (git sees a pack only through its index). git is then asked whether it
// sees every blob (cat-file --batch-check); if it does not, the pack is
// removed and the blobs are written loose as before.

// packMin is the fewest new blobs a commit writes as a pack.
const packMin = 100

// packMaxBytes bounds what a pack is built from in memory (the blobs'
// bytes, as the commit's files were sized); a larger commit writes its blobs
// loose, never reading them twice. A variable for the tests.
var packMaxBytes int64 = 256 << 20

// packEntry is one blob of a pack being made.
type packEntry struct {
	id   string // hex
	size int    // the blob's length
	z    []byte // the blob, deflated
	off  uint64 // where its entry starts in the pack
	crc  uint32 // of its entry (header and deflated data)
}

// packBlob is a blob's pack entry, before its place in the pack is known.
func (s objectStore) packBlob(body []byte) (packEntry, error) {
	var z bytes.Buffer
	z.Grow(len(body)/2 + 64)
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&z)
	zw.Write(body)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return packEntry{}, err
	}
	return packEntry{id: objectID("blob", body, s.sha256), size: len(body), z: z.Bytes()}, nil
}

// writePack stores es (blobs made by packBlob) as one pack and its index
// in the object folder's pack folder, and returns the files it made there,
// for removePack. A file already there is kept and not returned: the same
// blobs committed again (an undo taken back) make the same pack, whose
// objects earlier commits name.
func (s objectStore) writePack(es []packEntry) ([]string, error) {
	newHash := sha1.New
	if s.sha256 {
		newHash = sha256.New
	}
	var pack bytes.Buffer
	size := 12
	for _, e := range es {
		size += len(e.z) + 10
	}
	pack.Grow(size + 32)
	pack.WriteString("PACK")
	pack.Write(binary.BigEndian.AppendUint32(nil, 2))
	pack.Write(binary.BigEndian.AppendUint32(nil, uint32(len(es))))
	for i := range es {
		e := &es[i]
		e.off = uint64(pack.Len())
		start := pack.Len()
		// The type (3, a blob) and the size: 4 bits of it in the first
		// byte, then 7 a byte, the top bit saying another follows.
		n := e.size
		b := byte(3<<4 | n&0x0f)
		n >>= 4
		for n > 0 {
			pack.WriteByte(b | 0x80)
			b = byte(n & 0x7f)
			n >>= 7
		}
		pack.WriteByte(b)
		pack.Write(e.z)
		e.crc = crc32.ChecksumIEEE(pack.Bytes()[start:])
	}
	h := newHash()
	h.Write(pack.Bytes())
	sum := h.Sum(nil)
	pack.Write(sum)

	order := make([]int, len(es))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(es[a].id, es[b].id) })
	var idx bytes.Buffer
	idx.WriteString("\xfftOc")
	idx.Write(binary.BigEndian.AppendUint32(nil, 2))
	var fan [256]uint32
	ids := make([][]byte, len(es))
	for i, k := range order {
		id, err := hex.DecodeString(es[k].id)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		fan[id[0]]++
	}
	total := uint32(0)
	for i := range fan {
		total += fan[i]
		idx.Write(binary.BigEndian.AppendUint32(nil, total))
	}
	for _, id := range ids {
		idx.Write(id)
	}
	for _, k := range order {
		idx.Write(binary.BigEndian.AppendUint32(nil, es[k].crc))
	}
	var large []uint64
	for _, k := range order {
		off := es[k].off
		if off < 1<<31 {
			idx.Write(binary.BigEndian.AppendUint32(nil, uint32(off)))
			continue
		}
		idx.Write(binary.BigEndian.AppendUint32(nil, 1<<31|uint32(len(large))))
		large = append(large, off)
	}
	for _, off := range large {
		idx.Write(binary.BigEndian.AppendUint64(nil, off))
	}
	idx.Write(sum)
	h = newHash()
	h.Write(idx.Bytes())
	idx.Write(h.Sum(nil))

	dir := filepath.Join(s.dir, "pack")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("git: pack folder: %w", err)
	}
	name := "pack-" + hex.EncodeToString(sum)
	var made []string
	for _, f := range [...]struct {
		prefix, name string
		data         []byte
	}{{"tmp_pack_", name + ".pack", pack.Bytes()}, {"tmp_idx_", name + ".idx", idx.Bytes()}} {
		placed, err := s.placeFile(dir, f.prefix, f.name, f.data)
		if err != nil {
			removePack(made)
			return nil, err
		}
		if placed {
			made = append(made, filepath.Join(dir, f.name))
		}
	}
	return made, nil
}

// placeFile writes data to a temporary file of dir (prefix, as git names
// its own, so that its gc removes one left behind) and renames it to name,
// read-only, reporting whether it did; a file already there (the same
// pack) is kept.
func (s objectStore) placeFile(dir, prefix, name string, data []byte) (bool, error) {
	final := filepath.Join(dir, name)
	if _, err := os.Lstat(final); err == nil {
		return false, nil
	}
	tmp, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return false, fmt.Errorf("git: pack: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // a no-op once renamed
	_, err = tmp.Write(data)
	if err == nil && s.fsyncPack {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmpName, 0o444)
	}
	if err == nil {
		err = os.Rename(tmpName, final)
	}
	if err != nil {
		return false, fmt.Errorf("git: pack: %w", err)
	}
	return true, nil
}

// removePack removes the files writePack made, the index first (git sees
// a pack only through its index).
func removePack(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		os.Remove(made[i])
	}
}

// errPackUnseen: git did not find every blob of a pack just written.
var errPackUnseen = errors.New("git does not see the blobs of the pack written")

// seesBlobs asks git whether it finds each blob of es, with its size.
func (r *Repo) seesBlobs(ctx context.Context, es []packEntry) error {
	var in strings.Builder
	for _, e := range es {
		in.WriteString(e.id)
		in.WriteByte('\n')
	}
	out, err := r.run(ctx, runOpts{stdin: in.String()}, "cat-file", "--batch-check")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(es) {
		return errPackUnseen
	}
	for i, l := range lines {
		if l != es[i].id+" blob "+strconv.Itoa(es[i].size) {
			return fmt.Errorf("%w: %s", errPackUnseen, l)
		}
	}
	return nil
}

// fsyncPacks tells from core.fsync's value whether packs and their
// indexes are flushed: git's default set of components has them; the value
// is read as fsyncNames reads it (the last mention of a component naming
// packs counts, "none" empties the set).
func fsyncPacks(v string) bool {
	return fsyncFrom(true, v, "pack", "objects", "committed", "added", "all")
}
