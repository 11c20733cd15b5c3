package gitx

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fast commit writes its tree objects itself, as loose objects, instead
// of through `git mktree`. mktree looks up every entry of every tree it
// writes: a note written into a folder of 2,919 notes whose objects are
// loose (a vault just added to git) cost 3,000 opens and about 100 ms in
// mktree alone, on every write. A tree object is only its entries in git's
// order; the ids are those git gave the blobs (hash-object) or read from
// HEAD's trees, so writing it needs no lookup. What is written is exactly
// what git writes: the zlib-deflated "tree <size>\0<entries>", named by its
// SHA-1 (or SHA-256) in objects/xx/…, made in a temporary file of that
// folder and linked into place (an object that already exists is left
// as it is and its time refreshed, as git does, so a prune cannot take it
// before the commit that names it lands), read-only.
//
// Where this could differ from git, the trees go through mktree as before:
// a shared repository (core.sharedRepository sets the files' modes), a
// repository with a compatibility object format (git would also record
// each object's other id), or an object folder that could not be told.
// Loose objects are flushed to disk when the configuration asks git to
// (core.fsync naming loose objects, or core.fsyncObjectFiles); git's
// default is not to, and neither is ours then.

// objectStore writes loose objects into one object folder.
type objectStore struct {
	dir       string // the objects folder
	sha256    bool
	fsync     bool // loose objects are flushed to disk
	fsyncPack bool // packs and their indexes are (pack.go)
}

// zlibWriters are reused deflaters (each holds about 256 kB), at git's
// level for loose objects (core.looseCompression's default, Z_BEST_SPEED:
// the default level took 10 ms for a tree of 3,000 entries, this one 2).
// Any level reads the same.
var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// objectID is the id git gives an object of type typ with body.
func objectID(typ string, body []byte, sha256Format bool) string {
	var h hash.Hash
	if sha256Format {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write([]byte(typ + " " + strconv.Itoa(len(body)) + "\x00"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// write stores an object of type typ with body and returns its id.
func (s objectStore) write(typ string, body []byte) (string, error) {
	header := typ + " " + strconv.Itoa(len(body)) + "\x00"
	id := objectID(typ, body, s.sha256)
	folder := filepath.Join(s.dir, id[:2])
	final := filepath.Join(folder, id[2:])
	if _, err := os.Lstat(final); err == nil {
		now := time.Now()
		_ = os.Chtimes(final, now, now) // git's freshening: a prune keeps it
		return id, nil
	}
	var z bytes.Buffer
	z.Grow(len(body)/2 + 64)
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&z)
	zw.Write([]byte(header))
	zw.Write(body)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(folder, 0o777); err != nil {
		return "", fmt.Errorf("git: object folder: %w", err)
	}
	// git names its temporary objects tmp_obj_*; its gc removes stale ones.
	tmp, err := os.CreateTemp(folder, "tmp_obj_")
	if err != nil {
		return "", fmt.Errorf("git: object: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // a no-op once linked and removed below
	if _, err := tmp.Write(z.Bytes()); err != nil {
		tmp.Close()
		return "", fmt.Errorf("git: object: %w", err)
	}
	if s.fsync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return "", fmt.Errorf("git: object: %w", err)
		}
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("git: object: %w", err)
	}
	if err := os.Chmod(tmpName, 0o444); err != nil {
		return "", fmt.Errorf("git: object: %w", err)
	}
	// Linked, not renamed, as git does: an object another process wrote
	// meanwhile is the same bytes and stays.
	if err := os.Link(tmpName, final); err != nil && !errors.Is(err, fs.ErrExist) {
		if err := os.Rename(tmpName, final); err != nil {
			return "", fmt.Errorf("git: object: %w", err)
		}
	}
	return id, nil
}

// fsyncLooseObjects tells from core.fsync's value whether loose objects
// are flushed (git's default set of components leaves them out). Each
// comma-separated component adds to the set, "-component" takes it out,
// "none" empties it.
func fsyncLooseObjects(v string) bool {
	return fsyncNames(v, "loose-object", "objects", "committed", "added", "all")
}

// fsyncIndex tells from core.fsync's value whether the index is flushed.
func fsyncIndex(v string) bool { return fsyncNames(v, "index", "added", "all") }

// fsyncReferences tells from core.fsync's value whether refs and their
// logs are flushed.
func fsyncReferences(v string) bool { return fsyncNames(v, "reference", "committed", "added", "all") }

// fsyncNames tells whether core.fsync's value v names a component of
// names (the last mention of one counts).
func fsyncNames(v string, names ...string) bool { return fsyncFrom(false, v, names...) }

// fsyncFrom is fsyncNames for a component that git's default set has (on)
// or has not.
func fsyncFrom(on bool, v string, names ...string) bool {
	for _, c := range strings.Split(strings.ToLower(v), ",") {
		c = strings.TrimSpace(c)
		neg := strings.HasPrefix(c, "-")
		c = strings.TrimPrefix(c, "-")
		switch c {
		case "none":
			on = false
		default:
			if slices.Contains(names, c) {
				on = !neg
			}
		}
	}
	return on
}
