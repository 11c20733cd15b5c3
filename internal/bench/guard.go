package bench

import (
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// guard watches this process's memory while vaults are measured. A vault
// operation cannot be interrupted, so when one runs away with memory the
// guard hands the figures measured so far to Options.OnMemoryLimit, which
// ends the process, instead of letting the OOM killer take them all.
type guard struct {
	limit  int64
	onOver func(*Report, error)

	mu      sync.Mutex
	base    Report        // machine and queries
	done    []VaultReport // finished vaults
	current *VaultReport  // snapshot of the vault being measured
	phase   string        // what it is doing now
	temp    []string      // temporary folders to remove before giving up
}

// addTemp registers a temporary folder the run removes itself when it ends
// normally, and the guard removes when it stops the run.
func (g *guard) addTemp(dir string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.temp = append(g.temp, dir)
	g.mu.Unlock()
}

// publish records a snapshot of the vault being measured and the phase it
// enters. vr is copied: the caller keeps writing its own.
func (g *guard) publish(vr *VaultReport, phase string) {
	if g == nil {
		return
	}
	snap := *vr
	snap.Problems = slices.Clone(vr.Problems)
	g.mu.Lock()
	g.current, g.phase = &snap, phase
	g.mu.Unlock()
}

// finish moves the measured vault to the finished ones.
func (g *guard) finish(vr VaultReport) {
	if g == nil {
		return
	}
	vr.Problems = slices.Clone(vr.Problems)
	g.mu.Lock()
	g.done = append(g.done, vr)
	g.current, g.phase = nil, ""
	g.mu.Unlock()
}

// run polls the process's memory every 100 ms until ctx ends.
func (g *guard) run(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rss := selfRSS()
		if rss <= g.limit {
			continue
		}
		g.mu.Lock()
		rep := g.base
		rep.Vaults = slices.Clone(g.done)
		err := fmt.Errorf("bench stopped: this process passed its memory limit of %s (%s resident)", fmtBytes(g.limit), fmtBytes(rss))
		if g.current != nil {
			cur := *g.current
			cur.Problems = append(slices.Clone(cur.Problems), fmt.Sprintf("stopped while %s: memory passed %s (%s resident)", g.phase, fmtBytes(g.limit), fmtBytes(rss)))
			rep.Vaults = append(rep.Vaults, cur)
			err = fmt.Errorf("bench stopped: %s used more than %s of memory while %s", cur.Name, fmtBytes(g.limit), g.phase)
		}
		temp := g.temp
		g.mu.Unlock()
		for _, dir := range temp {
			os.RemoveAll(dir)
		}
		g.onOver(&rep, err)
		return
	}
}

// selfRSS is this process's resident memory: from /proc on Linux, else the
// Go runtime's view of the memory it holds from the system.
func selfRSS() int64 {
	if n := procSelfRSS(); n > 0 {
		return n
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
