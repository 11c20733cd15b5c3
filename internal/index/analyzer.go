// Package index is vaultmcp's search engine: the analyzer that turns text
// into terms, an in-memory inverted index over note chunks with BM25F
// scoring, stemmed and misspelling-tolerant matching, suggestions, filters,
// and incremental add/replace/remove.
//
// # Scoring
//
// The unit is a chunk. Its fields are weighted (defaults): heading 3.0 (the
// chunk's heading trail), title 3.0 (in the first chunk: the title, the file
// name when it reads differently from the title, and the aliases), tags 2.0
// (frontmatter tags in every chunk, inline tags in theirs), prose 1.0 and
// code 0.5. The fields form two groups, head (heading, title and tags) and
// body (prose and code), and a term's posting keeps the field-weighted
// frequency of each group, tf_head and tf_body. With L the chunk's weighted
// length (all fields) over the average of the live chunks, a query term t
// scores
//
//	tf~   = tf_body / (1 - 0.75 + 0.75 L) + tf_head / (1 - 0.25 + 0.25 L)
//	score = w x idf(t) x (k1 + 1) x tf~ / (tf~ + k1),  k1 = 1.2
//	idf   = ln(1 + (N - df + 0.5) / (df + 0.5))
//
// with w 1 for an exact match, StemWeight for a stem match and FuzzyWeight
// for a misspelling expansion (the best of the three per term), N the live
// chunks and link slots and df those holding t. A chunk's score is the sum
// over query terms, plus its title phrase and full title bonuses, times the note factors (0.3
// for type moc or daily, 0.4 under 99-archive/). Without head occurrences and
// link text this is plain BM25 (k1 1.2, b 0.75).
//
// The smaller b of the head group is BM25F's per-field length normalisation:
// a heading names the whole chunk, so a long chunk should dilute it less than
// a word of its prose (a note titled "Bookmarks" with a long first chunk was
// ranked below a short section headed "Bookmarks" elsewhere). Measured with
// `vaultmcp eval`, MRR@10 on the example vault, the Obsidian help in en,
// pt-br and zh, the Obsidian hub and the seed vault:
//
//	one b of 0.75 for all fields, no file name  0.917 0.750 0.764 0.893 0.712 0.929
//	+ file name as title text                   0.917 0.750 0.764 0.893 0.721 0.929
//	+ b_head 0.25                               0.917 0.764 0.764 0.893 0.725 0.929
//
// Every b_head from 0.2 to 0.6 is at least as good as 0.75 on every set.
// Normalising each group by its own length instead (textbook BM25F) won on
// help-en and the hub but lost 0.03-0.05 on pt-br and zh, where short bodies
// under long heading trails were overrated.
//
// # Link text and title phrases
//
// The texts other notes use when they link to a note (see links.go) are a
// field of their own, weighted 4.0, held in the note's link slot: a term
// matching it scores as above with the link slot's length normalised (b 1)
// against the average link slot, and joins the first chunk's score for the
// term as the better of the two plus half the other (linkOverlap). Only
// terms with an idf of at least 2 count in link text: a word in more than
// about one chunk in 7.4 ("notes", "plugin") names nothing.
//
// Two query words that follow each other in the query and in the note's
// title, file name or an alias (stopwords left out on both sides, CJK
// bigrams excepted) add TitlePhraseWeight x the mean of their two term
// factors (w x idf x (k1 + 1)) to the first chunk's score.
//
// Measured with `vaultmcp eval` on the sets above and the sets naming notes
// by other names (README, "Retrieval quality"); every existing set at least
// as good as before, each choice against its neighbours: link weight 4
// (1-8 tried), b 1 (0.5, 0.75), repetition counted 1 + floor(log2 notes)
// (once; log2 halved; 2 log2 - 1; (log2)^2), overlap 0.5 (0, 0.25, 0.75, 1,
// and a joint BM25F saturation of the two: help-en 0.750), minimum idf 2
// (1-3; help-en fell below its old figure without it), phrase weight 0.5
// (0.25 the same, 1 lost help-en), and the title weighted as a heading (3.5
// lost pt-br, 4 lost zh and help-en).
//
// A query that is the note's title, file name or an alias (its words in
// order, as analyzed: stopwords left out, case and accents folded; every
// word found as written, not through a misspelling) adds FullTitleWeight x
// the sum of its words' factors to the first chunk's score: the full title
// bonus. It is decided by a signature of each title's words kept per note
// (titleSig). On the Obsidian hub "dataview" ranked the Dataview plugin's
// own note 13th, below notes that say the word more often; it is first with
// the bonus. MRR@10 on the ten sets of the README at weights 0 (none),
// 0.25, 0.5, 0.75, 1, 2: help-en names 0.946, then 0.959 at every weight;
// the hub 0.752, then 0.762 at every weight; the hub's names 0.920 at 0.25
// and 0.5, 0.915 at 0.75 and 1, 0.912 at 2; the seven other sets unchanged
// at every weight. 0.5, as the phrase weight.
package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// Limits of the analyzer.
const (
	// MaxQueryChars is where a query is cut (in characters) before analysis.
	MaxQueryChars = 1024
	// MaxQueryTerms is the most distinct analyzed terms a query keeps.
	MaxQueryTerms = 64
	// MinTokenRunes and MaxTokenRunes bound a token's length; CJK text is
	// exempt (a lone ideograph is a token).
	MinTokenRunes = 2
	MaxTokenRunes = 64
)

// Analyzer turns text into index terms:
//
//   - Unicode NFD with combining marks stripped, then lowercase ("Ação" -> "acao");
//     plain ASCII skips the normalisation entirely;
//   - symbol aliases at word boundaries, before splitting: c++ -> cpp,
//     c# -> csharp, f# -> fsharp, node.js -> nodejs, .net -> dotnet;
//   - words are runs of letters, digits and hyphens; edge hyphens are trimmed;
//     a hyphenated word is emitted whole and then part by part, so
//     "exponential-backoff" is found by "backoff" and, better, by the whole
//     (measured with eval_test.go: MRR@10 0.774 with the parts, 0.743
//     without, in English; no change in Portuguese);
//   - tokens shorter than 2 or longer than 64 characters are dropped, and so
//     are English, Portuguese and Spanish stopwords;
//   - runs of Han, Hiragana, Katakana and Hangul become overlapping bigrams
//     ("日本語" -> "日本", "本語"); a lone CJK character is a token by itself.
//
// An Analyzer has no mutable state and is safe for concurrent use.
type Analyzer struct {
	lang langID
}

// NewAnalyzer returns the analyzer for a profile language ("en", "pt", "es",
// ...; "" means "en"). The language is the fallback when a note's language
// cannot be detected; the token rules are the same for every language.
func NewAnalyzer(lang string) *Analyzer {
	l := parseLang(lang)
	if l == langNone {
		l = langEN
	}
	return &Analyzer{lang: l}
}

// Tokens calls fn with each token of text, in order. The strings passed to fn
// may be kept.
func (a *Analyzer) Tokens(text string, fn func(tok string)) {
	var t tokenizer
	t.emit = func(tok string, scratch bool) {
		if scratch {
			tok = strings.Clone(tok)
		}
		fn(tok)
	}
	t.run(text)
}

// QueryTerms returns the distinct analyzed terms of a query, in order of
// first appearance, after cutting the query at MaxQueryChars characters and
// keeping at most MaxQueryTerms terms.
func (a *Analyzer) QueryTerms(query string) []string {
	qs := a.queryTerms(query)
	if qs == nil {
		return nil
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.term
	}
	return out
}

// qterm is a query term, with its accented lowercase form when it has one.
type qterm struct{ term, orig string }

func (a *Analyzer) queryTerms(query string) []qterm {
	terms, _ := a.querySeq(query)
	return terms
}

// querySeq returns the distinct analyzed terms of a query (as queryTerms)
// and the query's word sequence: for each token in order, the index of its
// term (a repeated word repeats its index; a hyphenated word is followed by
// its parts, as in the index).
func (a *Analyzer) querySeq(query string) ([]qterm, []int) {
	query = cutChars(query, MaxQueryChars)
	var out []qterm
	var seq []int
	var t tokenizer
	t.emit = func(tok string, scratch bool) {
		for i, q := range out {
			if q.term == tok {
				if len(seq) < 2*MaxQueryTerms {
					seq = append(seq, i)
				}
				return
			}
		}
		if len(out) >= MaxQueryTerms {
			return
		}
		if len(seq) < 2*MaxQueryTerms {
			seq = append(seq, len(out))
		}
		out = append(out, qterm{strings.Clone(tok), strings.Clone(t.orig)})
	}
	t.run(query)
	return out, seq
}

// cutChars returns the first n characters (runes) of s.
func cutChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// ASCII classes.
const (
	clSep uint8 = iota
	clLower
	clUpper
	clDigit
	clHyphen
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clDigit
	}
	t['-'] = clHyphen
	return t
}()

// textStats are what language detection needs, gathered while tokenizing.
type textStats struct {
	stop     [numStopLangs]int // stopword hits per language
	latin    int               // words in Latin script (incl. ASCII)
	cyrillic int               // words with Cyrillic letters
	cjk      int               // CJK runs
}

// tokenizer is the scanning state of one analysis. The zero value is ready
// once emit is set; buf is reused between runs.
type tokenizer struct {
	// emit receives each token; scratch says tok points into buf and is
	// only valid during the call.
	emit  func(tok string, scratch bool)
	buf   []byte
	stats *textStats // optional
	// orig, during emit, is the token as written but lowercase, with its
	// accents, when that differs from tok and tok has no hyphen (scratch
	// memory too); "" otherwise.
	orig string
	obuf []byte
}

func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		r == 0x30FC || r == 0x3005 // prolonged sound mark, iteration mark
}

// isWordRune: a non-ASCII rune that belongs in a (non-CJK) word.
func isWordRune(r rune) bool {
	if r < latinEnd {
		return latin[r].word
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// latin caches, for the Latin-1 and Latin Extended letters (the accented
// letters of European languages), what the slow path computes from the
// Unicode tables: a quarter of the cost of folding such a word.
const latinEnd = 0x250

var latin = func() (t [latinEnd]struct {
	word  bool
	lower rune
	fold  string
}) {
	for r := rune(0); r < latinEnd; r++ {
		e := &t[r]
		e.word = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
		e.lower = unicode.ToLower(r)
		e.fold = string(foldRune(nil, r, string(r)))
	}
	return t
}()

// boundaryAt reports whether a word may end just before text[p:].
func boundaryAt(text string, p int) bool {
	if p >= len(text) {
		return true
	}
	c := text[p]
	if c < utf8.RuneSelf {
		cl := asciiClass[c]
		return cl == clSep || cl == clHyphen
	}
	r, _ := utf8.DecodeRuneInString(text[p:])
	return !isWordRune(r) || isCJK(r)
}

// boundaryBefore reports whether a word may start at text[p:].
func boundaryBefore(text string, p int) bool {
	if p == 0 {
		return true
	}
	c := text[p-1]
	if c < utf8.RuneSelf {
		return asciiClass[c] == clSep
	}
	r, _ := utf8.DecodeLastRuneInString(text[:p])
	return !isWordRune(r) || isCJK(r)
}

// hasPrefixFold: ASCII case-insensitive prefix test (prefix is lowercase).
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// alias returns the alias token and the length of source it replaces when a
// symbol alias starts at text[i:] (which is at a word boundary).
func alias(text string, i int) (string, int) {
	rest := text[i:]
	switch rest[0] | 0x20 {
	case 'c':
		if hasPrefixFold(rest, "c++") && boundaryAt(text, i+3) {
			return "cpp", 3
		}
		if hasPrefixFold(rest, "c#") && boundaryAt(text, i+2) {
			return "csharp", 2
		}
	case 'f':
		if hasPrefixFold(rest, "f#") && boundaryAt(text, i+2) {
			return "fsharp", 2
		}
	case 'n':
		if hasPrefixFold(rest, "node.js") && boundaryAt(text, i+7) {
			return "nodejs", 7
		}
	case '.': // '.'|0x20 is '.'
		if hasPrefixFold(rest, ".net") && boundaryAt(text, i+4) && boundaryBefore(text, i) {
			return "dotnet", 4
		}
	}
	return "", 0
}

func (t *tokenizer) run(text string) {
	n := len(text)
	i := 0
	for i < n {
		c := text[i]
		if c < utf8.RuneSelf {
			cl := asciiClass[c]
			if cl == clSep {
				if c == '.' {
					if tok, l := alias(text, i); l > 0 {
						t.emitAlias(tok)
						i += l
						continue
					}
				}
				i++
				continue
			}
			if c|0x20 == 'c' || c|0x20 == 'f' || c|0x20 == 'n' {
				if tok, l := alias(text, i); l > 0 {
					t.emitAlias(tok)
					i += l
					continue
				}
			}
			i = t.word(text, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			i = t.cjk(text, i)
		case isWordRune(r):
			i = t.word(text, i)
		default:
			i += size
		}
	}
}

func (t *tokenizer) emitAlias(tok string) {
	if t.stats != nil {
		t.stats.latin++
	}
	t.emit(tok, false)
}

// cjk emits the bigrams of the CJK run starting at text[i:] and returns its end.
func (t *tokenizer) cjk(text string, i int) int {
	if t.stats != nil {
		t.stats.cjk++
	}
	prev := -1
	j := i
	for j < len(text) {
		r, size := utf8.DecodeRuneInString(text[j:])
		if !isCJK(r) {
			break
		}
		if prev >= 0 {
			t.emit(text[prev:j+size], false)
		}
		prev = j
		j += size
	}
	if prev == i { // a lone character
		t.emit(text[i:j], false)
	}
	return j
}

// wordBytes classifies bytes for word's scanning loop: an ASCII letter,
// digit or hyphen has wbWord set (with wbUpper or wbHyphen when it is one);
// a separator and every byte of a multi-byte character are 0.
const (
	wbWord uint8 = 1 << iota
	wbUpper
	wbHyphen
)

var wordBytes = func() (t [256]uint8) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch asciiClass[c] {
		case clLower, clDigit:
			t[c] = wbWord
		case clUpper:
			t[c] = wbWord | wbUpper
		case clHyphen:
			t[c] = wbWord | wbHyphen
		}
	}
	return t
}()

// asciiFastPath: word scans ASCII bytes with wordBytes before it decodes any
// character (a variable for the tests, which compare with the general loop).
var asciiFastPath = true

// asciiRun returns the end of the run of ASCII letters, digits and hyphens
// starting at text[i:], and the wordBytes classes seen in it.
func asciiRun(text string, i int) (int, uint8) {
	var seen uint8
	for i < len(text) {
		c := wordBytes[text[i]]
		if c == 0 {
			break
		}
		seen |= c
		i++
	}
	return i, seen
}

// word scans the word starting at text[i:], emits its tokens and returns its end.
func (t *tokenizer) word(text string, i int) int {
	if !asciiFastPath {
		return t.wordRunes(text, i, i, 0)
	}
	// The ASCII run first, one table read a byte; most words end there.
	j, seen := asciiRun(text, i)
	hyphen := seen&wbHyphen != 0
	if j == len(text) || text[j] < utf8.RuneSelf {
		if t.stats != nil {
			t.stats.latin++
		}
		if seen&wbUpper == 0 { // the token is a slice of text
			if tok := trimHyphensString(text[i:j]); tok != "" {
				t.token(tok, false, hyphen, true)
			}
			return j
		}
		b := appendFolded(t.buf[:0], text[i:j])
		t.buf = b
		if tok := trimHyphens(b); tok != "" {
			t.token(tok, true, hyphen, true)
		}
		return j
	}
	return t.wordRunes(text, i, j, seen)
}

// wordRunes goes on scanning a word of text[i:] from j, where a multi-byte
// character follows its ASCII start (whose bytes had the wordBytes seen),
// emits its tokens and returns its end.
func (t *tokenizer) wordRunes(text string, i, j int, seen uint8) int {
	plain := seen&wbUpper == 0 // ASCII without uppercase: the token is a slice of text
	ascii := true
	hyphen := seen&wbHyphen != 0
	cyr := false
scan:
	for j < len(text) {
		c := text[j]
		if c < utf8.RuneSelf {
			switch asciiClass[c] {
			case clSep:
				break scan
			case clUpper:
				plain = false
			case clHyphen:
				hyphen = true
			}
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[j:])
		if !isWordRune(r) || isCJK(r) {
			break
		}
		if !cyr && r >= 0x400 && unicode.Is(unicode.Cyrillic, r) {
			cyr = true
		}
		plain, ascii = false, false
		j += size
	}
	if t.stats != nil {
		if cyr {
			t.stats.cyrillic++
		} else {
			t.stats.latin++
		}
	}
	if plain {
		if tok := trimHyphensString(text[i:j]); tok != "" {
			t.token(tok, false, hyphen, true)
		}
		return j
	}
	word := text[i:j]
	b := appendFolded(t.buf[:0], word)
	t.buf = b
	tok := trimHyphens(b)
	if tok == "" {
		return j
	}
	if !ascii && strings.IndexByte(tok, '-') < 0 {
		// Keep the lowercase word with its accents for the stemmers, which
		// need them ("configurações" and "configuração" share a stem only
		// with their accents).
		o := t.obuf[:0]
		marks := false
		for _, r := range word {
			if r < latinEnd {
				o = utf8.AppendRune(o, latin[r].lower)
				continue
			}
			o = utf8.AppendRune(o, unicode.ToLower(r))
			marks = marks || unicode.Is(unicode.Mn, r)
		}
		if marks { // decomposed input: the stemmers expect composed letters
			o = norm.NFC.Bytes(o)
		}
		t.obuf = o
		if orig := trimHyphens(o); orig != tok {
			t.orig = orig
		}
	}
	t.token(tok, true, hyphen, ascii)
	t.orig = ""
	return j
}

// trimHyphensString returns s without edge hyphens ("" when only hyphens).
func trimHyphensString(s string) string {
	return strings.Trim(s, "-")
}

// trimHyphens returns b without edge hyphens, as a string sharing b's memory.
func trimHyphens(b []byte) string {
	s, e := 0, len(b)
	for s < e && b[s] == '-' {
		s++
	}
	for e > s && b[e-1] == '-' {
		e--
	}
	if s == e {
		return ""
	}
	return unsafe.String(&b[s], e-s)
}

// appendFolded appends s in NFD with the combining marks stripped, lowercased.
func appendFolded(b []byte, s string) []byte {
	for k := 0; k < len(s); {
		c := s[k]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			k++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[k:])
		if r < latinEnd {
			b = append(b, latin[r].fold...)
		} else {
			b = foldRune(b, r, s[k:k+size])
		}
		k += size
	}
	return b
}

// foldRune appends the folded form of r (whose encoding is enc).
func foldRune(b []byte, r rune, enc string) []byte {
	if d := norm.NFD.PropertiesString(enc).Decomposition(); d != nil {
		for len(d) > 0 {
			dr, ds := utf8.DecodeRune(d)
			d = d[ds:]
			if !unicode.Is(unicode.Mn, dr) {
				b = utf8.AppendRune(b, unicode.ToLower(dr))
			}
		}
		return b
	}
	if !unicode.Is(unicode.Mn, r) {
		b = utf8.AppendRune(b, unicode.ToLower(r))
	}
	return b
}

// fold returns s folded like a token (no splitting).
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return string(appendFolded(make([]byte, 0, len(s)), s))
		}
	}
	return s
}

// token applies the length, stopword and hyphen rules to one folded word
// (no edge hyphens) and emits what survives. hyphen: tok may hold one;
// ascii: tok is ASCII (its length in bytes is its length in characters).
func (t *tokenizer) token(tok string, scratch, hyphen, ascii bool) {
	if !hyphen || strings.IndexByte(tok, '-') < 0 {
		t.single(tok, scratch, ascii)
		return
	}
	if n := runeLen(tok); n >= MinTokenRunes && n <= MaxTokenRunes {
		t.emit(tok, scratch)
	}
	for tok != "" {
		k := strings.IndexByte(tok, '-')
		if k < 0 {
			t.single(tok, scratch, ascii)
			return
		}
		if k > 0 {
			t.single(tok[:k], scratch, ascii)
		}
		tok = tok[k+1:]
	}
}

func (t *tokenizer) single(tok string, scratch, ascii bool) {
	n := len(tok)
	if !ascii {
		n = runeLen(tok)
	}
	if n < MinTokenRunes || n > MaxTokenRunes {
		return
	}
	if len(tok) <= maxStopLen {
		if m := stopLangs(tok); m != 0 {
			if t.stats != nil {
				for l := 0; l < numStopLangs; l++ {
					if m&(1<<l) != 0 {
						t.stats.stop[l]++
					}
				}
			}
			if m&dropMask != 0 {
				return
			}
		}
	}
	t.emit(tok, scratch)
}

func runeLen(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s)
		}
	}
	return len(s)
}
