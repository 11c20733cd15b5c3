package vaultfs

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClean checks Clean's invariants on any input:
//   - it never panics;
//   - an error is an *Error with a known code and a one-line, escaped message;
//   - a result has no ".." or "." or empty segment, no leading '/', no '\',
//     no ':', no hidden segment, no control or invisible character, is
//     within the limits (MaxPathBytes, MaxSegmentBytes, MaxPathSegments), is
//     idempotent (Clean(result) == result), and joined to a vault folder stays
//     under it.
func FuzzClean(f *testing.F) {
	for _, tt := range hostileClean {
		f.Add(tt.in)
	}
	for _, tt := range boundCases {
		f.Add(tt.in)
	}
	for _, s := range []string{
		"a.md", "./a.md", `dir\a.md`, "dir//a.md", "x/../dir/a.md", "%2e%2e/x.md",
		"a/b/../c.md", "a/./b/", "会议：记录.md", "🗂️ hub.md", "..a", "a..", "a/...b",
	} {
		f.Add(s)
	}
	vault := filepath.Join(f.TempDir(), "vault")
	codes := map[Code]bool{
		CodeInvalidPath: true, CodePathEscape: true, CodeHiddenSegment: true,
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Clean(in)
		if err != nil {
			if !codes[CodeOf(err)] {
				t.Fatalf("Clean(%q): unexpected code in %v", in, err)
			}
			msg := err.Error()
			for _, r := range msg {
				if mustEscape(r) {
					t.Fatalf("Clean(%q): message holds U+%04X: %q", in, r, msg)
				}
			}
			return
		}
		if got == "" || strings.HasPrefix(got, "/") || strings.ContainsAny(got, `\:`) || !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q", in, got)
		}
		segs := strings.Split(got, "/")
		if len(got) > MaxPathBytes || len(segs) > MaxPathSegments {
			t.Fatalf("Clean(%q) = %q: past the limits (%d bytes, %d segments)", in, got, len(got), len(segs))
		}
		for _, seg := range segs {
			if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") || onlyDotLike(seg) || len(seg) > MaxSegmentBytes {
				t.Fatalf("Clean(%q) = %q: bad segment %q", in, got, seg)
			}
		}
		for _, r := range got {
			if badRune(r) != "" {
				t.Fatalf("Clean(%q) = %q holds U+%04X", in, got, r)
			}
		}
		again, err := Clean(got)
		if err != nil || again != got {
			t.Fatalf("Clean(%q) = %q, but Clean(%q) = %q, %v", in, got, got, again, err)
		}
		joined := filepath.Join(vault, filepath.FromSlash(got))
		rel, err := filepath.Rel(vault, joined)
		if err != nil || !strings.HasPrefix(joined, vault+string(filepath.Separator)) || !filepath.IsLocal(rel) {
			t.Fatalf("Clean(%q) = %q escapes %q: %q", in, got, vault, joined)
		}
	})
}
