//go:build unix

package vaultfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

type walked struct {
	files  []FileInfo
	errs   map[string]Code
	errMsg []string
}

func walkAll(t *testing.T, v *Vault) walked {
	t.Helper()
	w := walked{errs: map[string]Code{}}
	err := v.Walk(t.Context(), func(fi FileInfo) error {
		w.files = append(w.files, fi)
		return nil
	}, func(rel string, err error) {
		w.errs[rel] = CodeOf(err)
		w.errMsg = append(w.errMsg, err.Error())
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return w
}

func (w walked) paths() []string {
	var ps []string
	for _, f := range w.files {
		ps = append(ps, f.Path)
	}
	return ps
}

func TestWalk(t *testing.T) {
	base := t.TempDir()
	v := filepath.Join(base, "vault")
	o := filepath.Join(base, "outside")
	write(t, filepath.Join(o, "secret.md"), secret)
	write(t, filepath.Join(o, "sub", "s.md"), secret)

	for _, name := range []string{
		"a.md", "a-b.md", "a/x.md", "b.txt", "img/p.png", "dir/c.md", "dir/sub/d.markdown",
		"Z.MD", "99-archive/old.md", "%2e%2e/lit.md", "🗂️ hub.md",
		// ignored
		".git/x.md", ".obsidian/y.md", ".trash/t.md", ".hidden.md", "node_modules/z.md",
		"dir/node_modules/q.md", "_templates/t.md", "dir/_Templates/w.md",
		// named so that Clean changes or refuses them
		"dir/a:b.md", `back\slash.md`, "bidi\u202e.md",
	} {
		write(t, filepath.Join(v, filepath.FromSlash(name)), "content of "+name)
	}
	symlink(t, ".", filepath.Join(v, "loop"))                         // folder loop
	symlink(t, "..", filepath.Join(v, "dir", "up"))                   // folder loop
	symlink(t, "../../dir", filepath.Join(v, "dir", "sub", "again"))  // folder loop
	symlink(t, "dir", filepath.Join(v, "dir-link"))                   // linked folder, never entered
	symlink(t, "../outside", filepath.Join(v, "escdir"))              // leaves the vault
	symlink(t, o, filepath.Join(v, "escdir-abs"))                     // leaves the vault
	symlink(t, "../outside/secret.md", filepath.Join(v, "escape.md")) // leaves the vault
	symlink(t, "a.md", filepath.Join(v, "ok-link.md"))                // stays inside: given
	symlink(t, "img/p.png", filepath.Join(v, "pic.png"))              // stays inside: given
	symlink(t, ".git/x.md", filepath.Join(v, "to-git.md"))            // reaches a hidden file
	symlink(t, "self.md", filepath.Join(v, "self.md"))                // loops on itself
	symlink(t, "gone.md", filepath.Join(v, "dangling.md"))            // dangles
	if err := syscall.Mkfifo(filepath.Join(v, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}

	vault, err := Open(v)
	if err != nil {
		t.Fatal(err)
	}
	defer vault.Close()
	w := walkAll(t, vault)

	want := []string{
		"%2e%2e/lit.md", "99-archive/old.md", "Z.MD",
		"a-b.md", "a.md", "a/x.md", "b.txt", "dir/c.md", "dir/sub/d.markdown",
		"img/p.png", "ok-link.md", "pic.png", "🗂️ hub.md",
	}
	if got := w.paths(); !slices.Equal(got, want) {
		t.Errorf("Walk gave\n%q\nwant\n%q", got, want)
	}
	if !slices.IsSorted(w.paths()) {
		t.Errorf("not in lexical order: %q", w.paths())
	}
	for _, f := range w.files {
		if f.IsNote != IsNoteName(f.Path) || f.ModTime.IsZero() {
			t.Errorf("bad info %+v", f)
		}
		if c, err := Clean(f.Path); err != nil || c != f.Path {
			t.Errorf("Walk gave %q, which Clean turns into %q, %v", f.Path, c, err)
		}
		if f.Path == "ok-link.md" && f.Size != int64(len("content of a.md")) {
			t.Errorf("linked file size %d", f.Size)
		}
	}
	wantErrs := map[string]Code{
		"dir/a:b.md":    CodePathEscape,
		`back\slash.md`: CodeInvalidPath,
		`bidi\u202e.md`: CodeInvalidPath,
		"escdir":        CodeSymlinkEscape,
		"escdir-abs":    CodeSymlinkEscape,
		"escape.md":     CodeSymlinkEscape,
		"to-git.md":     CodeHiddenSegment,
		"self.md":       CodeNotANote,
		"dangling.md":   CodeNotFound,
		"fifo.md":       CodeNotANote,
	}
	if !mapsEqual(w.errs, wantErrs) {
		t.Errorf("Walk reported\n%v\nwant\n%v", w.errs, wantErrs)
	}
	for _, m := range w.errMsg {
		if strings.Contains(m, base) || strings.Contains(m, vault.Dir()) || strings.Contains(m, secret) {
			t.Errorf("walk error leaks: %s", m)
		}
	}
}

func mapsEqual(a, b map[string]Code) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestWalkStops(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.md", "b.md", "c/d.md", "e.md"} {
		write(t, filepath.Join(dir, n), n)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()

	ctx, cancel := context.WithCancel(t.Context())
	var seen []string
	err = v.Walk(ctx, func(fi FileInfo) error {
		seen = append(seen, fi.Path)
		cancel()
		return nil
	}, nil)
	if !errors.Is(err, context.Canceled) || len(seen) != 1 {
		t.Errorf("cancelled walk: %v after %q", err, seen)
	}

	boom := errors.New("boom")
	seen = nil
	err = v.Walk(t.Context(), func(fi FileInfo) error {
		seen = append(seen, fi.Path)
		if fi.Path == "b.md" {
			return boom
		}
		return nil
	}, nil)
	if !errors.Is(err, boom) || !slices.Equal(seen, []string{"a.md", "b.md"}) {
		t.Errorf("fn error: %v after %q", err, seen)
	}

	seen = nil
	err = v.Walk(t.Context(), func(fi FileInfo) error {
		seen = append(seen, fi.Path)
		if fi.Path == "c/d.md" {
			return fs.SkipAll
		}
		return nil
	}, nil)
	if err != nil || !slices.Equal(seen, []string{"a.md", "b.md", "c/d.md"}) {
		t.Errorf("SkipAll: %v after %q", err, seen)
	}
}

// TestWalkUnreadableFolder needs a process that permissions apply to; as
// root it runs itself again as user nobody.
func TestWalkUnreadableFolder(t *testing.T) {
	if os.Getuid() == 0 {
		runAsNobody(t, "TestWalkUnreadableFolder")
		return
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "a")
	write(t, filepath.Join(dir, "locked", "x.md"), "x")
	write(t, filepath.Join(dir, "z.md"), "z")
	write(t, filepath.Join(dir, "noread.md"), "secret")
	if err := os.Chmod(filepath.Join(dir, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	if err := os.Chmod(filepath.Join(dir, "noread.md"), 0); err != nil {
		t.Fatal(err)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	w := walkAll(t, v)
	if got := w.paths(); !slices.Equal(got, []string{"a.md", "noread.md", "z.md"}) {
		t.Errorf("Walk gave %q", got)
	}
	if !mapsEqual(w.errs, map[string]Code{"locked": CodePermissionDenied}) {
		t.Errorf("Walk reported %v", w.errs)
	}
	if _, _, err := v.ReadNote("noread.md"); CodeOf(err) != CodePermissionDenied {
		t.Errorf("ReadNote(noread.md) = %v, want PERMISSION_DENIED", err)
	}
	if _, _, err := v.ReadNote("locked/x.md"); CodeOf(err) != CodePermissionDenied {
		t.Errorf("ReadNote(locked/x.md) = %v, want PERMISSION_DENIED", err)
	}
}

// runAsNobody runs one test of this binary again as uid/gid 65534, from a
// copy of the binary and a TMPDIR that user can use, and fails if it fails.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	if os.Getenv("VAULTFS_AS_NOBODY") != "" {
		t.Fatal("still root after dropping privileges")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's parents are private to root; make a world-usable folder.
	shared, err := os.MkdirTemp("", "vaultfs-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(shared, "vaultfs.test")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+shared, "VAULTFS_AS_NOBODY=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
		t.Skipf("cannot run as nobody: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("as nobody, the test did not pass:\n%s", out)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestReadWalked checks the fast read of walked files, through the vault
// and through a DirReader: the same bytes as ReadNote, and a file swapped
// after the walk (for a symlink to a hidden file or to outside), or its
// folder swapped for a symlink to outside, is judged by the full checks
// again.
func TestReadWalked(t *testing.T) {
	for _, viaDir := range []bool{false, true} {
		t.Run(map[bool]string{false: "vault", true: "dir reader"}[viaDir], func(t *testing.T) {
			testReadWalked(t, viaDir)
		})
	}
}

func testReadWalked(t *testing.T, viaDir bool) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "e.md"), []byte("OUTSIDE SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, dir := openFiles(t, map[string]string{"a.md": "# A\n", "d/b.md": "# B\n", "d/c.md": "# C\n", "f/g/e.md": "# E\n", ".git/x.md": "HIDDEN"})
	read := v.ReadWalked
	if viaDir {
		r := v.DirReader()
		defer r.Close()
		read = r.ReadWalked
	}
	walked := walkAll(t, v).files
	if len(walked) != 4 {
		t.Fatalf("walked %v", walked)
	}
	for _, fi := range walked {
		got, info, err := read(fi)
		want, _, _ := v.ReadNote(fi.Path)
		if err != nil || string(got) != string(want) || info.Path != fi.Path || info.Size != int64(len(want)) {
			t.Fatalf("ReadWalked(%s) = %q, %+v, %v", fi.Path, got, info, err)
		}
	}
	// Swap the walked files for symlinks after the walk, and a folder for
	// a symlink to outside.
	os.Remove(filepath.Join(dir, "d/b.md"))
	os.Symlink(secret, filepath.Join(dir, "d/b.md"))
	os.Remove(filepath.Join(dir, "d/c.md"))
	os.Symlink("../.git/x.md", filepath.Join(dir, "d/c.md"))
	os.RemoveAll(filepath.Join(dir, "f/g"))
	os.Symlink(outside, filepath.Join(dir, "f/g"))
	for _, fi := range walked[1:] {
		got, _, err := read(fi)
		if err == nil || strings.Contains(string(got), "SECRET") || strings.Contains(string(got), "HIDDEN") {
			t.Fatalf("ReadWalked(%s) after swap = %q, %v", fi.Path, got, err)
		}
	}
	// A zero FileInfo (not from Walk) takes the full path.
	if _, _, err := read(FileInfo{Path: "d/b.md", IsNote: true}); CodeOf(err) != CodeSymlinkEscape {
		t.Fatalf("plain FileInfo: %v", err)
	}
}

// TestDirReaderManyFolders: notes of more folders than a DirReader keeps
// open, read from several goroutines at once and out of order, each read
// gives its own note's bytes.
func TestDirReaderManyFolders(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 * dirReaderOpen {
		for k := range 3 {
			p := filepath.Join(dir, fmt.Sprintf("d%02d", i), fmt.Sprintf("s%d", i%3), fmt.Sprintf("n%d.md", k))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	walked := walkAll(t, v).files
	r := v.DirReader()
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan string, len(walked)*4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range walked {
				fi := walked[(i*7+w*13)%len(walked)]
				got, _, err := r.ReadWalked(fi)
				if err != nil || string(got) != filepath.Join(dir, filepath.FromSlash(fi.Path)) {
					errs <- fmt.Sprintf("%s: %q %v", fi.Path, got, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestWalkUnder: the files under a folder are those Walk gives under it, in
// the same order with the same checks; a linked, ignored, missing or
// non-folder dir holds nothing.
func TestWalkUnder(t *testing.T) {
	base := t.TempDir()
	v := filepath.Join(base, "vault")
	for _, name := range []string{"a.md", "dir/c.md", "dir/sub/d.md", "dir/sub/e.png", "dir/.hidden/x.md", "dir/node_modules/y.md",
		"dirx/f.md", "other/g.md", ".git/h.md", "file.md"} {
		write(t, filepath.Join(v, filepath.FromSlash(name)), "content of "+name)
	}
	write(t, filepath.Join(base, "outside", "s.md"), secret)
	symlink(t, "dir", filepath.Join(v, "dir-link"))
	symlink(t, "../../outside", filepath.Join(v, "dir", "esc"))
	vault, err := Open(v)
	if err != nil {
		t.Fatal(err)
	}
	defer vault.Close()
	all := walkAll(t, vault)
	under := func(dir string) ([]string, map[string]Code) {
		var ps []string
		errs := map[string]Code{}
		err := vault.WalkUnder(t.Context(), dir, func(fi FileInfo) error {
			ps = append(ps, fi.Path)
			return nil
		}, func(rel string, err error) { errs[rel] = CodeOf(err) })
		if err != nil {
			t.Fatalf("WalkUnder(%q): %v", dir, err)
		}
		return ps, errs
	}
	for _, dir := range []string{"dir", "dir/sub", "other"} {
		var want []string
		for _, p := range all.paths() {
			if strings.HasPrefix(p, dir+"/") {
				want = append(want, p)
			}
		}
		got, _ := under(dir)
		if !slices.Equal(got, want) {
			t.Errorf("WalkUnder(%q) = %q, want %q", dir, got, want)
		}
	}
	if _, errs := under("dir"); errs["dir/esc"] != CodeSymlinkEscape {
		t.Errorf("WalkUnder(dir) reported %v", errs)
	}
	if got, _ := under(""); !slices.Equal(got, all.paths()) {
		t.Errorf("WalkUnder(\"\") = %q", got)
	}
	for _, dir := range []string{"dir-link", "dir/.hidden", "dir/node_modules", ".git", "missing", "file.md", "../vault", "dir/../dir"} {
		if got, _ := under(dir); len(got) != 0 {
			t.Errorf("WalkUnder(%q) = %q, want nothing", dir, got)
		}
	}
}

// TestDirReaderReadsWhole: a note read through a DirReader gives the bytes
// and the FileInfo (size, modification time, identity) ReadNote gives, also
// when it grew or shrank after the walk (same file, so the fast path reads
// it): never a cut or stale read.
func TestDirReaderReadsWhole(t *testing.T) {
	v, dir := openFiles(t, map[string]string{"d/same.md": "# Same\n", "d/grows.md": "# Grows\n", "d/shrinks.md": "# Shrinks\n" + strings.Repeat("x", 9000)})
	walked := walkAll(t, v).files
	// In place (the same inode): one note grows by more than a page, one
	// shrinks to a line.
	grow, err := os.OpenFile(filepath.Join(dir, "d/grows.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	grow.WriteString(strings.Repeat("more\n", 2000))
	grow.Close()
	if err := os.Truncate(filepath.Join(dir, "d/shrinks.md"), 4); err != nil {
		t.Fatal(err)
	}
	r := v.DirReader()
	defer r.Close()
	for _, fi := range walked {
		got, info, err := r.ReadWalked(fi)
		want, wantInfo, werr := v.ReadNote(fi.Path)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("%s: read %d bytes (%v), ReadNote %d (%v)", fi.Path, len(got), err, len(want), werr)
		}
		if info.Size != wantInfo.Size || !info.ModTime.Equal(wantInfo.ModTime) || !info.walked.known() || !info.IsNote {
			t.Fatalf("%s: FileInfo %+v, ReadNote's %+v", fi.Path, info, wantInfo)
		}
	}
}

// openFiles writes files (vault path: content) into a new folder and opens
// it as a vault, closed when the test ends.
func openFiles(t *testing.T, files map[string]string) (*Vault, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v, dir
}

// TestDirReaderFolderBecameFile: a walked note's folder replaced by a file
// after the walk: the DirReader's open of that "folder" gives no note, and
// the read fails as ReadNote fails, never with another file's bytes.
func TestDirReaderFolderBecameFile(t *testing.T) {
	v, dir := openFiles(t, map[string]string{"d/n.md": "# N\n"})
	walked := walkAll(t, v).files
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d"), []byte("# not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := v.DirReader()
	defer r.Close()
	got, _, err := r.ReadWalked(walked[0])
	_, _, want := v.ReadNote(walked[0].Path)
	if err == nil || want == nil || CodeOf(err) != CodeOf(want) || len(got) != 0 {
		t.Fatalf("read %q, %v; ReadNote %v", got, err, want)
	}
}

// WalkWith's Folder hook gets every folder the walk enters, the vault's own
// first, each before any file in it is given; never an ignored folder, a
// symbolically linked one, or one that is not entered for its name.
func TestWalkWithFolderHook(t *testing.T) {
	v, dir := openFiles(t, map[string]string{
		"top.md":                 "x",
		"a/one.md":               "x",
		"a/b/two.md":             "x",
		"a/b/c/three.md":         "x",
		"z/four.md":              "x",
		".obsidian/app.json":     "{}",
		"node_modules/m/x.md":    "x",
		"_templates/t.md":        "x",
		"bad:name/five.md":       "x",
		"empty/.keep-me-hidden":  "x",
		"a/b/c/d/e/nested.png":   "x",
		"z/y/x/w/v/u/t/deep.md":  "x",
		"linked/target/inner.md": "x",
	})
	if err := os.Symlink(filepath.Join(dir, "linked/target"), filepath.Join(dir, "a/link")); err != nil {
		t.Fatal(err)
	}
	var folders []string
	entered := map[string]bool{}
	err := v.WalkWith(t.Context(), func(fi FileInfo) error {
		folder := ""
		if k := strings.LastIndexByte(fi.Path, '/'); k >= 0 {
			folder = fi.Path[:k]
		}
		if !entered[folder] {
			t.Errorf("%s given before the hook saw its folder %q", fi.Path, folder)
		}
		return nil
	}, nil, WalkHooks{Folder: func(rel string) {
		folders = append(folders, rel)
		entered[rel] = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", "a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/e", "empty", "linked", "linked/target",
		"z", "z/y", "z/y/x", "z/y/x/w", "z/y/x/w/v", "z/y/x/w/v/u", "z/y/x/w/v/u/t"}
	if !slices.Equal(folders, want) {
		t.Fatalf("Folder hook got\n%q\nwant\n%q", folders, want)
	}
}

// An unstatted walk (WalkHooks.Unstatted) gives each regular note with its
// identity but no stat (Linux; elsewhere the same as a walk), the rest as a
// walk gives it; every note it gives reads as from a statted walk, through
// ReadWalked and a DirReader, also one replaced since the walk; and in a
// read-only vault a note with another hard link is still refused, by the
// read.
func TestWalkUnstatted(t *testing.T) {
	v, dir := openFiles(t, map[string]string{
		"top.md":         "top note",
		"a/one.md":       "one",
		"a/b/two.md":     "two",
		"a/img.png":      "png bytes",
		"a/b/linked.txt": "x",
	})
	if err := os.Symlink("one.md", filepath.Join(dir, "a/alias.md")); err != nil {
		t.Fatal(err)
	}
	walk := func(v *Vault, unstatted bool) map[string]FileInfo {
		out := map[string]FileInfo{}
		if err := v.WalkWith(t.Context(), func(fi FileInfo) error {
			out[fi.Path] = fi
			return nil
		}, nil, WalkHooks{Unstatted: unstatted}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	statted, unstatted := walk(v, false), walk(v, true)
	if len(statted) != len(unstatted) {
		t.Fatalf("unstatted walk gave %d files, the walk %d", len(unstatted), len(statted))
	}
	for p, s := range statted {
		u := unstatted[p]
		if u.walked != s.walked || u.IsNote != s.IsNote || u.Path != p {
			t.Errorf("%s: unstatted %+v, statted %+v", p, u, s)
		}
		plainNote := s.IsNote && p != "a/alias.md"
		if runtime.GOOS == "linux" && plainNote {
			if u.Size != 0 || !u.ModTime.IsZero() {
				t.Errorf("%s: an unstatted note has size %d and time %v, want none", p, u.Size, u.ModTime)
			}
		} else if u.Size != s.Size || !u.ModTime.Equal(s.ModTime) {
			t.Errorf("%s: size %d, time %v; the walk's %d, %v", p, u.Size, u.ModTime, s.Size, s.ModTime)
		}
	}
	rd := v.DirReader()
	defer rd.Close()
	for _, p := range []string{"top.md", "a/one.md", "a/b/two.md", "a/alias.md"} {
		want, _ := os.ReadFile(filepath.Join(dir, p))
		for name, read := range map[string]func(FileInfo) ([]byte, FileInfo, error){"ReadWalked": v.ReadWalked, "DirReader": rd.ReadWalked} {
			data, fi, err := read(unstatted[p])
			if err != nil || string(data) != string(want) || fi.Size != int64(len(want)) || fi.ModTime.IsZero() {
				t.Errorf("%s of %s: %q, %+v, %v; want %q with its size and time", name, p, data, fi, err, want)
			}
		}
	}
	// Replaced since the walk: another inode, read with the full checks.
	if err := os.Remove(filepath.Join(dir, "a/b/two.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a/b/two.md"), []byte("two, again"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _, err := rd.ReadWalked(unstatted["a/b/two.md"]); err != nil || string(data) != "two, again" {
		t.Errorf("a note replaced since the walk: %q, %v", data, err)
	}
	// Read-only: a note with a second hard link is refused when read.
	if err := os.Link(filepath.Join(dir, "top.md"), filepath.Join(dir, "a/hard.md")); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(dir, ReadOnly(true))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	files := walk(ro, true)
	rrd := ro.DirReader()
	defer rrd.Close()
	for _, p := range []string{"top.md", "a/hard.md"} {
		fi, ok := files[p]
		if !ok {
			if runtime.GOOS == "linux" {
				t.Errorf("read-only: the unstatted walk did not give %s", p)
			}
			continue // the statted way: the walk reported it
		}
		if _, _, err := rrd.ReadWalked(fi); CodeOf(err) != CodeNotANote {
			t.Errorf("read-only, %s with two links: %v, want %s", p, err, CodeNotANote)
		}
		if _, _, err := ro.ReadWalked(fi); CodeOf(err) != CodeNotANote {
			t.Errorf("read-only, ReadWalked of %s with two links: %v, want %s", p, err, CodeNotANote)
		}
	}
}
