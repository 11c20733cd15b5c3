package index

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestCounterMatchesCountTerms: Counter.Count equals CountTerms on random
// texts of words, symbols and aliases, hyphens, case, digits and a few
// non-ASCII words, for term sets drawn from the texts' own tokens (so the
// fast path is taken) and with aliases and the words aliases swallow (so it
// is not).
func TestCounterMatchesCountTerms(t *testing.T) {
	pieces := []string{"Retry", "retry", "BACKOFF", "jitter", "rate-limit", "-rate-", "--", "a-b-c", "x--y", "c++", "C#", "f#",
		"Node.js", "node", ".NET", "net", "js", "dotnet", "go", "a", "the", "of", "HTTPServer", "x1", "2024", "café", "東京都",
		" ", " ", ",", ".", "(", ")", "[[", "]]", "_", "'s", "-", strings.Repeat("long", 20), "re-try-again"}
	an := NewAnalyzer("en")
	r := rand.New(rand.NewPCG(3, 5))
	vocab := map[string]bool{}
	texts := make([]string, 4000)
	for i := range texts {
		var b strings.Builder
		for range 1 + r.IntN(14) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		texts[i] = b.String()
		an.Tokens(texts[i], func(tok string) { vocab[tok] = true })
	}
	words := []string{"absent", "cpp", "nodejs", "node", "js", "net", "ret"}
	for w := range vocab {
		words = append(words, w)
	}
	slices.Sort(words)
	fast := 0
	for i, text := range texts {
		terms := []string{words[r.IntN(len(words))]}
		for range r.IntN(3) {
			terms = append(terms, words[(i*31+r.IntN(7))%len(words)])
		}
		for _, terms := range [][]string{terms, {"node", "retry"}, {"js"}, {"net", "jitter"}, {"rate", "limit", "rate-limit"}} {
			set := map[string]bool{}
			for _, q := range terms {
				set[q] = true
			}
			c := an.NewCounter(terms)
			if c.fast && IsASCII(text) {
				fast++
			}
			if got, want := c.Count(text), an.CountTerms(text, set); got != want {
				t.Fatalf("Count(%q) with %q = %d, CountTerms %d", text, terms, got, want)
			}
		}
	}
	if fast < len(texts) {
		t.Fatalf("only %d of %d texts took the fast path", fast, len(texts))
	}
}

func TestIsASCII(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", "abcdefg\x80", "\xffabcdefgh", "abcdefghé", "é"} {
		want := true
		for i := 0; i < len(s); i++ {
			want = want && s[i] < 0x80
		}
		if IsASCII(s) != want {
			t.Errorf("IsASCII(%q) = %v", s, !want)
		}
	}
}
