package vaultfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFastRoot: the openat2 way reads a walked note three folders deep with
// the bytes and FileInfo of ReadNote, and declines (for the root's way and
// its checks) a note whose folder became a symbolic link, even one to
// another folder of the vault, and a note replaced by another file.
func TestFastRoot(t *testing.T) {
	v, dir := openFiles(t, map[string]string{"a/b/c/deep.md": "# Deep\n", "a/other/deep.md": "# Other\n", "x/y.md": "# Y\n"})
	walked := map[string]FileInfo{}
	for _, fi := range walkAll(t, v).files {
		walked[fi.Path] = fi
	}
	deep := walked["a/b/c/deep.md"]
	got, info, ok := v.rs().fast.readWalked(v, deep)
	if !ok {
		if noOpenat2.Load() {
			t.Skip("no openat2 on this kernel")
		}
		t.Fatal("the fast way declined a walked note")
	}
	want, wantInfo, _ := v.ReadNote(deep.Path)
	if string(got) != string(want) || info.Size != wantInfo.Size || !info.ModTime.Equal(wantInfo.ModTime) || info.Path != deep.Path {
		t.Fatalf("fast read %q %+v, ReadNote %q %+v", got, info, want, wantInfo)
	}

	// The folder a/b/c swapped for a link to a/other, which holds a note of
	// the same name: declined (ReadNote then judges the path as it is now).
	os.RemoveAll(filepath.Join(dir, "a/b/c"))
	if err := os.Symlink("../other", filepath.Join(dir, "a/b/c")); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := v.rs().fast.readWalked(v, deep); ok {
		t.Fatal("the fast way read through a symbolic link")
	}

	// x/y.md replaced by another file with the same name and bytes (made
	// beside it and renamed over it, so it cannot reuse its inode).
	y := walked["x/y.md"]
	if err := os.WriteFile(filepath.Join(dir, "x/y.tmp"), []byte("# Y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "x/y.tmp"), filepath.Join(dir, "x/y.md")); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := v.rs().fast.readWalked(v, y); ok {
		t.Fatal("the fast way read a file other than the walked one")
	}
}
