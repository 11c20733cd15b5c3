package vault

import (
	"container/list"
	"sync"

	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// hitCache keeps the text of recently quoted notes, so that a search does
// not read every hit's file again. An entry is served only for the very
// version of the note the index holds (same size and modification time)
// and only after vaultfs.Unchanged confirms, with one lstat, that the file
// on disk is still that one: a note changed or deleted since is read again
// (and re-indexed), as before, never served stale. Bounded in bytes (least
// recently used first out); a note over maxHitEntry is not kept.
type hitCache struct {
	mu    sync.Mutex
	max   int
	size  int
	byKey map[string]*list.Element
	order list.List // front: most recent
}

type hitEntry struct {
	path string
	file vaultfs.FileInfo
	data string // a string: a snippet's lines are slices of it
}

const (
	hitCacheBytes = 32 << 20
	maxHitEntry   = 1 << 20
)

func newHitCache(max int) *hitCache {
	return &hitCache{max: max, byKey: make(map[string]*list.Element)}
}

// get returns the bytes kept for path at the version file describes, and
// the file as it was read (for vaultfs.Unchanged).
func (c *hitCache) get(path string, file vaultfs.FileInfo) (string, vaultfs.FileInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[path]
	if !ok {
		return "", vaultfs.FileInfo{}, false
	}
	e := el.Value.(*hitEntry)
	if !sameVersion(e.file, file) {
		return "", vaultfs.FileInfo{}, false
	}
	c.order.MoveToFront(el)
	return e.data, e.file, true
}

// put keeps data as the bytes of path at version file.
func (c *hitCache) put(path string, file vaultfs.FileInfo, data string) {
	if len(data) > maxHitEntry || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[path]; ok {
		c.size -= len(el.Value.(*hitEntry).data)
		c.order.Remove(el)
		delete(c.byKey, path)
	}
	c.byKey[path] = c.order.PushFront(&hitEntry{path: path, file: file, data: data})
	c.size += len(data)
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*hitEntry)
		c.order.Remove(last)
		delete(c.byKey, e.path)
		c.size -= len(e.data)
	}
}

// drop forgets path.
func (c *hitCache) drop(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[path]; ok {
		c.size -= len(el.Value.(*hitEntry).data)
		c.order.Remove(el)
		delete(c.byKey, path)
	}
}
