package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRoundTrip: a written record is pending until removed, and the folder
// is made only by the first write.
func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "j")
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("Open made the folder")
	}
	if recs, bad, err := d.Pending(); err != nil || len(recs)+len(bad) != 0 {
		t.Fatalf("pending in a missing folder: %v %v %v", recs, bad, err)
	}
	older := &Record{ID: NewID(), Started: time.Unix(100, 0).UTC(), Message: "first", Commit: true,
		Ops: []Op{{Kind: OpPut, Path: "a.md", Temp: ".vaultmcp-0123456789abcdef.tmp", Before: "x", After: "y"}, {Kind: OpRemove, Path: "b.md", Before: "z"}}}
	newer := &Record{ID: NewID(), Started: time.Unix(200, 0).UTC(), Message: "second", IdempotencyKey: "k1", Author: "Ana"}
	for _, r := range []*Record{newer, older} {
		if err := d.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder: %v %v", fi, err)
	}
	recs, bad, err := d.Pending()
	if err != nil || len(bad) != 0 || len(recs) != 2 {
		t.Fatalf("pending: %v %v %v", recs, bad, err)
	}
	if recs[0].Message != "first" || recs[1].IdempotencyKey != "k1" || recs[1].Author != "Ana" {
		t.Fatalf("records out of order or changed: %+v %+v", recs[0], recs[1])
	}
	if got := strings.Join(recs[0].Paths(), ","); got != "a.md,b.md" {
		t.Fatalf("paths %s", got)
	}
	if err := d.Remove(older.ID); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(older.ID); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	if recs, _, _ := d.Pending(); len(recs) != 1 || recs[0].ID != newer.ID {
		t.Fatalf("after remove: %v", recs)
	}
}

// TestDamagedAndTorn: a record that does not parse, has another format or
// another id is reported and left in place; the temporary file of a write
// that never finished is removed (its record never made it).
func TestDamagedAndTorn(t *testing.T) {
	dir := t.TempDir()
	d, _ := Open(dir)
	files := map[string]string{
		"torn.json":   `{"format":1,"id":"torn","ops":[`,
		"future.json": `{"format":99,"id":"future"}`,
		"other.json":  `{"format":1,"id":"not-other"}`,
		".rec-12345":  `{"format":1,"id":"half"`,
		"notes.txt":   "not a record",
	}
	for name, body := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600)
	}
	recs, bad, err := d.Pending()
	if err != nil || len(recs) != 0 || len(bad) != 3 {
		t.Fatalf("recs %v bad %v err %v", recs, bad, err)
	}
	for _, b := range bad {
		if _, err := os.Stat(filepath.Join(dir, b.File)); err != nil {
			t.Errorf("%s was not left in place", b.File)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".rec-12345")); !os.IsNotExist(err) {
		t.Error("the temporary file of an unfinished write is still there")
	}
	if err := d.Write(&Record{ID: "../escape"}); err == nil {
		t.Error("an id with a path in it was accepted")
	}
}
