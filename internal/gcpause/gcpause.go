// Package gcpause lets one burst of allocation run without the garbage
// collector's proportional pacing, within a memory limit.
//
// Guarantees: while a pause is on, the collector runs only when the Go heap
// nears the pause's limit (GOGC off, GOMEMLIMIT at the limit, or at the
// user's own limit when that is lower), so memory stays bounded; once what
// is live passes half the limit (Check), the burst goes on paced by the
// GOGC in force before under a soft memory limit that follows what is live
// (the lean pacing: see Check); a burst of known size that the collector
// could not shrink can make room for itself first (Reserve); and when the
// pause ends (End) the settings
// in force before come back exactly. Nothing changes when the user chose
// the collector's settings (GOGC or GOMEMLIMIT set in the
// environment), and only one pause is on at a time in a process (a second
// Start while one is on does nothing).
//
// Why: the first index build of a vault allocates several times what it
// keeps (every note's bytes, its parse, the raw postings of the analysis),
// and at vaultmcp's GOGC=50 the collector ran a dozen cycles over a growing
// heap while both cores were needed for the build. Measured on the
// 6,570-note Obsidian hub (BenchmarkColdIndex, alternating, on a loaded
// 2-core machine): 1.26-1.86 s a build at GOGC=50, 0.79-1.17 s with the
// collector off; the build allocates about 180 MB there, so a 512 MiB limit
// never stops it. (A fixed ceiling of 896 MiB after the pause, to keep the
// generated 100k-note vault under 1 GiB, was tried first: its last batches,
// each with its parse and partial indexes alive, have 700-770 MiB live, so
// that ceiling collected at every step, and lifted at 70% of it the peak
// stayed at 1.2 GiB. The lean pacing's limit follows what is live instead:
// see Check.)
package gcpause

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultLimit is the memory limit of a pause when the caller has no better
// figure: above what the first build of a 10k-note vault allocates, far
// below what a machine running an agent has.
const DefaultLimit = 512 << 20

var (
	mu     sync.Mutex
	active *Pause
)

// Pause is one pause of the collector's pacing; its methods are safe for
// concurrent use, and those of a pause that did nothing do nothing.
type Pause struct {
	limit   int64
	percent int   // GOGC before the pause
	memory  int64 // the memory limit before the pause
	lean    bool  // Check found the live heap past half the limit
	// reserved is the largest Reserve while paused: the memory limit
	// until the lean pacing, when above limit. (Check and the lean pacing
	// still go by limit.)
	reserved int64
}

// Start pauses the collector's pacing within limit bytes (see the package
// documentation) and returns the pause.
func Start(limit int64) *Pause {
	if limit <= 0 || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return &Pause{}
	}
	mu.Lock()
	defer mu.Unlock()
	if active != nil {
		return &Pause{}
	}
	p := &Pause{limit: limit}
	p.memory = debug.SetMemoryLimit(-1)
	if p.memory < limit {
		limit = p.memory
	}
	p.percent = debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	active = p
	return p
}

// Check ends the pause of the pacing early when the live heap has passed
// half its limit: what is left of the burst is then paced with the GOGC in
// force before, under a soft memory limit (the lean pacing), until End.
// A burst larger than the limit is so never collected at every step near
// it, and its peak stays bounded: the memory limit is the larger of
// leanFloor times the pause's limit (896 MiB for the default 512 MiB) and
// what is live plus half the room GOGC gives it (1.25x what is live at
// vaultmcp's GOGC=50), taken again at every Check, and never above the
// memory limit in force before. At the end of the first build of the
// generated 100k-note vault, 700-770 MiB live took the process to 1.1-1.2
// GiB at GOGC=50 alone. Below the floor the pacing is GOGC's, so a burst
// whose live heap stays under about 600 MiB is paced as before; past it,
// each Check's limit leaves a quarter of what is live as room, so the
// collector never runs at every step.
func (p *Pause) Check() {
	if p.limit == 0 {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := int64(s[0].Value.Uint64())
	mu.Lock()
	defer mu.Unlock()
	if active != p || (!p.lean && live <= p.limit/2) {
		return
	}
	if !p.lean {
		p.lean = true
		debug.SetGCPercent(p.percent)
	}
	debug.SetMemoryLimit(leanLimit(p.limit, live, p.percent, p.memory))
}

// Reserve makes room within the pause for n bytes of Go heap that the
// burst is known to keep: while the pacing is paused, the memory limit is
// raised to n when n is above it, never above the memory limit in force
// before the pause; in the lean pacing, and for a pause that did nothing,
// it does nothing. Check and the lean pacing still go by the pause's own
// limit. For an allocation whose size is known before it starts
// and which the collector could not shrink, such as the decoding of an
// index snapshot: nearly everything it allocates stays live (its strings
// share the file's bytes), so each cycle the limit set off freed almost
// nothing. At 100k notes (a 254 MiB snapshot decoded into about 700 MiB
// of heap) the 512 MiB limit set off six to nine cycles back to back,
// 0.6-0.9 s of a start from the snapshot in one run of two, depending on
// when the walk's Check saw the heap (see the vault package's
// readSnapshot).
func (p *Pause) Reserve(n int64) {
	mu.Lock()
	defer mu.Unlock()
	if active != p || p.limit == 0 || p.lean || n <= p.limit || n <= p.reserved {
		return
	}
	p.reserved = n
	debug.SetMemoryLimit(min(n, p.memory))
}

// leanFloor is the lowest memory limit of the lean pacing, in pause
// limits.
const leanFloor = 1.75

// leanLimit is the memory limit of the lean pacing (see Check) after a
// pause of limit bytes, with live bytes live, GOGC percent and the memory
// limit memory before the pause.
func leanLimit(limit, live int64, percent int, memory int64) int64 {
	if percent < 0 {
		return memory // the collector is off: the limit before is all there is
	}
	return min(memory, max(int64(float64(limit)*leanFloor), live+live*int64(percent)/200))
}

// End restores the settings in force before the pause (once; later calls
// do nothing).
func (p *Pause) End() {
	mu.Lock()
	defer mu.Unlock()
	if active != p || p.limit == 0 {
		return
	}
	active = nil
	debug.SetGCPercent(p.percent)
	debug.SetMemoryLimit(p.memory)
}

// Lean reports whether p is on in its lean pacing (see Check).
func (p *Pause) Lean() bool {
	mu.Lock()
	defer mu.Unlock()
	return active == p && p.lean
}

// On reports whether a pause is on with the pacing paused (for tests and
// logs).
func On() bool {
	mu.Lock()
	defer mu.Unlock()
	return active != nil && !active.lean
}

// Lean reports whether a pause is in its lean pacing (see Check).
func Lean() bool {
	mu.Lock()
	defer mu.Unlock()
	return active != nil && active.lean
}
