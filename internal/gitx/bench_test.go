package gitx

import (
	"context"
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
