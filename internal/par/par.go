// Package par shares work out on the CPUs: a fixed number of workers, each
// taking its own share, the caller waiting for all of them.
package par

import (
	"runtime"
	"sync"
)

// Workers is how many workers share n items: one below least items (the
// goroutines would cost more than they save), else one per CPU, never more
// than n.
func Workers(n, least int) int {
	if n < least || n < 2 {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), n)
}

// Run calls fn(w) for each w in [0, workers), each on a goroutine of its
// own (inline for a single worker), and returns when all have returned.
func Run(workers int, fn func(w int)) {
	if workers <= 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
}
