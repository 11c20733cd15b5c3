package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tt := range []struct{ n, min, want int }{
		{0, 0, 1}, {1, 0, 1}, {100, 256, 1}, {256, 256, 4}, {3, 0, 3}, {10_000, 1024, 4},
	} {
		if got := Workers(tt.n, tt.min); got != tt.want {
			t.Errorf("Workers(%d, %d) = %d, want %d", tt.n, tt.min, got, tt.want)
		}
	}
}

// Run calls every worker once, concurrently, and returns once all are done.
func TestRun(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 8} {
		var calls atomic.Int64
		seen := make([]int, max(workers, 1))
		Run(workers, func(w int) {
			calls.Add(1)
			seen[w]++
		})
		want := max(workers, 1)
		if calls.Load() != int64(want) {
			t.Fatalf("Run(%d): %d calls, want %d", workers, calls.Load(), want)
		}
		for w, n := range seen {
			if n != 1 {
				t.Fatalf("Run(%d): worker %d called %d times", workers, w, n)
			}
		}
	}
}
