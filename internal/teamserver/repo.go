package teamserver

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// repo is the read side of a project's git repository that the server needs
// beyond the vault service: finding the commit of an idempotency token and
// what it changed.
type repo struct{ r *gitx.Repo }

func openRepo(ctx context.Context, dir string) (*repo, error) {
	r, err := gitx.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &repo{r}, nil
}

// commitWithToken returns the commit whose message carries the token as its
// idempotency trailer (the vault writes it from api.WriteMeta, also when it
// finishes an interrupted write at start), or "" when there is none.
func (g *repo) commitWithToken(ctx context.Context, token string) (string, error) {
	out, err := g.r.Run(ctx, "log", "--fixed-strings", "--grep="+gitx.IdempotencyTrailer+": "+token, "--format=%H", "-n", "1")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// trailers returns the trailer lines ("Key: value") that end a commit's
// message.
func (g *repo) trailers(ctx context.Context, commit string) (map[string]string, error) {
	out, err := g.r.Run(ctx, "log", "-1", "--format=%B", commit, "--")
	if err != nil {
		return nil, err
	}
	paras := strings.Split(strings.TrimSpace(string(out)), "\n\n")
	t := map[string]string{}
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			t[k] = strings.TrimSpace(v)
		}
	}
	return t, nil
}

// blobHash is the SHA-256 and the size of the file at path in a commit.
func (g *repo) blobHash(ctx context.Context, commit, path string) (hash string, size int64, err error) {
	out, err := g.r.Run(ctx, "cat-file", "blob", commit+":"+path)
	if err != nil {
		return "", 0, err
	}
	return sha256Hex(out), int64(len(out)), nil
}

// fileChange is one path a commit changed: status A, M, D or R (with From).
type fileChange struct {
	Status string
	Path   string
	From   string
}

// changes lists what a commit changed, renames detected.
func (g *repo) changes(ctx context.Context, commit string) ([]fileChange, error) {
	out, err := g.r.Run(ctx, "diff-tree", "--no-commit-id", "-r", "-M", "--name-status", "-z", "--root", commit)
	if err != nil {
		return nil, err
	}
	fields := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	var cs []fileChange
	for i := 0; i < len(fields); i++ {
		st := fields[i]
		if st == "" {
			continue
		}
		switch st[0] {
		case 'R', 'C':
			if i+2 >= len(fields) {
				return cs, nil
			}
			cs = append(cs, fileChange{Status: st[:1], From: fields[i+1], Path: fields[i+2]})
			i += 2
		default:
			if i+1 >= len(fields) {
				return cs, nil
			}
			cs = append(cs, fileChange{Status: st[:1], Path: fields[i+1]})
			i++
		}
	}
	return cs, nil
}

// hashCache remembers the content hash of a note by size and modification
// time, so that listing a vault does not read every note each time.
type hashCache struct {
	mu sync.Mutex
	m  map[string]hashEntry
}

type hashEntry struct {
	size  int64
	mtime time.Time
	hash  string
}

func (c *hashCache) get(fi vaultfs.FileInfo) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[fi.Path]
	if !ok || e.size != fi.Size || !e.mtime.Equal(fi.ModTime) {
		return "", false
	}
	return e.hash, true
}

func (c *hashCache) put(fi vaultfs.FileInfo, hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]hashEntry)
	}
	c.m[fi.Path] = hashEntry{fi.Size, fi.ModTime, hash}
}

func (c *hashCache) forget(paths ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		delete(c.m, p)
	}
}
