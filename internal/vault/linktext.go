package vault

import (
	"path"
	"slices"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/par"
)

// Link text: the index counts the display texts of the links to a note as a
// field of that note (see index.SetLinkTexts). The graph says which texts
// each note has and which notes' texts may have changed after an update;
// the service leaves out a text that reads as the note's title or file
// name (it adds nothing the note does not already say), and hands the rest
// to the index: all of them after the first build, then those of the notes
// each update touched.

// linkTextsOf returns the index's link texts of the note at p, from texts.
// Caller holds s.mu.
func (s *Service) linkTextsOf(p string, texts []links.Text) []index.LinkText {
	ni := s.notes[p]
	if ni == nil || len(texts) == 0 {
		return nil
	}
	title := links.FoldText(ni.title)
	base := path.Base(p)
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	name := links.FoldText(base)
	out := make([]index.LinkText, 0, len(texts))
	for _, t := range texts {
		if f := links.FoldText(t.Text); f == title || f == name {
			continue
		}
		out = append(out, index.LinkText{Text: t.Text, Notes: t.Notes})
	}
	return out
}

// syncLinkTexts updates the link texts of the notes whose texts the last
// graph updates may have changed, and of the notes given (whose title may
// have changed). Caller holds s.mu for writing.
func (s *Service) syncLinkTexts(also ...string) {
	changed := s.graph.TakeTextChanges()
	if len(changed) == 0 && len(also) == 0 {
		return
	}
	items := make([]index.LinkItem, 0, len(changed)+len(also))
	for _, p := range append(changed, also...) {
		items = append(items, index.LinkItem{Path: p, Texts: s.linkTextsOf(p, s.graph.LinkTexts(p))})
	}
	s.ix.SetLinkTextsBatch(items)
}

// linkTextItems returns the link texts of every note that has some, from
// the whole graph, in one pass. Caller holds s.mu (it reads no index).
// The texts of many notes are sifted (linkTextsOf) on every CPU: at the end
// of the first build nothing else is left to run.
func (s *Service) linkTextItems() []index.LinkItem {
	var items []index.LinkItem
	var all [][]links.Text
	s.graph.EachLinkTexts(func(p string, texts []links.Text) {
		items = append(items, index.LinkItem{Path: p})
		all = append(all, texts)
	})
	workers := par.Workers(len(items), linkTextsParallelMin)
	par.Run(workers, func(w int) {
		for i := w; i < len(items); i += workers {
			items[i].Texts = s.linkTextsOf(items[i].Path, all[i])
		}
	})
	return slices.DeleteFunc(items, func(it index.LinkItem) bool { return len(it.Texts) == 0 })
}

// linkTextsParallelMin is the number of notes with link texts from which
// linkTextItems sifts them on every CPU (a variable for the tests).
var linkTextsParallelMin = 1024

// setLinkTexts gives the index the link texts of every note (items, from
// linkTextItems), clearing those of the paths not in items (notes the index
// snapshot knew that have none now). Caller holds s.mu for writing.
func (s *Service) setLinkTexts(items []index.LinkItem) {
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		seen[it.Path] = true
	}
	for _, p := range s.ix.LinkPaths() {
		if !seen[p] {
			items = append(items, index.LinkItem{Path: p})
		}
	}
	s.ix.SetLinkTextsBatch(items)
}
