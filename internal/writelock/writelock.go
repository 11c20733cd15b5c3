// Package writelock serialises the writes to one vault: a FIFO queue inside
// the process plus a lock file (flock) across processes, so that two servers
// on one vault never interleave a write.
//
// # Semantics
//
// A writer calls Acquire, does its write, and calls the release func it got.
//
//   - In-process turn. Writers of one process get the turn strictly in the
//     order they called Acquire. A writer whose context ends while it waits
//     leaves the queue (or, if the turn reached it at that moment, passes it
//     on) and gets the context's error.
//
//   - File lock. The process, not each writer, owns the lock on the file
//     (one open file description, locked with flock): it is taken when a
//     writer gets the turn and the process does not hold it yet, and let go
//     when the last writer that counts on it releases. While the process
//     holds it, no other process gets a turn, so writes of two processes never
//     interleave. The turn owner polls TryLock with a short growing pause, so
//     waiting honours the context. To keep one busy process from starving
//     another (flock has no queue), a waiting process first takes a second
//     lock file, the gate (lockPath+".gate"), and holds it until it has the
//     lock: a process coming back for the lock finds the gate taken and waits
//     its turn, so busy processes alternate. The files are never removed
//     (removing one would let two processes lock two different files); a
//     crashed holder's locks disappear with its process.
//
//   - Stuck writers. A writer that has not released stuckAfter after Acquire
//     returned is declared stuck: it loses the turn, which passes to the next
//     waiter. The stuck writer keeps running and keeps the process's file lock
//     alive (other processes still stay out) until it calls release, which is
//     then harmless to the queue. Every writer that gets the turn while a
//     stuck writer of this process is still running gets exclusive == false:
//     it may interleave with the stuck write, and the caller says so.
//
//   - Another process stuck. A turn owner that has waited stuckAfter for the
//     file lock treats the other process's writer as stuck in the same way:
//     it proceeds without the file lock and gets exclusive == false.
//
//   - Release is idempotent; calling it twice, or after being declared stuck,
//     never disturbs the queue or another writer's file lock.
//
// Across processes the order is fair between two processes (the gate), not
// FIFO among three or more.
package writelock

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// Polling of the file lock: the first retry after minPoll, doubling up to
// maxPoll.
const (
	minPoll = 2 * time.Millisecond
	maxPoll = 50 * time.Millisecond
)

// Lock serialises writes; the zero value is not usable, call New.
type Lock struct {
	path       string
	stuckAfter time.Duration
	file       *flock.Flock // the lock proper, held from acquire to release
	gate       *flock.Flock // held only while waiting for file: see takeFile

	mu       sync.Mutex
	queue    []*waiter // waiting for the turn, oldest first
	busy     bool      // some writer owns the turn (acquiring or holding)
	stuck    int       // writers declared stuck and not yet released
	fileHeld bool      // this process holds the file lock
	fileRefs int       // writers (current and stuck) covered by the file lock
}

type waiter struct {
	ready   chan struct{} // closed when the turn is handed to this waiter
	granted bool          // set under mu together with closing ready
}

// holder is one writer between Acquire and release.
type holder struct {
	covered  bool // counted in fileRefs
	stuck    bool
	released bool
	timer    *time.Timer
}

// New returns a lock whose cross-process part is the file at lockPath, with
// a companion lockPath+".gate" (both created when first needed, never
// removed; their directory must exist). A writer holding the lock
// longer than stuckAfter is declared stuck (60 s in production); zero or less
// disables stuck detection.
func New(lockPath string, stuckAfter time.Duration) *Lock {
	return &Lock{
		path:       lockPath,
		stuckAfter: stuckAfter,
		file:       flock.New(lockPath, flock.SetPermissions(0o644)),
		gate:       flock.New(lockPath+".gate", flock.SetPermissions(0o644)),
	}
}

// Acquire waits for this writer's turn and the file lock, and returns the
// release func to call when the write is over, and whether the write is
// exclusive (false when a stuck writer may still be running: see the package
// documentation). On error the writer holds nothing.
func (l *Lock) Acquire(ctx context.Context) (release func(), exclusive bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if err := l.waitTurn(ctx); err != nil {
		return nil, false, err
	}
	// This writer owns the turn: nobody else in the process touches the
	// file lock's acquisition until it passes the turn on.
	h := &holder{}
	if err := l.takeFile(ctx, h); err != nil {
		l.mu.Lock()
		l.passTurn()
		l.mu.Unlock()
		return nil, false, err
	}

	l.mu.Lock()
	exclusive = h.covered && l.stuck == 0
	if l.stuckAfter > 0 {
		h.timer = time.AfterFunc(l.stuckAfter, func() { l.declareStuck(h) })
	}
	l.mu.Unlock()
	return func() { l.release(h) }, exclusive, nil
}

// waitTurn returns once the caller owns the in-process turn.
func (l *Lock) waitTurn(ctx context.Context) error {
	l.mu.Lock()
	if !l.busy && len(l.queue) == 0 {
		l.busy = true
		l.mu.Unlock()
		return nil
	}
	w := &waiter{ready: make(chan struct{})}
	l.queue = append(l.queue, w)
	l.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		// The turn arrived as the context ended: hand it on.
		l.passTurn()
	} else {
		for i, q := range l.queue {
			if q == w {
				l.queue = append(l.queue[:i], l.queue[i+1:]...)
				break
			}
		}
	}
	return ctx.Err()
}

// passTurn gives the turn to the oldest waiter, or frees it. Called with mu
// held by the turn's owner (or on its behalf).
func (l *Lock) passTurn() {
	if len(l.queue) == 0 {
		l.busy = false
		return
	}
	w := l.queue[0]
	l.queue[0] = nil
	l.queue = l.queue[1:]
	w.granted = true
	close(w.ready)
}

// takeFile makes sure the process holds the file lock for h, polling until it
// is free, and sets h.covered when it does: h is not covered when another
// process kept the lock for stuckAfter and h goes ahead without it.
//
// Only the turn's owner calls it. When the process does not hold the file
// lock, nothing else in the process touches either lock file until the owner
// returns (fileHeld is only set by the owner, and only cleared by the release
// of the last covered writer), so the polling runs without mu.
//
// The gate file gives the processes turns: a process first takes the gate,
// then the lock, then lets the gate go. A process that has just released the
// lock and wants it again finds the gate taken by the process that waited
// meanwhile, so two busy processes alternate instead of one starving the
// other (flock itself has no queue).
func (l *Lock) takeFile(ctx context.Context, h *holder) error {
	l.mu.Lock()
	if l.fileHeld {
		l.fileRefs++
		h.covered = true
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()

	gateHeld := false
	defer func() {
		if gateHeld {
			if err := l.gate.Unlock(); err != nil {
				slog.Warn("write lock: could not unlock the gate file", "file", l.gate.Path(), "err", err)
			}
		}
	}()
	start := time.Now()
	pause := minPoll
	for {
		if !gateHeld {
			ok, err := l.gate.TryLock()
			if err != nil {
				return fmt.Errorf("write lock file %s: %w", l.gate.Path(), err)
			}
			gateHeld = ok
		}
		if gateHeld {
			ok, err := l.file.TryLock()
			if err != nil {
				return fmt.Errorf("write lock file %s: %w", l.path, err)
			}
			if ok {
				l.mu.Lock()
				l.fileHeld = true
				l.fileRefs = 1
				h.covered = true
				l.mu.Unlock()
				return nil
			}
		}

		if l.stuckAfter > 0 && time.Since(start) >= l.stuckAfter {
			slog.Warn("write lock: another process has held the lock file too long; writing without it",
				"file", l.path, "waited", time.Since(start).Round(time.Millisecond))
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, maxPoll)
	}
}

// declareStuck takes the turn away from a holder that has kept it too long.
func (l *Lock) declareStuck(h *holder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.released || h.stuck {
		return
	}
	h.stuck = true
	l.stuck++
	slog.Warn("write lock: a write is stuck; letting the next write go ahead", "after", l.stuckAfter)
	l.passTurn()
}

// release ends h's write; only its first call counts.
func (l *Lock) release(h *holder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	if h.timer != nil {
		h.timer.Stop()
	}
	if h.stuck {
		// The turn was passed on already.
		l.stuck--
	} else {
		l.passTurn()
	}
	if h.covered {
		l.fileRefs--
		if l.fileRefs == 0 && l.fileHeld {
			l.fileHeld = false
			if err := l.file.Unlock(); err != nil {
				slog.Warn("write lock: could not unlock the lock file", "file", l.path, "err", err)
			}
		}
	}
}
