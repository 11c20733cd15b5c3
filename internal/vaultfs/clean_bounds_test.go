package vaultfs

import (
	"strconv"
	"strings"
	"testing"
)

// deepPath is a path of n segments: n-1 folders "a" and the note "x.md".
func deepPath(n int) string { return strings.Repeat("a/", n-1) + "x.md" }

// longPath is a path of exactly n bytes (n >= 24) with no segment over 200
// bytes: folders of 200 bytes, then a note name filling the rest.
func longPath(n int) string {
	var b strings.Builder
	for b.Len()+201+24 <= n {
		b.WriteString(strings.Repeat("f", 200) + "/")
	}
	b.WriteString(strings.Repeat("n", n-b.Len()-len(".md")) + ".md")
	return b.String()
}

// boundCases are the path limits, each at the limit and one past it. limit
// is what the refusal's message must name.
var boundCases = []struct {
	name  string
	in    string
	ok    bool
	limit string
}{
	{"segment at the limit", strings.Repeat("s", MaxSegmentBytes-3) + ".md", true, ""},
	{"segment past the limit", strings.Repeat("s", MaxSegmentBytes-2) + ".md", false, strconv.Itoa(MaxSegmentBytes)},
	// "é" is two bytes: the limit counts bytes, not characters.
	{"multibyte segment at the limit", "d/" + strings.Repeat("é", (MaxSegmentBytes-3)/2) + ".md", true, ""},
	{"multibyte segment past the limit", "d/" + strings.Repeat("é", (MaxSegmentBytes-3)/2) + "x.md", false, strconv.Itoa(MaxSegmentBytes)},
	{"folder name past the limit", strings.Repeat("s", MaxSegmentBytes+1) + "/x.md", false, strconv.Itoa(MaxSegmentBytes)},
	{"depth at the limit", deepPath(MaxPathSegments), true, ""},
	{"depth past the limit", deepPath(MaxPathSegments + 1), false, strconv.Itoa(MaxPathSegments)},
	{"length at the limit", longPath(MaxPathBytes), true, ""},
	{"length past the limit", longPath(MaxPathBytes + 1), false, strconv.Itoa(MaxPathBytes)},
	{"2,046 folders", deepPath(2047), false, strconv.Itoa(MaxPathBytes)},
	{"depth past the limit behind ./ segments", strings.Repeat("./", 400) + deepPath(MaxPathSegments+1), false, strconv.Itoa(MaxPathSegments)},
}

func TestCleanBounds(t *testing.T) {
	if got := longPath(MaxPathBytes); len(got) != MaxPathBytes {
		t.Fatalf("longPath made %d bytes", len(got))
	}
	for _, tt := range boundCases {
		got, err := Clean(tt.in)
		if tt.ok {
			if err != nil || got != tt.in {
				t.Errorf("%s: Clean = %q, %v; want the path back", tt.name, got, err)
			}
			continue
		}
		if CodeOf(err) != CodeInvalidPath {
			t.Errorf("%s: Clean = %q, %v; want INVALID_PATH", tt.name, got, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.limit) || strings.ContainsAny(msg, "\n\r") {
			t.Errorf("%s: message does not name the limit %s on one line: %s", tt.name, tt.limit, msg)
		}
	}
}
