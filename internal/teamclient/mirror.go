package teamclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/gofrs/flock"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/vault"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// A mirror is the local copy of one project of a server without the
// extension endpoints: a folder of the project's notes under the cache
// folder (<cache>/team/<hash of URL and project>), written through the
// gatekeeper, and a read-only vault service over it that answers search,
// backlinks, graph and list exactly as a local vault does. It is brought up
// to date before each call that needs it by comparing the server's content
// hashes with the copies', so only changed notes are fetched. One process
// holds a mirror folder at a time (a lock file beside it); a second process
// takes the next free folder.

// fetchers is how many notes a sync fetches at once.
const fetchers = 4

type mirror struct {
	dir  string
	lock *flock.Flock
	w    *vaultfs.Vault // writes the copies
	svc  *vault.Service // read-only, indexes them
	lang string
	log  *slog.Logger

	mu sync.Mutex // one sync at a time
	// hashes are the content hashes of the copies on disk; scanned says
	// every copy is in it (else only those looked at so far).
	hashes  map[string]string
	scanned bool
}

// mirrorOf opens (once) the mirror of a project.
func (cl *call) mirrorOf(p project) (*mirror, error) {
	c := cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.mirrors[p.ref]; m != nil {
		return m, nil
	}
	if c.closed {
		return nil, &api.Error{Code: api.CodeUnavailable, Message: "the client is closed"}
	}
	if c.cacheDir == "" {
		d, err := os.MkdirTemp("", "vaultmcp-team-")
		if err != nil {
			return nil, &api.Error{Code: api.CodeInternal, Message: "creating a folder for the project's local mirror failed", Err: err}
		}
		c.cacheDir, c.tempDir = d, true
	}
	sum := sha256.Sum256([]byte(c.base + "\n" + p.ref))
	name := hex.EncodeToString(sum[:8])
	parent := filepath.Join(c.cacheDir, "team")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, &api.Error{Code: api.CodeInternal, Message: "creating the cache folder of the project's local mirror failed", Err: err}
	}
	var m *mirror
	for i := 1; m == nil; i++ {
		dir := filepath.Join(parent, name)
		if i > 1 {
			dir += "-" + strconv.Itoa(i)
		}
		l := flock.New(dir + ".lock")
		ok, err := l.TryLock()
		if err != nil {
			return nil, &api.Error{Code: api.CodeInternal, Message: "locking the project's local mirror failed", Err: err}
		}
		if !ok {
			if i >= 16 {
				return nil, &api.Error{Code: api.CodeUnavailable, Message: "every local mirror folder of this project is in use by another vaultmcp"}
			}
			continue
		}
		var oerr error
		if m, oerr = openMirror(dir, l, c.lang, c.cacheDir, c.log); oerr != nil {
			l.Unlock()
			return nil, oerr
		}
	}
	c.mirrors[p.ref] = m
	return m, nil
}

func openMirror(dir string, l *flock.Flock, lang, cache string, log *slog.Logger) (*mirror, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &api.Error{Code: api.CodeInternal, Message: "creating the project's local mirror failed", Err: err}
	}
	m := &mirror{dir: dir, lock: l, lang: lang, log: log, hashes: map[string]string{}}
	if err := m.open(cache); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *mirror) open(cache string) error {
	w, err := vaultfs.Open(m.dir)
	if err != nil {
		return &api.Error{Code: api.CodeInternal, Message: "opening the project's local mirror failed", Err: err}
	}
	svc, err := vault.Open(context.Background(), vault.Options{Dir: m.dir, Lang: m.lang, ReadOnly: true, CacheDir: cache})
	if err != nil {
		w.Close()
		return &api.Error{Code: api.CodeInternal, Message: "indexing the project's local mirror failed", Err: err}
	}
	m.w, m.svc = w, svc
	return nil
}

func (m *mirror) close() error {
	err := m.svc.Close()
	m.w.Close()
	m.lock.Unlock()
	return err
}

// mirrorable says whether a file of the server belongs in the mirror: a
// note at a clean path that the local vault would index and could write.
func mirrorable(f teamapi.File) bool {
	rel, err := vaultfs.Clean(f.Path)
	return err == nil && rel == f.Path && !vaultfs.IsIgnored(rel) && vaultfs.CheckPolicy(rel, vaultfs.Move) == nil &&
		f.Size <= vaultfs.MaxNoteSize
}

// hashOf is the hash of the copy at rel ("" when there is none).
func (m *mirror) hashOf(rel string) string {
	if h, ok := m.hashes[rel]; ok || m.scanned {
		return h
	}
	h, err := m.w.HashOf(rel)
	if err != nil {
		return ""
	}
	m.hashes[rel] = h
	return h
}

// scan hashes every copy on disk (once, at the first full sync).
func (m *mirror) scan(ctx context.Context) error {
	if m.scanned {
		return nil
	}
	err := m.w.Walk(ctx, func(fi vaultfs.FileInfo) error {
		if !fi.IsNote {
			return nil
		}
		data, _, err := m.w.ReadWalked(fi)
		if err != nil {
			return nil
		}
		m.hashes[fi.Path] = sha256Hex(data)
		return nil
	}, nil)
	if err != nil {
		return err
	}
	m.scanned = true
	return nil
}

// put writes a copy and reindexes it.
func (m *mirror) put(rel string, data []byte) error {
	if _, err := m.w.WriteFile(rel, data, vaultfs.Move); err != nil {
		return err
	}
	m.hashes[rel] = sha256Hex(data)
	m.svc.Refresh(rel)
	return nil
}

// drop removes a copy and forgets it in the index. The gatekeeper removes
// nothing under 99-archive (a note leaves the archive only by a move), so
// an archived copy is first moved out of it under a name no note of the
// server has, then removed; a crash in between leaves a copy the next sync
// removes.
func (m *mirror) drop(rel string) error {
	if m.hashOf(rel) == "" {
		return nil
	}
	target := rel
	if vaultfs.IsArchived(rel) {
		target = "vaultmcp-dropped-" + newKey() + ".md"
		if err := m.w.Rename(rel, target); err != nil {
			return err
		}
	}
	if err := m.w.Remove(target); err != nil && vaultfs.CodeOf(err) != vaultfs.CodeNotFound {
		return err
	}
	m.w.PruneEmptyDirs(rel)
	delete(m.hashes, rel)
	m.svc.Refresh(rel)
	return nil
}

// syncAll brings the whole mirror up to date: one listing, then only the
// notes whose hash differs are fetched, and the copies of notes gone are
// removed. A sync cut short (by the budget) keeps what it fetched, so the
// next call goes on from there.
func (cl *call) syncAll(p project) (*mirror, error) {
	m, err := cl.mirrorOf(p)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.svc.Ready(cl.ctx); err != nil {
		return nil, err
	}
	files, err := cl.listFiles(p)
	if err != nil {
		return nil, err
	}
	if err := m.scan(cl.ctx); err != nil {
		return nil, &api.Error{Code: api.CodeInternal, Message: "reading the project's local mirror failed", Err: err}
	}
	want := make(map[string]teamapi.File, len(files))
	for _, f := range files {
		if mirrorable(f) {
			want[f.Path] = f
		}
	}
	for rel := range m.hashes {
		if _, ok := want[rel]; ok {
			continue
		}
		if err := m.drop(rel); err != nil {
			return nil, fieldErr("path", err)
		}
	}
	var todo []teamapi.File
	for rel, f := range want {
		if m.hashes[rel] != f.ContentHash {
			todo = append(todo, f)
		}
	}
	if len(todo) == 0 {
		return m, nil
	}
	if err := cl.fetchAll(p, m, todo); err != nil {
		return nil, err
	}
	return m, nil
}

// fetchAll fetches the notes of todo into the mirror, a few at a time.
func (cl *call) fetchAll(p project, m *mirror, todo []teamapi.File) error {
	type got struct {
		f    teamapi.File
		data []byte
		err  error
	}
	jobs := make(chan teamapi.File)
	results := make(chan got)
	var wg sync.WaitGroup
	for range min(fetchers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range jobs {
				data, err := cl.fetch(p, "path", f.Path, f.ID)
				results <- got{f, data, err}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, f := range todo {
			select {
			case jobs <- f:
			case <-cl.ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	done := 0
	var first error
	for r := range results {
		switch {
		case r.err != nil && api.CodeOf(r.err) == api.CodeNotFound:
			// Deleted since the listing: the next sync removes the copy.
		case r.err != nil:
			if first == nil {
				first = r.err
			}
		default:
			if err := m.put(r.f.Path, r.data); err != nil {
				m.log.Warn("a note of the project cannot be kept in the local mirror", "path", r.f.Path, "err", err.Error())
				continue
			}
			done++
		}
	}
	if first != nil {
		msg := first.Error()
		var ae *api.Error
		if errors.As(first, &ae) {
			msg = ae.Message
		}
		return &api.Error{Code: api.CodeOf(first), Message: fmt.Sprintf("the local index of project %s is being filled (%d of %d changed notes fetched so far; call again to go on): %s", p.ref, done, len(todo), msg), Err: first}
	}
	return nil
}
