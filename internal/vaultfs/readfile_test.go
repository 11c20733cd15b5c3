//go:build unix

package vaultfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileAndDotFile: ReadFile reads any regular file of the vault
// (a note, an attachment) and ReadDotFile a dotfile in a vault folder
// (.gitignore), each through the gatekeeper's checks: a symbolic link out
// of the vault, a hidden name where it is not the file's own, a folder
// off limits, a missing file and a file over the limit are refused with
// their codes.
func TestReadFileAndDotFile(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "vault"), filepath.Join(base, "outside")
	for name, body := range map[string]string{
		"vault/a.md": "# A\n", "vault/img.png": "PNG", "vault/.gitignore": "*.tmp\n", "vault/sub/.gitattributes": "* text\n",
		"vault/node_modules/.gitignore": "x\n", "outside/.gitignore": "secret\n", "outside/s.png": "secret",
	} {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"vault/out": outside, "vault/out.png": filepath.Join(outside, "s.png")} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	v := openOpts(t, dir)
	for _, tc := range []struct{ path, want string }{{"a.md", "# A\n"}, {"img.png", "PNG"}} {
		if got, err := v.ReadFile(tc.path, 1<<20); err != nil || string(got) != tc.want {
			t.Errorf("ReadFile(%s) = %q, %v", tc.path, got, err)
		}
	}
	for _, tc := range []struct{ dir, name, want string }{{"", ".gitignore", "*.tmp\n"}, {"sub", ".gitattributes", "* text\n"}} {
		if got, err := v.ReadDotFile(tc.dir, tc.name, 1<<20); err != nil || string(got) != tc.want {
			t.Errorf("ReadDotFile(%q, %s) = %q, %v", tc.dir, tc.name, got, err)
		}
	}
	for _, tc := range []struct {
		what string
		err  error
		code Code
	}{
		{"ReadFile of a dotfile", second(v.ReadFile(".gitignore", 1<<20)), CodeHiddenSegment},
		{"ReadFile through a link out", second(v.ReadFile("out.png", 1<<20)), CodeSymlinkEscape},
		{"ReadFile missing", second(v.ReadFile("none.png", 1<<20)), CodeNotFound},
		{"ReadFile over the limit", second(v.ReadFile("a.md", 2)), CodeTooLarge},
		{"ReadDotFile through a link out", second(v.ReadDotFile("out", ".gitignore", 1<<20)), CodeSymlinkEscape},
		{"ReadDotFile in node_modules", second(v.ReadDotFile("node_modules", ".gitignore", 1<<20)), CodeProtectedPath},
		{"ReadDotFile missing", second(v.ReadDotFile("sub", ".gitignore", 1<<20)), CodeNotFound},
		{"ReadDotFile in a missing folder", second(v.ReadDotFile("none", ".gitignore", 1<<20)), CodeNotFound},
		{"ReadDotFile of a plain name", second(v.ReadDotFile("", "a.md", 1<<20)), CodeInvalidPath},
		{"ReadDotFile of a name with a folder", second(v.ReadDotFile("", ".x/y", 1<<20)), CodeInvalidPath},
		{"ReadDotFile of dots", second(v.ReadDotFile("", "..", 1<<20)), CodeInvalidPath},
		{"ReadDotFile in a hidden folder", second(v.ReadDotFile(".git", ".gitignore", 1<<20)), CodeHiddenSegment},
	} {
		if CodeOf(tc.err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.what, tc.err, tc.code)
		}
	}
}

func second(_ []byte, err error) error { return err }
