// Package hugeheap readies the Go heap for a burst of allocation of about
// known size, in memory the kernel backs with transparent huge pages.
//
// Why: a first index build, or the decoding of an index snapshot, takes
// fresh memory from the kernel at full speed (the hub's first build
// allocates about 140 MB with the collector paused), and the kernel hands
// it out one 4 KiB page a fault. On the 2-core virtual machine vaultmcp is
// measured on, a fault on fresh memory costs 10-12 µs: 36,000 of them were
// about 0.4 s of CPU of the hub's first start, 0.2 s of its 0.5 s to the
// first search. A huge page is one fault for 2 MiB. Go's runtime asks for
// huge pages only where the system gives them to every process
// (transparent_hugepage set to always); under madvise, the common default,
// the heap never gets them.
//
// How: Ready allocates one block of the size asked from the Go heap (fresh
// address space the kernel has not backed yet, which the runtime does not
// touch), advises the kernel to back it with huge pages (MADV_HUGEPAGE),
// and frees it at once, returning it to the runtime's free and released
// memory (debug.FreeOSMemory, which also collects once). The runtime hands
// out its free memory lowest address first, so the allocations that follow
// fill that block, a huge-page fault at a time; the advice belongs to the
// address range, so it holds while the runtime reuses, releases and reuses
// that memory again. Nothing is held: what the burst does not use stays
// address space only. When the last burst on ends (Burst.End), the ranges
// go back to small pages, so that a heap freed and taken again later is
// not faulted 2 MiB at a time.
//
// When: on Linux, only when the kernel gives huge pages on request
// (transparent_hugepage "[madvise]"), not under strict overcommit
// (vm.overcommit_memory=2, where reserving the block could fail the
// process), never above half the memory available nor above what the
// kernel has free in blocks of a huge page or more (so that no fault waits
// for the kernel to compact memory), and not when the user
// turned huge pages off: GODEBUG=disablethp=1 (the Go runtime's own
// setting) or SetEnabled(false) (vaultmcp's VAULTMCP_HUGEPAGES=off).
// Elsewhere Ready does nothing.
package hugeheap

import "sync/atomic"

// MinReady is the smallest burst Ready acts on: below it a collection to
// free the block costs more than the faults it saves.
const MinReady = 16 << 20

var (
	disabled atomic.Bool
	readied  atomic.Int64 // what Ready advised so far in the process
)

// Readied is how many bytes Ready advised for huge pages so far in the
// process (for tests and logs).
func Readied() int64 { return readied.Load() }

// SetEnabled turns Ready on (the default) or off for the process.
func SetEnabled(on bool) { disabled.Store(!on) }

// Usable reports whether Ready can act in this process: turned on, on a
// kernel that gives huge pages on request.
func Usable() bool { return !disabled.Load() && usable() }

// Burst is one burst of allocation readied by Ready.
type Burst struct {
	bytes int64
	ended atomic.Bool
}

// Bytes is how many bytes Ready advised for huge pages for this burst: 0
// when it did nothing (n below MinReady, huge pages not to be had on
// request, or turned off).
func (b *Burst) Bytes() int64 {
	if b == nil {
		return 0
	}
	return b.bytes
}

// End says the burst is over (once; a nil Burst or a second End does
// nothing). When no other burst is on, the memory readied goes back to
// the kernel's default for the process, small pages: what the burst
// touched stays in huge pages, but a server's heap that is freed, given
// back and taken again afterwards is not faulted 2 MiB at a time (on the
// 2-core machine vaultmcp is measured on, a team server kept its heap
// advised answered 3-8% fewer searches a second under 64 clients).
func (b *Burst) End() {
	if b == nil || b.bytes == 0 || b.ended.Swap(true) {
		return
	}
	end()
}

// Ready readies about n bytes of the Go heap for the allocations about to
// come (see the package documentation); End the burst when it is over.
func Ready(n int64) *Burst {
	if disabled.Load() || n < MinReady {
		return nil
	}
	r := ready(n)
	if r == 0 {
		return nil
	}
	readied.Add(r)
	return &Burst{bytes: r}
}

// Early is a burst begun before its caller knew it would need one (see
// StartEarly): Ready running on a goroutine of its own.
type Early struct {
	n     int64 // asked for
	done  chan struct{}
	burst *Burst
}

// Asked is how many bytes StartEarly asked for (Ready may give fewer, or
// none).
func (e *Early) Asked() int64 { return e.n }

// Done is closed once the burst is ready.
func (e *Early) Done() <-chan struct{} { return e.done }

// Wait waits until the burst is ready and returns it (nil when Ready did
// nothing).
func (e *Early) Wait() *Burst {
	<-e.done
	return e.burst
}

var early atomic.Pointer[Early]

// StartEarly begins Ready(n) on a goroutine of its own, for a process that
// knows from its start that a burst is coming before the code that will
// run it does: vaultmcp serve readies the first index build's heap while
// its packages are still being initialised, on a core that is otherwise
// idle then, so that the walk of the vault already allocates in huge
// pages. The burst is for whoever takes it (TakeEarly), who ends it. A
// StartEarly while one is begun and not yet taken does nothing.
func StartEarly(n int64) {
	e := &Early{n: n, done: make(chan struct{})}
	if !early.CompareAndSwap(nil, e) {
		return
	}
	go func() {
		defer close(e.done)
		e.burst = Ready(n)
	}()
}

// TakeEarly returns the burst StartEarly began, once (nil when none was
// begun, or it was taken already). The taker ends it (Wait().End()).
func TakeEarly() *Early { return early.Swap(nil) }

// On is how many bursts are on in the process (for tests).
func On() int { return on() }
