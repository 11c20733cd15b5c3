package bench

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// SampleQueries draws n search queries from the vault's own words: 1 to 3
// words that stand near each other in a note (so they co-occur, as in what a
// person looks for), stopwords left out, and one query in ten with a typo.
// The same vault and seed give the same queries.
func SampleQueries(ctx context.Context, dir, lang string, n int, seed uint64) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts are skipped, as the indexer does
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && vaultfs.IsIgnored(name) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && vaultfs.IsNoteName(name) {
			files = append(files, p)
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x9e3779b9))
	an := index.NewAnalyzer(lang)
	var texts [][]string
	for _, i := range r.Perm(len(files)) {
		if len(texts) == 300 {
			break
		}
		data, err := os.ReadFile(files[i])
		if err != nil {
			continue
		}
		if ws := queryWords(string(data), an); len(ws) >= 3 {
			texts = append(texts, ws)
		}
	}
	if len(texts) == 0 {
		return nil, errNoWords
	}
	out := make([]string, 0, n)
	for len(out) < n {
		ws := texts[r.IntN(len(texts))]
		k := 1 + r.IntN(5)/2 // 1, 1, 2, 2, 3 words
		start := r.IntN(len(ws))
		var q []string
		for j := 0; len(q) < k && j < 12 && start+j < len(ws); j++ {
			w := ws[start+j]
			if !slices.Contains(q, w) && (j == 0 || r.IntN(2) == 0) {
				q = append(q, w)
			}
		}
		if r.IntN(10) == 0 {
			j := r.IntN(len(q))
			q[j] = misspell(r, q[j])
		}
		out = append(out, strings.Join(q, " "))
	}
	return out, nil
}

type benchError string

func (e benchError) Error() string { return string(e) }

const errNoWords = benchError("no note with searchable words in the vault")

// queryWords returns the lowercase words of text (letters only, 3 to 20
// characters) that the analyzer keeps as query terms.
func queryWords(text string, an *index.Analyzer) []string {
	var out []string
	keep := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		n := utf8.RuneCountInString(w)
		if n < 3 || n > 20 {
			continue
		}
		w = strings.ToLower(w)
		ok, seen := keep[w]
		if !seen {
			ok = len(an.QueryTerms(w)) > 0
			keep[w] = ok
		}
		if ok {
			out = append(out, w)
		}
	}
	return out
}

// misspell makes one typo in a word of five letters or more: two letters
// swapped, one dropped, or one doubled.
func misspell(r *rand.Rand, w string) string {
	rs := []rune(w)
	if len(rs) < 5 {
		return w
	}
	i := 1 + r.IntN(len(rs)-2)
	switch r.IntN(3) {
	case 0:
		rs[i], rs[i+1] = rs[i+1], rs[i]
	case 1:
		rs = append(rs[:i], rs[i+1:]...)
	default:
		rs = append(rs[:i+1], rs[i:]...)
	}
	return string(rs)
}
