package bench

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// Dist summarises a set of timings, in milliseconds.
type Dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted values by
// the nearest-rank method: the smallest value such that at least p percent of
// the values are less than or equal to it. It returns 0 for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	k := int(math.Ceil(p / 100 * float64(n)))
	k = min(max(k, 1), n)
	return sorted[k-1]
}

// Summarize sorts a copy of the timings and returns p50, p99 and max.
func Summarize(samples []time.Duration) Dist {
	ms := make([]float64, len(samples))
	for i, d := range samples {
		ms[i] = millis(d)
	}
	slices.Sort(ms)
	d := Dist{N: len(ms), P50: Percentile(ms, 50), P99: Percentile(ms, 99)}
	if len(ms) > 0 {
		d.Max = ms[len(ms)-1]
	}
	return d
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runLoad runs f from n workers for d, each calling it again and again
// (i counts its calls) until d is over or ctx is done, and returns the
// calls that succeeded, those that failed (each given to fail), the
// latencies of the first and their rate a second.
func runLoad(ctx context.Context, n int, d time.Duration, f func(ctx context.Context, worker, i int) error, fail func(error)) (int, int, Dist, float64) {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	var wg sync.WaitGroup
	start := time.Now()
	for w := range n {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				t := time.Now()
				if err := f(ctx, w, i); err != nil {
					bad++
					fail(err)
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	el := time.Since(start)
	return len(lat), errs, Summarize(lat), float64(len(lat)) / el.Seconds()
}
