//go:build unix

package vaultfs

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// secret is planted outside the vault; it must never come back from any call.
const secret = "TOP-SECRET-outside-the-vault-7f3a"

// hiddenSecret is planted in hidden files inside the vault.
const hiddenSecret = "HIDDEN-SECRET-inside-dotdir-91c2"

type fixture struct {
	base    string // holds vault/ and outside/
	dir     string // the vault as given to Open
	outside string
	socket  bool // sock.md is a unix socket
	v       *Vault
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// newFixture builds a vault full of traps next to an outside folder holding
// the secret, and opens it.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{base: base, dir: filepath.Join(base, "vault"), outside: filepath.Join(base, "outside")}
	o, v := f.outside, f.dir

	write(t, filepath.Join(o, "secret.md"), secret)
	write(t, filepath.Join(o, "dir", "a.md"), secret+" in outside/dir/a.md")
	write(t, filepath.Join(o, "x.md"), secret+" x")

	write(t, filepath.Join(v, "a.md"), "# A\nhello\n")
	write(t, filepath.Join(v, "b.markdown"), "b\n")
	write(t, filepath.Join(v, "Upper.MD"), "upper\n")
	write(t, filepath.Join(v, "dir", "a.md"), "dir a\n")
	write(t, filepath.Join(v, "99-archive", "old.md"), "old\n")
	write(t, filepath.Join(v, "_templates", "wiki.md"), "{{title}}\n")
	write(t, filepath.Join(v, "node_modules", "pkg", "readme.md"), "pkg\n")
	write(t, filepath.Join(v, ".git", "config"), hiddenSecret)
	write(t, filepath.Join(v, ".obsidian", "x.md"), hiddenSecret)
	write(t, filepath.Join(v, ".trash", "x.md"), hiddenSecret)
	write(t, filepath.Join(v, ".env.md"), hiddenSecret)
	write(t, filepath.Join(v, "notes.txt"), "text\n")
	write(t, filepath.Join(v, "x.md.exe"), "exe\n")
	write(t, filepath.Join(v, "README"), "readme\n")
	write(t, filepath.Join(v, "%2e%2e", "x.md"), "literal percent folder\n")
	write(t, filepath.Join(v, "会议：记录.md"), "fullwidth colon\n")
	write(t, filepath.Join(v, "Wait… what.md"), "ellipsis\n")
	write(t, filepath.Join(v, "🗂️ hub.md"), "emoji\n")

	// symbolic links leaving the vault
	symlink(t, "../outside/secret.md", filepath.Join(v, "out-file.md"))
	symlink(t, filepath.Join(o, "secret.md"), filepath.Join(v, "out-abs.md"))
	symlink(t, "../outside", filepath.Join(v, "out-dir"))
	symlink(t, o, filepath.Join(v, "out-dir-abs"))
	symlink(t, "dir/../../outside/secret.md", filepath.Join(v, "sneaky.md"))
	symlink(t, "../../outside/secret.md", filepath.Join(v, "deep", "up.md"))
	symlink(t, "../../outside", filepath.Join(v, "deep", "updir"))
	symlink(t, filepath.Join(v, "a.md"), filepath.Join(v, "abs-inside.md"))
	// symbolic links staying inside
	symlink(t, "a.md", filepath.Join(v, "in-link.md"))
	symlink(t, "dir", filepath.Join(v, "in-dir"))
	symlink(t, "../a.md", filepath.Join(v, "deep", "in-up.md"))
	symlink(t, ".git/config", filepath.Join(v, "to-hidden.md"))
	symlink(t, ".obsidian/x.md", filepath.Join(v, "to-hidden-note.md"))
	symlink(t, ".obsidian", filepath.Join(v, "hid"))
	symlink(t, "node_modules/pkg/readme.md", filepath.Join(v, "to-nm.md"))
	symlink(t, "_templates/wiki.md", filepath.Join(v, "to-tpl.md"))
	symlink(t, "notes.txt", filepath.Join(v, "to-txt.md"))
	symlink(t, "loop2.md", filepath.Join(v, "loop1.md"))
	symlink(t, "loop1.md", filepath.Join(v, "loop2.md"))
	symlink(t, "missing.md", filepath.Join(v, "dangling.md"))
	symlink(t, "dir/..", filepath.Join(v, "root-link.md"))
	symlink(t, "_templates", filepath.Join(v, "tpl-dir"))
	symlink(t, "nothere/../..", filepath.Join(v, "ghost"))
	symlink(t, "nothere/sub", filepath.Join(v, "ghost-ok"))
	// hard links, a FIFO, a socket, a folder named like a note, a big note
	write(t, filepath.Join(v, "h1.md"), "hard\n")
	if err := os.Link(filepath.Join(v, "h1.md"), filepath.Join(v, "h2.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(v, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A socket path has a short length limit (104 bytes on macOS); where the
	// temporary folder is too deep, the socket case is left out.
	if l, err := net.Listen("unix", filepath.Join(v, "sock.md")); err == nil {
		f.socket = true
		t.Cleanup(func() { l.Close() })
	} else {
		t.Logf("no socket in the fixture: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(v, "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(v, "big.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(MaxNoteSize + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	write(t, filepath.Join(v, "exact.md"), strings.Repeat("x", 1000))
	if err := os.Truncate(filepath.Join(v, "exact.md"), MaxNoteSize); err != nil {
		t.Fatal(err)
	}

	vault, err := Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vault.Close() })
	f.v = vault
	return f
}

// assertSafe fails when an error text or returned bytes leak the secret,
// a hidden file, or the vault's (or the test's) absolute directory.
// The test's base folder may appear only when the input itself held it (an
// absolute path refused as such is echoed back, with the vault redacted).
func (f *fixture) assertSafe(t *testing.T, what string, s string) {
	t.Helper()
	bads := []string{secret, hiddenSecret, f.v.Dir(), f.dir}
	if !strings.Contains(s, f.outside) {
		bads = append(bads, f.base)
	}
	for _, bad := range bads {
		if strings.Contains(s, bad) {
			t.Errorf("%s leaks %q: %q", what, bad, s)
		}
	}
}

// TestRedTeam feeds hostile paths to Resolve, and for reads to ReadNote and
// Stat too, and checks each is refused with the right code, leaking nothing.
func TestRedTeam(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("a/", MaxPathBytes) + "x.md"
	tests := []struct {
		name string
		in   string
		acc  Access
		code Code
	}{
		// traversal, every spelling
		{"dotdot", "../x.md", Read, CodePathEscape},
		{"dotdot-after-dir", "a/../../x.md", Read, CodePathEscape},
		{"dotdot-backslash", `..\x.md`, Read, CodePathEscape},
		{"dotdot-backslash-after-dir", `a\..\..\x.md`, Read, CodePathEscape},
		{"dotdot-to-secret", "../outside/secret.md", Read, CodePathEscape},
		{"dotdot-through-link", "in-dir/../../outside/secret.md", Read, CodePathEscape},
		{"dotdot-deep", "dir/../../../../../../etc/passwd.md", Read, CodePathEscape},
		{"four-dots-is-a-hidden-name", "....//x.md", Read, CodeHiddenSegment},
		{"three-dots", ".../x.md", Read, CodeHiddenSegment},
		// absolute
		{"absolute", "/etc/passwd", Read, CodePathEscape},
		{"absolute-vault", "VAULT/a.md", Read, CodePathEscape},
		{"absolute-secret", "OUTSIDE/secret.md", Read, CodePathEscape},
		{"drive", `C:\x.md`, Read, CodePathEscape},
		{"drive-relative", "C:x.md", Read, CodePathEscape},
		{"unc", `\\server\share\x.md`, Read, CodePathEscape},
		{"unc-slash", "//server/x.md", Read, CodePathEscape},
		{"ads", "a.md:secret", Read, CodePathEscape},
		// bytes and characters
		{"empty", "", Read, CodeInvalidPath},
		{"root", ".", Read, CodeInvalidPath},
		{"nul", "a.md\x00.txt", Read, CodeInvalidPath},
		{"newline", "a\n.md", Read, CodeInvalidPath},
		{"escape-seq", "a\x1b[2J.md", Read, CodeInvalidPath},
		{"c1", "a\u009b.md", Read, CodeInvalidPath},
		{"bidi-override", "\u202Edm.txt", Read, CodeInvalidPath},
		{"bidi-isolate", "a\u2067.md", Read, CodeInvalidPath},
		{"zero-width-space", "a\u200B.md", Read, CodeInvalidPath},
		{"bom", "\uFEFFa.md", Read, CodeInvalidPath},
		{"invalid-utf8", "a\xc0\xaf.md", Read, CodeInvalidPath},
		{"too-long", long, Read, CodeInvalidPath},
		// look-alikes: never separators or dots
		{"fullwidth-solidus", "dir\uFF0Fa.md", Read, CodeInvalidPath},
		{"division-slash", "dir\u2215a.md", Read, CodeInvalidPath},
		{"one-dot-leader-twice", "\u2024\u2024/x.md", Read, CodeInvalidPath},
		{"two-dot-leader", "\u2025/x.md", Read, CodeInvalidPath},
		{"fullwidth-full-stops", "\uFF0E\uFF0E/x.md", Read, CodeInvalidPath},
		// hidden
		{"git-config", ".git/config", Read, CodeHiddenSegment},
		{"obsidian", "a/.obsidian/x.md", Read, CodeHiddenSegment},
		{"trash", ".trash/x.md", Read, CodeHiddenSegment},
		{"dotfile-note", ".env.md", Read, CodeHiddenSegment},
		{"hidden-then-up", ".git/../a.md", Read, CodeHiddenSegment},
		// protected
		{"node-modules-read", "node_modules/pkg/readme.md", Read, CodeProtectedPath},
		{"node-modules-case", "NODE_MODULES/pkg/readme.md", Read, CodeProtectedPath},
		{"templates-write", "_templates/wiki.md", Write, CodeProtectedPath},
		{"templates-move", "_templates/new.md", Move, CodeProtectedPath},
		{"templates-trailing-dot", "_templates./wiki.md", Write, CodeProtectedPath},
		{"archive-write", "99-archive/old.md", Write, CodeProtectedPath},
		{"archive-write-new", "99-archive/new.md", Write, CodeProtectedPath},
		// symbolic links
		{"link-out-file", "out-file.md", Read, CodeSymlinkEscape},
		{"link-out-abs", "out-abs.md", Read, CodeSymlinkEscape},
		{"link-out-dir", "out-dir/secret.md", Read, CodeSymlinkEscape},
		{"link-out-dir-abs", "out-dir-abs/secret.md", Read, CodeSymlinkEscape},
		{"link-out-dir-write", "out-dir/new.md", Write, CodeSymlinkEscape},
		{"link-out-dir-nested", "out-dir/dir/a.md", Read, CodeSymlinkEscape},
		{"link-sneaky-dotdot", "sneaky.md", Read, CodeSymlinkEscape},
		{"link-deep-up", "deep/up.md", Read, CodeSymlinkEscape},
		{"link-deep-updir", "deep/updir/secret.md", Read, CodeSymlinkEscape},
		{"link-absolute-inside", "abs-inside.md", Read, CodeSymlinkEscape},
		{"link-to-hidden", "to-hidden.md", Read, CodeHiddenSegment},
		{"link-to-hidden-note", "to-hidden-note.md", Read, CodeHiddenSegment},
		{"link-dir-to-hidden", "hid/x.md", Read, CodeHiddenSegment},
		{"link-to-node-modules", "to-nm.md", Read, CodeProtectedPath},
		{"link-to-templates-write", "to-tpl.md", Write, CodeNotANote},
		{"link-to-txt", "to-txt.md", Read, CodeInvalidExtension},
		{"link-loop", "loop1.md", Read, CodeNotANote},
		{"link-dangling", "dangling.md", Read, CodeNotFound},
		{"link-dangling-write", "dangling.md", Write, CodeNotANote},
		{"link-to-root", "root-link.md", Read, CodeNotANote},
		{"link-inside-write", "in-link.md", Write, CodeNotANote},
		{"link-dir-to-templates-write", "tpl-dir/new.md", Write, CodeProtectedPath},
		{"link-dir-to-hidden-write", "hid/new.md", Write, CodeHiddenSegment},
		{"link-dir-into-missing-dotdot", "ghost/new.md", Write, CodeNotANote},
		{"link-inside-move", "in-link.md", Move, CodeNotANote},
		// not notes
		{"hard-link-write", "h1.md", Write, CodeNotANote},
		{"hard-link-move", "h2.md", Move, CodeNotANote},
		{"fifo-read", "fifo.md", Read, CodeNotANote},
		{"fifo-write", "fifo.md", Write, CodeNotANote},
		{"socket-read", "sock.md", Read, CodeNotANote},
		{"dir-named-note-read", "dir.md", Read, CodeNotANote},
		{"dir-named-note-write", "dir.md", Write, CodeNotANote},
		{"file-as-folder-read", "a.md/x.md", Read, CodeNotFound},
		{"file-as-folder-write", "a.md/x.md", Write, CodeNotANote},
		// extensions
		{"txt", "notes.txt", Read, CodeInvalidExtension},
		{"double-extension", "x.md.exe", Read, CodeInvalidExtension},
		{"no-extension", "README", Read, CodeInvalidExtension},
		{"trailing-space-extension", "a.md ", Read, CodeInvalidExtension},
		// missing; percent-encoding is literal
		{"missing", "missing.md", Read, CodeNotFound},
		{"missing-folder", "nope/x.md", Read, CodeNotFound},
		{"percent-dotdot-missing", "%2e%2e/y.md", Read, CodeNotFound},
		{"percent-dotdot-secret", "%2e%2e/outside/secret.md", Read, CodeNotFound},
		{"percent-slash", "%2e%2e%2fx.md", Read, CodeNotFound},
		{"percent-slash-is-a-dot-name", "..%2fx.md", Read, CodeHiddenSegment},
	}
	if len(tests) < 40 {
		t.Fatalf("red-team table has %d entries", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in == "sock.md" && !f.socket {
				t.Skip("no socket in the fixture")
			}
			in := strings.Replace(tt.in, "VAULT", f.dir, 1)
			in = strings.Replace(in, "OUTSIDE", f.outside, 1)
			got, err := f.v.Resolve(in, tt.acc)
			if err == nil {
				t.Fatalf("Resolve(%q, %v) = %q, want %s", in, tt.acc, got, tt.code)
			}
			if c := CodeOf(err); c != tt.code {
				t.Errorf("Resolve(%q, %v): code %s, want %s: %v", in, tt.acc, c, tt.code, err)
			}
			checkMessage(t, err)
			f.assertSafe(t, "Resolve error", err.Error())
			if tt.acc != Read {
				return
			}
			data, _, err := f.v.ReadNote(in)
			if err == nil || CodeOf(err) != tt.code {
				t.Errorf("ReadNote(%q) = %d bytes, %v; want %s", in, len(data), err, tt.code)
			}
			if data != nil {
				t.Errorf("ReadNote(%q) returned bytes with an error", in)
			}
			f.assertSafe(t, "ReadNote error", err.Error())
			if rel, cerr := Clean(in); cerr == nil && rel == in {
				// Stat judges as Resolve does, except that attachments pass.
				_, err := f.v.Stat(in)
				if err == nil && tt.code != CodeInvalidExtension {
					t.Errorf("Stat(%q) accepted a path Resolve refuses with %s", in, tt.code)
				}
				if err != nil {
					f.assertSafe(t, "Stat error", err.Error())
				}
			}
		})
	}
}

// TestResolveAccepts shows the safe spellings and the literal names resolve
// inside the vault, and ReadNote returns exactly the file's bytes.
func TestResolveAccepts(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		in   string
		acc  Access
		want string
		body string // for Read: the file's content
	}{
		{"a.md", Read, "a.md", "# A\nhello\n"},
		{"./a.md", Read, "a.md", "# A\nhello\n"},
		{`dir\a.md`, Read, "dir/a.md", "dir a\n"},
		{"dir//a.md", Read, "dir/a.md", "dir a\n"},
		{"x/../dir/a.md", Read, "dir/a.md", "dir a\n"},
		{"b.markdown", Read, "b.markdown", "b\n"},
		{"Upper.MD", Read, "Upper.MD", "upper\n"},
		{"in-link.md", Read, "in-link.md", "# A\nhello\n"},
		{"in-dir/a.md", Read, "in-dir/a.md", "dir a\n"},
		{"deep/in-up.md", Read, "deep/in-up.md", "# A\nhello\n"},
		{"_templates/wiki.md", Read, "_templates/wiki.md", "{{title}}\n"},
		{"99-archive/old.md", Read, "99-archive/old.md", "old\n"},
		{"h1.md", Read, "h1.md", "hard\n"},
		{"%2e%2e/x.md", Read, "%2e%2e/x.md", "literal percent folder\n"},
		{"会议：记录.md", Read, "会议：记录.md", "fullwidth colon\n"},
		{"Wait… what.md", Read, "Wait… what.md", "ellipsis\n"},
		{"🗂️ hub.md", Read, "🗂️ hub.md", "emoji\n"},
		{"a.md", Write, "a.md", ""},
		{"new.md", Write, "new.md", ""},
		{"new/deep/n.md", Write, "new/deep/n.md", ""},
		// A write through a link inside the vault lands where it leads.
		{"in-dir/new.md", Write, "dir/new.md", ""},
		{"ghost-ok/new.md", Write, "nothere/sub/new.md", ""},
		{"in-dir/a.md", Move, "dir/a.md", ""},
		{"tpl-dir/wiki.md", Read, "tpl-dir/wiki.md", "{{title}}\n"},
		{"99-archive/old.md", Move, "99-archive/old.md", ""},
		{"99-archive/new.md", Move, "99-archive/new.md", ""},
		{"02-wiki/go/x.md", Move, "02-wiki/go/x.md", ""},
	}
	for _, tt := range tests {
		got, err := f.v.Resolve(tt.in, tt.acc)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q, %v) = %q, %v; want %q", tt.in, tt.acc, got, err, tt.want)
			continue
		}
		if tt.acc != Read {
			continue
		}
		data, fi, err := f.v.ReadNote(tt.in)
		if err != nil {
			t.Errorf("ReadNote(%q): %v", tt.in, err)
			continue
		}
		if string(data) != tt.body {
			t.Errorf("ReadNote(%q) = %q, want %q", tt.in, data, tt.body)
		}
		if fi.Path != tt.want || fi.Size != int64(len(tt.body)) || !fi.IsNote || fi.ModTime.IsZero() {
			t.Errorf("ReadNote(%q) info = %+v", tt.in, fi)
		}
		st, err := f.v.Stat(tt.want)
		if err != nil || st.Size != fi.Size || !st.ModTime.Equal(fi.ModTime) || st.Path != tt.want {
			t.Errorf("Stat(%q) = %+v, %v; ReadNote said %+v", tt.want, st, err, fi)
		}
	}
}

func TestReadNoteSizeLimit(t *testing.T) {
	f := newFixture(t)
	_, _, err := f.v.ReadNote("big.md")
	if CodeOf(err) != CodeTooLarge {
		t.Errorf("ReadNote(big.md) = %v, want TOO_LARGE", err)
	}
	data, fi, err := f.v.ReadNote("exact.md")
	if err != nil || len(data) != MaxNoteSize || fi.Size != MaxNoteSize {
		t.Errorf("ReadNote(exact.md) = %d bytes, %+v, %v; want exactly MaxNoteSize", len(data), fi, err)
	}
}

func TestCharacterDevice(t *testing.T) {
	f := newFixture(t)
	name := filepath.Join(f.dir, "null.md")
	// /dev/null's numbers (1, 3); only a privileged process may create it.
	if err := syscall.Mknod(name, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot create a device node here: %v", err)
	}
	for _, acc := range []Access{Read, Write, Move} {
		if _, err := f.v.Resolve("null.md", acc); CodeOf(err) != CodeNotANote {
			t.Errorf("Resolve(null.md, %v) = %v, want NOT_A_NOTE", acc, err)
		}
	}
	if _, _, err := f.v.ReadNote("null.md"); CodeOf(err) != CodeNotANote {
		t.Errorf("ReadNote(null.md) = %v, want NOT_A_NOTE", err)
	}
}

// TestSwapAfterResolve: Resolve says yes, then the folder becomes a link to
// the outside; ReadNote must not follow it.
func TestSwapAfterResolve(t *testing.T) {
	for _, target := range []string{"ABS", "../outside/dir"} {
		t.Run(target, func(t *testing.T) {
			f := newFixture(t)
			if _, err := f.v.Resolve("dir/a.md", Read); err != nil {
				t.Fatal(err)
			}
			if target == "ABS" {
				target = filepath.Join(f.outside, "dir")
			}
			swapForLink(t, filepath.Join(f.dir, "dir"), target)
			data, _, err := f.v.ReadNote("dir/a.md")
			if err == nil || CodeOf(err) != CodeSymlinkEscape {
				t.Errorf("ReadNote after swap = %q, %v; want SYMLINK_ESCAPE", data, err)
			}
			f.assertSafe(t, "data", string(data))
			f.assertSafe(t, "error", err.Error())
		})
	}
}

// swapForLink moves name aside and puts a symbolic link to target there.
func swapForLink(t *testing.T, name, target string) {
	t.Helper()
	if err := os.Rename(name, name+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// withHook runs fn with testHookBeforeOpen set to swap.
func withHook(t *testing.T, swap func(real string)) {
	t.Helper()
	testHookBeforeOpen = swap
	t.Cleanup(func() { testHookBeforeOpen = nil })
}

// TestSwapBetweenCheckAndOpen swaps things in after ReadNote's own check and
// before its open (the TOCTOU window) and shows the use refuses them.
func TestSwapBetweenCheckAndOpen(t *testing.T) {
	tests := []struct {
		name string
		path string
		swap func(t *testing.T, f *fixture)
		code Code
	}{
		{"parent-to-outside-absolute", "dir/a.md", func(t *testing.T, f *fixture) {
			swapForLink(t, filepath.Join(f.dir, "dir"), filepath.Join(f.outside, "dir"))
			// os.Root itself refuses the path now, whatever was checked.
			if _, err := f.v.rs().root.Open("dir/a.md"); !isEscape(err) {
				t.Errorf("os.Root opened a path through a link to outside: %v", err)
			}
		}, CodeSymlinkEscape},
		{"parent-to-outside-relative", "dir/a.md", func(t *testing.T, f *fixture) {
			swapForLink(t, filepath.Join(f.dir, "dir"), "../outside/dir")
		}, CodeSymlinkEscape},
		{"file-to-outside", "a.md", func(t *testing.T, f *fixture) {
			swapForLink(t, filepath.Join(f.dir, "a.md"), "../outside/secret.md")
		}, CodeSymlinkEscape},
		{"file-to-hidden-inside", "a.md", func(t *testing.T, f *fixture) {
			// os.Root would follow this one (it stays inside); the identity
			// check refuses it, and the path checked again is refused.
			swapForLink(t, filepath.Join(f.dir, "a.md"), ".obsidian/x.md")
		}, CodeHiddenSegment},
		{"parent-to-hidden-inside", "dir/a.md", func(t *testing.T, f *fixture) {
			write(t, filepath.Join(f.dir, ".obsidian", "a.md"), hiddenSecret)
			swapForLink(t, filepath.Join(f.dir, "dir"), ".obsidian")
		}, CodeHiddenSegment},
		{"file-to-fifo", "a.md", func(t *testing.T, f *fixture) {
			name := filepath.Join(f.dir, "a.md")
			if err := os.Rename(name, name+".orig"); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(name, 0o644); err != nil {
				t.Fatal(err)
			}
		}, CodeNotANote},
		// Replaced at every attempt: the read gives up.
		{"file-replaced", "a.md", func(t *testing.T, f *fixture) {
			write(t, filepath.Join(f.dir, "other.md"), "other\n")
			if err := os.Rename(filepath.Join(f.dir, "other.md"), filepath.Join(f.dir, "a.md")); err != nil {
				t.Fatal(err)
			}
		}, CodeNotFound},
		{"file-removed", "a.md", func(t *testing.T, f *fixture) {
			if err := os.Remove(filepath.Join(f.dir, "a.md")); err != nil {
				t.Fatal(err)
			}
		}, CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			called := false
			withHook(t, func(real string) {
				called = true
				tt.swap(t, f)
			})
			data, _, err := f.v.ReadNote(tt.path)
			if !called {
				t.Fatal("the hook did not run")
			}
			if err == nil || CodeOf(err) != tt.code {
				t.Errorf("ReadNote(%q) = %q, %v; want %s", tt.path, data, err, tt.code)
			}
			if data != nil {
				t.Errorf("bytes returned with an error: %q", data)
			}
			if err != nil {
				f.assertSafe(t, "error", err.Error())
				checkMessage(t, err)
			}
		})
	}
}

// TestReadNoteReplacedOnce: a note replaced by a write (a new file renamed
// over it) between the read's check and its open is read as the new file,
// not reported missing: another client's write is not a deletion.
func TestReadNoteReplacedOnce(t *testing.T) {
	for _, read := range []struct {
		name string
		fn   func(v *Vault) ([]byte, error)
	}{
		{"ReadNote", func(v *Vault) ([]byte, error) { b, _, err := v.ReadNote("a.md"); return b, err }},
		{"ReadFile", func(v *Vault) ([]byte, error) { return v.ReadFile("a.md", MaxNoteSize) }},
	} {
		t.Run(read.name, func(t *testing.T) {
			f := newFixture(t)
			calls := 0
			withHook(t, func(string) {
				calls++
				if calls > 1 {
					return
				}
				write(t, filepath.Join(f.dir, "new.md"), "new\n")
				if err := os.Rename(filepath.Join(f.dir, "new.md"), filepath.Join(f.dir, "a.md")); err != nil {
					t.Fatal(err)
				}
			})
			data, err := read.fn(f.v)
			if err != nil || string(data) != "new\n" {
				t.Errorf("%s(a.md) = %q, %v; want the new bytes", read.name, data, err)
			}
			if calls != 2 {
				t.Errorf("the path was opened %d times, want 2", calls)
			}
		})
	}
}

// TestRootEscapeDetection pins the text of os.Root's escape error, which
// isEscape depends on.
func TestRootEscapeDetection(t *testing.T) {
	f := newFixture(t)
	_, err := f.v.rs().root.Open("out-file.md")
	if !isEscape(err) {
		t.Fatalf("os.Root escape error not recognised: %v", err)
	}
	if c := CodeOf(fromOS("out-file.md", err)); c != CodeSymlinkEscape {
		t.Errorf("fromOS code = %s", c)
	}
}

func TestOpen(t *testing.T) {
	base := t.TempDir()
	write(t, filepath.Join(base, "file"), "x")
	for _, dir := range []string{"", filepath.Join(base, "missing"), filepath.Join(base, "file"), "/"} {
		if v, err := Open(dir); err == nil {
			v.Close()
			t.Errorf("Open(%q) succeeded", dir)
		}
	}

	real := filepath.Join(base, "real")
	write(t, filepath.Join(real, "a.md"), "a")
	link := filepath.Join(base, "link")
	symlink(t, real, link)
	v, err := Open(link)
	if err != nil {
		t.Fatal(err)
	}
	wantDir, _ := filepath.EvalSymlinks(real)
	if v.Dir() != wantDir {
		t.Errorf("Dir() = %q, want %q", v.Dir(), wantDir)
	}
	s := "at " + link + "/a.md and " + wantDir + "/b.md"
	if got := v.Redact(s); got != "at <vault>/a.md and <vault>/b.md" {
		t.Errorf("Redact = %q", got)
	}
	if _, err := v.Resolve(link+"/a.md", Read); err == nil || strings.Contains(err.Error(), link) {
		t.Errorf("absolute input echoed: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.ReadNote("a.md"); CodeOf(err) != CodeIO {
		t.Errorf("ReadNote after Close = %v, want IO_ERROR", err)
	}
}

func TestStat(t *testing.T) {
	f := newFixture(t)
	write(t, filepath.Join(f.dir, "img", "p.png"), "png")
	tests := []struct {
		rel    string
		code   Code
		isNote bool
	}{
		{"a.md", "", true},
		{"img/p.png", "", false},
		{"in-link.md", "", true},
		{"_templates/wiki.md", "", true},
		{"missing.md", CodeNotFound, false},
		{"./a.md", CodeInvalidPath, false},
		{"dir//a.md", CodeInvalidPath, false},
		{"out-file.md", CodeSymlinkEscape, false},
		{"to-txt.md", CodeInvalidExtension, false},
		{"fifo.md", CodeNotANote, false},
		{"node_modules/pkg/readme.md", CodeProtectedPath, false},
		{".git/config", CodeHiddenSegment, false},
	}
	for _, tt := range tests {
		fi, err := f.v.Stat(tt.rel)
		if CodeOf(err) != tt.code {
			t.Errorf("Stat(%q) = %v, want %q", tt.rel, err, tt.code)
			continue
		}
		if err == nil && (fi.Path != tt.rel || fi.IsNote != tt.isNote || fi.ModTime.IsZero()) {
			t.Errorf("Stat(%q) = %+v", tt.rel, fi)
		}
		if err != nil {
			f.assertSafe(t, "Stat error", err.Error())
		}
	}
}

func TestNoSecretInAnyFile(t *testing.T) {
	// Every note ReadNote accepts from a walk is inside the vault and not hidden.
	f := newFixture(t)
	var read int
	err := f.v.Walk(t.Context(), func(fi FileInfo) error {
		if !fi.IsNote {
			return nil
		}
		data, _, err := f.v.ReadNote(fi.Path)
		if err != nil {
			if CodeOf(err) != CodeTooLarge {
				t.Errorf("ReadNote(%q) of a walked note: %v", fi.Path, err)
			}
			return nil
		}
		read++
		if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte(hiddenSecret)) {
			t.Errorf("ReadNote(%q) returned a secret", fi.Path)
		}
		return nil
	}, func(rel string, err error) {
		f.assertSafe(t, "walk error", err.Error())
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 10 {
		t.Errorf("only %d notes read", read)
	}
}

// TestResolveNewNames: a write that creates a file or folder refuses a
// name that is not portable (leading or trailing white space, the file's
// stem included; a trailing '.'; a character Windows refuses) with
// INVALID_PATH naming the segment, while the files and folders that already
// exist under such names stay readable, writable and usable as a path, and
// Resolve (for a replacement, an undo) is unchanged.
func TestResolveNewNames(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, " old.md"), "old\n")
	write(t, filepath.Join(dir, " legacy dir", "n.md"), "n\n")
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	for _, tc := range []struct{ p, seg string }{
		{" d/U.md", `" d"`},
		{"d /U.md", `"d "`},
		{" x.md", `" x.md"`},
		{"x .md", `"x .md"`},
		{"a/\u00a0b.md", `"\u00a0b.md"`}, // a no-break space, shown escaped
		{"a./x.md", `"a."`},
		{"a?.md", `"a?.md"`},
		{"q/wh*t.md", `"wh*t.md"`},
		{"<b>.md", `"<b>.md"`},
		{`say "hi".md`, `"say \"hi\".md"`},
		{"a|b/x.md", `"a|b"`},
		{" legacy dir/new .md", `"new .md"`},
		{"con.md", `"con.md"`},
		{"Nul.tar.md", `"Nul.tar.md"`},
		{"aux/x.md", `"aux"`},
		{"d/COM1.md", `"COM1.md"`},
		{"lpt9 .md", `"lpt9 .md"`},
		{"com\u00b2.md", "\"com\u00b2.md\""},
	} {
		for _, acc := range []Access{Write, Move} {
			_, err := v.ResolveNew(tc.p, acc)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidPath || !strings.Contains(e.Reason, tc.seg) {
				t.Errorf("ResolveNew(%q, %v) = %v, want INVALID_PATH naming %s", tc.p, acc, err, tc.seg)
			}
			if _, err := v.Resolve(tc.p, acc); err != nil {
				t.Errorf("Resolve(%q, %v) = %v, want it accepted as before", tc.p, acc, err)
			}
		}
	}
	for _, p := range []string{" old.md", " legacy dir/n.md", " legacy dir/new.md", "ok dir/a b.md", "v1.2/x.md", "Wait… what.md", "会议：记录.md", "console.md", "com.md", "com10.md", "lpt0.md", "my con.md", "auxiliary/x.md"} {
		if _, err := v.ResolveNew(p, Write); err != nil {
			t.Errorf("ResolveNew(%q) = %v, want accepted", p, err)
		}
	}
	if _, _, err := v.ReadNote(" old.md"); err != nil {
		t.Errorf("an existing note with a leading space: %v", err)
	}
}

// TestResolveFolderIsNotANote: a path naming a folder of the vault is
// refused as NOT_A_NOTE saying it is a folder (every tool takes one note),
// for reads and writes; a path without an extension that is no folder, or
// a folder reached through a link out of the vault, keeps INVALID_EXTENSION
// (nothing is told about what lies outside).
func TestResolveFolderIsNotANote(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "02-wiki", "go", "a.md"), "a\n")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	for _, acc := range []Access{Read, Write} {
		_, err := v.Resolve("02-wiki/go", acc)
		if CodeOf(err) != CodeNotANote || !strings.Contains(err.Error(), "is a folder") {
			t.Errorf("Resolve(folder, %v) = %v, want NOT_A_NOTE saying it is a folder", acc, err)
		}
		for _, p := range []string{"02-wiki/none", "out"} {
			if _, err := v.Resolve(p, acc); CodeOf(err) != CodeInvalidExtension {
				t.Errorf("Resolve(%q, %v) = %v, want INVALID_EXTENSION", p, acc, err)
			}
		}
	}
}
