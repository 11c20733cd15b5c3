package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escape makes text from the vault (or from the client) safe to show on one
// line of server output: control characters other than tab, format
// characters (bidi overrides and isolates, zero-width characters, the
// invisible "tag" characters of U+E0000), line and paragraph separators and
// the blank Hangul fillers become visible escapes (`\x1b`, `\u202e`,
// `\U000e0041`); bytes that are not UTF-8 become `\xNN`. Everything else,
// tabs, quotes and backslashes included, is kept as it is: snippets are
// mostly prose and code, and an agent copies code from them.
//
// Format characters include the zero-width joiner, so an emoji sequence
// built with it shows its joiners escaped; that is the price of never
// passing invisible text through.
func escape(s string) string {
	return Escape(s)
}

// Escape is escape for other front ends of the same vault text (the terminal
// search of the command line).
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case hidden(r):
			writeEscaped(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		// Eight bytes at a time while they are printable ASCII (most of a
		// vault's text); any other byte is looked at alone below.
		for i+8 <= len(s) && plainASCII8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c != '\t' && (c < 0x20 || c == 0x7f) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || hidden(r) {
			return true
		}
		i += size
	}
	return false
}

// plainASCII8 reports whether the eight bytes of s are all printable
// ASCII, 0x20 to 0x7e: none with the high bit set, none below 0x20 (tab
// included: the byte loop lets it through), none equal to 0x7f.
func plainASCII8(s string) bool {
	_ = s[7]
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte below 0x20 borrows in w-0x20 per byte and has its high bit set
	// in the difference; w^0x7f is zero, and so below 0x01, for a 0x7f.
	// Without high bits in w, no borrow crosses a byte, so the tests are exact.
	less20 := (w - 0x20*ones) &^ w
	is7f := ((w ^ 0x7f*ones) - ones) &^ (w ^ 0x7f*ones)
	return (w|less20|is7f)&highs == 0
}

// hiddenBMP has a bit set for each rune of the Basic Multilingual Plane
// that hiddenRune reports, so that text outside ASCII (accents, dashes,
// CJK) is checked with one lookup a rune instead of a walk of the Unicode
// tables.
//
// It is made from the tables' ranges, not by asking hiddenRune of each of
// the 65,536 runes (which cost every process start 2-4 ms before its
// first answer); a test holds the two equal.
var hiddenBMP = func() *[1 << 16 / 64]uint64 {
	var t [1 << 16 / 64]uint64
	set := func(r rune) {
		if r < 1<<16 && r != '\t' {
			t[r/64] |= 1 << (r % 64)
		}
	}
	for r := rune(0); r <= unicode.MaxLatin1; r++ {
		if unicode.IsControl(r) {
			set(r)
		}
	}
	for _, rt := range []*unicode.RangeTable{unicode.Cf, unicode.Zl, unicode.Zp} {
		for _, rg := range rt.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				set(r)
			}
		}
	}
	for _, r := range hangulFillers {
		set(r)
	}
	return &t
}()

// hangulFillers are letters that render as nothing.
var hangulFillers = []rune{0x115F, 0x1160, 0x3164, 0xFFA0}

// hidden reports whether r must not reach the client as it is.
func hidden(r rune) bool {
	if r < 1<<16 {
		return hiddenBMP[r/64]&(1<<(r%64)) != 0
	}
	return hiddenRune(r)
}

// hiddenRune is hidden, from the Unicode tables.
func hiddenRune(r rune) bool {
	if r == '\t' {
		return false
	}
	if slices.Contains(hangulFillers, r) {
		return true
	}
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

func writeEscaped(b *strings.Builder, r rune) {
	switch {
	case r < 0x80:
		fmt.Fprintf(b, `\x%02x`, r)
	case r <= 0xFFFF:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

// quoteLines renders a snippet: every line prefixed with "> " and escaped.
// The line ending (LF or CRLF) is not part of a line, and one final line
// ending does not make an empty last line.
func quoteLines(b *strings.Builder, snippet string) {
	snippet = strings.TrimSuffix(snippet, "\n")
	for line := range strings.SplitSeq(snippet, "\n") {
		line = strings.TrimSuffix(line, "\r")
		b.WriteString("> ")
		b.WriteString(escape(line))
		b.WriteByte('\n')
	}
}
