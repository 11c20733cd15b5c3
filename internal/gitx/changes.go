package gitx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// FileChange is one file a commit changed, with its contents on both sides
// (nil where the file does not exist: added or deleted by the commit).
type FileChange struct {
	Path          string // vault-relative
	Before, After []byte
}

// maxChangeBlob bounds one blob read by Changes: a note is at most 10 MiB
// (internal/vaultfs), so a larger blob is no note of ours.
const maxChangeBlob = 64 << 20

// Changes returns the files that commit changed inside the vault folder
// against its first parent (renames shown as a deletion and an addition),
// with their contents before and after. A root commit (the first write in a
// new repository) is compared with nothing: every file it holds was added,
// as git revert sees it.
func (r *Repo) Changes(ctx context.Context, commit string) ([]FileChange, error) {
	hash, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	args := []string{"diff-tree", "-r", "--no-renames", "--no-commit-id", "-z", "--relative"}
	if parent, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", hash+"^1"); err == nil {
		args = append(args, strings.TrimSpace(string(parent)), hash, "--")
	} else {
		args = append(args, "--root", hash, "--")
	}
	out, err := r.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	// Raw entries: ":<mode1> <mode2> <sha1> <sha2> <status>\0<path>\0".
	fields := strings.Split(string(out), "\x00")
	type entry struct{ path, before, after string }
	var entries []entry
	var want []string
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 {
			break
		}
		e := entry{path: fields[i+1]}
		if !allZero(meta[2]) {
			e.before = meta[2]
			want = append(want, e.before)
		}
		if !allZero(meta[3]) {
			e.after = meta[3]
			want = append(want, e.after)
		}
		entries = append(entries, e)
	}
	blobs, err := r.blobs(ctx, want)
	if err != nil {
		return nil, err
	}
	changes := make([]FileChange, 0, len(entries))
	for _, e := range entries {
		c := FileChange{Path: e.path}
		if e.before != "" {
			c.Before = blobs[e.before]
		}
		if e.after != "" {
			c.After = blobs[e.after]
		}
		changes = append(changes, c)
	}
	return changes, nil
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

// blobs reads the given objects with one git cat-file --batch.
func (r *Repo) blobs(ctx context.Context, ids []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	data, err := r.run(ctx, runOpts{stdin: strings.Join(ids, "\n") + "\n"}, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(bytes.NewReader(data))
	for range ids {
		head, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file: unexpected answer %q", strings.TrimSpace(head))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n > maxChangeBlob {
			return nil, fmt.Errorf("git cat-file: object %s of %s bytes", f[0], f[2])
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		if _, err := br.ReadByte(); err != nil { // the newline after the content
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		out[f[0]] = b
	}
	return out, nil
}

// Subject returns the first line of a commit's message.
func (r *Repo) Subject(ctx context.Context, commit string) (string, error) {
	msg, err := r.message(ctx, commit)
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(msg, "\n")
	return strings.TrimSpace(first), nil
}
