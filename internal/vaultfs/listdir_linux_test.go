package vaultfs

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// direntBuf encodes linux_dirent64 records as getdents64 returns them:
// d_ino, d_off, d_reclen, d_type, the name and its NUL, padded to 8 bytes.
func direntBuf(ents ...struct {
	ino  uint64
	typ  uint8
	name string
}) []byte {
	var b []byte
	for _, e := range ents {
		n := 19 + len(e.name) + 1
		n = (n + 7) &^ 7
		rec := make([]byte, n)
		binary.NativeEndian.PutUint64(rec[0:], e.ino)
		binary.NativeEndian.PutUint64(rec[8:], uint64(len(b)+n))
		binary.NativeEndian.PutUint16(rec[16:], uint16(n))
		rec[18] = e.typ
		copy(rec[19:], e.name)
		b = append(b, rec...)
	}
	return b
}

// appendDirents reads each record's name, type and inode, leaves out "."
// and "..", stats an entry of unknown type through the root (and leaves it
// out when it is gone), and stops at a record cut short.
func TestAppendDirents(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "unknown.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "unknown-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type ent = struct {
		ino  uint64
		typ  uint8
		name string
	}
	buf := direntBuf(
		ent{1, syscall.DT_DIR, "."},
		ent{2, syscall.DT_DIR, ".."},
		ent{10, syscall.DT_REG, "note.md"},
		ent{11, syscall.DT_DIR, "folder"},
		ent{12, syscall.DT_LNK, "link.md"},
		ent{13, syscall.DT_FIFO, "fifo.md"},
		ent{14, syscall.DT_UNKNOWN, "unknown.md"},
		ent{15, syscall.DT_UNKNOWN, "unknown-dir"},
		ent{16, syscall.DT_UNKNOWN, "gone.md"},
		ent{17, syscall.DT_REG, "a name of exactly twenty-one"},
	)
	var slab []rawEntry
	got := appendDirents(nil, append(buf, 1, 2, 3), r, &slab) // and a record cut short
	want := []struct {
		name   string
		typ    fs.FileMode
		listed bool // listedFile gives its identity
	}{
		{"note.md", 0, true},
		{"folder", fs.ModeDir, false},
		{"link.md", fs.ModeSymlink, false},
		{"fifo.md", fs.ModeNamedPipe, false},
		{"unknown.md", 0, false}, // statted: its identity is the stat's, not the listing's
		{"unknown-dir", fs.ModeDir, false},
		{"a name of exactly twenty-one", 0, true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Name() != w.name || e.Type() != w.typ || e.IsDir() != w.typ.IsDir() {
			t.Errorf("entry %d: %q %v, want %q %v", i, e.Name(), e.Type(), w.name, w.typ)
		}
		id, ok := listedFile(e, 99)
		if ok != w.listed || ok && id != (fileID{dev: 99, ino: e.(*rawEntry).ino}) {
			t.Errorf("%s: listedFile %v %v, want listed %v", w.name, id, ok, w.listed)
		}
	}
	if fi, err := got[4].Info(); err != nil || fi.Size() != 1 {
		t.Errorf("the unknown entry's Info: %v, %v", fi, err)
	}
	if fi, err := got[0].Info(); err == nil {
		t.Errorf("Info of an entry that does not exist: %v", fi.Name())
	}
}
