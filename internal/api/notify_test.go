package api

import (
	"fmt"
	"slices"
	"testing"
)

func TestMatchPaths(t *testing.T) {
	paths := []string{"02-wiki/go/retry-backoff.md", "02-wiki/go/go-moc.md", "02-wiki/http/Retry-After.md", "03-projects/retry/plan.md", "README.md", "02-wiki/go/context.md"}
	for _, c := range []struct {
		prefix string
		limit  int
		want   []string
		total  int
	}{
		{"02-wiki/go/", 10, []string{"02-wiki/go/context.md", "02-wiki/go/go-moc.md", "02-wiki/go/retry-backoff.md"}, 3},
		{"retry", 10, []string{"02-wiki/go/retry-backoff.md", "02-wiki/http/Retry-After.md", "03-projects/retry/plan.md"}, 3},
		{"RE", 10, []string{"README.md", "02-wiki/go/retry-backoff.md", "02-wiki/http/Retry-After.md", "03-projects/retry/plan.md"}, 4},
		{`.\02-wiki\go\c`, 10, []string{"02-wiki/go/context.md"}, 1},
		{"/03", 10, []string{"03-projects/retry/plan.md"}, 1},
		{"02-wiki/", 2, []string{"02-wiki/go/context.md", "02-wiki/go/go-moc.md"}, 4},
		{"", 0, nil, 6},
		{"go/retry", 10, nil, 0}, // a prefix with a folder matches whole paths only
		{"zzz", 10, nil, 0},
	} {
		got, total := MatchPaths(paths, c.prefix, c.limit)
		if !slices.Equal(got, c.want) || total != c.total {
			t.Errorf("MatchPaths(%q, %d) = %q, %d; want %q, %d", c.prefix, c.limit, got, total, c.want, c.total)
		}
	}
}

// BenchmarkMatchPaths completes a prefix among 100,000 note paths, as a
// keystroke in a client's note picker does on a large vault.
func BenchmarkMatchPaths(b *testing.B) {
	paths := make([]string, 100_000)
	for i := range paths {
		paths[i] = fmt.Sprintf("02-wiki/domain-%03d/note-%06d-about-something.md", i%300, i)
	}
	for _, prefix := range []string{"02-wiki/domain-042/", "note-0424", "zzz"} {
		b.Run(prefix, func(b *testing.B) {
			for b.Loop() {
				MatchPaths(paths, prefix, 100)
			}
		})
	}
}
