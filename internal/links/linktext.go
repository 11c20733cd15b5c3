package links

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/par"
)

// Link texts: the display text of a link ([[Properties|front matter]],
// [metadata](Properties.md), ![[Note|text]]) is what the linking note calls
// its target, and the search index uses it as evidence about the target.
// A link has a text when its author wrote one (an alias or a markdown
// link's bracket text) holding at least one letter (so an image size such
// as ![[a.png|100]] is not one). The graph reports the texts of the links
// resolving to a note, grouped by their folded form (FoldText), with the
// number of distinct notes using each; and it remembers which notes' texts
// may have changed since TakeTextChanges was last called, so that the index
// can follow every change exactly: a note whose links change, a note
// removed, a file whose appearance or disappearance resolves links
// elsewhere differently.

// Text is one display text of the links to a note: the text (the smallest,
// byte-wise, of the spellings that fold alike) and how many distinct notes
// other than the target use it.
type Text struct {
	Text  string
	Notes int
}

// FoldText is the form under which link texts are grouped and compared:
// lowercase, '-' and '_' read as spaces, runs of white space as one space,
// trimmed.
func FoldText(s string) string {
	if folded(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	space := false // a space is pending (written before the next character)
	for _, r := range s {
		switch {
		case r == '-' || r == '_' || unicode.IsSpace(r):
			space = len(b) > 0
			continue
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		default:
			r = unicode.ToLower(r)
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// folded reports whether s is its own FoldText: ASCII, no upper case, no
// '-' or '_', single spaces inside (most link texts are).
func folded(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80, 'A' <= c && c <= 'Z', c == '-', c == '_', c < ' ':
			return false
		case c == ' ' && s[i-1] == ' ':
			return false
		}
	}
	return true
}

// linkText returns the display text of a stored link of a note whose link
// text is text, "" when it has none.
func linkText(text string, l *storedLink) string {
	if !l.hasAlias {
		return ""
	}
	if alias := l.alias.of(text); strings.ContainsFunc(alias, unicode.IsLetter) {
		return alias
	}
	return ""
}

// textAcc accumulates the texts of one target: a list (a note has a few
// texts), indexed by a map once it grows.
type textAcc struct {
	list   []textCount
	byFold map[string]int
}

// foldCache folds texts once each for a pass over many links (link texts
// repeat: a plugin list links its category the same way from every note).
type foldCache map[string]string

func (fc foldCache) fold(s string) string {
	if f, ok := fc[s]; ok {
		return f
	}
	f := FoldText(s)
	fc[s] = f
	return f
}

type textCount struct {
	fold, text string
	notes      int
	src        int32 // the last source note counted (see add)
}

// add counts the text (folded f) of a link from the source note numbered
// src (numbered from 1 in a pass, one note after the other): a source
// counts once per folded text, with the first spelling it uses.
func (a *textAcc) add(text, f string, src int32) {
	k := -1
	if a.byFold != nil {
		if i, ok := a.byFold[f]; ok {
			k = i
		}
	} else {
		k = slices.IndexFunc(a.list, func(c textCount) bool { return c.fold == f })
	}
	if k >= 0 {
		c := &a.list[k]
		if c.src == src {
			return
		}
		c.src = src
		c.notes++
		if text < c.text {
			c.text = text
		}
		return
	}
	a.list = append(a.list, textCount{fold: f, text: text, notes: 1, src: src})
	switch {
	case a.byFold != nil:
		a.byFold[f] = len(a.list) - 1
	case len(a.list) > 16:
		a.byFold = make(map[string]int, 2*len(a.list))
		for i, c := range a.list {
			a.byFold[c.fold] = i
		}
	}
}

func (a *textAcc) texts() []Text {
	if len(a.list) == 0 {
		return nil
	}
	slices.SortFunc(a.list, func(x, y textCount) int { return strings.Compare(x.fold, y.fold) })
	out := make([]Text, len(a.list))
	for i, c := range a.list {
		out[i] = Text{Text: c.text, Notes: c.notes}
	}
	return out
}

// LinkTexts returns the texts of the links from other notes resolving to
// p, sorted by folded form; a note using a text several times counts once.
func (g *Graph) LinkTexts(p string) []Text {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var acc textAcc
	src := int32(0)
	to := g.toOf(p)
	g.eachSource(p, func(n *noteRec) {
		src++
		for i := range n.links {
			l := &n.links[i]
			if to == 0 || l.to != to {
				continue
			}
			if t := linkText(n.text, l); t != "" {
				acc.add(t, FoldText(t), src)
			}
		}
	})
	return acc.texts()
}

// EachLinkTexts calls fn with every note that has link texts and its texts
// (as LinkTexts returns them), in path order, computed in one pass over
// every link: for a whole vault at once. fn runs without the graph's lock.
//
// A large graph is shared out on every CPU by target (each worker passes
// over every link and keeps the targets whose hash is its own): at the
// end of the first build this pass is the one step left on one core (about
// 10 ms of the Obsidian hub's 6,570 notes).
func (g *Graph) EachLinkTexts(fn func(p string, texts []Text)) {
	workers := par.Workers(len(g.notes), eachTextsParallelMin)
	out := make([][]targetTexts, workers)
	g.mu.RLock()
	par.Run(workers, func(w int) { out[w] = g.linkTextsShard(uint32(w), uint32(workers)) })
	g.mu.RUnlock()
	// The shards' lists are each sorted: merged in path order.
	at := make([]int, workers)
	for {
		best := -1
		for w, l := range out {
			if at[w] < len(l) && (best < 0 || l[at[w]].path < out[best][at[best]].path) {
				best = w
			}
		}
		if best < 0 {
			return
		}
		t := out[best][at[best]]
		at[best]++
		fn(t.path, t.texts)
	}
}

// eachTextsParallelMin is the number of notes from which EachLinkTexts
// runs on every CPU (a variable for the tests).
var eachTextsParallelMin = 1024

type targetTexts struct {
	path  string
	texts []Text
}

// linkTextsShard returns, sorted by path, the texts of the targets whose
// file id is w modulo n. Caller holds g.mu for reading.
func (g *Graph) linkTextsShard(w, n uint32) []targetTexts {
	// accs holds each target met, notOne a target that is not a note (it
	// is looked up once); the accumulators come from one slab.
	accs := make(map[uint32]*textAcc) // by storedLink.to
	var notOne textAcc
	var slab []textAcc
	fc := make(foldCache)
	src := int32(0)
	for _, nr := range g.notes {
		src++
		for i := range nr.links {
			l := &nr.links[i]
			if !l.hasAlias || l.to == 0 || n > 1 && l.to%n != w {
				continue
			}
			to := g.target(l)
			if to == nr.path {
				continue
			}
			t := linkText(nr.text, l)
			if t == "" {
				continue
			}
			a := accs[l.to]
			if a == nil {
				if g.notes[to] == nil {
					accs[l.to] = &notOne
					continue
				}
				if len(slab) == cap(slab) {
					slab = make([]textAcc, 0, 256)
				}
				slab = append(slab, textAcc{})
				a = &slab[len(slab)-1]
				accs[l.to] = a
			} else if a == &notOne {
				continue
			}
			a.add(t, fc.fold(t), src)
		}
	}
	out := make([]targetTexts, 0, len(accs))
	for to, a := range accs {
		if a != &notOne {
			out = append(out, targetTexts{path: g.toPath(to), texts: a.texts()})
		}
	}
	slices.SortFunc(out, func(x, y targetTexts) int { return strings.Compare(x.path, y.path) })
	return out
}

// TakeTextChanges returns, sorted, the notes whose link texts may have
// changed since the last call (links with a text that appeared,
// disappeared or now resolve elsewhere), and forgets them.
func (g *Graph) TakeTextChanges() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.textDirty) == 0 {
		return nil
	}
	out := make([]string, 0, len(g.textDirty))
	for p := range g.textDirty {
		out = append(out, p)
	}
	clear(g.textDirty)
	slices.Sort(out)
	return out
}

// TrackTextChanges turns the record of notes whose texts may have changed
// (TakeTextChanges) off or back on; off, it is emptied. For a caller that
// is about to take every note's texts anyway (a start, with EachLinkTexts):
// recording each change first was a tenth of the time of filling the graph.
func (g *Graph) TrackTextChanges(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.untracked = !on
	if !on {
		clear(g.textDirty)
	}
}

// markText records that the texts of the links to the targets of l (of a
// note whose link text is text; before and after a change of l.to) may have
// changed. Caller holds g.mu for
// writing (reresolve: also when only the resolver is read-locked, the graph
// itself being write-locked).
func (g *Graph) markText(text string, l *storedLink, oldTo uint32) {
	if g.untracked || linkText(text, l) == "" {
		return
	}
	if g.textDirty == nil {
		g.textDirty = make(map[string]struct{})
	}
	if oldTo != 0 {
		g.textDirty[g.toPath(oldTo)] = struct{}{}
	}
	if l.to != 0 {
		g.textDirty[g.target(l)] = struct{}{}
	}
}

// markTextDiff marks the targets whose texts from one note differ between
// its old and new links (in place of marking every target of both), each
// with its link text.
func (g *Graph) markTextDiff(oldText string, old []storedLink, newText string, new []storedLink) {
	if g.untracked {
		return
	}
	if len(old) == 0 || len(new) == 0 { // every target of the side there is
		for i := range old {
			g.markText(oldText, &old[i], 0)
		}
		for i := range new {
			g.markText(newText, &new[i], 0)
		}
		return
	}
	type pair struct{ to, text string }
	collect := func(text string, ls []storedLink) []pair {
		var out []pair
		for i := range ls {
			if t := linkText(text, &ls[i]); t != "" && ls[i].to != 0 {
				out = append(out, pair{g.target(&ls[i]), t})
			}
		}
		slices.SortFunc(out, func(a, b pair) int {
			if c := strings.Compare(a.to, b.to); c != 0 {
				return c
			}
			return strings.Compare(a.text, b.text)
		})
		return out
	}
	a, b := collect(oldText, old), collect(newText, new)
	if slices.Equal(a, b) {
		return
	}
	if g.textDirty == nil {
		g.textDirty = make(map[string]struct{})
	}
	// Every target of either side whose list of texts differs.
	byTo := func(ps []pair) map[string][]string {
		m := make(map[string][]string)
		for _, p := range ps {
			m[p.to] = append(m[p.to], p.text)
		}
		return m
	}
	ma, mb := byTo(a), byTo(b)
	for to, ta := range ma {
		if !slices.Equal(ta, mb[to]) {
			g.textDirty[to] = struct{}{}
		}
	}
	for to := range mb {
		if _, ok := ma[to]; !ok {
			g.textDirty[to] = struct{}{}
		}
	}
}

// LinksTo reports whether the note at from has a link resolving to to.
func (g *Graph) LinksTo(from, to string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if n := g.notes[from]; n != nil {
		return n.linksTo(g.toOf(to))
	}
	return false
}
