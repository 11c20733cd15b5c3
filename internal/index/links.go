package index

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Link text: the words other notes use when they link to a note
// ([[Properties|front matter]], [metadata](Properties.md)) are evidence of
// what the note is called. Each note's link texts are indexed as one extra
// chunk slot, its link slot, holding only the link field: the slot has the
// note's language and is scored like a chunk of its own (BM25 with its own
// saturation and its own length normalisation, against the average length
// of the link slots), and what it scores is added to the note's first chunk,
// where the title is. So the link text of a note linked from a thousand
// notes can add at most what one field can, and a note's own text keeps
// its scores.
//
// The caller (the vault service, which has the link graph) says which texts
// a note has and how many notes use each (SetLinkTexts); a text used by n
// notes is counted linkRepeat(n) times, so repetition weighs in but cannot
// dominate. The index keeps the texts per path, independently of the note:
// when the note is added again (edited), its link slot is rebuilt for its
// new first chunk and language; when it is removed, its slot goes with it,
// and comes back if a note appears at the path while the texts are still
// set.
//
// A link slot is a chunk slot whose cidx is linkChunk and whose clen is
// -2 - its weighted length (dead slots have -1, and the scoring loop reads
// the sign anyway, so a posting of a link slot costs nothing more to tell
// apart). Link slots are not chunks: N, the average chunk length and
// Stats.Chunks leave them out; a term's document frequency counts them.

// LinkText is one display text of the links to a note, and the number of
// distinct notes whose links use it.
type LinkText struct {
	Text  string
	Notes int
}

// LinkItem is the link texts of one note, for SetLinkTextsBatch.
type LinkItem struct {
	Path  string
	Texts []LinkText
}

// Limits of a note's link texts: the most distinct texts kept (the ones
// used by the most notes), and the longest text (in bytes, cut at a
// character boundary).
const (
	MaxLinkTexts    = 256
	MaxLinkTextLen  = 256
	linkChunk       = ^uint32(0) // cidx of a link slot
	linkDeadLen     = -1         // clen of a dead slot
	linkSlotLenBase = -2         // clen of a link slot: linkSlotLenBase - length
)

// linkRepeat is how many times a text used by n notes is counted: 1 + the
// integer part of log2(n) (1 note: 1, 2-3: 2, 4-7: 3, ... 1,000: 10).
func linkRepeat(n int) int {
	if n < 1 {
		return 0
	}
	return bits.Len(uint(n))
}

// linkInfo is what the index keeps of a path's link texts.
type linkInfo struct {
	texts []LinkText // canonical (see canonicalTexts)
	slot  uint32     // the live link slot, noNote when there is none
	// the slot's terms and stems with their chunk counts (see termCount)
	terms, stems []byte
	length       float64
}

// canonicalTexts returns texts trimmed, cut at MaxLinkTextLen, merged by
// text (their counts summed), without empty texts or counts, limited to the
// MaxLinkTexts most used, sorted by text (in a new slice; the strings may
// share the caller's memory).
func canonicalTexts(texts []LinkText) []LinkText {
	out := make([]LinkText, 0, len(texts))
	for _, t := range texts {
		s := strings.TrimSpace(t.Text)
		if len(s) > MaxLinkTextLen {
			k := MaxLinkTextLen
			for k > 0 && !utf8.RuneStart(s[k]) {
				k--
			}
			s = s[:k]
		}
		if s == "" || t.Notes <= 0 {
			continue
		}
		out = append(out, LinkText{Text: s, Notes: t.Notes})
	}
	slices.SortFunc(out, func(a, b LinkText) int { return strings.Compare(a.Text, b.Text) })
	merged := out[:0]
	for _, t := range out {
		if n := len(merged); n > 0 && merged[n-1].Text == t.Text {
			merged[n-1].Notes += t.Notes
			continue
		}
		merged = append(merged, t)
	}
	out = merged
	if len(out) > MaxLinkTexts {
		slices.SortStableFunc(out, func(a, b LinkText) int { return cmp.Compare(b.Notes, a.Notes) })
		out = out[:MaxLinkTexts]
		slices.SortFunc(out, func(a, b LinkText) int { return strings.Compare(a.Text, b.Text) })
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// SetLinkTexts sets the link texts of the note at path (nil or empty: it has
// none). The texts are kept for the path even while no note is indexed
// there (see the package documentation on link text).
func (ix *Index) SetLinkTexts(path string, texts []LinkText) {
	ix.SetLinkTextsBatch([]LinkItem{{Path: path, Texts: texts}})
}

// SetLinkTextsBatch is SetLinkTexts for many notes, their link slots
// analyzed on every CPU. A path given twice: the last wins. Paths whose texts
// are unchanged cost a comparison.
func (ix *Index) SetLinkTextsBatch(items []LinkItem) {
	last := make(map[string]int, len(items))
	for i, it := range items {
		last[it.Path] = i
	}
	type change struct {
		path  string
		texts []LinkText
	}
	var changes []change
	for i, it := range items {
		if last[it.Path] != i || it.Path == "" {
			continue
		}
		changes = append(changes, change{it.Path, canonicalTexts(it.Texts)})
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var rebuild []string
	for _, c := range changes {
		li := ix.links[c.path]
		if li == nil && c.texts == nil || li != nil && slices.Equal(li.texts, c.texts) {
			continue
		}
		if li != nil {
			ix.dropLinkSlot(li)
		}
		if c.texts == nil {
			delete(ix.links, c.path)
			continue
		}
		if li == nil {
			li = &linkInfo{slot: noNote}
			ix.links[c.path] = li
		}
		for i := range c.texts { // kept: never the caller's memory
			c.texts[i].Text = strings.Clone(c.texts[i].Text)
		}
		li.texts = c.texts
		rebuild = append(rebuild, c.path)
	}
	ix.buildLinkSlots(rebuild)
	ix.maybeCompact()
}

// LinkTexts returns the link texts set for path (canonical: merged, sorted
// by text), nil when none.
func (ix *Index) LinkTexts(path string) []LinkText {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if li := ix.links[path]; li != nil {
		return slices.Clone(li.texts)
	}
	return nil
}

// dropLinkSlot removes a link slot from the scoring (its texts stay).
// Caller holds the write lock.
func (ix *Index) dropLinkSlot(li *linkInfo) {
	if li.slot == noNote {
		return
	}
	ix.settle() // the slot's term list is read below
	ix.dropTerms(li.terms, li.stems, ix.clang[li.slot])
	ix.cnote[li.slot] = noNote
	ix.clen[li.slot] = linkDeadLen
	ix.dead++
	ix.linkLive--
	ix.linkSumLen -= li.length
	if ix.linkLive == 0 {
		ix.linkSumLen = 0
	}
	li.slot, li.terms, li.stems, li.length = noNote, nil, nil, 0
}

// buildLinkSlots builds the link slots of the paths (each with texts set and
// no live slot) whose note is indexed, on every CPU for many. Caller holds
// the write lock.
func (ix *Index) buildLinkSlots(paths []string) {
	if ix.fw.Link <= 0 {
		return
	}
	type job struct {
		path  string
		texts []LinkText
		lang  langID
	}
	var jobs []job
	for _, p := range paths {
		slot, ok := ix.byPath[p]
		li := ix.links[p]
		if !ok || li == nil || ix.notes[slot].n == 0 {
			continue
		}
		lang, texts := ix.notes[slot].lang, li.texts
		jobs = append(jobs, job{p, texts, lang})
	}
	if len(jobs) == 0 {
		return
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(jobs)/64))
	parts := make([]*partial, workers)
	var next atomic.Int64
	shards(workers, func(w, _ uint32) int {
		bd := newBuilder(ix.fw, ix.an.lang, builderSize{})
		bd.langs = ix.langNotes
		for {
			k := int(next.Add(1)) - 1
			if k >= len(jobs) {
				break
			}
			bd.addLinkChunk(jobs[k].path, jobs[k].texts, jobs[k].lang)
		}
		parts[w] = bd.finish()
		return 0
	})
	ix.merge(nil, nil, parts...)
}

// rebuildLinkSlots rebuilds the link slots of notes just (re)indexed at
// paths, for those that have link texts. Caller holds the write lock.
func (ix *Index) rebuildLinkSlots(paths []string) {
	if len(ix.links) == 0 {
		return
	}
	var rebuild []string
	for _, p := range paths {
		if li := ix.links[p]; li != nil {
			ix.dropLinkSlot(li)
			rebuild = append(rebuild, p)
		}
	}
	ix.buildLinkSlots(rebuild)
}

// LinkPaths returns the paths with link texts set, sorted.
func (ix *Index) LinkPaths() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]string, 0, len(ix.links))
	for p := range ix.links {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
