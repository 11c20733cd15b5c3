package vault

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLineIndexMatchesSplit: the lines located are those of the text with
// every "\r\n" made "\n" and split at "\n", for texts of every shape (empty,
// lone "\r", "\r\r\n", a last line with or without its end, invalid UTF-8).
func TestLineIndexMatchesSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	alphabet := []string{"a", "b", " ", "\t", "\n", "\r", "\r\n", "é", "日本", "\xff", "\xe2\x82", "word "}
	texts := []string{"", "\n", "\r", "\r\n", "\r\r\n", "a\r", "a\r\nb\r", "\n\n\n", "x"}
	for range 2000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		want := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
		// Lines located as far as asked: each line read right after upTo
		// reached it is the line read once every newline is known.
		lazy := newLineIndex(text)
		for k := 1; k <= len(want)+1; k++ {
			n := lazy.upTo(k)
			if n != min(k, len(want)) {
				t.Fatalf("%q: upTo(%d) = %d, %d lines", text, k, n, len(want))
			}
			if got := lazy.lines(n, n)[0]; got != want[n-1] {
				t.Fatalf("%q: line %d after upTo = %q, want %q", text, n, got, want[n-1])
			}
		}
		lx := newLineIndex(text)
		if lx.count() != len(want) {
			t.Fatalf("%q: %d lines, want %d", text, lx.count(), len(want))
		}
		got := lx.lines(1, lx.count())
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%q: line %d = %q, want %q", text, k+1, got[k], want[k])
			}
			if lx.blank(k+1) != (strings.TrimSpace(want[k]) == "") {
				t.Fatalf("%q: line %d blank = %v", text, k+1, lx.blank(k+1))
			}
			if n := runeCount(want[k]); n != utf8.RuneCountInString(want[k]) {
				t.Fatalf("runeCount(%q) = %d, want %d", want[k], n, utf8.RuneCountInString(want[k]))
			}
		}
		if n := runeCount(text); n != utf8.RuneCountInString(text) {
			t.Fatalf("runeCount(%q) = %d, want %d", text, n, utf8.RuneCountInString(text))
		}
	}
}

// TestMeasureCaps: measure counts exactly up to the cap, and beyond it
// gives the lines within windowScan bytes.
func TestMeasureCaps(t *testing.T) {
	short := strings.Repeat("ab\n", 10)
	lx := newLineIndex(short)
	lx.count()
	if size, last := lx.measure(1, 10); size != 30 || last != 10 {
		t.Fatalf("short: %d, %d", size, last)
	}
	line := strings.Repeat("x", 99) // 100 with its end
	long := strings.Repeat(line+"\n", 1000)
	lx = newLineIndex(long)
	lx.upTo(1000)
	size, last := lx.measure(1, 1000)
	if size < sizeCap || size > sizeCap+100 {
		t.Fatalf("long: size %d, want about %d", size, sizeCap)
	}
	if want := windowScan / 100; last != want {
		t.Fatalf("long: last %d, want %d", last, want)
	}
	// A single line longer than the scan is still given.
	huge := newLineIndex(strings.Repeat("y", 2*windowScan) + "\nz")
	huge.count()
	if _, last := huge.measure(1, 2); last != 1 {
		t.Fatalf("huge: last %d", last)
	}
}
