// Package snapshot stores the state of a built index in one file outside the
// vault, so that the next start can load it instead of analyzing every note
// again, and reads it back.
//
// A file is: the magic "VMCPSNAP", the format version (uint32), a key
// string, the payload, and the CRC-32C (Castagnoli) of everything before it
// (uint32). The key says which program and settings wrote it (see Key): a
// snapshot is only ever used by the same executable with the same settings,
// so a change of parser, analyzer or format can never be misread. A file
// that is missing, truncated, corrupt or written by another executable is
// reported as an error and the caller builds from the notes, as without
// snapshot; nothing in a snapshot is trusted beyond what its checksum
// vouches for, and decoding bounds-checks every length, so a damaged file
// cannot crash the reader.
//
// Writing goes through a hidden temporary file in the same folder, renamed
// over the old snapshot once complete: a reader sees the old file or the new
// one, never a part.
//
// The payload is written with Enc and read with Dec: unsigned varints,
// length-prefixed strings and byte strings, and little-endian fixed-size
// arrays. Dec reads from the whole file in memory and can return strings and
// byte slices that share its memory (zero copy), which is how a snapshot of a
// 100k-note vault loads in a fraction of a second.
package snapshot

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"
)

// Format is the version of the file layout; bump it with any change of what
// Enc writes for a snapshot. 2: the index's title field and link texts. 3:
// the vault's files listed instead of digested, the notes in path order.
// 4: the resolved link graph, in a section. 5: a note's elided stem
// postings counted in its term list, not its stem list. 6: the candidates of
// a bare link name ordered by their path's length (Obsidian's order), not
// their number of folders: the resolved links differ; and a title
// heading's links shown as their text (markdown.shownText). 7: each note's
// title signatures (the full title bonus).
const Format = 7

const magic = "VMCPSNAP"

// ErrInvalid is wrapped by every error about a snapshot file's contents
// (as opposed to an I/O error).
var ErrInvalid = errors.New("invalid snapshot")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Key returns a key naming this executable and settings: the module version
// and VCS revision when the build recorded them, and the executable's path,
// size and modification time (so a rebuilt binary never reads the snapshot
// of the one it replaced), followed by settings.
func Key(settings string) string {
	k := "go"
	if bi, ok := debug.ReadBuildInfo(); ok {
		k = bi.GoVersion + " " + bi.Main.Path + "@" + bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				k += " " + s.Key + "=" + s.Value
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			k += fmt.Sprintf(" exe=%s/%d/%d", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return k + " | " + settings
}

// PathFor returns the snapshot file of the vault folder dir under cacheDir
// for the given settings (those of Key): one file per vault and settings,
// named by a hash of its absolute path and the settings, so that two
// programs on one vault with different settings (a server with
// VAULT_LANG=pt, a search from a shell without it) keep a snapshot each,
// instead of each refusing and replacing the other's at every start. The
// executable is left out: a new one replaces the old one's snapshot.
func PathFor(cacheDir, dir, settings string) string {
	sum := sha256.Sum256([]byte(dir + "\x00" + settings))
	return filepath.Join(cacheDir, "index-"+hex.EncodeToString(sum[:12])+".snap")
}

// RemoveUnkeyed removes the snapshot of the vault folder dir that a build
// before PathFor took the settings wrote (named by the vault's path alone),
// once a snapshot of the new name is written: no longer read by anyone,
// it would stay in the cache folder for good (254 MB for a 100k-note
// vault).
func RemoveUnkeyed(cacheDir, dir string) {
	sum := sha256.Sum256([]byte(dir))
	os.Remove(filepath.Join(cacheDir, "index-"+hex.EncodeToString(sum[:12])+".snap"))
}

// DefaultDir is the folder snapshots go to by default: vaultmcp under the
// user's cache folder ($XDG_CACHE_HOME or ~/.cache on Linux).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "vaultmcp"), nil
}

// Enc writes a payload. Errors are sticky: the first is kept and returned by
// the Write that ends the file.
type Enc struct {
	w   *bufio.Writer
	crc hash.Hash32
	err error
	buf [binary.MaxVarintLen64]byte
}

// Write writes the snapshot file at path: fn writes the payload with e. The
// folder is created (0700) when missing; the file is 0600 (a snapshot holds
// the vault's words and paths).
func Write(path, key string, fn func(e *Enc) error) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("snapshot folder: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	crc := crc32.New(castagnoli)
	e := &Enc{w: bufio.NewWriterSize(writerFunc(func(p []byte) (int, error) {
		crc.Write(p)
		return f.Write(p)
	}), 1<<20), crc: crc}
	e.raw([]byte(magic))
	e.U32(Format)
	e.String(key)
	if err := fn(e); err != nil {
		return err
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	if e.err != nil {
		return fmt.Errorf("snapshot: %w", e.err)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc.Sum32())
	if _, err := f.Write(sum[:]); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// tempPrefix starts the name of a snapshot being written.
const tempPrefix = ".snap-"

// UnusedAfter is how long a snapshot neither written nor read stays in the
// cache folder: RemoveUnused then removes it (a vault moved, renamed or
// deleted, or a setting no longer used, leaves its snapshot behind for
// good otherwise; 254 MB for a 100k-note vault). A vault opened again after
// that is indexed anew, as on its first start.
const UnusedAfter = 30 * 24 * time.Hour

// Used marks the snapshot at path as read now (its modification time, which
// nothing else reads), so that RemoveUnused keeps it while it is in use.
func Used(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// TempAge is how old the temporary file of a snapshot write must be for
// Tidy to take it for one a killed process left: a younger one may be
// another process's write in progress.
const TempAge = time.Hour

// Tidy removes from dir, in one reading of it, the temporary files of
// snapshot writes cut short more than TempAge ago and the snapshots, other
// than keep, neither written nor marked Used for UnusedAfter; it returns how
// many snapshots it removed.
func Tidy(dir, keep string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(dir, name)
		temp := strings.HasPrefix(name, tempPrefix)
		snap := e.Type().IsRegular() && strings.HasPrefix(name, "index-") && strings.HasSuffix(name, ".snap") && p != keep
		if !temp && !snap {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		switch age := time.Since(fi.ModTime()); {
		case temp && age > TempAge:
			os.Remove(p)
		case snap && age > UnusedAfter && os.Remove(p) == nil:
			n++
		}
	}
	return n
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (e *Enc) raw(p []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(p)
	}
}

// Uvarint writes x.
func (e *Enc) Uvarint(x uint64) { e.raw(binary.AppendUvarint(e.buf[:0], x)) }

// Varint writes x.
func (e *Enc) Varint(x int64) { e.raw(binary.AppendVarint(e.buf[:0], x)) }

// Int writes a non-negative int.
func (e *Enc) Int(x int) { e.Uvarint(uint64(x)) }

// Bool writes b as one byte.
func (e *Enc) Bool(b bool) {
	v := byte(0)
	if b {
		v = 1
	}
	e.raw([]byte{v})
}

// U32 writes x in 4 bytes.
func (e *Enc) U32(x uint32) { e.raw(binary.LittleEndian.AppendUint32(e.buf[:0], x)) }

// F64 writes x in 8 bytes.
func (e *Enc) F64(x float64) { e.raw(binary.LittleEndian.AppendUint64(e.buf[:0], math.Float64bits(x))) }

// Bytes writes b with its length.
func (e *Enc) Bytes(b []byte) {
	e.Int(len(b))
	e.raw(b)
}

// String writes s with its length.
func (e *Enc) String(s string) {
	e.Int(len(s))
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// Strings writes a list of strings.
func (e *Enc) Strings(s []string) {
	e.Int(len(s))
	for _, x := range s {
		e.String(x)
	}
}

// U32s writes a uint32 array.
func (e *Enc) U32s(v []uint32) {
	e.Int(len(v))
	for _, x := range v {
		e.U32(x)
	}
}

// F32s writes a float32 array.
func (e *Enc) F32s(v []float32) {
	e.Int(len(v))
	for _, x := range v {
		e.U32(math.Float32bits(x))
	}
}

// Section writes what fn writes as one byte string: a reader can read it
// on its own (Dec.Section), for instance while another reads what follows.
func (e *Enc) Section(fn func(e *Enc)) {
	var buf bytes.Buffer
	sub := &Enc{w: bufio.NewWriterSize(&buf, 64<<10)}
	fn(sub)
	if sub.err == nil {
		sub.err = sub.w.Flush()
	}
	if sub.err != nil {
		if e.err == nil {
			e.err = sub.err
		}
		return
	}
	e.Bytes(buf.Bytes())
}

// Dec reads a payload from a whole file in memory. Errors are sticky: after
// the first, every read returns a zero value and Err reports it.
type Dec struct {
	b   []byte
	i   int
	err error
}

// Peek tells from the first bytes of the snapshot file at path whether
// Read would take it (its magic, format and key; Read also checks the
// checksum of the whole file), and returns the file's size: for a caller
// that readies memory before Read, or that must know early whether the
// notes will come from a snapshot. Its errors are Read's.
func Peek(path, key string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	b := make([]byte, min(fi.Size(), peekBytes))
	if _, err := io.ReadFull(f, b); err != nil {
		return 0, err
	}
	if err := checkMagic(b); err != nil {
		return 0, err
	}
	if _, err := header(b, key); err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// peekBytes is what Peek reads: the magic, the format and a key of up to
// 4 KiB (a key is the executable's identity and the index settings, about
// a hundred bytes).
const peekBytes = 4096 + 64

// checkMagic checks that b (a whole file, or its first bytes) starts with
// the magic and is long enough to hold a format and a checksum.
func checkMagic(b []byte) error {
	if len(b) < len(magic)+8 || string(b[:len(magic)]) != magic {
		return fmt.Errorf("%w: not a snapshot file", ErrInvalid)
	}
	return nil
}

// header checks the format and the key after the magic at the start of b
// and returns a Dec past them.
func header(b []byte, key string) (*Dec, error) {
	d := &Dec{b: b, i: len(magic)}
	if f := d.U32(); f != Format {
		return nil, fmt.Errorf("%w: format %d, want %d", ErrInvalid, f, Format)
	}
	if k := d.String(); k != key {
		return nil, fmt.Errorf("%w: written by another executable or with other settings", ErrInvalid)
	}
	return d, d.err
}

// Read reads the snapshot file at path and checks its magic, format, key
// and checksum; the payload is then read with the returned Dec. A missing
// file is reported with an error satisfying errors.Is(err, fs.ErrNotExist).
func Read(path, key string) (*Dec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := checkMagic(b); err != nil {
		return nil, err
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (truncated or damaged)", ErrInvalid)
	}
	return header(body, key)
}

// NewDec returns a Dec over b (for tests of payload readers).
func NewDec(b []byte) *Dec { return &Dec{b: b} }

// Remaining is the number of bytes not read yet.
func (d *Dec) Remaining() int { return len(d.b) - d.i }

// Err returns the first error met.
func (d *Dec) Err() error { return d.err }

// Done reports an error unless the whole payload was read.
func (d *Dec) Done() error {
	if d.err == nil && d.i != len(d.b) {
		d.fail("%d bytes left over", len(d.b)-d.i)
	}
	return d.err
}

// fail records the first error; the reading position goes to the end, so
// that every later read returns a zero value.
func (d *Dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format+" at byte %d", append([]any{ErrInvalid}, append(args, d.i)...)...)
	}
	d.i = len(d.b)
}

// take returns the next n bytes.
func (d *Dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.i {
		d.fail("length %d past the end", n)
		return nil
	}
	p := d.b[d.i : d.i+n : d.i+n]
	d.i += n
	return p
}

// Uvarint reads an unsigned varint. Most are one byte (counts, lengths,
// small ints): that case is inlined.
func (d *Dec) Uvarint() uint64 {
	if i := d.i; i < len(d.b) && d.b[i] < 0x80 { // d.i is at the end after an error
		d.i = i + 1
		return uint64(d.b[i])
	}
	return d.uvarint()
}

func (d *Dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.i += n
	return x
}

// Varint reads a signed varint.
func (d *Dec) Varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b[d.i:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.i += n
	return x
}

// Int reads a non-negative int written by Enc.Int, at most max.
func (d *Dec) Int(max int) int {
	var x uint64
	if i := d.i; i < len(d.b) && d.b[i] < 0x80 { // Uvarint's fast path
		d.i, x = i+1, uint64(d.b[i])
	} else {
		x = d.uvarint()
	}
	if x > uint64(max) {
		d.fail("value %d above %d", x, max)
		return 0
	}
	return int(x)
}

// Len reads a count of items of at least minSize bytes each: it cannot be
// more than the bytes left allow, so a damaged count never allocates much.
func (d *Dec) Len(minSize int) int {
	return d.Int((len(d.b) - d.i) / max(minSize, 1))
}

// Section returns a Dec over the next section written by Enc.Section,
// sharing the file's memory; d goes on after it. After an error (d's, or a
// section past the end) the section's Dec reports it.
func (d *Dec) Section() *Dec {
	b := d.Bytes()
	if d.err != nil {
		return &Dec{err: d.err}
	}
	return &Dec{b: b}
}

// Bool reads a byte written by Enc.Bool.
func (d *Dec) Bool() bool {
	p := d.take(1)
	if p == nil {
		return false
	}
	if p[0] > 1 {
		d.fail("bad bool %d", p[0])
	}
	return p[0] == 1
}

// U32 reads 4 bytes.
func (d *Dec) U32() uint32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

// F64 reads 8 bytes.
func (d *Dec) F64() float64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p))
}

// Bytes reads a byte string; the result shares the file's memory and has no
// spare capacity (appending to it copies).
func (d *Dec) Bytes() []byte {
	n := d.Len(1)
	p := d.take(n)
	if len(p) == 0 {
		return nil
	}
	return p
}

// String reads a string sharing the file's memory.
func (d *Dec) String() string {
	var n uint64
	if i := d.i; i < len(d.b) && d.b[i] < 0x80 { // Uvarint's fast path
		d.i, n = i+1, uint64(d.b[i])
	} else {
		n = d.uvarint()
	}
	if n == 0 {
		return ""
	}
	if n > uint64(len(d.b)-d.i) {
		d.fail("value %d above %d", n, len(d.b)-d.i)
		return ""
	}
	s := unsafe.String(&d.b[d.i], int(n))
	d.i += int(n)
	return s
}

// Strings reads a list of strings.
func (d *Dec) Strings() []string {
	n := d.Len(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.String()
	}
	return out
}

// U32s reads a uint32 array.
func (d *Dec) U32s() []uint32 {
	n := d.Len(4)
	p := d.take(4 * n)
	if p == nil {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(p[4*i:])
	}
	return out
}

// F32s reads a float32 array.
func (d *Dec) F32s() []float32 {
	n := d.Len(4)
	p := d.take(4 * n)
	if p == nil {
		return nil
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return out
}
