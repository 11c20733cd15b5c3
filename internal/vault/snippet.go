package vault

import (
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/index"
)

// snippets quotes the chunk of every hit from the file as it is now, sharing
// api.MaxQuotedChars between them: each result gets an equal share, and what
// a short snippet leaves over goes to the longer ones. A snippet cut to fit
// keeps the window of lines with the most query terms and says so.
func (s *Service) snippets(query string, hits []scored, data map[string]string) []api.SearchHit {
	defer s.firstAnswered() // the last step of a search: its answer is made
	type cand struct {
		hit   api.SearchHit
		lines []string
		first int // line number of lines[0]
		size  int // characters of the whole chunk text, at most sizeCap
	}
	// A hit's note can be a MOC of thousands of lines, and a search quotes
	// a few of them: each file's lines are only located (one pass for its
	// newlines), the chunk's are counted only as far as the share needs,
	// and only the lines a snippet can show are turned into strings.
	files := make(map[string]*lineIndex)
	var cands []cand
	for _, h := range hits {
		lx, ok := files[h.path]
		if !ok {
			if text, ok := data[h.path]; ok {
				lx = newLineIndex(text)
			}
			files[h.path] = lx
		}
		if lx == nil {
			continue
		}
		s.mu.RLock()
		ni := s.notes[h.path]
		s.mu.RUnlock()
		if ni == nil {
			continue
		}
		c := cand{hit: api.SearchHit{Path: h.path, Title: ni.title, Score: round2(h.score), ViaGraph: h.viaGraph, Fuzzy: h.fuzzy, Explain: h.explain}}
		var start, end int
		if h.chunk < len(ni.chunks) {
			sp := ni.chunks[h.chunk]
			c.hit.Headings = sp.headings
			start, end = sp.start, sp.end
		} else {
			start, end = 1, lx.count()
		}
		last := lx.upTo(end) // first: the newlines are then found in one go
		start = max(1, lx.upTo(start))
		end = max(start, last)
		for end > start && lx.blank(start) {
			start++
		}
		for end > start && lx.blank(end) {
			end--
		}
		c.first = start
		c.size, end = lx.measure(start, end)
		c.lines = lx.lines(start, end)
		cands = append(cands, c)
	}
	sizes := make([]int, len(cands))
	for i, c := range cands {
		sizes[i] = c.size
	}
	alloc := share(api.MaxQuotedChars, sizes)
	var terms *index.Counter
	out := make([]api.SearchHit, len(cands))
	for i, c := range cands {
		lines, first := c.lines, c.first
		if c.size > alloc[i] {
			if terms == nil {
				terms = s.an.NewCounter(s.an.QueryTerms(query))
			}
			lines, first = window(lines, first, alloc[i], terms)
			c.hit.Truncated = true
		}
		c.hit.Line = first
		c.hit.EndLine = first + max(len(lines)-1, 0)
		if len(lines) == 1 {
			// A copy: the lines are slices of the whole note (Join
			// copies two or more).
			c.hit.Snippet = strings.Clone(lines[0])
		} else {
			c.hit.Snippet = strings.Join(lines, "\n")
		}
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
func window(lines []string, first, budget int, terms *index.Counter) ([]string, int) {
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
	score := make([]int, len(lines))
	size := make([]int, len(lines))
	for i, l := range lines {
		size[i] = runeCount(l) + 1
		score[i] = terms.Count(l)
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
		// The line with the most query terms does not fit whole: cut it
		// around its first match.
		return []string{cutAround(lines[best], firstMatch(lines[best], terms), budget)}, first + best
	}
	return lines[bestStart:bestEnd], first + bestStart
}

// firstMatch returns the byte offset of the first blank-separated word of
// line that holds a query term (0 when none does, or the line has no
// blanks: a line of CJK text is one word).
func firstMatch(line string, terms *index.Counter) int {
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i && terms.Count(line[i:j]) > 0 {
			return i
		}
		i = j
	}
	return 0
}

// cutAround returns at most n characters of line, "…" included, that hold
// the text at byte offset at: from a word boundary a third of the way before
// it (or the start) to a word boundary at the end when one is near, with "…"
// where line was cut.
func cutAround(line string, at, n int) string {
	if runeCount(line) <= n {
		return line
	}
	if n <= 1 {
		return "…"
	}
	start := 0
	if before := runeCount(line[:at]); before > n/3 {
		start = runeOffset(line, before-n/3)
		if k := strings.IndexAny(line[start:at], " \t"); k >= 0 {
			start += k + 1 // the next word
		}
	}
	lead := ""
	room := n - 1 // the closing "…"
	if start > 0 {
		lead, room = "…", room-1
	}
	rest := line[start:]
	if runeCount(rest) <= room+1 && start > 0 {
		return lead + rest // the end of the line fits
	}
	return lead + cutAtWord(rest, room) + "…"
}

// cutAtWord returns the first n characters of s, ending at the last blank
// among them when that is in their last fifth (a word is not cut in two),
// trailing blanks dropped.
func cutAtWord(s string, n int) string {
	cut := s[:runeOffset(s, max(n, 0))]
	if len(cut) == len(s) {
		return cut
	}
	if k := strings.LastIndexAny(cut, " \t"); k > len(cut)*4/5 {
		cut = cut[:k]
	}
	return strings.TrimRight(cut, " \t")
}

// cutRunes returns the first n characters of s (none when n <= 0).
func cutRunes(s string, n int) string {
	return s[:runeOffset(s, max(n, 0))]
}
