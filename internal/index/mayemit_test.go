package index

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMayEmitNeverMisses: whenever Tokens emits one of the terms, MayEmit
// says it may (random texts of words, symbols, hyphens, case and a few
// non-ASCII words; terms drawn from the texts' own tokens and others).
func TestMayEmitNeverMisses(t *testing.T) {
	pieces := []string{"Retry", "retry", "BACKOFF", "jitter", "rate-limit", "-rate-", "c++", "C#", "f#", "Node.js", ".NET",
		"dotnet", "go", "a", "the", "HTTPServer", "x1", "2024", "café", "naïve", "東京都", "Привет", " ", " ", ",", ".", "(", ")", "[[", "]]", "_", "'s"}
	an := NewAnalyzer("en")
	r := rand.New(rand.NewPCG(7, 9))
	all := map[string]bool{}
	texts := make([]string, 3000)
	for i := range texts {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		texts[i] = b.String()
		an.Tokens(texts[i], func(tok string) { all[tok] = true })
	}
	vocab := []string{"absent", "cpp", "csharp", "fsharp", "nodejs", "dotnet", "ret", "server"}
	for tok := range all {
		vocab = append(vocab, tok)
	}
	misses, skips := 0, 0
	for i, text := range texts {
		terms := []string{vocab[r.IntN(len(vocab))], vocab[(i*31)%len(vocab)]}
		emits := false
		an.Tokens(text, func(tok string) {
			for _, q := range terms {
				emits = emits || tok == q
			}
		})
		may := MayEmit(text, terms)
		if emits && !may {
			misses++
			t.Errorf("MayEmit(%q, %q) = false, but Tokens emits one of them", text, terms)
		}
		if !may {
			skips++
		}
	}
	if skips == 0 {
		t.Fatal("MayEmit never said no: the test checks nothing")
	}
}

func TestContainsFoldASCII(t *testing.T) {
	for _, c := range []struct {
		s, sub string
		want   bool
	}{
		{"Exponential BACKOFF here", "backoff", true},
		{"back off", "backoff", false},
		{"", "a", false},
		{"abc", "", true},
		{"ab", "abc", false},
		{"xxABC", "abc", true},
		{"cafe", "café", false},
	} {
		if got := containsFoldASCII(c.s, c.sub); got != c.want {
			t.Errorf("containsFoldASCII(%q, %q) = %v, want %v", c.s, c.sub, got, c.want)
		}
	}
}

// TestCountTermsAsTokens: CountTerms counts what Tokens emits.
func TestCountTermsAsTokens(t *testing.T) {
	an := NewAnalyzer("en")
	terms := map[string]bool{"retry": true, "cpp": true, "café": false, "cafe": true, "東京": true}
	for _, text := range []string{"", "Retry, retry and RETRY-later", "C++ and c# in a café", "東京都 retry", "nothing here"} {
		want := 0
		an.Tokens(text, func(tok string) {
			if terms[tok] {
				want++
			}
		})
		if got := an.CountTerms(text, terms); got != want {
			t.Errorf("CountTerms(%q) = %d, Tokens counted %d", text, got, want)
		}
	}
}
