package vaultfs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

func TestCleanAccepts(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"a.md", "a.md"},
		{"dir/a.md", "dir/a.md"},
		// the four spellings of DESIGN.md section 3
		{"./a.md", "a.md"},
		{`dir\a.md`, "dir/a.md"},
		{"dir//a.md", "dir/a.md"},
		{"x/../dir/a.md", "dir/a.md"},
		{"dir/./a.md", "dir/a.md"},
		{"dir/a.md/", "dir/a.md"},
		{"dir", "dir"},
		{"a/b/../../c.md", "c.md"},
		// literal names, never decoded or normalised
		{"%2e%2e/x.md", "%2e%2e/x.md"},
		{"%2F.md", "%2F.md"},
		{"~/x.md", "~/x.md"},
		{"a..b.md", "a..b.md"},
		{"x..", "x.."},
		{"Wait… what.md", "Wait… what.md"},
		{"v1．2.md", "v1．2.md"},
		{"会议：记录.md", "会议：记录.md"},
		{"🗂️ hub.md", "🗂️ hub.md"},
		{"café.md", "café.md"},
		{"cafe\u0301.md", "cafe\u0301.md"},
		{"notes with spaces.md", "notes with spaces.md"},
		{"A.MD", "A.MD"},
		{"_templates/wiki.md", "_templates/wiki.md"},
		{"node_modules/x.md", "node_modules/x.md"}, // Clean is lexical; CheckPolicy refuses it
		{"x.txt", "x.txt"},
	}
	for _, tt := range tests {
		got, err := Clean(tt.in)
		if err != nil {
			t.Errorf("Clean(%q) = error %v, want %q", tt.in, err, tt.want)
			continue
		}
		if got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again, err := Clean(got); err != nil || again != got {
			t.Errorf("Clean(Clean(%q)) = %q, %v; not idempotent", tt.in, again, err)
		}
	}
}

// hostileClean lists inputs Clean itself must refuse, with the code.
var hostileClean = []struct {
	in   string
	code Code
}{
	{"", CodeInvalidPath},
	{".", CodeInvalidPath},
	{"./", CodeInvalidPath},
	{"a/..", CodeInvalidPath},
	{"a.md\x00.txt", CodeInvalidPath},
	{"a\nb.md", CodeInvalidPath},
	{"a\rb.md", CodeInvalidPath},
	{"a\tb.md", CodeInvalidPath},
	{"a\x1b[31m.md", CodeInvalidPath},
	{"a\x7f.md", CodeInvalidPath},
	{"a\u0085.md", CodeInvalidPath}, // C1 NEXT LINE
	{"\u202Edm.exe", CodeInvalidPath},
	{"a\u202Db.md", CodeInvalidPath},
	{"a\u2066b\u2069.md", CodeInvalidPath},
	{"a\u200Eb.md", CodeInvalidPath},
	{"a\u061Cb.md", CodeInvalidPath},
	{"a\u200B.md", CodeInvalidPath},
	{"a\u200D.md", CodeInvalidPath},
	{"\uFEFFa.md", CodeInvalidPath},
	{"a\u2060.md", CodeInvalidPath},
	{"a\u00AD.md", CodeInvalidPath},
	{"a\u3164.md", CodeInvalidPath},     // Hangul filler
	{"a\U000E0041.md", CodeInvalidPath}, // tag character
	{"a\u2028.md", CodeInvalidPath},
	{"a\uFFFF.md", CodeInvalidPath},
	{"a\xff.md", CodeInvalidPath},
	{"a\uFF0Fb.md", CodeInvalidPath},
	{"..\uFF0Fx.md", CodeInvalidPath},
	{"a\u2215b.md", CodeInvalidPath},
	{"a\u2044b.md", CodeInvalidPath},
	{"a\uFF3Cb.md", CodeInvalidPath},
	{"\u2024\u2024/x.md", CodeInvalidPath},
	{"\u2025/x.md", CodeInvalidPath},
	{"\uFF0E\uFF0E/x.md", CodeInvalidPath},
	{"\uFF0E/x.md", CodeInvalidPath},
	{"\u2026/x.md", CodeInvalidPath},
	{strings.Repeat("a", MaxSegmentBytes+1) + ".md", CodeInvalidPath},
	{strings.Repeat("a/", MaxPathBytes/2) + "x.md", CodeInvalidPath},
	{"../x.md", CodePathEscape},
	{"a/../../x.md", CodePathEscape},
	{`..\x.md`, CodePathEscape},
	{`a\..\..\x.md`, CodePathEscape},
	{"a/b/../../../x.md", CodePathEscape},
	{"..", CodePathEscape},
	{"/etc/passwd", CodePathEscape},
	{"/", CodePathEscape},
	{`\x.md`, CodePathEscape},
	{`C:\x.md`, CodePathEscape},
	{"C:x.md", CodePathEscape},
	{"c:/x.md", CodePathEscape},
	{`\\server\share\x.md`, CodePathEscape},
	{`\\?\C:\x.md`, CodePathEscape},
	{"//server/x.md", CodePathEscape},
	{"a.md:stream", CodePathEscape},
	{"dir/a:b.md", CodePathEscape},
	{"file:///etc/passwd", CodePathEscape},
	{"....//x.md", CodeHiddenSegment},
	{".../x.md", CodeHiddenSegment},
	{".git/config", CodeHiddenSegment},
	{"a/.obsidian/x.md", CodeHiddenSegment},
	{".trash/x.md", CodeHiddenSegment},
	{".env", CodeHiddenSegment},
	{".git/../a.md", CodeHiddenSegment},
	{`a\.git\x.md`, CodeHiddenSegment},
}

func TestCleanRefuses(t *testing.T) {
	for _, tt := range hostileClean {
		got, err := Clean(tt.in)
		if err == nil {
			t.Errorf("Clean(%q) = %q, want %s", tt.in, got, tt.code)
			continue
		}
		if c := CodeOf(err); c != tt.code {
			t.Errorf("Clean(%q): code %s, want %s (%v)", tt.in, c, tt.code, err)
		}
		checkMessage(t, err)
	}
}

// checkMessage asserts the shape of an error message: one line, starting with
// the code, with nothing unprintable in it.
func checkMessage(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	code := CodeOf(err)
	if !strings.HasPrefix(msg, string(code)+": path \"") {
		t.Errorf("message %q does not start with %q", msg, code)
	}
	for _, r := range msg {
		if mustEscape(r) {
			t.Errorf("message %q holds unprintable rune U+%04X", msg, r)
		}
	}
}

func TestCheckPolicy(t *testing.T) {
	tests := []struct {
		rel  string
		acc  Access
		code Code // "" = allowed
	}{
		{"a.md", Read, ""},
		{"a.md", Write, ""},
		{"a.markdown", Write, ""},
		{"a.MD", Read, ""},
		{"a.Markdown", Read, ""},
		{"node_modules/x.md", Read, CodeProtectedPath},
		{"a/node_modules/x.md", Read, CodeProtectedPath},
		{"a/Node_Modules/x.md", Move, CodeProtectedPath},
		{"node_modules./x.md", Write, CodeProtectedPath},
		{"_templates/wiki.md", Read, ""},
		{"_templates/wiki.md", Write, CodeProtectedPath},
		{"_templates/wiki.md", Move, CodeProtectedPath},
		{"_Templates/wiki.md", Write, CodeProtectedPath},
		{"_templates /wiki.md", Write, CodeProtectedPath},
		{"_templates./wiki.md", Write, CodeProtectedPath},
		{"02-wiki/_templates/x.md", Write, CodeProtectedPath},
		{"99-archive/old.md", Read, ""},
		{"99-archive/old.md", Move, ""},
		{"99-archive/old.md", Write, CodeProtectedPath},
		{"99-Archive/old.md", Write, CodeProtectedPath},
		{"99-archive/sub/old.md", Write, CodeProtectedPath},
		{"02-wiki/99-archive/x.md", Write, ""}, // only the top-level folder is the archive
		{"99-archive.md", Write, ""},
		{"x.txt", Read, CodeInvalidExtension},
		{"x.md.exe", Read, CodeInvalidExtension},
		{"README", Read, CodeInvalidExtension},
		{"x.md ", Read, CodeInvalidExtension},
		{"x.md.", Read, CodeInvalidExtension},
		{"x.mdx", Read, CodeInvalidExtension},
		{"dir.md/x", Write, CodeInvalidExtension},
		{"./a.md", Read, CodeInvalidPath},
		{"dir//a.md", Read, CodeInvalidPath},
		{"../a.md", Read, CodePathEscape},
		{".git/a.md", Read, CodeHiddenSegment},
		{"a.md", Access(7), CodeProtectedPath},
	}
	for _, tt := range tests {
		err := CheckPolicy(tt.rel, tt.acc)
		if got := CodeOf(err); got != tt.code {
			t.Errorf("CheckPolicy(%q, %v) = %v, want code %q", tt.rel, tt.acc, err, tt.code)
		}
		if err != nil {
			checkMessage(t, err)
		}
	}
}

func TestIsIgnored(t *testing.T) {
	tests := map[string]bool{
		"a.md":                   false,
		"dir/a.md":               false,
		"99-archive/a.md":        false,
		".git/config":            true,
		"a/.obsidian/x.md":       true,
		".trash/x.md":            true,
		"node_modules/x/y.md":    true,
		"a/node_modules/y.md":    true,
		"_templates/wiki.md":     true,
		"a/_Templates/wiki.md":   true,
		".hidden.md":             true,
		"notes/_templatesx/a.md": false,
	}
	for in, want := range tests {
		if got := IsIgnored(in); got != want {
			t.Errorf("IsIgnored(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsNoteName(t *testing.T) {
	tests := map[string]bool{
		"a.md": true, "a.MD": true, "a.markdown": true, "dir/a.MarkDown": true,
		"a.txt": false, "a.md.exe": false, "md": false, "a.mdx": false, "a": false, "a.md/": false,
	}
	for in, want := range tests {
		if got := IsNoteName(in); got != want {
			t.Errorf("IsNoteName(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsArchived(t *testing.T) {
	tests := map[string]bool{
		"99-archive/a.md": true, "99-archive/x/a.md": true, "99-Archive/a.md": true,
		"99-archive.md": false, "a/99-archive/b.md": false, "a.md": false,
	}
	for in, want := range tests {
		if got := IsArchived(in); got != want {
			t.Errorf("IsArchived(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := Clean("\u202Egnp.md")
	want := `INVALID_PATH: path "\u202egnp.md": contains invisible or bidirectional formatting character U+202E`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	_, err = Clean("a\x00\nb")
	if got := err.Error(); !strings.HasPrefix(got, `INVALID_PATH: path "a\x00\nb": `) {
		t.Errorf("NUL and newline not escaped: %s", got)
	}
	_, err = Clean("../" + strings.Repeat("x", 500))
	if got := err.Error(); !strings.Contains(got, "… (truncated)") || len(got) > 400 {
		t.Errorf("long input not cut: %d bytes: %s", len(got), got)
	}
	e := &Error{Code: CodeNotFound, Path: "a.md", Reason: "evil\nreason\u202e"}
	if got := e.Error(); got != `NOT_FOUND: path "a.md": evil\nreason\u202e` {
		t.Errorf("reason not escaped: %s", got)
	}

	wrapped := fmt.Errorf("get note: %w", err)
	if CodeOf(wrapped) != CodePathEscape {
		t.Errorf("CodeOf(wrapped) = %q", CodeOf(wrapped))
	}
	if api.CodeOf(wrapped) != string(CodePathEscape) {
		t.Errorf("api.CodeOf(wrapped) = %q", api.CodeOf(wrapped))
	}
	if CodeOf(errors.New("plain")) != "" || CodeOf(nil) != "" {
		t.Error("CodeOf of a foreign error is not empty")
	}
}

func TestDisplayPath(t *testing.T) {
	tests := map[string]string{
		"a.md":                   "a.md",
		"a\x1bb.md":              `a\x1bb.md`,
		"a\u202eb.md":            `a\u202eb.md`,
		`quote"back\.md`:         `quote"back\.md`,
		"bad\xffutf8.md":         `bad\xffutf8.md`,
		"日本語/ノート.md":             "日本語/ノート.md",
		strings.Repeat("é", 250): strings.Repeat("é", 200) + "…",
	}
	for in, want := range tests {
		if got := DisplayPath(in); got != want {
			t.Errorf("DisplayPath(%q) = %q, want %q", in, got, want)
		}
	}
}
