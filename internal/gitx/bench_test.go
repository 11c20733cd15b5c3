package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkCommit measures one Commit of a modified note (status, commit,
// rev-parse: three git processes) in a small repository.
func BenchmarkCommit(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	git(b, dir, "init", "-q")
	r, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		writeFile(b, dir, "note.md", "version "+strconv.Itoa(i)+"\n")
		if _, err := r.Commit(ctx, []string{"note.md"}, "edit"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitLarge is BenchmarkCommit in a repository of
// VAULTMCP_BENCH_NOTES notes (default 100,000) spread over 100 folders,
// through the fast path and through `git commit` (forced by a commit hook).
func BenchmarkCommitLarge(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("VAULTMCP_BENCH_NOTES"))
	if n <= 0 {
		n = 100000
	}
	ctx := context.Background()
	dir := b.TempDir()
	git(b, dir, "init", "-q")
	for i := range n {
		writeFile(b, dir, "d"+strconv.Itoa(i%100)+"/n"+strconv.Itoa(i)+".md", "# note "+strconv.Itoa(i)+"\n")
	}
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-qm", "init")
	git(b, dir, "config", "gc.auto", "0") // no background gc racing the cleanup
	r, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	r.SetReader(osReader(dir))
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	for _, mode := range []string{"fast", "git-commit"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "git-commit" {
				if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
					b.Fatal(err)
				}
				defer os.Remove(hook)
			}
			i := 0
			for b.Loop() {
				i++
				writeFile(b, dir, "d7/n7.md", "version "+strconv.Itoa(i)+"\n")
				if _, err := r.Commit(ctx, []string{"d7/n7.md"}, "edit"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
