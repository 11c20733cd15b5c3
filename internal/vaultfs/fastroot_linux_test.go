package vaultfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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

// TestFastCheck: the gatekeeper's check of a path (walkPath) and its open
// of the file checked give the same answers by openat2 as by the root's
// way, component by component: for plain notes, folders, attachments, a
// note with two names, a named pipe, symbolic links to a note and to a
// folder, a file used as a folder and missing paths, for each access and
// in read-only mode, new names a write would refuse included; and the
// paths with no link on them, existing or missing in an existing folder,
// take the one-step way, as do the reads and fsyncs of files checked.
func TestFastCheck(t *testing.T) {
	files := map[string]string{"a/b/c/deep.md": "# Deep\n", "note.md": "# Note\n", "dir/x.md": "x", "a/b/pic.png": "png", "file.md": "f"}
	for _, readOnly := range []bool{false, true} {
		v, dir := openFiles(t, files)
		if readOnly {
			v.Close()
			var err error
			if v, err = Open(dir, ReadOnly(true)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { v.Close() })
		}
		for _, mk := range []func() error{
			func() error { return os.Symlink("note.md", filepath.Join(dir, "link.md")) },
			func() error { return os.Symlink("a/b", filepath.Join(dir, "ld")) },
			func() error { return os.Link(filepath.Join(dir, "note.md"), filepath.Join(dir, "twin.md")) },
			func() error { return syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644) },
		} {
			if err := mk(); err != nil {
				t.Fatal(err)
			}
		}
		paths := []string{"a/b/c/deep.md", "note.md", "dir", "a/b", "a/b/pic.png", "twin.md", "pipe.md", "link.md",
			"ld/c/deep.md", "ld", "file.md/x.md", "missing.md", "a/b/new.md", "a/b/ new.md", "a/b/new?.md",
			"a/missing/x.md", "ld/new.md", "a/b/c/deep.md/x", "link.md/x.md"}
		type answer struct {
			rel, real, name string
			mode            fs.FileMode
			size            int64
			err             string
			data            string
		}
		ask := func(rel string, o walkOpts) answer {
			tg, err := v.walkPath(rel, o)
			if err != nil {
				return answer{err: err.Error()}
			}
			a := answer{rel: tg.rel, real: tg.real}
			if tg.info != nil {
				a.name, a.mode, a.size = tg.info.Name(), tg.info.Mode(), tg.info.Size()
				if tg.info.Mode().IsRegular() && o.acc == Read {
					data, _, err := v.readTarget(tg, MaxNoteSize)
					a.data = string(data)
					if err != nil {
						a.data = err.Error()
					}
				}
			}
			return a
		}
		for _, p := range paths {
			for _, o := range []walkOpts{{acc: Read}, {acc: Read, allowDir: true}, {acc: Read, requireNote: true, statOnly: true},
				{acc: Write, requireNote: true}, {acc: Move, allowDir: true}, {acc: Write, newNames: true}} {
				noOpenat2.Store(true)
				want := ask(p, o)
				noOpenat2.Store(false)
				before := fastChecks.Load()
				got := ask(p, o)
				if got != want {
					t.Errorf("read-only %v, %q %+v: openat2 way %+v, root's way %+v", readOnly, p, o, got, want)
				}
				plain := map[string]bool{"a/b/c/deep.md": true, "note.md": true, "a/b/pic.png": true, "dir": true,
					"missing.md": true, "a/b/new.md": true, "a/b/ new.md": true, "a/b/new?.md": true}[p]
				if took := fastChecks.Load() - before; plain && took == 0 {
					if noOpenat2.Load() {
						t.Skip("no openat2 on this kernel")
					}
					t.Errorf("%q %+v: the check took the root's way", p, o)
				}
			}
		}
		// A note read is opened in one step too (its check is the other),
		// and so is a staged file for its fsync.
		before := fastOpens.Load()
		if _, _, err := v.ReadNote("a/b/c/deep.md"); err != nil || fastOpens.Load()-before != 2 {
			t.Errorf("ReadNote: %v, %d one-step opens, want 2", err, fastOpens.Load()-before)
		}
		if !readOnly {
			st, err := v.Stage("a/b/c/staged.md", []byte("x"), Write, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			before = fastOpens.Load()
			if err := v.SyncStaged(t.Context(), []*Staged{st}); err != nil || fastOpens.Load()-before != 1 {
				t.Errorf("SyncStaged: %v, %d one-step opens, want 1", err, fastOpens.Load()-before)
			}
			v.Discard(st)
		}
	}
}
