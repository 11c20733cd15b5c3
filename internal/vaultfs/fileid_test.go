//go:build unix

package vaultfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Unchanged holds a walked note to its identity: untouched it is
// unchanged; the same bytes, size and modification time in another file
// renamed over it are not, nor is a copy of its FileInfo without identity;
// and the identity kept agrees with os.SameFile.
func TestUnchangedIdentity(t *testing.T) {
	dir := t.TempDir()
	note := filepath.Join(dir, "a.md")
	if err := os.WriteFile(note, []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := openOpts(t, dir)
	walked := walkAll(t, v).files
	if len(walked) != 1 || !walked[0].walked.known() {
		t.Fatalf("walked %+v", walked)
	}
	w := walked[0]
	if !v.Unchanged(w) {
		t.Fatal("an untouched note is not unchanged")
	}
	before, _ := os.Lstat(note)
	if !w.walked.same(before) {
		t.Fatal("the kept identity is not the file's")
	}
	_, read, err := v.ReadWalked(w)
	if err != nil || !read.walked.same(before) || !v.Unchanged(read) {
		t.Fatalf("the read's FileInfo %+v (%v) does not identify the walked file", read, err)
	}
	noID := w
	noID.walked = fileID{}
	if v.Unchanged(noID) {
		t.Fatal("a FileInfo without identity passes for unchanged")
	}
	other := filepath.Join(dir, "b.tmp")
	if err := os.WriteFile(other, []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, time.Time{}, w.ModTime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, note); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Lstat(note)
	if after.Size() != w.Size || !after.ModTime().Equal(w.ModTime) {
		t.Fatalf("the replacement differs in size or time: %d %v", after.Size(), after.ModTime())
	}
	if v.Unchanged(w) || w.walked.same(after) != os.SameFile(before, after) {
		t.Fatal("a file renamed over the note, with its size and time, passes for it")
	}
}
