package index

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func tokens(a *Analyzer, s string) []string {
	var out []string
	a.Tokens(s, func(t string) { out = append(out, t) })
	return out
}

func TestAnalyzerTokens(t *testing.T) {
	a := NewAnalyzer("en")
	long := strings.Repeat("x", 64)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"plain ascii", "retry with exponential backoff", []string{"retry", "exponential", "backoff"}},
		{"uppercase", "HTTP Server", []string{"http", "server"}},
		{"folding", "Ação Über café naïve", []string{"acao", "uber", "cafe", "naive"}},
		{"folding decomposed input", "Ac\u0327a\u0303o", []string{"acao"}},
		{"folding uppercase accents", "ÉCOLE ÇA", []string{"ecole", "ca"}},
		{"alias c++", "I love C++ and c++", []string{"love", "cpp", "cpp"}},
		{"alias c# f#", "C# vs F#, c#.", []string{"csharp", "vs", "fsharp", "csharp"}},
		{"alias node.js", "Node.js server, node.JS", []string{"nodejs", "server", "nodejs"}},
		{"alias .net", "the .NET runtime (.net)", []string{"dotnet", "runtime", "dotnet"}},
		{"alias needs word boundary before", "asp.net abc++ xc#", []string{"asp", "net", "abc", "xc"}},
		{"alias needs word boundary after", "c++x node.jsx .netty c#d", []string{"node", "jsx", "netty"}},
		{"hyphen whole and parts", "exponential-backoff", []string{"exponential-backoff", "exponential", "backoff"}},
		{"edge hyphens trimmed", "--verbose- -x- -", []string{"verbose"}},
		{"hyphen parts obey rules", "state-of-the-art x-ray", []string{"state-of-the-art", "state", "art", "x-ray", "ray"}},
		{"split on punctuation", "foo_bar/baz.qux:quux", []string{"foo", "bar", "baz", "qux", "quux"}},
		{"digits", "HTTP 404 in 2024, v2", []string{"http", "404", "2024", "v2"}},
		{"stopwords en pt es", "the cat and o gato e el gato de la casa", []string{"cat", "gato", "gato", "casa"}},
		{"stopwords folded", "não está também", nil},
		{"german stopwords kept", "der die und", []string{"der", "die", "und"}},
		{"length min", "a b c ab", []string{"ab"}},
		{"length max", long + " " + long + "y", []string{long}},
		{"cjk bigrams", "日本語", []string{"日本", "本語"}},
		{"cjk single", "字", []string{"字"}},
		{"cjk mixed", "Go言語とRust", []string{"go", "言語", "語と", "rust"}},
		{"hangul", "한국어 텍스트", []string{"한국", "국어", "텍스", "스트"}},
		{"katakana", "カタカナ", []string{"カタ", "タカ", "カナ"}},
		{"cyrillic folded", "Привет Ёжик", []string{"привет", "ежик"}},
		{"empty", "", nil},
		{"only punctuation", "!!! ... ---", nil},
		{"emoji separate", "rocket🚀launch", []string{"rocket", "launch"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tokens(a, tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestAnalyzerTokensCanBeKept(t *testing.T) {
	a := NewAnalyzer("en")
	var kept []string
	a.Tokens("Ação ÚNICA Über", func(tok string) { kept = append(kept, tok) })
	if want := []string{"acao", "unica", "uber"}; !slices.Equal(kept, want) {
		t.Fatalf("kept tokens = %q, want %q (scratch buffer leaked into kept strings)", kept, want)
	}
}

func TestQueryTerms(t *testing.T) {
	a := NewAnalyzer("en")
	if got, want := a.QueryTerms("Retry retry RETRY the exponential-backoff backoff"),
		[]string{"retry", "exponential-backoff", "exponential", "backoff"}; !slices.Equal(got, want) {
		t.Errorf("dedupe: got %q, want %q", got, want)
	}
	// 64-term limit.
	var words []string
	for i := range 100 {
		words = append(words, "zq"+strings.Repeat("z", i/26)+string(rune('a'+i%26)))
	}
	got := a.QueryTerms(strings.Join(words, " "))
	if len(got) != MaxQueryTerms || got[0] != "zqa" || got[63] != words[63] {
		t.Errorf("64-term limit: got %d terms, first %q last %q", len(got), got[0], got[len(got)-1])
	}
	// 1,024-character cut (characters, not bytes): a term straddling the
	// cut is cut too; the 1,020-character word is over the length limit.
	q := strings.Repeat("é", 1020) + " abcdef"
	got = a.QueryTerms(q)
	if !slices.Equal(got, []string{"abc"}) {
		t.Errorf("1024-char cut: got %q", got)
	}
	if a.QueryTerms("the and of") != nil {
		t.Errorf("stopword-only query should give no terms")
	}
}

func TestFoldingTable(t *testing.T) {
	a := NewAnalyzer("pt")
	for in, want := range map[string]string{
		"Ação":        "acao",
		"coração":     "coracao",
		"ÑANDÚ":       "nandu",
		"İstanbul":    "istanbul",
		"Ǖber":        "uber",
		"Straße":      "straße",
		"Œuvre":       "œuvre",
		"façade-like": "facade-like",
	} {
		got := tokens(a, in)
		if len(got) == 0 || got[0] != want {
			t.Errorf("fold %q = %q, want %q first", in, got, want)
		}
	}
}

func TestDetectLang(t *testing.T) {
	tests := []struct {
		text     string
		fallback langID
		want     langID
	}{
		{"The cat is on the table and it is happy with the sun", langEN, langEN},
		{"O gato está em cima da mesa e não quer sair para o jardim com os outros", langEN, langPT},
		{"El gato está sobre la mesa y no quiere salir con los otros del jardín", langEN, langES},
		{"Die Katze ist auf dem Tisch und sie will nicht mit dem Hund spielen", langEN, langDE},
		{"Кошка сидит на столе и не хочет уходить", langEN, langRU},
		{"日本語のテキストです", langEN, langNone},
		{"kubernetes deployment yaml", langPT, langPT}, // too little evidence
	}
	for _, tc := range tests {
		var st textStats
		tk := tokenizer{emit: func(string, bool) {}, stats: &st}
		tk.run(tc.text)
		if got := detectLang(&st, tc.fallback); got != tc.want {
			t.Errorf("detectLang(%q) = %s, want %s (stats %+v)", tc.text, langCodes[got], langCodes[tc.want], st)
		}
	}
}

func TestParseLang(t *testing.T) {
	for in, want := range map[string]langID{"": langNone, "en": langEN, "pt-BR": langPT, "PT_br": langPT, "es": langES, "nb": langNO, "xx": langNone} {
		if got := parseLang(in); got != want {
			t.Errorf("parseLang(%q) = %d, want %d", in, got, want)
		}
	}
	if NewAnalyzer("").lang != langEN || NewAnalyzer("klingon").lang != langEN {
		t.Errorf("unknown or empty profile language should fall back to en")
	}
}

func TestStopwordTable(t *testing.T) {
	for l, list := range stopLists {
		for _, w := range strings.Fields(list) {
			if stopLangs(w)&(1<<l) == 0 {
				t.Errorf("stopword %q of list %d not found in the table", w, l)
			}
		}
	}
	for _, w := range []string{"go", "backoff", "retry", "os", "get", "sin", "xyz", "thee"} {
		if m := stopLangs(w); m&dropMask != 0 {
			t.Errorf("%q should not be a dropped stopword", w)
		}
	}
	// Against a map of the lists: every stopword, and words one byte away
	// from one (cut, grown, changed at each end and in the middle, of
	// every length the table packs).
	want := map[string]uint8{}
	for l, list := range stopLists {
		for _, w := range strings.Fields(list) {
			want[w] |= 1 << l
		}
	}
	for w := range want {
		tries := []string{w, w[:len(w)-1], w[1:], w + "s", "x" + w, w[:len(w)/2] + "q" + w[len(w)/2+1:], strings.ToUpper(w[:1]) + w[1:]}
		for _, s := range tries {
			if s == "" || len(s) > maxStopLen {
				continue
			}
			if got := stopLangs(s); got != want[s] {
				t.Errorf("stopLangs(%q) = %b, want %b", s, got, want[s])
			}
		}
	}
}

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		k    int
		want int
	}{
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3}, // over the bound: k+1
		{"abc", "abc", 2, 0},
		{"abc", "abd", 2, 1},
		{"abc", "ab", 2, 1},
		{"", "ab", 2, 2},
		{"ação", "acão", 2, 1},
		{"backoff", "bakcoff", 2, 2},
		{"abcdef", "ab", 2, 3},
	}
	for _, tc := range tests {
		got := levenshtein([]rune(tc.a), []rune(tc.b), tc.k)
		if got != tc.want {
			t.Errorf("levenshtein(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.k, got, tc.want)
		}
	}
}

// levenshtein returns the edit distance of a and b, or k+1 when it exceeds k
// (rows stop as soon as every cell is over k). Strings up to MaxTokenRunes.
// It is the plain dynamic programme that patternMask.distance is checked
// against.
func levenshtein(a, b []rune, k int) int {
	if len(a)-len(b) > k || len(b)-len(a) > k {
		return k + 1
	}
	if len(a) > MaxTokenRunes || len(b) > MaxTokenRunes {
		return k + 1
	}
	var r0, r1 [MaxTokenRunes + 1]int
	prev, cur := r0[:len(b)+1], r1[:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		ai := a[i-1]
		for j := 1; j <= len(b); j++ {
			v := prev[j-1]
			if ai != b[j-1] {
				v++
			}
			if prev[j]+1 < v {
				v = prev[j] + 1
			}
			if cur[j-1]+1 < v {
				v = cur[j-1] + 1
			}
			cur[j] = v
			if v < rowMin {
				rowMin = v
			}
		}
		if rowMin > k {
			return k + 1
		}
		prev, cur = cur, prev
	}
	if d := prev[len(b)]; d <= k {
		return d
	}
	return k + 1
}

func BenchmarkTokens(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; exponential-backoff retries with Ação and C++ code. ", 100)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var tk tokenizer
	n := 0
	tk.emit = func(string, bool) { n++ }
	for b.Loop() {
		tk.run(text)
	}
}

func TestBitParallelDistance(t *testing.T) {
	words := []string{"", "a", "ab", "abc", "kitten", "sitting", "backoff", "bakcoff", "ação", "acão", "日本語", "日本",
		"configuration", "configuratoin", strings.Repeat("ab", 32), strings.Repeat("ab", 31) + "ba", "aaaa", "aaab", "baaa"}
	for _, q := range words {
		if q == "" {
			continue
		}
		var pm patternMask
		pm.init([]rune(q))
		for _, w := range words {
			want := levenshtein([]rune(q), []rune(w), 200)
			if got := pm.distance(w); got != want {
				t.Errorf("distance(%q, %q) = %d, want %d", q, w, got, want)
			}
		}
	}
}

func TestLatinTableMatchesUnicode(t *testing.T) {
	for r := rune(0); r < latinEnd; r++ {
		s := string(r)
		if got, want := string(appendFolded(nil, s)), string(foldRune(nil, r, s)); r >= 0x80 && got != want {
			t.Errorf("fold %U: table %q, unicode %q", r, got, want)
		}
		if r >= 0x80 && isWordRune(r) != (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)) {
			t.Errorf("isWordRune(%U) differs from the Unicode tables", r)
		}
		if latin[r].lower != unicode.ToLower(r) {
			t.Errorf("lower %U", r)
		}
	}
}

// TestASCIIFastPathMatchesGeneral: words scanned by the ASCII fast path give
// exactly the tokens, accented forms and language statistics of the general
// loop, on random text mixing ASCII words, case, hyphens, aliases, accented
// and decomposed letters, Cyrillic, CJK and symbols.
func TestASCIIFastPathMatchesGeneral(t *testing.T) {
	pieces := []string{"a", "b", "Z", "q", "7", "-", "--", " ", "  ", ".", ",", "_", "/", "#", "+", "c", "C", "f", "n",
		"c++", "C#", "f#", "node.js", ".NET", "é", "Ç", "ü", "e\u0301", "ß", "ж", "Ё", "日", "本", "カ", "한", "—", "🚀",
		"\u200b", "\t", "\n", "the", "and", "não", "está", "x-ray", "State", "of", "ART", "404"}
	type out struct {
		toks  []string
		stats textStats
	}
	analyze := func(text string) out {
		var o out
		var tk tokenizer
		tk.stats = &o.stats
		tk.emit = func(tok string, scratch bool) {
			o.toks = append(o.toks, tok+"|"+tk.orig+"|"+strconv.FormatBool(scratch))
		}
		tk.run(text)
		return o
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		var sb strings.Builder
		for range 1 + r.IntN(12) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := sb.String()
		fast := analyze(text)
		asciiFastPath = false
		general := analyze(text)
		asciiFastPath = true
		if !slices.Equal(fast.toks, general.toks) || fast.stats != general.stats {
			t.Fatalf("%q: fast path %q %+v, general loop %q %+v", text, fast.toks, fast.stats, general.toks, general.stats)
		}
	}
}
