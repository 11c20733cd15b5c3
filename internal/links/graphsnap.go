package links

import (
	"fmt"
	"slices"

	snap "github.com/vaultmcp/vaultmcp/internal/snapshot"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// The resolved graph in the index snapshot. A graph filled with AddFiles
// (every file) and then SetNotes (every note's links) derives from them:
// each file's folded form and its place among the candidates of its base
// name, each link's folded target and the file it resolves to, and the
// notes indexed under each file name. EncodeResolved writes what was
// derived, RestoreGraph puts it back given the same files and links, without
// folding or resolving anything: on the Obsidian hub vault (6,570 notes,
// ~42k links) that derivation was the largest part of a start from the
// snapshot.
//
// The encoding is relative to the caller's file list and note list (the
// ones it writes itself): files by their index in the list, notes by the
// index of their path. It holds, in order:
//
//	present (bool): false when the graph did not know exactly those files
//	    (RestoreGraph then returns nil and the caller fills a graph)
//	per file: its folded form, "" when the path is its own
//	the candidate lists: count, then per list its files' indices in order
//	per note: its link count, then per link its folded target (flag 0:
//	    the target itself, 1: a string follows) and its resolution (0:
//	    broken, else 1 + the file's index)
//	the key index: count, then per key the key, its notes' count, and per
//	    note its file index and the number of its links depending on the key

// EncodeResolved writes the graph's derived state for the snapshot: files
// are every file of the vault, sorted, notes the paths (a subset of files)
// whose links the caller writes, in the order it writes them; the links are
// those EachOut gives. The key index written is the one a graph filled
// with exactly those files and links would have.
func (g *Graph) EncodeResolved(e *snap.Enc, files, notes []string) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	g.r.mu.RLock()
	defer g.r.mu.RUnlock()
	at := make(map[string]int, len(files))
	for i, p := range files {
		at[p] = i
	}
	ok := len(at) == len(files) && len(g.r.files) == len(files)
	for p := range g.r.files {
		if _, in := at[p]; !ok || !in {
			ok = false
			break
		}
	}
	recs := make([]*noteRec, len(notes))
	for k, p := range notes {
		if _, in := at[p]; !in {
			ok = false
			break
		}
		recs[k] = g.notes[p]
		if recs[k] == nil {
			recs[k] = &noteRec{path: p}
		}
	}
	e.Bool(ok)
	if !ok {
		return
	}
	lowers := make([]string, len(files))
	for _, list := range g.r.byName {
		for _, c := range list {
			lowers[at[c.path]] = c.lower
		}
	}
	for i, p := range files {
		if lowers[i] == p {
			e.String("")
		} else {
			e.String(lowers[i])
		}
	}
	// Candidate lists in the order of their first file, for a stable file.
	lists := make([][]candidate, 0, len(g.r.byName))
	for _, list := range g.r.byName {
		lists = append(lists, list)
	}
	slices.SortFunc(lists, func(a, b []candidate) int { return at[a[0].path] - at[b[0].path] })
	e.Int(len(lists))
	for _, list := range lists {
		e.Int(len(list))
		for _, c := range list {
			e.Int(at[c.path])
		}
	}
	type entry struct{ note, c int }
	byKey := make(map[string][]entry)
	for k, n := range recs {
		e.Int(len(n.links))
		for i := range n.links {
			l := &n.links[i]
			if l.folded == l.target { // the same span: the same string
				e.Int(0)
			} else {
				e.Int(1)
				e.String(l.folded.of(n.text))
			}
			if l.to == 0 {
				e.Int(0)
			} else {
				e.Int(at[g.target(l)] + 1)
			}
		}
		for _, kc := range linkKeyCounts(n.text, n.links) {
			byKey[kc.key] = append(byKey[kc.key], entry{k, int(kc.c)})
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.Int(len(keys))
	for _, k := range keys {
		e.String(k)
		ents := byKey[k]
		e.Int(len(ents))
		for _, en := range ents { // in note order: the order SetNotes adds them
			e.Int(at[notes[en.note]])
			e.Int(en.c)
		}
	}
}

// RestoreGraph returns the graph that AddFiles(files) then SetNotes(notes,
// true) would fill on a new graph with its text changes untracked, from
// what EncodeResolved wrote for the same files and notes (the same paths
// in the same order, the same links). It returns nil, nil when the encoding
// holds no graph. An encoding that does not fit the files and notes is
// reported with an error wrapping snap.ErrInvalid.
func RestoreGraph(d *snap.Dec, files []string, notes []NoteLinks) (*Graph, error) {
	bad := func(what string) error {
		if err := d.Err(); err != nil {
			return fmt.Errorf("link graph: %w", err)
		}
		return fmt.Errorf("%w: link graph: %s", snap.ErrInvalid, what)
	}
	if !d.Bool() {
		return nil, d.Err()
	}
	nf := len(files)
	g := &Graph{
		r: &Resolver{
			files:  make(map[string]uint32, nf),
			byName: make(map[string][]candidate, nf),
			paths:  idSlots[string]{at: slices.Clone(files)}, // file i's id is i
		},
		notes:     make(map[string]*noteRec, nf),
		untracked: true,
	}
	g.recs.grow(nf)
	cands := make([]candidate, nf)
	recs := make([]*noteRec, nf) // by file index
	var recSlab snap.Slab[noteRec]
	for i, p := range files {
		lower := d.String()
		if lower == "" {
			lower = p
		}
		cands[i] = candidate{path: p, lower: lower, size: jsLen(p), id: uint32(i)}
		g.r.files[p] = uint32(i)
		if vaultfs.IsNoteName(p) {
			n := &recSlab.Take(1)[0]
			n.path, n.dir = p, parentDir(lower)
			recs[i] = n
			g.addRec(n)
		}
	}
	if d.Err() != nil || len(g.r.files) != nf {
		return nil, bad("files listed twice")
	}
	nl := d.Len(1)
	listed := 0
	var candSlab snap.Slab[candidate]
	for range nl {
		list := candSlab.Take(d.Len(1))
		for j := range list {
			i := d.Int(nf - 1)
			list[j] = cands[i]
		}
		if d.Err() != nil || len(list) == 0 {
			return nil, bad("bad candidate list")
		}
		key := baseName(list[0].lower)
		if _, dup := g.r.byName[key]; dup {
			return nil, bad("candidate list twice")
		}
		for j := 1; j < len(list); j++ {
			if baseName(list[j].lower) != key || candidateCmp(list[j-1], list[j]) >= 0 {
				return nil, bad("candidate list out of order")
			}
		}
		g.r.byName[key] = list
		listed += len(list)
	}
	if listed != nf {
		return nil, bad("files missing from the candidate lists")
	}
	at := make(map[string]int, len(notes))
	var linkSlab snap.Slab[storedLink]
	var folds []string
	var tos []int
	for k, it := range notes {
		var n *noteRec
		if i, ok := slices.BinarySearch(files, it.Path); ok {
			at[it.Path] = i
			if n = recs[i]; n == nil { // a note not named like one
				n = &recSlab.Take(1)[0]
				n.path, n.dir = it.Path, parentDir(cands[i].lower)
				recs[i] = n
				g.addRec(n)
			}
		} else {
			return nil, bad(fmt.Sprintf("note %d not among the files", k))
		}
		c := d.Len(1)
		if c != len(it.Links) {
			return nil, bad(fmt.Sprintf("note %d: %d links, want %d", k, c, len(it.Links)))
		}
		if c == 0 {
			continue
		}
		folds, tos = folds[:0], tos[:0]
		for _, l := range it.Links {
			fold := l.Target
			if d.Int(1) == 1 {
				fold = d.String()
			}
			folds = append(folds, fold)
			tos = append(tos, d.Int(nf))
		}
		st := linkSlab.Take(c)
		n.text = packLinks(st, it.Links, folds)
		for j, to := range tos {
			st[j].to = uint32(to) // file to-1's id + 1, 0 when broken
		}
		n.links = st
	}
	if d.Err() != nil {
		return nil, bad("")
	}
	nk := d.Len(3)
	var srcSlab snap.Slab[srcCount]
	for range nk {
		key := d.String()
		ne := d.Len(2)
		if d.Err() != nil || key == "" || ne == 0 {
			return nil, bad("bad key index")
		}
		if _, dup := g.byKey[key]; dup {
			return nil, bad("key listed twice")
		}
		var set srcSet
		if ne > srcSetListMax {
			set.big = make(map[uint32]int32, ne)
		} else {
			set.list = srcSlab.Take(ne)
		}
		for j := range ne {
			i, c := d.Int(nf-1), int32(d.Int(1<<31-1))
			n := recs[i]
			if n == nil || c <= 0 || len(n.links) == 0 {
				return nil, bad("bad key index entry")
			}
			if set.big != nil {
				set.big[n.id] = c
			} else {
				set.list[j] = srcCount{n.id, c}
			}
		}
		if g.byKey == nil {
			g.byKey = make(map[string]uint32, nk)
			g.sets.grow(nk)
		}
		g.byKey[key] = g.sets.put(set)
	}
	if d.Err() != nil {
		return nil, bad("")
	}
	if g.byKey == nil {
		g.byKey = make(map[string]uint32)
	}
	return g, nil
}
