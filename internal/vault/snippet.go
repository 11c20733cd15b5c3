package vault

import (
	"strings"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/index"
)

// snippets quotes the chunk of every hit from the file as it is now, sharing
// api.MaxQuotedChars between them: each result gets an equal share, and what
// a short snippet leaves over goes to the longer ones. A snippet cut to fit
// keeps the window of lines with the most query terms and says so.
func (s *Service) snippets(query string, hits []scored, data map[string][]byte) []api.SearchHit {
	defer s.firstAnswered() // the last step of a search: its answer is made
	type cand struct {
		hit   api.SearchHit
		lines []string
		first int // line number of lines[0]
		size  int // characters of the whole chunk text
	}
	files := make(map[string][]string)
	var cands []cand
	for _, h := range hits {
		lines, ok := files[h.path]
		if !ok {
			if raw := data[h.path]; raw != nil {
				lines = strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n")
			}
			files[h.path] = lines
		}
		if lines == nil {
			continue
		}
		s.mu.RLock()
		ni := s.notes[h.path]
		s.mu.RUnlock()
		if ni == nil {
			continue
		}
		c := cand{hit: api.SearchHit{Path: h.path, Title: ni.title, Score: round2(h.score), ViaGraph: h.viaGraph, Fuzzy: h.fuzzy, Explain: h.explain}}
		start, end := 1, len(lines)
		if h.chunk < len(ni.chunks) {
			sp := ni.chunks[h.chunk]
			c.hit.Headings = sp.headings
			start, end = sp.start, sp.end
		}
		start = max(1, min(start, len(lines)))
		end = max(start, min(end, len(lines)))
		body := lines[start-1 : end]
		for len(body) > 1 && strings.TrimSpace(body[0]) == "" {
			body = body[1:]
			start++
		}
		for len(body) > 1 && strings.TrimSpace(body[len(body)-1]) == "" {
			body = body[:len(body)-1]
		}
		c.lines, c.first = body, start
		for _, l := range body {
			c.size += utf8.RuneCountInString(l) + 1
		}
		cands = append(cands, c)
	}
	sizes := make([]int, len(cands))
	for i, c := range cands {
		sizes[i] = c.size
	}
	alloc := share(api.MaxQuotedChars, sizes)
	var terms map[string]bool
	out := make([]api.SearchHit, len(cands))
	for i, c := range cands {
		lines, first := c.lines, c.first
		if c.size > alloc[i] {
			if terms == nil {
				terms = s.queryTerms(query)
			}
			lines, first = window(lines, first, alloc[i], s.an, terms)
			c.hit.Truncated = true
		}
		c.hit.Line = first
		c.hit.EndLine = first + max(len(lines)-1, 0)
		c.hit.Snippet = strings.Join(lines, "\n")
		out[i] = c.hit
	}
	return out
}

func round2(f float64) float64 {
	return float64(int64(f*100+0.5)) / 100
}

// share divides budget between items of the given sizes: an equal share
// each, the unused part of small items redistributed to larger ones.
func share(budget int, sizes []int) []int {
	alloc := make([]int, len(sizes))
	left := budget
	open := make([]int, 0, len(sizes))
	for i := range sizes {
		open = append(open, i)
	}
	for len(open) > 0 && left > 0 {
		each := max(left/len(open), 1)
		gave := 0
		var still []int
		for _, i := range open {
			give := min(sizes[i]-alloc[i], each, left)
			alloc[i] += give
			left -= give
			gave += give
			if alloc[i] < sizes[i] {
				still = append(still, i)
			}
		}
		if gave == 0 {
			break
		}
		open = still
	}
	return alloc
}

// windowScan bounds the text searched for the best snippet window.
const windowScan = 32 << 10

// window picks the run of consecutive lines, at most budget characters, that
// holds the most query terms (earliest on ties). A single line longer than the
// budget is cut.
func window(lines []string, first, budget int, an *index.Analyzer, terms map[string]bool) ([]string, int) {
	if budget <= 0 || len(lines) == 0 {
		return nil, first
	}
	// Only the first windowScan bytes of a huge chunk (a hub MOC can hold
	// thousands of lines) are searched for the best window, which bounds the
	// cost of quoting whatever the chunk's size.
	scanned := 0
	for i, l := range lines {
		scanned += len(l) + 1
		if scanned > windowScan && i > 0 {
			lines = lines[:i]
			break
		}
	}
	list := make([]string, 0, len(terms))
	for t := range terms {
		list = append(list, t)
	}
	score := make([]int, len(lines))
	size := make([]int, len(lines))
	for i, l := range lines {
		size[i] = utf8.RuneCountInString(l) + 1
		// Most lines of a long chunk hold no query term: a line that
		// cannot emit one is not tokenized (the same scores, a fraction
		// of the cost).
		if index.MayEmit(l, list) {
			score[i] = an.CountTerms(l, terms)
		}
	}
	bestStart, bestEnd, bestScore := 0, 0, -1
	lo, sum, sc := 0, 0, 0
	for hi := range lines {
		sum += size[hi]
		sc += score[hi]
		for sum > budget && lo <= hi {
			sum -= size[lo]
			sc -= score[lo]
			lo++
		}
		if lo <= hi && sc > bestScore {
			bestStart, bestEnd, bestScore = lo, hi+1, sc
		}
	}
	best := 0
	for i := range lines {
		if score[i] > score[best] {
			best = i
		}
	}
	if bestScore < score[best] || bestScore < 0 {
		// The line with the most query terms does not fit whole: cut it.
		return []string{cutRunes(lines[best], budget-1) + "…"}, first + best
	}
	return lines[bestStart:bestEnd], first + bestStart
}

// cutRunes returns the first n characters of s (none when n <= 0).
func cutRunes(s string, n int) string {
	return s[:runeOffset(s, max(n, 0))]
}

func (s *Service) queryTerms(query string) map[string]bool {
	m := make(map[string]bool)
	for _, t := range s.an.QueryTerms(query) {
		m[t] = true
	}
	return m
}
