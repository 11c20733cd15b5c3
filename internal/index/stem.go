package index

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/turkish"
)

// langID is a note's (or the profile's) language, as far as stemming goes.
type langID uint8

const (
	langNone langID = iota // unknown or no stemmer (e.g. CJK text)
	langEN
	langPT
	langES
	langDE
	langRU
	langFR
	langIT
	langNL
	langSV
	langDA
	langNO
	langFI
	langHU
	langRO
	langTR
	numLangs
)

var langCodes = [numLangs]string{"", "en", "pt", "es", "de", "ru", "fr", "it", "nl", "sv", "da", "no", "fi", "hu", "ro", "tr"}

var stemFuncs = [numLangs]func(*snowballstem.Env) bool{
	langEN: english.Stem, langPT: portuguese.Stem, langES: spanish.Stem, langDE: german.Stem,
	langRU: russian.Stem, langFR: french.Stem, langIT: italian.Stem, langNL: dutch.Stem,
	langSV: swedish.Stem, langDA: danish.Stem, langNO: norwegian.Stem, langFI: finnish.Stem,
	langHU: hungarian.Stem, langRO: romanian.Stem, langTR: turkish.Stem,
}

// stopLang maps a stopword language to its langID.
var stopLang = [numStopLangs]langID{stopEN: langEN, stopPT: langPT, stopES: langES, stopDE: langDE}

// parseLang reads a language code ("pt", "pt-BR", "pt_BR", "EN"); unknown -> langNone.
func parseLang(s string) langID {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexAny(s, "-_"); i >= 0 {
		s = s[:i]
	}
	switch s {
	case "nb", "nn":
		s = "no"
	}
	for l, c := range langCodes {
		if c != "" && c == s {
			return langID(l)
		}
	}
	return langNone
}

// detectLang picks a note's language from its text statistics: Cyrillic
// script -> Russian; mostly CJK -> none; Latin script -> the language with
// the most stopword hits (en, pt, es, de), the profile language when the
// evidence is thin (fewer than 3 hits) or tied.
func detectLang(st *textStats, fallback langID) langID {
	if st.cyrillic > st.latin {
		return langRU
	}
	if st.cjk > st.latin {
		return langNone
	}
	best, bestN, tied := -1, 0, false
	for l, n := range st.stop {
		switch {
		case n > bestN:
			best, bestN, tied = l, n, false
		case n == bestN && n > 0:
			tied = true
		}
	}
	if bestN < 3 {
		return fallback
	}
	if tied {
		// The fallback wins a tie it takes part in; otherwise the first.
		for l, n := range st.stop {
			if n == bestN && stopLang[l] == fallback {
				return fallback
			}
		}
	}
	return stopLang[best]
}

// stemmable reports whether a term is worth stemming: letters only (no
// digits, no hyphen), not CJK.
func stemmable(t string) bool {
	if len(t) < 3 {
		return false
	}
	for i := 0; i < len(t); {
		c := t[i]
		if c < utf8.RuneSelf {
			if c < 'a' || c > 'z' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(t[i:])
		if isCJK(r) || !(unicode.IsLetter(r) || unicode.Is(unicode.M, r)) {
			return false
		}
		i += size
	}
	return true
}

// stemmer stems terms; not safe for concurrent use (one per goroutine).
type stemmer struct{ env *snowballstem.Env }

func newStemmer() *stemmer { return &stemmer{env: snowballstem.NewEnv("")} }

// stem returns the stem of a folded term in a language, "" when the language
// has no stemmer.
func (s *stemmer) stem(l langID, t string) string {
	f := stemFuncs[l]
	if f == nil {
		return ""
	}
	s.env.SetCurrent(t)
	f(s.env)
	return s.env.Current()
}

// stemKeys returns the stem keys of a stemmable folded term in a language:
// the stem of the term, and, when the term was written with accents (orig)
// and that gives another stem, the folded stem of orig ("" otherwise).
func stemKeys(st *stemmer, l langID, term, orig string) (string, string) {
	k1 := stemKey(l, st.stem(l, term))
	if orig == "" {
		return k1, ""
	}
	k2 := stemKey(l, fold(st.stem(l, orig)))
	if k2 == k1 {
		return k1, ""
	}
	return k1, k2
}

// stemKey is the key of a stem in the stem term space: the language byte,
// then the stem, so each language has its own space.
func stemKey(l langID, stem string) string {
	return string(rune('A'+l)) + stem
}
