package index

import "slices"

// aliasTokens are the tokens the tokenizer emits for symbols (see alias):
// the only tokens of an ASCII text that are not a lowercase slice of it.
var aliasTokens = [...]string{"cpp", "csharp", "fsharp", "nodejs", "dotnet"}

// MayEmit reports whether Tokens(text) may emit one of terms (analyzed
// terms, as QueryTerms returns them). It answers false only when no token
// of text can be one of them, much faster than tokenizing: every token of
// an ASCII text is a lowercase slice of it or a symbol alias, so a text
// holding none of the terms case-insensitively cannot emit one. A text
// with any other byte is always "may".
func MayEmit(text string, terms []string) bool {
	return !IsASCII(text) || asciiMayEmit(text, terms)
}

// asciiMayEmit is MayEmit of an ASCII text.
func asciiMayEmit(text string, terms []string) bool {
	for _, t := range terms {
		if isAliasToken(t) || containsFoldASCII(text, t) {
			return true
		}
	}
	return false
}

func isAliasToken(t string) bool { return slices.Contains(aliasTokens[:], t) }

// containsFoldASCII reports whether the ASCII text s contains sub (lowercase)
// with s's letters compared lowercased. A sub with a non-ASCII byte is never
// in an ASCII s.
func containsFoldASCII(s, sub string) bool {
	n := len(sub)
	if n == 0 {
		return true
	}
	c0 := sub[0]
	for i := 0; i+n <= len(s); i++ {
		if lowerASCII(s[i]) != c0 {
			continue
		}
		j := 1
		for j < n && lowerASCII(s[i+j]) == sub[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// CountTerms returns how many tokens of text (as Tokens emits them) are in
// terms, without keeping any token: no copy of a folded word is made.
func (a *Analyzer) CountTerms(text string, terms map[string]bool) int {
	n := 0
	var t tokenizer
	t.emit = func(tok string, _ bool) {
		if terms[tok] {
			n++
		}
	}
	t.run(text)
	return n
}
