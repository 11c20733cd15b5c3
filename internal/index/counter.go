package index

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Counter counts, in text after text, the tokens (as Tokens emits them) that
// are among a set of analyzed terms: what CountTerms does, for the many
// lines a snippet window is chosen from.
//
// An ASCII text is counted without tokenizing it when every term is ASCII
// and none is a symbol alias or a word an alias swallows (node, js, net):
// in ASCII a token is a run of letters, digits and hyphens lowercased with
// its edge hyphens trimmed, or, when it holds a hyphen, that whole and each
// part. A term is never a stopword (it went through the same rules), so a
// run equal to one is a token of it. Any other text is tokenized.
type Counter struct {
	an             *Analyzer
	terms          map[string]bool
	list           []string
	fast           bool // ASCII texts are counted without tokenizing
	minLen, maxLen int  // of the terms, in bytes
}

// aliasWords are the words a symbol alias takes from the text it replaces
// ("node.js" is one token, nodejs; "node" and "js" are not emitted).
var aliasWords = [...]string{"node", "js", "net"}

// NewCounter returns a counter of terms (analyzed terms, as QueryTerms
// returns them).
func (a *Analyzer) NewCounter(terms []string) *Counter {
	c := &Counter{an: a, terms: make(map[string]bool, len(terms)), fast: true, minLen: MaxTokenRunes + 1}
	for _, t := range terms {
		if c.terms[t] {
			continue
		}
		c.terms[t] = true
		c.list = append(c.list, t)
		c.minLen, c.maxLen = min(c.minLen, len(t)), max(c.maxLen, len(t))
		if !IsASCII(t) || isAliasToken(t) || isAliasWord(t) {
			c.fast = false
		}
	}
	return c
}

func isAliasWord(t string) bool { return slices.Contains(aliasWords[:], t) }

// Count returns how many tokens of text are among the counter's terms.
func (c *Counter) Count(text string) int {
	if len(c.list) == 0 {
		return 0
	}
	if !IsASCII(text) {
		return c.an.CountTerms(text, c.terms)
	}
	if !c.fast {
		if !asciiMayEmit(text, c.list) {
			return 0
		}
		return c.an.CountTerms(text, c.terms)
	}
	n := 0
	for i := 0; i < len(text); {
		if wordBytes[text[i]] == 0 {
			i++
			continue
		}
		j, seen := asciiRun(text, i)
		w := text[i:j]
		i = j
		if len(w) < c.minLen {
			continue // no part of it is as long as a term
		}
		if seen&wbHyphen == 0 {
			n += c.match(w)
			continue
		}
		w = trimHyphensString(w)
		n += c.match(w) // the word itself, hyphenated or not
		if strings.IndexByte(w, '-') < 0 {
			continue
		}
		for w != "" {
			k := strings.IndexByte(w, '-')
			if k < 0 {
				n += c.match(w)
				break
			}
			if k > 0 {
				n += c.match(w[:k])
			}
			w = w[k+1:]
		}
	}
	return n
}

// match is 1 when the ASCII word w, lowercased, is one of the terms.
func (c *Counter) match(w string) int {
	if len(w) < c.minLen || len(w) > c.maxLen {
		return 0
	}
	for _, t := range c.list {
		if len(t) == len(w) && equalLowerASCII(w, t) {
			return 1
		}
	}
	return 0
}

// equalLowerASCII reports whether the ASCII w lowercased is t (of w's length).
func equalLowerASCII(w, t string) bool {
	for k := 0; k < len(w); k++ {
		if lowerASCII(w[k]) != t[k] {
			return false
		}
	}
	return true
}

// IsASCII reports whether s is all ASCII, eight bytes at a time.
func IsASCII(s string) bool {
	for len(s) >= 8 {
		_ = s[7]
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
