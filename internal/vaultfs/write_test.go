//go:build unix

package vaultfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// entry is what snapshot records of one file: enough to tell any change.
type entry struct {
	kind    fs.FileMode // type bits
	perm    fs.FileMode
	content string // regular files
	link    string // symbolic links
	ino     uint64
}

// snapshot records every file under dir without following links or opening
// anything but regular files (a FIFO is never opened).
func snapshot(t *testing.T, dir string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := entry{kind: fi.Mode().Type(), perm: fi.Mode().Perm(), ino: fi.Sys().(*syscall.Stat_t).Ino}
		switch {
		case fi.Mode().IsRegular() && fi.Size() > 1<<20:
			e.content = fmt.Sprintf("%d bytes, modified %v", fi.Size(), fi.ModTime()) // the 10 MiB fixtures
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.content = string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// diffSnapshots lists what changed between two snapshots.
func diffSnapshots(before, after map[string]entry) []string {
	var d []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			d = append(d, "removed "+p)
		case a != b:
			d = append(d, fmt.Sprintf("changed %s: %+v -> %+v", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "added "+p)
		}
	}
	slices.Sort(d)
	return d
}

// tempFiles lists the temporary files of writes anywhere under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), tempPrefix) {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func perm(t *testing.T, name string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func setHook[T any](t *testing.T, hook *T, fn T) {
	t.Helper()
	old := *hook
	*hook = fn
	t.Cleanup(func() { *hook = old })
}

// withUmask runs the rest of the test with umask m.
func withUmask(t *testing.T, m int) {
	old := syscall.Umask(m)
	t.Cleanup(func() { syscall.Umask(old) })
}

func TestWriteFile(t *testing.T) {
	f := newFixture(t)
	withUmask(t, 0o077) // the mode of a new note ignores it
	if err := os.Chmod(filepath.Join(f.dir, "dir", "a.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(f.dir, "b.markdown"), 0o751); err != nil {
		t.Fatal(err)
	}
	binary := "line one\r\nline two\r\n\x00\xff\xfe not UTF-8\rlone CR\n\n  trailing  \r\n"
	tests := []struct {
		name    string
		in      string
		acc     Access
		data    string
		file    string // where it lands, relative to the vault
		rel     string // FileInfo.Path
		perm    fs.FileMode
		newDirs []string
	}{
		{"create", "new.md", Write, "# New\n", "new.md", "new.md", 0o644, nil},
		{"replace", "a.md", Write, "# A\nreplaced\n", "a.md", "a.md", 0o644, nil},
		{"bytes-exact-crlf", "crlf.md", Write, binary, "crlf.md", "crlf.md", 0o644, nil},
		{"replace-bytes-exact", "Upper.MD", Write, binary, "Upper.MD", "Upper.MD", 0o644, nil},
		{"empty", "empty.md", Write, "", "empty.md", "empty.md", 0o644, nil},
		{"mode-0600-kept", "dir/a.md", Write, "private\n", "dir/a.md", "dir/a.md", 0o600, nil},
		{"mode-0751-kept", "b.markdown", Write, "b2\n", "b.markdown", "b.markdown", 0o751, nil},
		{"new-folders", `new\deeper/still/n.md`, Write, "n\n", "new/deeper/still/n.md", "new/deeper/still/n.md", 0o644, []string{"new", "new/deeper", "new/deeper/still"}},
		{"unicode-name", "会议：记录.md", Write, "新\n", "会议：记录.md", "会议：记录.md", 0o644, nil},
		{"through-folder-link", "in-dir/linked.md", Write, "via link\n", "dir/linked.md", "in-dir/linked.md", 0o644, nil},
		{"dangling-folder-link", "ghost-ok/g.md", Write, "g\n", "nothere/sub/g.md", "ghost-ok/g.md", 0o644, []string{"nothere", "nothere/sub"}},
		{"archive-by-move", "99-archive/old.md", Move, "moved in\n", "99-archive/old.md", "99-archive/old.md", 0o644, nil},
		{"archive-new-by-move", "99-archive/2024/n.md", Move, "n\n", "99-archive/2024/n.md", "99-archive/2024/n.md", 0o644, []string{"99-archive/2024"}},
		{"max-size", "max.md", Write, strings.Repeat("m", MaxNoteSize), "max.md", "max.md", 0o644, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before fs.FileInfo
			if fi, err := os.Lstat(filepath.Join(f.dir, tt.file)); err == nil {
				before = fi
			}
			fi, err := f.v.WriteFile(tt.in, []byte(tt.data), tt.acc)
			if err != nil {
				t.Fatalf("WriteFile(%q): %v", tt.in, err)
			}
			name := filepath.Join(f.dir, filepath.FromSlash(tt.file))
			if got := mustRead(t, name); got != tt.data {
				t.Errorf("content = %q (%d bytes), want %d bytes", trim(got), len(got), len(tt.data))
			}
			if got := perm(t, name); got != tt.perm {
				t.Errorf("mode = %04o, want %04o", got, tt.perm)
			}
			if fi.Path != tt.rel || fi.Size != int64(len(tt.data)) || !fi.IsNote || fi.ModTime.IsZero() {
				t.Errorf("info = %+v", fi)
			}
			st, err := f.v.Stat(tt.rel)
			if err != nil || st.Size != fi.Size || !st.ModTime.Equal(fi.ModTime) {
				t.Errorf("Stat = %+v, %v; WriteFile said %+v", st, err, fi)
			}
			if before != nil {
				after, _ := os.Lstat(name)
				if os.SameFile(before, after) {
					t.Errorf("the note was written in place, not replaced by a new file")
				}
			}
			for _, d := range tt.newDirs {
				if got := perm(t, filepath.Join(f.dir, d)); got != 0o755&^0o077 {
					t.Errorf("folder %s mode = %04o, want 0755 less the umask", d, got)
				}
			}
			if tf := tempFiles(t, f.base); len(tf) > 0 {
				t.Errorf("temporary files left: %v", tf)
			}
		})
	}
}

func trim(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// refusals are targets every write refuses, with the code.
var refusals = []struct {
	name string
	in   string
	acc  Access
	code Code
}{
	{"symlink-inside", "in-link.md", Write, CodeNotANote},
	{"symlink-outside", "out-file.md", Write, CodeNotANote},
	{"symlink-absolute", "out-abs.md", Write, CodeNotANote},
	{"symlink-dangling", "dangling.md", Write, CodeNotANote},
	{"symlink-to-hidden", "to-hidden.md", Write, CodeNotANote},
	{"folder-link-outside", "out-dir/x.md", Write, CodeSymlinkEscape},
	{"folder-link-outside-new", "out-dir/new.md", Write, CodeSymlinkEscape},
	{"folder-link-outside-absolute", "out-dir-abs/new.md", Write, CodeSymlinkEscape},
	{"folder-link-to-templates", "tpl-dir/new.md", Write, CodeProtectedPath},
	{"folder-link-to-hidden", "hid/new.md", Write, CodeHiddenSegment},
	{"hard-link", "h1.md", Write, CodeNotANote},
	{"hard-link-other-name", "h2.md", Move, CodeNotANote},
	{"fifo", "fifo.md", Write, CodeNotANote},
	{"folder-named-like-a-note", "dir.md", Write, CodeNotANote},
	{"under-a-file", "a.md/x.md", Write, CodeNotANote},
	{"templates", "_templates/wiki.md", Write, CodeProtectedPath},
	{"templates-new", "_templates/new.md", Move, CodeProtectedPath},
	{"templates-case", "_Templates/new.md", Write, CodeProtectedPath},
	{"hidden-file", ".hidden.md", Write, CodeHiddenSegment},
	{"hidden-folder", ".obsidian/x.md", Write, CodeHiddenSegment},
	{"git", ".git/x.md", Move, CodeHiddenSegment},
	{"temp-name", ".vaultmcp-0123456789abcdef.tmp", Write, CodeHiddenSegment},
	{"node-modules", "node_modules/x.md", Move, CodeProtectedPath},
	{"archive-write", "99-archive/old.md", Write, CodeProtectedPath},
	{"archive-write-new", "99-archive/new.md", Write, CodeProtectedPath},
	{"extension", "notes.txt", Write, CodeInvalidExtension},
	{"no-extension", "README", Write, CodeInvalidExtension},
	{"escape", "../outside/x.md", Write, CodePathEscape},
	{"absolute", "/etc/x.md", Write, CodePathEscape},
	{"read-access", "a.md", Read, CodeProtectedPath},
}

// TestWriteRefused shows every refused target is refused by WriteFile and
// CreateFile and that nothing at all changed, inside or outside the vault.
func TestWriteRefused(t *testing.T) {
	f := newFixture(t)
	before := snapshot(t, f.base)
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			for _, op := range []struct {
				name string
				fn   func(string, []byte, Access) (FileInfo, error)
			}{{"WriteFile", f.v.WriteFile}, {"CreateFile", f.v.CreateFile}} {
				_, err := op.fn(tt.in, []byte(secret+" overwritten\n"), tt.acc)
				if CodeOf(err) != tt.code {
					t.Errorf("%s(%q, %v) = %v; want %s", op.name, tt.in, tt.acc, err, tt.code)
					continue
				}
				checkMessage(t, err)
				f.assertSafe(t, "error", err.Error())
			}
		})
	}
	if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
		t.Errorf("refused writes changed the files:\n%s", strings.Join(d, "\n"))
	}
}

func TestWriteTooLarge(t *testing.T) {
	f := newFixture(t)
	_, err := f.v.WriteFile("huge.md", make([]byte, MaxNoteSize+1), Write)
	if CodeOf(err) != CodeTooLarge {
		t.Fatalf("WriteFile over the limit = %v; want TOO_LARGE", err)
	}
	if _, err := os.Lstat(filepath.Join(f.dir, "huge.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the note was created anyway: %v", err)
	}
}

func TestWriteReadOnlyNote(t *testing.T) {
	f := newFixture(t)
	name := filepath.Join(f.dir, "a.md")
	if err := os.Chmod(name, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := f.v.WriteFile("a.md", []byte("x"), Write); CodeOf(err) != CodePermissionDenied {
		t.Errorf("WriteFile on a read-only note = %v; want PERMISSION_DENIED", err)
	}
	if err := f.v.Remove("a.md"); CodeOf(err) != CodePermissionDenied {
		t.Errorf("Remove of a read-only note = %v; want PERMISSION_DENIED", err)
	}
	if got := mustRead(t, name); got != "# A\nhello\n" {
		t.Errorf("read-only note changed: %q", got)
	}
	// Moving it does not change its content: allowed, mode kept.
	if err := f.v.Rename("a.md", "99-archive/a.md"); err != nil {
		t.Fatalf("Rename of a read-only note: %v", err)
	}
	if got := perm(t, filepath.Join(f.dir, "99-archive", "a.md")); got != 0o444 {
		t.Errorf("moved note mode = %04o, want 0444", got)
	}
}

// TestWriteUnwritableFolder needs a process that permissions apply to; as
// root it runs itself again as user nobody.
func TestWriteUnwritableFolder(t *testing.T) {
	if os.Getuid() == 0 {
		runAsNobody(t, "TestWriteUnwritableFolder")
		return
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "a\n")
	write(t, filepath.Join(dir, "locked", "a.md"), "locked a\n")
	locked := filepath.Join(dir, "locked")
	if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	before := snapshot(t, dir)
	for _, tt := range []struct {
		name string
		op   func() error
	}{
		{"replace", func() error { _, err := v.WriteFile("locked/a.md", []byte("x"), Write); return err }},
		{"create", func() error { _, err := v.WriteFile("locked/new.md", []byte("x"), Write); return err }},
		{"create-exclusive", func() error { _, err := v.CreateFile("locked/new.md", []byte("x"), Write); return err }},
		{"new-folder", func() error { _, err := v.WriteFile("locked/sub/new.md", []byte("x"), Write); return err }},
		{"move-in", func() error { return v.Rename("a.md", "locked/b.md") }},
		{"move-out", func() error { return v.Rename("locked/a.md", "b.md") }},
		{"remove", func() error { return v.Remove("locked/a.md") }},
	} {
		err := tt.op()
		if CodeOf(err) != CodePermissionDenied {
			t.Errorf("%s in a read-only folder = %v; want PERMISSION_DENIED", tt.name, err)
			continue
		}
		if strings.Contains(err.Error(), dir) {
			t.Errorf("%s: error leaks the vault directory: %v", tt.name, err)
		}
	}
	if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
		t.Errorf("refused writes changed the files:\n%s", strings.Join(d, "\n"))
	}
}

func TestCreateFile(t *testing.T) {
	f := newFixture(t)
	withUmask(t, 0o077)
	fi, err := f.v.CreateFile("02-wiki/go/new.md", []byte("# New\r\n"), Write)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(f.dir, "02-wiki", "go", "new.md")
	if got := mustRead(t, name); got != "# New\r\n" {
		t.Errorf("content = %q", got)
	}
	if got := perm(t, name); got != 0o644 {
		t.Errorf("mode = %04o, want 0644", got)
	}
	if fi.Path != "02-wiki/go/new.md" || fi.Size != 7 || !fi.IsNote {
		t.Errorf("info = %+v", fi)
	}
	// The note has one name: the temporary one is gone, and it can be
	// written again.
	if st, _ := os.Lstat(name); st.Sys().(*syscall.Stat_t).Nlink != 1 {
		t.Errorf("the new note has %d links", st.Sys().(*syscall.Stat_t).Nlink)
	}
	if _, err := f.v.WriteFile("02-wiki/go/new.md", []byte("again\n"), Write); err != nil {
		t.Errorf("WriteFile after CreateFile: %v", err)
	}
	if _, err := f.v.CreateFile("99-archive/created.md", []byte("x"), Move); err != nil {
		t.Errorf("CreateFile in 99-archive with Move: %v", err)
	}
	if tf := tempFiles(t, f.base); len(tf) > 0 {
		t.Errorf("temporary files left: %v", tf)
	}
}

func TestCreateFileExists(t *testing.T) {
	f := newFixture(t)
	before := snapshot(t, f.base)
	for _, p := range []string{"a.md", "./dir/a.md", "b.markdown", "99-archive/old.md"} {
		_, err := f.v.CreateFile(p, []byte("clobbered\n"), Move)
		if CodeOf(err) != CodeAlreadyExists {
			t.Errorf("CreateFile(%q) over an existing note = %v; want ALREADY_EXISTS", p, err)
			continue
		}
		checkMessage(t, err)
		f.assertSafe(t, "error", err.Error())
	}
	if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
		t.Errorf("CreateFile changed the files:\n%s", strings.Join(d, "\n"))
	}
}

// TestCreateFileRace makes the target appear between the checks and the
// publication: the file that appeared wins, untouched.
func TestCreateFileRace(t *testing.T) {
	for _, tt := range []struct {
		name    string
		noLinks bool
	}{{"hard-link", false}, {"no-hard-links", true}} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.noLinks {
				setHook(t, &linkFile, func(*os.Root, string, string) error {
					return &os.LinkError{Op: "link", Err: syscall.EPERM}
				})
			}
			target := filepath.Join(f.dir, "new", "race.md")
			var seen string
			setHook(t, &testHookBeforePublish, func(tmp string) error {
				seen = tmp
				write(t, target, "theirs\n")
				return nil
			})
			_, err := f.v.CreateFile("new/race.md", []byte("ours\n"), Write)
			if CodeOf(err) != CodeAlreadyExists {
				t.Fatalf("CreateFile with a target appearing = %v; want ALREADY_EXISTS", err)
			}
			f.assertSafe(t, "error", err.Error())
			if got := mustRead(t, target); got != "theirs\n" {
				t.Errorf("the file that appeared now holds %q", got)
			}
			if !strings.HasPrefix(seen, "new/"+tempPrefix) || !isTempName(filepath.Base(seen)) {
				t.Errorf("hook saw temporary path %q", seen)
			}
			if tf := tempFiles(t, f.base); len(tf) > 0 {
				t.Errorf("temporary files left: %v", tf)
			}
		})
	}
}

// TestWithoutHardLinks runs CreateFile and Rename where the file system
// refuses hard links (EPERM, as FAT does): they fall back to exclusive
// creation and keep their promises.
func TestWithoutHardLinks(t *testing.T) {
	f := newFixture(t)
	setHook(t, &linkFile, func(*os.Root, string, string) error {
		return &os.LinkError{Op: "link", Err: syscall.EPERM}
	})
	if _, err := f.v.CreateFile("fat/new.md", []byte("fat\r\n"), Write); err != nil {
		t.Fatalf("CreateFile without hard links: %v", err)
	}
	if got := mustRead(t, filepath.Join(f.dir, "fat", "new.md")); got != "fat\r\n" {
		t.Errorf("content = %q", got)
	}
	if _, err := f.v.CreateFile("a.md", []byte("x"), Write); CodeOf(err) != CodeAlreadyExists {
		t.Errorf("CreateFile over a note without hard links = %v", err)
	}

	src := filepath.Join(f.dir, "dir", "a.md")
	if err := os.Chmod(src, 0o600); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(src, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := f.v.Rename("dir/a.md", "99-archive/dir/a.md"); err != nil {
		t.Fatalf("Rename without hard links: %v", err)
	}
	dst := filepath.Join(f.dir, "99-archive", "dir", "a.md")
	if got := mustRead(t, dst); got != "dir a\n" {
		t.Errorf("moved content = %q", got)
	}
	if fi, _ := os.Lstat(dst); fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(mtime) {
		t.Errorf("moved note mode %04o, mtime %v; want 0600, %v", fi.Mode().Perm(), fi.ModTime(), mtime)
	}
	if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source still there: %v", err)
	}
	if err := f.v.Rename("a.md", "b.markdown"); CodeOf(err) != CodeAlreadyExists {
		t.Errorf("Rename over a note without hard links = %v", err)
	}
	if got := mustRead(t, filepath.Join(f.dir, "b.markdown")); got != "b\n" {
		t.Errorf("target changed: %q", got)
	}
	if tf := tempFiles(t, f.base); len(tf) > 0 {
		t.Errorf("temporary files left: %v", tf)
	}
}

// TestDiskFull fails the write of the temporary file half way with ENOSPC.
func TestDiskFull(t *testing.T) {
	for _, tt := range []struct {
		name, path string
		create     bool
		noLinks    bool // and the write into the target itself fails
	}{
		{"replace", "a.md", false, false},
		{"new-note-new-folders", "n1/n2/x.md", false, false},
		{"create", "n1/x.md", true, false},
		{"create-without-hard-links", "n1/x.md", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.noLinks {
				setHook(t, &linkFile, func(*os.Root, string, string) error {
					return &os.LinkError{Op: "link", Err: syscall.ENOTSUP}
				})
			}
			before := snapshot(t, f.base)
			setHook(t, &testHookWrite, func(w *os.File, data []byte) (int, error) {
				if tt.noLinks && isTempName(filepath.Base(w.Name())) {
					return w.Write(data) // the temporary file is fine; the fallback fails
				}
				n, err := w.Write(data[:len(data)/2])
				if err != nil {
					return n, err
				}
				return n, syscall.ENOSPC
			})
			data := []byte(strings.Repeat("new content\n", 1000))
			var err error
			if tt.create {
				_, err = f.v.CreateFile(tt.path, data, Write)
			} else {
				_, err = f.v.WriteFile(tt.path, data, Write)
			}
			if CodeOf(err) != CodeIO || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "disk is full") {
				t.Fatalf("write on a full disk = %v; want IO_ERROR wrapping ENOSPC", err)
			}
			checkMessage(t, err)
			f.assertSafe(t, "error", err.Error())
			if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
				t.Errorf("a failed write changed the files:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// TestPublishFailure fails the write after the temporary file is complete.
func TestPublishFailure(t *testing.T) {
	f := newFixture(t)
	before := snapshot(t, f.base)
	setHook(t, &testHookBeforePublish, func(string) error { return syscall.EIO })
	for _, p := range []string{"a.md", "n/new.md"} {
		_, err := f.v.WriteFile(p, []byte("new\n"), Write)
		if CodeOf(err) != CodeIO || !errors.Is(err, syscall.EIO) {
			t.Errorf("WriteFile(%q) failing before the rename = %v", p, err)
		}
		_, err = f.v.CreateFile("n/"+p, []byte("new\n"), Write)
		if CodeOf(err) != CodeIO {
			t.Errorf("CreateFile(%q) failing before the link = %v", p, err)
		}
	}
	if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
		t.Errorf("failed writes changed the files:\n%s", strings.Join(d, "\n"))
	}
}

// TestSwapBeforePublish puts a symbolic link, a hard link or a FIFO at the
// target after the checks: WriteFile refuses to rename over it.
func TestSwapBeforePublish(t *testing.T) {
	for _, tt := range []struct {
		name string
		swap func(t *testing.T, target string)
	}{
		{"symlink-outside", func(t *testing.T, target string) {
			os.Remove(target)
			symlink(t, "../outside/secret.md", target)
		}},
		{"hard-link", func(t *testing.T, target string) {
			if err := os.Link(target, target+".twin"); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", func(t *testing.T, target string) {
			os.Remove(target)
			if err := syscall.Mkfifo(target, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"folder", func(t *testing.T, target string) {
			os.Remove(target)
			if err := os.Mkdir(target, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			target := filepath.Join(f.dir, "a.md")
			var before map[string]entry
			setHook(t, &testHookBeforePublish, func(string) error {
				tt.swap(t, target)
				before = snapshot(t, f.base)
				return nil
			})
			_, err := f.v.WriteFile("a.md", []byte("new\n"), Write)
			if CodeOf(err) != CodeNotANote {
				t.Fatalf("WriteFile after a swap = %v; want NOT_A_NOTE", err)
			}
			after := snapshot(t, f.base)
			for p := range before {
				if strings.Contains(p, tempPrefix) {
					delete(before, p) // it existed during the hook only
				}
			}
			if d := diffSnapshots(before, after); len(d) > 0 {
				t.Errorf("refused write changed the files:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// TestSwapFolderBeforeWrite replaces the target's folder after the check
// and before the write opens it: the write does not follow the link, and
// nothing changes where it points.
func TestSwapFolderBeforeWrite(t *testing.T) {
	for _, tt := range []struct {
		name, link string
		op         func(v *Vault) error
	}{
		{"write-to-hidden", ".obsidian", func(v *Vault) error { _, err := v.WriteFile("dir/a.md", []byte("x"), Write); return err }},
		{"write-to-outside", "../outside/dir", func(v *Vault) error { _, err := v.WriteFile("dir/a.md", []byte("x"), Write); return err }},
		{"create-to-templates", "_templates", func(v *Vault) error { _, err := v.CreateFile("dir/new.md", []byte("x"), Write); return err }},
		{"remove-to-outside", "../outside/dir", func(v *Vault) error { return v.Remove("dir/a.md") }},
		{"rename-to-hidden", ".obsidian", func(v *Vault) error { return v.Rename("a.md", "dir/new.md") }},
		{"rename-from-outside", "../outside/dir", func(v *Vault) error { return v.Rename("dir/a.md", "new.md") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			var before map[string]entry
			setHook(t, &testHookBeforeOpen, func(string) {
				swapForLink(t, filepath.Join(f.dir, "dir"), tt.link)
				before = snapshot(t, f.base)
			})
			err := tt.op(f.v)
			if c := CodeOf(err); c != CodeNotANote && c != CodeSymlinkEscape {
				t.Fatalf("write through a folder swapped for a link = %v", err)
			}
			f.assertSafe(t, "error", err.Error())
			if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
				t.Errorf("refused write changed the files:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

func TestRename(t *testing.T) {
	tests := []struct {
		name, from, to string
		file           string // where the note lands
	}{
		{"same-folder", "a.md", "renamed.md", "renamed.md"},
		{"new-folders", "a.md", "x/y/z.md", "x/y/z.md"},
		{"archive", "dir/a.md", "99-archive/dir/a.md", "99-archive/dir/a.md"},
		{"unarchive", "99-archive/old.md", "01-raw/old.md", "01-raw/old.md"},
		{"promote", "b.markdown", "02-wiki/go/b.md", "02-wiki/go/b.md"},
		{"spelling", `.\dir\a.md`, "dir//moved.md", "dir/moved.md"},
		{"into-folder-link", "a.md", "in-dir/from-a.md", "dir/from-a.md"},
		{"case", "Upper.MD", "upper.md", "upper.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			src := filepath.Join(f.dir, filepath.FromSlash(mustClean(t, tt.from)))
			if err := os.Chmod(src, 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(src)
			content := mustRead(t, src)
			if err := f.v.Rename(tt.from, tt.to); err != nil {
				t.Fatalf("Rename(%q, %q): %v", tt.from, tt.to, err)
			}
			dst := filepath.Join(f.dir, filepath.FromSlash(tt.file))
			if got := mustRead(t, dst); got != content {
				t.Errorf("moved content = %q, want %q", got, content)
			}
			after, _ := os.Lstat(dst)
			if !os.SameFile(before, after) || after.Mode().Perm() != 0o600 || after.Sys().(*syscall.Stat_t).Nlink != 1 {
				t.Errorf("moved note: same file %v, mode %04o, links %d", os.SameFile(before, after), after.Mode().Perm(), after.Sys().(*syscall.Stat_t).Nlink)
			}
			if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("source still there: %v", err)
			}
		})
	}
}

func mustClean(t *testing.T, p string) string {
	t.Helper()
	c, err := Clean(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRenameRefused(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, from, to string
		code           Code
	}{
		{"overwrite", "a.md", "b.markdown", CodeAlreadyExists},
		{"overwrite-other-spelling", "a.md", `dir\a.md`, CodeAlreadyExists},
		{"overwrite-archive", "dir/a.md", "99-archive/old.md", CodeAlreadyExists},
		{"overwrite-through-link", "a.md", "in-dir/a.md", CodeAlreadyExists},
		{"itself", "a.md", "./a.md", CodeAlreadyExists},
		{"itself-through-link", "dir/a.md", "in-dir/a.md", CodeAlreadyExists},
		{"missing", "missing.md", "x.md", CodeNotFound},
		{"source-symlink", "in-link.md", "x.md", CodeNotANote},
		{"source-symlink-outside", "out-file.md", "x.md", CodeNotANote},
		{"source-hard-link", "h1.md", "x.md", CodeNotANote},
		{"source-fifo", "fifo.md", "x.md", CodeNotANote},
		{"source-folder", "dir.md", "x.md", CodeNotANote},
		{"source-templates", "_templates/wiki.md", "x.md", CodeProtectedPath},
		{"source-hidden", ".obsidian/x.md", "x.md", CodeHiddenSegment},
		{"source-node-modules", "node_modules/pkg/readme.md", "x.md", CodeProtectedPath},
		{"source-outside", "out-dir/a.md", "x.md", CodeSymlinkEscape},
		{"target-symlink", "a.md", "dangling.md", CodeNotANote},
		{"target-fifo", "a.md", "fifo.md", CodeNotANote},
		{"target-folder", "a.md", "dir.md", CodeNotANote},
		{"target-templates", "a.md", "_templates/a.md", CodeProtectedPath},
		{"target-templates-link", "a.md", "tpl-dir/a.md", CodeProtectedPath},
		{"target-hidden", "a.md", ".trash/a.md", CodeHiddenSegment},
		{"target-node-modules", "a.md", "node_modules/a.md", CodeProtectedPath},
		{"target-outside", "a.md", "out-dir/new.md", CodeSymlinkEscape},
		{"target-escape", "a.md", "../outside/new.md", CodePathEscape},
		{"target-extension", "a.md", "a.txt", CodeInvalidExtension},
		{"target-under-file", "a.md", "b.markdown/a.md", CodeNotANote},
	}
	before := snapshot(t, f.base)
	for _, tt := range tests {
		err := f.v.Rename(tt.from, tt.to)
		if CodeOf(err) != tt.code {
			t.Errorf("%s: Rename(%q, %q) = %v; want %s", tt.name, tt.from, tt.to, err, tt.code)
			continue
		}
		checkMessage(t, err)
		f.assertSafe(t, tt.name, err.Error())
	}
	if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
		t.Errorf("refused moves changed the files:\n%s", strings.Join(d, "\n"))
	}
}

// TestRenameRace makes the target appear just before the link: the move
// fails, both files intact, and the folders it made are gone.
func TestRenameRace(t *testing.T) {
	f := newFixture(t)
	real := linkFile
	setHook(t, &linkFile, func(r *os.Root, oldname, newname string) error {
		write(t, filepath.Join(f.dir, "n", "late.md"), "theirs\n")
		return real(r, oldname, newname)
	})
	if err := f.v.Rename("a.md", "n/late.md"); CodeOf(err) != CodeAlreadyExists {
		t.Fatalf("Rename with the target appearing = %v; want ALREADY_EXISTS", err)
	}
	if got := mustRead(t, filepath.Join(f.dir, "n", "late.md")); got != "theirs\n" {
		t.Errorf("target changed: %q", got)
	}
	if got := mustRead(t, filepath.Join(f.dir, "a.md")); got != "# A\nhello\n" {
		t.Errorf("source changed: %q", got)
	}
	fi, _ := os.Lstat(filepath.Join(f.dir, "a.md"))
	if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 1 {
		t.Errorf("source has %d links after a failed move", n)
	}
}

// TestRenameRemovesCreatedFoldersOnFailure: a move that fails after making
// the target's folders leaves no empty folder behind.
func TestRenameRemovesCreatedFoldersOnFailure(t *testing.T) {
	f := newFixture(t)
	setHook(t, &linkFile, func(*os.Root, string, string) error {
		return &os.LinkError{Op: "link", Err: syscall.EIO}
	})
	before := snapshot(t, f.base)
	if err := f.v.Rename("a.md", "p/q/r.md"); CodeOf(err) != CodeIO {
		t.Fatalf("Rename with a failing link = %v; want IO_ERROR", err)
	}
	if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
		t.Errorf("failed move changed the files:\n%s", strings.Join(d, "\n"))
	}
}

func TestRemove(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"a.md", `dir\a.md`, "in-dir/../b.markdown"} {
		if err := f.v.Remove(p); err != nil {
			t.Errorf("Remove(%q): %v", p, err)
		}
	}
	for _, p := range []string{"a.md", "dir/a.md", "b.markdown"} {
		if _, err := os.Lstat(filepath.Join(f.dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, "dir")); err != nil {
		t.Errorf("the emptied folder was removed: %v", err)
	}
	before := snapshot(t, f.base)
	for _, tt := range []struct {
		p    string
		code Code
	}{
		{"a.md", CodeNotFound},
		{"99-archive/old.md", CodeProtectedPath},
		{"in-link.md", CodeNotANote},
		{"out-file.md", CodeNotANote},
		{"out-dir/a.md", CodeSymlinkEscape},
		{"h1.md", CodeNotANote},
		{"fifo.md", CodeNotANote},
		{"dir.md", CodeNotANote},
		{"_templates/wiki.md", CodeProtectedPath},
		{".obsidian/x.md", CodeHiddenSegment},
		{"node_modules/pkg/readme.md", CodeProtectedPath},
		{"notes.txt", CodeInvalidExtension},
	} {
		err := f.v.Remove(tt.p)
		if CodeOf(err) != tt.code {
			t.Errorf("Remove(%q) = %v; want %s", tt.p, err, tt.code)
			continue
		}
		f.assertSafe(t, "error", err.Error())
	}
	if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
		t.Errorf("refused removals changed the files:\n%s", strings.Join(d, "\n"))
	}
}

// TestConcurrentWrites has writers replace one note while readers read it:
// every read sees one whole version, never a mix or an empty file.
func TestConcurrentWrites(t *testing.T) {
	f := newFixture(t)
	versions := map[string]bool{"# A\nhello\n": true}
	var contents [][]byte
	for i := range 4 {
		c := bytes.Repeat([]byte(fmt.Sprintf("version %d\n", i)), 2000)
		contents = append(contents, c)
		versions[string(c)] = true
	}
	var wg sync.WaitGroup
	for _, c := range contents {
		wg.Go(func() {
			for range 20 {
				if _, err := f.v.WriteFile("a.md", c, Write); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 100 {
				data, _, err := f.v.ReadNote("a.md")
				if CodeOf(err) == CodeNotFound {
					continue // ReadNote saw the file replaced between its check and its open
				}
				if err != nil {
					t.Error(err)
					return
				}
				if !versions[string(data)] {
					t.Errorf("read a torn note of %d bytes", len(data))
					return
				}
			}
		})
	}
	wg.Wait()
	if data, _, err := f.v.ReadNote("a.md"); err != nil || !versions[string(data)] {
		t.Errorf("after the writes ReadNote = %d bytes, %v", len(data), err)
	}
	if tf := tempFiles(t, f.base); len(tf) > 0 {
		t.Errorf("temporary files left: %v", tf)
	}
}

// The crash test runs WriteFile (or CreateFile) in a child process that
// kills itself with SIGKILL between the fsync of the temporary file and the
// rename (or link), then checks what a real crash leaves.
const (
	envHelperVault = "VAULTFS_TEST_CRASH_VAULT"
	envHelperOp    = "VAULTFS_TEST_CRASH_OP"
	crashContent   = "# A\r\nnew content, never published\r\n"
)

// TestHelperProcess is the child of TestCrashBeforePublish; run directly, it
// does nothing.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(envHelperVault)
	if dir == "" {
		t.Skip("helper process for TestCrashBeforePublish")
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	testHookBeforePublish = func(string) error {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
	switch os.Getenv(envHelperOp) {
	case "write":
		_, err = v.WriteFile("dir/a.md", []byte(crashContent), Write)
	case "create":
		_, err = v.CreateFile("dir/new.md", []byte(crashContent), Write)
	}
	t.Fatalf("the process survived the write: %v", err)
}

func TestCrashBeforePublish(t *testing.T) {
	for _, op := range []string{"write", "create"} {
		t.Run(op, func(t *testing.T) {
			f := newFixture(t)
			before := snapshot(t, f.base)
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), envHelperVault+"="+f.dir, envHelperOp+"="+op)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("child: %v\n%s", err, out)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed by SIGKILL: %v\n%s", err, out)
			}

			// The old note is intact, and the only new file is one hidden
			// temporary file holding the complete new content.
			d := diffSnapshots(before, snapshot(t, f.base))
			if len(d) != 1 || !strings.HasPrefix(d[0], "added vault/dir/"+tempPrefix) {
				t.Fatalf("after the crash the files differ by:\n%s", strings.Join(d, "\n"))
			}
			tmp := strings.TrimPrefix(d[0], "added vault/")
			if !isTempName(filepath.Base(tmp)) {
				t.Errorf("leftover %q is not named as a temporary file", tmp)
			}
			if got := mustRead(t, filepath.Join(f.dir, tmp)); got != crashContent {
				t.Errorf("temporary file holds %q; the fsync came before the crash point", got)
			}
			if got := mustRead(t, filepath.Join(f.dir, "dir", "a.md")); got != "dir a\n" {
				t.Errorf("old note = %q", got)
			}

			// Hidden: never walked, never resolved.
			for _, fi := range walkAll(t, f.v).files {
				if strings.Contains(fi.Path, tempPrefix) {
					t.Errorf("Walk lists the temporary file %s", fi.Path)
				}
			}
			if _, err := f.v.Resolve(tmp, Read); CodeOf(err) != CodeHiddenSegment {
				t.Errorf("Resolve(temporary file) = %v", err)
			}

			// The next start's walk finds it, and it is removed.
			var found []string
			if err := f.v.WalkWith(t.Context(), func(FileInfo) error { return nil }, nil, WalkHooks{Temp: func(rel string) { found = append(found, rel) }}); err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 || found[0] != tmp {
				t.Fatalf("the walk found %q, want [%s]", found, tmp)
			}
			if n, err := f.v.RemoveTemps(found); n != 1 || err != nil {
				t.Errorf("RemoveTemps = %d, %v; want 1", n, err)
			}
			if d := diffSnapshots(before, snapshot(t, f.base)); len(d) > 0 {
				t.Errorf("after RemoveTemps the files differ by:\n%s", strings.Join(d, "\n"))
			}
			// And the interrupted write can simply be done again.
			if _, err := f.v.WriteFile("dir/a.md", []byte(crashContent), Write); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestWalkFindingTemps: the walk finds (WalkWith's Temp hook) the temporary
// files of interrupted writes in every folder a write can reach, whatever their age (the caller
// holds the write lock), and RemoveTemps removes them and nothing else,
// look-alikes included.
func TestWalkFindingTemps(t *testing.T) {
	f := newFixture(t)
	plant := func(rel string) string {
		write(t, filepath.Join(f.dir, filepath.FromSlash(rel)), "partial")
		return rel
	}
	const hexName = ".vaultmcp-0123456789abcdef.tmp"
	want := []string{
		plant(hexName),
		plant("dir/.vaultmcp-fedcba9876543210.tmp"),
		plant("new/deep/" + hexName),
		plant("fresh/" + hexName),
	}
	kept := []string{
		plant(".obsidian/" + hexName),
		plant("node_modules/" + hexName),
		plant("_templates/" + hexName),
		plant("dir/.vaultmcp-0123456789ABCDEF.tmp"),         // not a name we make
		plant("dir/.vaultmcp-0123456789abcde.tmp"),          // too short
		plant("dir/.vaultmcp-0123456789abcdef.tmp.md"),      // a note
		plant("dir/vaultmcp-0123456789abcdef.tmp"),          // not hidden
		plant("dir/.vaultmcp-0123456789abcdeg.tmp"),         // not hex
		plant("dir/.vaultmcp-0123456789abcdef.tmpx"),        // suffix
		plant("dir/x.vaultmcp-0123456789abcdef.tmp"),        // prefix
		plant("dir/.VAULTMCP-0123456789abcdef.tmp"),         // case
		plant("dir/.vaultmcp-0123456789abcdef0123.tmp"),     // too long
		plant("dir/sub/.vaultmcp-aaaaaaaaaaaaaaaa.tmp.bak"), // backup
	}
	if err := os.Mkdir(filepath.Join(f.dir, "dir", ".vaultmcp-bbbbbbbbbbbbbbbb.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "../a.md", filepath.Join(f.dir, "dir", ".vaultmcp-cccccccccccccccc.tmp"))
	var found []string
	if err := f.v.WalkWith(t.Context(), func(FileInfo) error { return nil }, nil, WalkHooks{Temp: func(rel string) { found = append(found, rel) }}); err != nil {
		t.Fatal(err)
	}
	look := append(slices.Clone(want), "dir/.vaultmcp-bbbbbbbbbbbbbbbb.tmp", "dir/.vaultmcp-cccccccccccccccc.tmp")
	slices.Sort(found)
	slices.Sort(look)
	if !slices.Equal(found, look) {
		t.Fatalf("found %q, want %q", found, look)
	}
	n, err := f.v.RemoveTemps(found)
	if err != nil || n != len(want) {
		t.Fatalf("RemoveTemps = %d, %v; want %d", n, err, len(want))
	}
	for _, rel := range want {
		if _, err := os.Lstat(filepath.Join(f.dir, rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s not removed: %v", rel, err)
		}
	}
	for _, rel := range append(kept, "dir/.vaultmcp-bbbbbbbbbbbbbbbb.tmp", "dir/.vaultmcp-cccccccccccccccc.tmp", "a.md") {
		if _, err := os.Lstat(filepath.Join(f.dir, rel)); err != nil {
			t.Errorf("%s removed: %v", rel, err)
		}
	}
	// A path that is not a temporary file's is never removed, whatever the caller says.
	if n, err := f.v.RemoveTemps([]string{"a.md", "dir/../a.md"}); n != 0 || err != nil {
		t.Fatalf("RemoveTemps of notes = %d, %v", n, err)
	}
}

// TestPublishLateEdit: another program that appends to the note between the
// check and the rename would lose its line to the rename; Publish answers
// LateEdit with the replaced version as it is after the rename (the new one
// in place), and no late write is reported when there was none.
func TestPublishLateEdit(t *testing.T) {
	f := newFixture(t)
	target := filepath.Join(f.dir, "a.md")
	before := mustRead(t, target)
	st, err := f.v.Stage("a.md", []byte("# A\nours\n"), Write, false, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	setHook(t, &testHookBetweenCheckAndRename, func(string) {
		fh, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString("theirs\n")
		fh.Close()
	})
	err = f.v.Publish(st, SHA256Hex([]byte(before)))
	var late *LateEdit
	if !errors.As(err, &late) || string(late.Now) != before+"theirs\n" || late.Path != "a.md" || CodeOf(err) != "" && CodeOf(err) != CodeChanged {
		t.Fatalf("Publish with a late append = %v (%+v)", err, late)
	}
	if got := mustRead(t, target); got != "# A\nours\n" {
		t.Errorf("the note holds %q, want ours in place", got)
	}
	// No late write: nothing to report.
	setHook(t, &testHookBetweenCheckAndRename, func(string) {})
	st, err = f.v.Stage("a.md", []byte("# A\nagain\n"), Write, false, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.v.Publish(st, SHA256Hex([]byte("# A\nours\n"))); err != nil {
		t.Fatalf("Publish without a late write = %v", err)
	}
}
