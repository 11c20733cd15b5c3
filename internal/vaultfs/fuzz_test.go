package vaultfs

import (
	"math/rand/v2"
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
		sameAsRebuilt(t, in)
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

// sameAsRebuilt fails when Clean's way for a path already in clean form
// (cleanAsIs) answers in differently from rebuilding it (cleanRebuild):
// another result, or another refusal.
func sameAsRebuilt(t *testing.T, in string) {
	t.Helper()
	out, ok, err := cleanAsIs(in)
	if !ok && err == nil {
		return // not in clean form: rebuilt
	}
	rout, rerr := cleanRebuild(in)
	if out != rout || (err == nil) != (rerr == nil) || err != nil && err.Error() != rerr.Error() {
		t.Fatalf("%q: as it is %q, %v; rebuilt %q, %v", in, out, err, rout, rerr)
	}
}

// Paths made of every kind of segment (plain, hidden, too long, made of
// dot-like characters, empty, ".", "..", with '\\'), up to past the segment
// limit: checking a path in clean form as it is answers as rebuilding it.
func TestCleanAsIsMatchesRebuild(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	kinds := []string{"a", "note.md", "Ünïcode", ".hidden", strings.Repeat("x", MaxSegmentBytes), strings.Repeat("y", MaxSegmentBytes+1),
		"\u2024\u2024", "", ".", "..", `b\c`, "..a", "a..", "CON"}
	asIs := 0
	for range 20000 {
		n := 1 + r.IntN(MaxPathSegments+3)
		if r.IntN(4) > 0 {
			n = 1 + r.IntN(6)
		}
		deep := r.IntN(4) == 0 // around the segment limit, mostly plain
		if deep {
			n = MaxPathSegments - 2 + r.IntN(5)
		}
		segs := make([]string, n)
		for i := range segs {
			switch {
			case deep && r.IntN(40) > 0:
				segs[i] = "a"
			case r.IntN(3) == 0:
				segs[i] = kinds[r.IntN(len(kinds))]
			default:
				segs[i] = kinds[r.IntN(3)]
			}
		}
		in := strings.Join(segs, "/")
		sameAsRebuilt(t, in)
		if _, ok, _ := cleanAsIs(in); ok {
			asIs++
		}
	}
	if asIs < 1000 {
		t.Fatalf("only %d paths taken as they are", asIs)
	}
}
