package gitx

import (
	"encoding/hex"
	"path"
	"strings"
	"sync"
)

// treeCache keeps the tree objects the fast commit read or wrote, by id,
// and the top tree of the commits it made or read, so that a commit on top
// of one it knows finds HEAD's trees on the way to its paths without a
// `git cat-file` (a process, and at 100k notes a folder's tree of 8,000
// entries read and inflated: about 15 ms of a write). Objects never change
// under their id, so an entry is never stale; what changes is only which
// commit HEAD is, read from the files each time (refs.go), and a HEAD this
// cache does not know, or a tree on the way it does not hold, is read
// from git as before.
//
// It holds at most treeCacheBytes of tree bodies: past that, the trees not
// used by the last commits are dropped.
type treeCache struct {
	mu     sync.Mutex
	bodies map[string]*cachedTree // tree id (hex) -> body
	roots  map[string]string      // commit id -> top tree id
	order  []string               // commits in roots, oldest first
	size   int
	gen    uint64
	limit  int // bytes of bodies kept past a commit; 0 is treeCacheBytes
}

type cachedTree struct {
	raw  []byte
	used uint64 // the generation that last used it
}

const (
	treeCacheBytes   = 32 << 20
	treeCacheCommits = 8
)

// put keeps a tree body under its id.
func (c *treeCache) put(id string, raw []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bodies == nil {
		c.bodies = map[string]*cachedTree{}
	}
	if t, ok := c.bodies[id]; ok {
		t.used = c.gen
		return
	}
	c.bodies[id] = &cachedTree{raw: raw, used: c.gen}
	c.size += len(raw)
}

// putRoot records commit's top tree.
func (c *treeCache) putRoot(commit, tree string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.roots == nil {
		c.roots = map[string]string{}
	}
	if _, ok := c.roots[commit]; ok {
		return
	}
	c.roots[commit] = tree
	c.order = append(c.order, commit)
	if len(c.order) > treeCacheCommits {
		delete(c.roots, c.order[0])
		c.order = c.order[1:]
	}
}

// endCommit closes a commit's use of the cache: past the budget, the trees
// it did not use are dropped.
func (c *treeCache) endCommit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.limit
	if limit == 0 {
		limit = treeCacheBytes
	}
	if c.size > limit {
		for id, t := range c.bodies {
			if t.used != c.gen {
				c.size -= len(t.raw)
				delete(c.bodies, id)
			}
		}
	}
	c.gen++
}

// trees returns HEAD's trees at dirs ("" the top) when commit is known and
// every tree on the way is held; a folder the commit does not have is an
// empty tree (nil body), as readTrees gives it. False when git must be
// asked; errFallback when a file stands where a folder is wanted.
func (c *treeCache) trees(commit string, dirs []string, idLen int) (map[string]*tree, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	root, ok := c.roots[commit]
	if !ok {
		return nil, false, nil
	}
	ids := map[string]string{"": root} // folder -> tree id, "" for none
	var resolve func(d string) (string, bool, error)
	resolve = func(d string) (string, bool, error) {
		if id, ok := ids[d]; ok {
			return id, true, nil
		}
		parent := ""
		if i := strings.LastIndexByte(d, '/'); i >= 0 {
			parent = d[:i]
		}
		pid, ok, err := resolve(parent)
		if !ok || err != nil {
			return "", ok, err
		}
		id := ""
		if pid != "" {
			body, ok := c.bodies[pid]
			if !ok {
				return "", false, nil
			}
			mode, raw, found, err := findEntry(body.raw, path.Base(d), idLen)
			switch {
			case err != nil:
				return "", false, nil
			case found && mode != "40000":
				return "", true, errFallback
			case found:
				id = hex.EncodeToString(raw)
			}
		}
		ids[d] = id
		return id, true, nil
	}
	out := make(map[string]*tree, len(dirs))
	for _, d := range dirs {
		id, ok, err := resolve(d)
		if !ok || err != nil {
			return nil, ok, err
		}
		var raw []byte
		if id != "" {
			body, ok := c.bodies[id]
			if !ok {
				return nil, false, nil
			}
			raw = body.raw
		}
		out[d] = newTree(raw, idLen)
	}
	// Every tree of the answer is in use by this commit.
	for _, id := range ids {
		if t, ok := c.bodies[id]; ok {
			t.used = c.gen
		}
	}
	return out, true, nil
}

// findEntry finds name in a raw tree body: its mode and raw id.
func findEntry(raw []byte, name string, idLen int) (mode string, id []byte, found bool, err error) {
	t := tree{raw: raw, idLen: idLen}
	err = t.each(func(e rawEntry) bool {
		if string(e.name) == name {
			mode, id, found = string(e.mode), e.id, true
			return false
		}
		return true
	})
	return mode, id, found, err
}
