//go:build unix

package vaultfs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hardLinkVault is a vault holding ok.md, leak.md (a hard link to a file
// outside the vault), twin-a.md and twin-b.md (two names of one file inside
// it), to-leak.md (a symbolic link to leak.md) and pic.png (a hard-linked
// attachment), next to the outside folder.
func hardLinkVault(t *testing.T) (base, dir string) {
	t.Helper()
	base = t.TempDir()
	dir = filepath.Join(base, "vault")
	outside := filepath.Join(base, "outside")
	write(t, filepath.Join(outside, "secret.md"), secret)
	write(t, filepath.Join(outside, "pic.png"), "PNG")
	write(t, filepath.Join(dir, "ok.md"), "# OK\n")
	write(t, filepath.Join(dir, "twin-a.md"), "# Twin\n")
	link := func(from, to string) {
		if err := os.Link(from, to); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(outside, "secret.md"), filepath.Join(dir, "leak.md"))
	link(filepath.Join(dir, "twin-a.md"), filepath.Join(dir, "twin-b.md"))
	link(filepath.Join(outside, "pic.png"), filepath.Join(dir, "pic.png"))
	symlink(t, "leak.md", filepath.Join(dir, "to-leak.md"))
	return base, dir
}

func openOpts(t *testing.T, dir string, opts ...Option) *Vault {
	t.Helper()
	v, err := Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// TestReadOnlyRefusesHardLinks: in read-only mode a note with more than one
// name is neither given by Walk nor read, whichever method is asked; in
// read-write mode it is read as before.
func TestReadOnlyRefusesHardLinks(t *testing.T) {
	base, dir := hardLinkVault(t)
	linked := []string{"leak.md", "twin-a.md", "twin-b.md", "to-leak.md"}

	rw := openOpts(t, dir)
	if rw.IsReadOnly() {
		t.Fatal("IsReadOnly without the option")
	}
	walkedRW := walkAll(t, rw)
	if want := []string{"leak.md", "ok.md", "pic.png", "to-leak.md", "twin-a.md", "twin-b.md"}; !slices.Equal(walkedRW.paths(), want) {
		t.Fatalf("read-write Walk gave %q, want %q", walkedRW.paths(), want)
	}
	for _, p := range linked {
		if _, _, err := rw.ReadNote(p); err != nil {
			t.Errorf("read-write ReadNote(%s): %v", p, err)
		}
	}

	ro := openOpts(t, dir, ReadOnly(true))
	if !ro.IsReadOnly() {
		t.Fatal("IsReadOnly is false")
	}
	w := walkAll(t, ro)
	if want := []string{"ok.md", "pic.png"}; !slices.Equal(w.paths(), want) {
		t.Errorf("read-only Walk gave %q, want %q", w.paths(), want)
	}
	wantErrs := map[string]Code{}
	for _, p := range linked {
		wantErrs[p] = CodeNotANote
	}
	if !mapsEqual(w.errs, wantErrs) {
		t.Errorf("read-only Walk reported %v, want %v", w.errs, wantErrs)
	}
	var msgs []string
	msgs = append(msgs, w.errMsg...)
	for _, p := range linked {
		_, err := ro.Resolve(p, Read)
		_, _, err2 := ro.ReadNote(p)
		// The fast path, given what a read-write walk saw, refuses too.
		var fromRW FileInfo
		for _, f := range walkedRW.files {
			if f.Path == p {
				fromRW = f
			}
		}
		data, _, err3 := ro.ReadWalked(fromRW)
		dr := ro.DirReader()
		data4, _, err4 := dr.ReadWalked(fromRW)
		dr.Close()
		if data4 != nil {
			t.Errorf("%s: DirReader.ReadWalked returned %q", p, data4)
		}
		for i, e := range []error{err, err2, err3, err4} {
			if CodeOf(e) != CodeNotANote || !strings.Contains(e.Error(), "hard links") {
				t.Errorf("%s: read %d = %v; want NOT_A_NOTE about hard links", p, i, e)
				continue
			}
			msgs = append(msgs, e.Error())
		}
		if data != nil {
			t.Errorf("%s: ReadWalked returned %q", p, data)
		}
		// Stat reads no content and still describes it.
		if fi, err := ro.Stat(p); err != nil || !fi.IsNote {
			t.Errorf("Stat(%s) = %+v, %v", p, fi, err)
		}
	}
	if data, _, err := ro.ReadNote("ok.md"); err != nil || string(data) != "# OK\n" {
		t.Errorf("ReadNote(ok.md) = %q, %v", data, err)
	}
	for _, m := range msgs {
		if strings.Contains(m, secret) || strings.Contains(m, base) || strings.Contains(m, "\n") {
			t.Errorf("message leaks or is not one line: %q", m)
		}
	}
}

// TestReadOnlyLinkAddedAfterCheck adds a second name to a note between the
// check and the open: the opened file is checked again.
func TestReadOnlyLinkAddedAfterCheck(t *testing.T) {
	_, dir := hardLinkVault(t)
	ro := openOpts(t, dir, ReadOnly(true))
	withHook(t, func(string) {
		if err := os.Link(filepath.Join(dir, "ok.md"), filepath.Join(dir, "ok-too.md")); err != nil {
			t.Error(err)
		}
	})
	if data, _, err := ro.ReadNote("ok.md"); CodeOf(err) != CodeNotANote || data != nil {
		t.Fatalf("ReadNote after a link was added = %q, %v; want NOT_A_NOTE", data, err)
	}
}

// TestReadOnlyRefusesWrites: the read-only gatekeeper refuses every write,
// whoever calls it, and the disk does not change.
func TestReadOnlyRefusesWrites(t *testing.T) {
	base, dir := hardLinkVault(t)
	ro := openOpts(t, dir, ReadOnly(true))
	before := snapshot(t, base)
	errs := map[string]error{}
	_, errs["Resolve write"] = ro.Resolve("new.md", Write)
	_, errs["Resolve move"] = ro.Resolve("new.md", Move)
	_, errs["WriteFile"] = ro.WriteFile("ok.md", []byte("x"), Write)
	_, errs["CreateFile"] = ro.CreateFile("new.md", []byte("x"), Write)
	errs["Rename"] = ro.Rename("ok.md", "moved.md")
	errs["Remove"] = ro.Remove("ok.md")
	for op, err := range errs {
		if CodeOf(err) != CodeReadOnly {
			t.Errorf("%s = %v; want READ_ONLY", op, err)
		}
	}
	if d := diffSnapshots(before, snapshot(t, base)); len(d) > 0 {
		t.Errorf("refused writes changed the disk:\n%s", strings.Join(d, "\n"))
	}
}
