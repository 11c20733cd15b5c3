package index

import (
	"strings"
	"testing"
	"unsafe"
)

// vocabInArena fails unless every term of the space is a copy in the
// space's own blocks (see space.vocab), and returns the blocks' bytes.
func vocabInArena(t *testing.T, what string, sp *space) int {
	t.Helper()
	used := 0
	for _, b := range sp.vocab.blocks {
		used += len(b)
	}
	for id, term := range sp.terms {
		p := uintptr(unsafe.Pointer(unsafe.StringData(term)))
		in := false
		for _, b := range sp.vocab.blocks {
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
			if p >= lo && p+uintptr(len(term)) <= lo+uintptr(len(b)) {
				in = true
				break
			}
		}
		if !in {
			t.Fatalf("%s: term %d %q is not in the space's blocks", what, id, term)
		}
	}
	return used
}

// TestVocabularyInArena: the terms and stems an index adds, in a batch or
// one note at a time, are copies in the space's own blocks (never the
// builders', which go with their batch), and a compaction of the vocabulary
// moves the live ones to new blocks, leaving the dead ones' bytes behind.
func TestVocabularyInArena(t *testing.T) {
	var items []Item
	for n := range 120 {
		var ws []string
		for k := range 50 {
			ws = append(ws, letterWord(n*50+k))
		}
		items = append(items, Item{Path: "tmp/" + ws[0] + ".md", Note: prose(strings.Join(ws, " "))})
	}
	ix := New(Options{})
	ix.AddBatch(items[:80])
	for _, it := range items[80:] {
		ix.Add(it.Path, it.Note)
	}
	ix.Add("stable.md", prose("stable anchor words"))
	ix.mu.RLock()
	exactBytes := vocabInArena(t, "exact, built", &ix.exact)
	vocabInArena(t, "stems, built", &ix.stems)
	ix.mu.RUnlock()
	for _, it := range items {
		ix.Remove(it.Path)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.exact.empty >= minEmptyTerms || ix.stems.empty >= minEmptyTerms {
		t.Fatalf("setup: the vocabulary was not compacted (%d of %d terms empty)", ix.exact.empty, len(ix.exact.terms))
	}
	after := vocabInArena(t, "exact, compacted", &ix.exact)
	vocabInArena(t, "stems, compacted", &ix.stems)
	kept := 0
	for _, term := range ix.exact.terms {
		kept += len(term)
	}
	if after != kept || after >= exactBytes {
		t.Errorf("the compacted vocabulary's blocks hold %d bytes (%d before), its terms %d", after, exactBytes, kept)
	}
	if hits := ix.Search("anchor", Filter{}, 5); len(hits) != 1 || hits[0].Path != "stable.md" {
		t.Errorf("after compaction: %+v", hits)
	}
}
