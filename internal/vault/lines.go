package vault

import (
	"strings"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/index"
)

// lineIndex locates the lines of a note's text without splitting it: its
// lines are the text's split at "\n", a "\r" before the "\n" dropped (what
// splitting the text with every "\r\n" made "\n" gives). The newlines are
// found as far as the lines asked for (a hit in a long note's first chunk
// does not scan the rest).
type lineIndex struct {
	raw  string
	nl   []int32 // offset of every "\n" found so far
	next int     // where the search for the next one starts
	done bool    // every "\n" found
}

func newLineIndex(raw string) *lineIndex { return &lineIndex{raw: raw} }

// find locates the newlines ending lines up to k (all of them for k < 0).
func (x *lineIndex) find(k int) {
	if x.nl == nil && k > 0 {
		x.nl = make([]int32, 0, min(k, len(x.raw)+1))
	}
	for !x.done && (k < 0 || len(x.nl) < k) {
		i := strings.IndexByte(x.raw[x.next:], '\n')
		if i < 0 {
			x.done = true
			return
		}
		x.nl = append(x.nl, int32(x.next+i))
		x.next += i + 1
	}
}

// upTo returns min(k, the number of lines): k when the text has line k.
// The lines up to the one it returns can then be asked for.
func (x *lineIndex) upTo(k int) int {
	x.find(k)
	return min(k, len(x.nl)+1)
}

// count is the number of lines (a text without "\n" is one line).
func (x *lineIndex) count() int {
	x.find(-1)
	return len(x.nl) + 1
}

// bounds returns the byte range of line k (1-based, at most what upTo or
// count returned).
func (x *lineIndex) bounds(k int) (int, int) {
	a := 0
	if k > 1 {
		a = int(x.nl[k-2]) + 1
	}
	if k > len(x.nl) {
		return a, len(x.raw) // the last line: no "\n" follows, a "\r" stays
	}
	b := int(x.nl[k-1])
	if b > a && x.raw[b-1] == '\r' {
		b--
	}
	return a, b
}

// blank reports whether line k holds only white space.
func (x *lineIndex) blank(k int) bool {
	a, b := x.bounds(k)
	return len(strings.TrimSpace(x.raw[a:b])) == 0
}

// sizeCap bounds what measure counts: a chunk longer than everything a
// search may quote is cut whatever its exact length (see share).
const sizeCap = api.MaxQuotedChars + 1

// measure returns the characters of lines from..to, one more for each
// line's end, counted until they pass api.MaxQuotedChars, and the last line
// a snippet of them can need: to when they do not pass it, else the last
// one within the windowScan bytes that window searches.
func (x *lineIndex) measure(from, to int) (size, last int) {
	for k := from; k <= to; k++ {
		a, b := x.bounds(k)
		size += runeCount(x.raw[a:b]) + 1
		if size >= sizeCap {
			break
		}
	}
	if size < sizeCap {
		return size, to
	}
	scanned := 0
	for k := from; k <= to; k++ {
		a, b := x.bounds(k)
		scanned += b - a + 1
		if scanned > windowScan && k > from {
			return size, k - 1
		}
	}
	return size, to
}

// lines returns lines from..to, slices of the text.
func (x *lineIndex) lines(from, to int) []string {
	out := make([]string, 0, to-from+1)
	for k := from; k <= to; k++ {
		a, b := x.bounds(k)
		out = append(out, x.raw[a:b])
	}
	return out
}

// runeCount is utf8.RuneCountInString, with ASCII text (most lines of
// most notes) checked eight bytes at a time and not decoded.
func runeCount(s string) int {
	if index.IsASCII(s) {
		return len(s)
	}
	return utf8.RuneCountInString(s)
}
