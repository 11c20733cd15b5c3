package links

import (
	"fmt"
	"maps"
	"slices"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// memVault is a vault held in memory: every file path, and the bytes and
// parsed links of its notes. Move tests plan on one and check the result on
// the vault after the move.
type memVault struct {
	files []string // every file, notes included, sorted
	notes map[string][]byte
	links map[string][]markdown.Link
}

// newMemVault builds a vault from note contents and attachment paths.
func newMemVault(notes map[string]string, attachments ...string) *memVault {
	v := &memVault{notes: make(map[string][]byte), links: make(map[string][]markdown.Link)}
	for p, text := range notes {
		v.setNote(p, []byte(text))
	}
	v.files = append(slices.Collect(maps.Keys(v.notes)), attachments...)
	slices.Sort(v.files)
	return v
}

func (v *memVault) setNote(p string, src []byte) {
	v.notes[p] = src
	v.links[p] = markdown.Parse(p, src).Links
}

func (v *memVault) resolver() *Resolver {
	r := NewResolver()
	for _, f := range v.files {
		r.Add(f)
	}
	return r
}

func (v *memVault) graph() *Graph {
	g := NewGraph()
	for _, f := range v.files {
		g.AddFile(f)
	}
	for _, p := range slices.Sorted(maps.Keys(v.notes)) {
		g.SetNote(p, v.links[p])
	}
	return g
}

func (v *memVault) read(p string) ([]byte, []markdown.Link, error) {
	src, ok := v.notes[p]
	if !ok {
		return nil, nil, fmt.Errorf("read %s: no such note", p)
	}
	return src, v.links[p], nil
}

// applyMove returns the vault after moving from to to and applying plan;
// unchanged notes share their bytes and links with v.
func (v *memVault) applyMove(from, to string, plan []FileEdits) (*memVault, error) {
	w := &memVault{notes: maps.Clone(v.notes), links: maps.Clone(v.links)}
	for _, fe := range plan {
		src, ok := v.notes[fe.Path]
		if !ok {
			return nil, fmt.Errorf("plan edits %s, which is not a note", fe.Path)
		}
		if err := CheckEdits(src, fe.Edits); err != nil {
			return nil, fmt.Errorf("%s: %w", fe.Path, err)
		}
		w.setNote(fe.Path, Apply(src, fe.Edits))
	}
	if src, ok := w.notes[from]; ok {
		delete(w.notes, from)
		delete(w.links, from)
		w.setNote(to, src)
	}
	w.files = make([]string, 0, len(v.files))
	for _, f := range v.files {
		if f != from {
			w.files = append(w.files, f)
		}
	}
	w.files = append(w.files, to)
	slices.Sort(w.files)
	return w, nil
}

// moveCheck is the outcome of checking a move against the invariant.
type moveCheck struct {
	failures []string // one line per link whose target changed
	healed   int      // links broken before that reach the moved note after
	links    int      // links compared
}

// checkMove compares every link of every note before and after a move with
// two independent resolvers: a link that reached X reaches X after the move
// (to when X was from); a broken link stays broken or reaches to.
func checkMove(before, after *memVault, from, to string) moveCheck {
	rb, ra := before.resolver(), after.resolver()
	var c moveCheck
	for _, p := range slices.Sorted(maps.Keys(before.notes)) {
		p2 := p
		if p == from {
			p2 = to
		}
		lb, la := before.links[p], after.links[p2]
		if len(lb) != len(la) {
			c.failures = append(c.failures, fmt.Sprintf("%s: %d links before, %d after", p, len(lb), len(la)))
			continue
		}
		for i := range lb {
			c.links++
			x, _ := rb.ResolveLink(p, lb[i])
			y, _ := ra.ResolveLink(p2, la[i])
			want := x
			if x == from {
				want = to
			}
			switch {
			case x == "" && (y == "" || y == to):
				if y == to {
					c.healed++
				}
			case y != want || lb[i].Anchor != la[i].Anchor || lb[i].Kind != la[i].Kind || lb[i].Quote != la[i].Quote:
				c.failures = append(c.failures, fmt.Sprintf("%s:%d: %q#%s reached %q, now %q#%s reaches %q (want %q)",
					p, lb[i].Line, lb[i].Target, lb[i].Anchor, x, la[i].Target, la[i].Anchor, y, want))
			}
		}
	}
	return c
}
