package vaultfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReopenReplacedFolder: once the vault's folder is moved away and
// another put in its place, reads still went to the old folder; Reopen
// switches to the new one, and only when the folder was replaced.
func TestReopenReplacedFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if switched, err := v.Reopen(); switched || err != nil {
		t.Fatalf("Reopen of the same folder = %v, %v; want false, nil", switched, err)
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if switched, err := v.Reopen(); switched || CodeOf(err) != CodeNotFound {
		t.Fatalf("Reopen with nothing at the path = %v, %v; want false, NOT_FOUND", switched, err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _, err := v.ReadNote("a.md"); err != nil || string(data) != "old" {
		t.Fatalf("before Reopen, ReadNote = %q, %v; want the held folder's note", data, err)
	}
	if switched, err := v.Reopen(); !switched || err != nil {
		t.Fatalf("Reopen of a replaced folder = %v, %v; want true, nil", switched, err)
	}
	if data, _, err := v.ReadNote("a.md"); err != nil || string(data) != "new" {
		t.Errorf("after Reopen, ReadNote = %q, %v; want the new folder's note", data, err)
	}
	var walked []string
	if err := v.Walk(t.Context(), func(fi FileInfo) error { walked = append(walked, fi.Path); return nil }, nil); err != nil || len(walked) != 1 {
		t.Errorf("after Reopen, Walk = %q, %v", walked, err)
	}
	if switched, err := v.Reopen(); switched || err != nil {
		t.Errorf("second Reopen = %v, %v; want false, nil", switched, err)
	}
}
