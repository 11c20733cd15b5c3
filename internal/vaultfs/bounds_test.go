//go:build unix

package vaultfs

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestBoundsEveryAccess checks that a path past a limit is refused by every
// operation of the gatekeeper, with nothing created on disk, and that a path
// at the limits can be written, read, walked and moved for real.
func TestBoundsEveryAccess(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "# A\n")
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	before := snapshot(t, dir)
	for _, tt := range boundCases {
		if tt.ok {
			continue
		}
		ops := map[string]error{}
		for _, acc := range []Access{Read, Write, Move} {
			_, err := v.Resolve(tt.in, acc)
			ops["Resolve "+acc.String()] = err
		}
		_, _, ops["ReadNote"] = v.ReadNote(tt.in)
		_, ops["Stat"] = v.Stat(tt.in)
		_, ops["WriteFile"] = v.WriteFile(tt.in, []byte("x\n"), Write)
		_, ops["CreateFile"] = v.CreateFile(tt.in, []byte("x\n"), Write)
		ops["Rename to"] = v.Rename("a.md", tt.in)
		ops["Rename from"] = v.Rename(tt.in, "b.md")
		ops["Remove"] = v.Remove(tt.in)
		for op, err := range ops {
			if CodeOf(err) != CodeInvalidPath || !strings.Contains(err.Error(), tt.limit) {
				t.Errorf("%s: %s = %v; want INVALID_PATH naming %s", tt.name, op, err, tt.limit)
			}
		}
	}
	if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
		t.Fatalf("refused paths changed the disk:\n%s", strings.Join(d, "\n"))
	}

	// At the limits everything works.
	var atLimit []string
	for _, tt := range boundCases {
		if !tt.ok {
			continue
		}
		if _, err := v.CreateFile(tt.in, []byte("# at the limit\n"), Write); err != nil {
			t.Fatalf("%s: CreateFile: %v", tt.name, err)
		}
		if data, _, err := v.ReadNote(tt.in); err != nil || string(data) != "# at the limit\n" {
			t.Fatalf("%s: ReadNote = %q, %v", tt.name, data, err)
		}
		atLimit = append(atLimit, tt.in)
	}
	w := walkAll(t, v)
	for _, p := range atLimit {
		if !slices.Contains(w.paths(), p) {
			t.Errorf("Walk did not give %q", p)
		}
	}
	if len(w.errs) > 0 {
		t.Errorf("Walk reported %v", w.errs)
	}
	moved := strings.TrimSuffix(deepPath(MaxPathSegments), "x.md") + "y.md"
	if err := v.Rename(deepPath(MaxPathSegments), moved); err != nil {
		t.Errorf("Rename at the depth limit: %v", err)
	}
}

// TestWalkBounds puts files beyond the limits on disk (as a user could) and
// checks that Walk gives what is within them, reports the rest once per
// folder it does not enter, and never descends further.
func TestWalkBounds(t *testing.T) {
	dir := t.TempDir()
	// A note at the depth limit, and one folder deeper holding notes.
	deepest := filepath.FromSlash(deepPath(MaxPathSegments))
	write(t, filepath.Join(dir, deepest), "# deepest\n")
	tooDeep := filepath.Join(filepath.Dir(deepest), "b")
	for _, name := range []string{"x.md", "y.md", "c/z.md"} {
		write(t, filepath.Join(dir, tooDeep, filepath.FromSlash(name)), "# too deep\n")
	}
	// Folders so long that a note inside is within the limit or is not.
	// (Walk reports a path cut at 200 characters: each case has a folder
	// of its own so that the reports can be told apart.)
	folder := func(c string) string { // 1,003 bytes
		long := strings.Repeat(c, 250)
		return strings.Join([]string{long, long, long, long}, "/")
	}
	fits := folder("L") + "/" + strings.Repeat("n", MaxPathBytes-1003-1-3) + ".md"
	over := folder("O") + "/" + strings.Repeat("o", MaxPathBytes-1003-3) + ".md"
	noRoom := folder("R") + "/" + strings.Repeat("r", MaxPathBytes-1003-1-len("/x.md")+1)
	write(t, filepath.Join(dir, filepath.FromSlash(fits)), "# fits\n")
	write(t, filepath.Join(dir, filepath.FromSlash(over)), "# over\n")
	write(t, filepath.Join(dir, filepath.FromSlash(noRoom), "x.md"), "# no room\n")
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()

	w := walkAll(t, v)
	if want := []string{fits, deepPath(MaxPathSegments)}; !slices.Equal(w.paths(), want) {
		t.Errorf("Walk gave %q\nwant %q", w.paths(), want)
	}
	wantErrs := map[string]Code{
		filepath.ToSlash(tooDeep): CodeInvalidPath,
		DisplayPath(over):         CodeInvalidPath,
		DisplayPath(noRoom):       CodeInvalidPath,
	}
	if !mapsEqual(w.errs, wantErrs) {
		t.Errorf("Walk reported\n%v\nwant\n%v", w.errs, wantErrs)
	}
	for _, m := range w.errMsg {
		if !strings.Contains(m, strconv.Itoa(MaxPathSegments)) && !strings.Contains(m, strconv.Itoa(MaxPathBytes)) {
			t.Errorf("walk report does not name the limit: %s", m)
		}
	}
	if data, _, err := v.ReadNote(deepPath(MaxPathSegments)); err != nil || string(data) != "# deepest\n" {
		t.Errorf("ReadNote of the deepest walked note = %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, tooDeep, "x.md")); err != nil {
		t.Fatalf("fixture: %v", err)
	}
}

// BenchmarkRefuseDeepPath is the write of issue 9: a path of 2,046 folders.
// Before the path limits it created every folder (17 s through
// vault_write_note, holding the write queue); now it is refused by Clean.
func BenchmarkRefuseDeepPath(b *testing.B) {
	dir := b.TempDir()
	v, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	p := deepPath(2047)
	for b.Loop() {
		if _, err := v.WriteFile(p, []byte("x\n"), Write); CodeOf(err) != CodeInvalidPath {
			b.Fatalf("WriteFile = %v", err)
		}
	}
}
