package sqlitestore

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// Every request looks its key up (KeyByHash); through database/sql and
// SQLite that is a tenth of a search's cost on the server. An active key
// found is kept in memory, and served again only while the database has
// not changed since the lookup began: the size and modification time of
// the database file and of its write-ahead log (every commit, by any
// process, appends to the log or, after a checkpoint, rewrites the file),
// and for at most keyCacheTTL, which bounds what a coarse file clock could
// hide. A key revoked by `key revoke` (another process) is refused from the
// next request on. A key not found is never kept.

// keyCacheTTL bounds how long a cached key is served without a lookup.
const keyCacheTTL = time.Second

// keyCacheMax bounds the cache; it is emptied when full.
const keyCacheMax = 4096

type cachedKey struct {
	key teamstore.Key
	sig string
	at  time.Time
}

type keyCache struct {
	mu    sync.Mutex
	files []string // the database file and its log
	m     map[string]cachedKey
	now   func() time.Time
}

func newKeyCache(dbFile string) *keyCache {
	return &keyCache{files: []string{dbFile, dbFile + "-wal"}, m: map[string]cachedKey{}, now: time.Now}
}

// signature is the state of the database files now.
func (c *keyCache) signature() string {
	var sig string
	for _, f := range c.files {
		fi, err := os.Stat(f)
		if err != nil {
			sig += "-;"
			continue
		}
		sig += fmt.Sprintf("%d:%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return sig
}

// get returns the cached key of hash if nothing changed since it was
// looked up, with the signature now (to store with a new lookup).
func (c *keyCache) get(hash []byte) (teamstore.Key, bool, string) {
	sig := c.signature()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[string(hash)]
	if ok && e.sig == sig && c.now().Sub(e.at) < keyCacheTTL {
		k := e.key
		k.Projects = append([]string(nil), e.key.Projects...)
		return k, true, sig
	}
	return teamstore.Key{}, false, sig
}

// put keeps k, looked up after the database had the signature sig.
func (c *keyCache) put(hash []byte, k teamstore.Key, sig string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= keyCacheMax {
		clear(c.m)
	}
	k.Projects = append([]string(nil), k.Projects...)
	c.m[string(hash)] = cachedKey{key: k, sig: sig, at: at}
}
