package gitx

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// tree is one of HEAD's tree objects being edited by the fast commit: its
// body as git stored it and the entries set or removed since. A commit
// touches a few entries of a tree that may hold thousands (the hub has a
// folder of 2,919 notes): the entries are never all decoded, and the new
// body is the old one with the edited entries spliced in at their places.
type tree struct {
	raw   []byte // "<mode> <name>\0<raw id>" entries, in git's order
	idLen int    // bytes of a raw id: 20 (SHA-1) or 32 (SHA-256)
	edits map[string]*treeEntry
	// A few lookups scan raw; past scanLookups (a move rewrites thousands
	// of notes of a folder), the entries are indexed by name once.
	lookups int
	byName  map[string]rawEntry
}

// scanLookups is how many lookups of a tree scan its body before its
// entries are indexed.
const scanLookups = 8

// treeEntry is one entry of a tree: mode and id as mktree and ls-tree
// write them ("040000" for a folder, the id in hex).
type treeEntry struct {
	mode, typ, id string
}

func newTree(raw []byte, idLen int) *tree {
	return &tree{raw: raw, idLen: idLen, edits: map[string]*treeEntry{}}
}

// rawEntry is one entry of a raw body, its bytes within it.
type rawEntry struct {
	mode, name, id []byte
	all            []byte // the whole entry
}

// each calls f with each raw entry in order, until f returns false.
func (t *tree) each(f func(rawEntry) bool) error {
	for b := t.raw; len(b) > 0; {
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 {
			return fmt.Errorf("git: malformed tree object")
		}
		nul := bytes.IndexByte(b[sp:], 0)
		if nul < 0 || len(b) < sp+nul+1+t.idLen {
			return fmt.Errorf("git: malformed tree object")
		}
		nul += sp
		end := nul + 1 + t.idLen
		if !f(rawEntry{mode: b[:sp], name: b[sp+1 : nul], id: b[nul+1 : end], all: b[:end]}) {
			return nil
		}
		b = b[end:]
	}
	return nil
}

// decode gives a raw entry as a treeEntry.
func (e rawEntry) decode() treeEntry {
	mode, typ := string(e.mode), "blob"
	switch mode {
	case "40000":
		typ, mode = "tree", "040000"
	case "160000":
		typ = "commit"
	}
	return treeEntry{mode: mode, typ: typ, id: hex.EncodeToString(e.id)}
}

// get returns the entry called name.
func (t *tree) get(name string) (treeEntry, bool, error) {
	if e, ok := t.edits[name]; ok {
		if e == nil {
			return treeEntry{}, false, nil
		}
		return *e, true, nil
	}
	if t.lookups++; t.lookups > scanLookups && t.byName == nil {
		t.byName = map[string]rawEntry{}
		if err := t.each(func(r rawEntry) bool {
			t.byName[string(r.name)] = r
			return true
		}); err != nil {
			return treeEntry{}, false, err
		}
	}
	if t.byName != nil {
		r, ok := t.byName[name]
		if !ok {
			return treeEntry{}, false, nil
		}
		return r.decode(), true, nil
	}
	var found treeEntry
	ok := false
	err := t.each(func(r rawEntry) bool {
		if string(r.name) == name {
			found, ok = r.decode(), true
			return false
		}
		return true
	})
	return found, ok, err
}

func (t *tree) set(name string, e treeEntry) { t.edits[name] = &e }
func (t *tree) remove(name string)           { t.edits[name] = nil }

// sortKey is the name git sorts an entry by: a folder's with "/" after it.
func sortKey(name []byte, isTree bool) string {
	if isTree {
		return string(name) + "/"
	}
	return string(name)
}

// body returns the tree's new body, and whether it has no entry left.
func (t *tree) body() ([]byte, bool, error) {
	type edit struct {
		key, name string
		e         treeEntry
	}
	var adds []edit
	for n, e := range t.edits {
		if n == "" || strings.ContainsAny(n, "/\x00") {
			return nil, false, fmt.Errorf("git: tree entry name %q", n)
		}
		if e != nil {
			adds = append(adds, edit{sortKey([]byte(n), e.typ == "tree"), n, *e})
		}
	}
	slices.SortFunc(adds, func(a, b edit) int { return strings.Compare(a.key, b.key) })
	out := make([]byte, 0, len(t.raw)+len(adds)*(t.idLen+64))
	var err error
	emit := func(a edit) {
		if err != nil {
			return
		}
		out = append(out, treeMode(a.e.mode)...)
		out = append(out, ' ')
		out = append(out, a.name...)
		out = append(out, 0)
		n := len(out)
		if out, err = hex.AppendDecode(out, []byte(a.e.id)); err == nil && len(out)-n != t.idLen {
			err = fmt.Errorf("git: object id %q of %q", a.e.id, a.name)
		}
	}
	if perr := t.each(func(r rawEntry) bool {
		key := sortKey(r.name, string(r.mode) == "40000")
		for len(adds) > 0 && adds[0].key < key {
			emit(adds[0])
			adds = adds[1:]
		}
		if _, edited := t.edits[string(r.name)]; !edited {
			out = append(out, r.all...)
		}
		return err == nil
	}); perr != nil {
		return nil, false, perr
	}
	for _, a := range adds {
		emit(a)
	}
	if err != nil {
		return nil, false, err
	}
	return out, len(out) == 0, nil
}

// mktreeInput lists the tree's entries as `git mktree -z` reads them.
func (t *tree) mktreeInput() (string, error) {
	var b strings.Builder
	put := func(name string, e treeEntry) {
		fmt.Fprintf(&b, "%s %s %s\t%s\x00", e.mode, e.typ, e.id, name)
	}
	err := t.each(func(r rawEntry) bool {
		if _, edited := t.edits[string(r.name)]; !edited {
			put(string(r.name), r.decode())
		}
		return true
	})
	for n, e := range t.edits {
		if e != nil {
			put(n, *e)
		}
	}
	b.WriteByte(0) // the end of this tree
	return b.String(), err
}

// treeMode is the mode of an entry as written in a tree object (a folder
// is "40000" there, "040000" in mktree's input and ls-tree's output).
func treeMode(mode string) string {
	if mode == "040000" {
		return "40000"
	}
	return mode
}
