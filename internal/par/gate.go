package par

import (
	"context"
	"runtime"
)

// Gate admits at most a fixed number of holders at once; the others wait,
// and are admitted in the order they came (a channel wakes its blocked
// senders first in, first out).
//
// Why: a server with many clients runs each request on a goroutine of its
// own. Sixty-four searches at once, each sharing the two cores with all
// the others, each take as long as all of them together; admitted as many
// at a time as there are cores, each waits its turn and then runs alone,
// so a costly query delays the ones behind it once instead of being slowed
// sixty-four times itself, and the caches hold one search's data instead
// of sixty-four's.
type Gate struct {
	slots chan struct{}
}

// NewGate admits n holders at once; n <= 0 means one per CPU
// (GOMAXPROCS).
func NewGate(n int) *Gate {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Gate{slots: make(chan struct{}, n)}
}

// Enter waits for a place; it returns ctx's error, holding nothing, when
// ctx ends first. A nil Gate admits at once.
func (g *Gate) Enter(ctx context.Context) error {
	if g == nil {
		return nil
	}
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leave gives back the place an Enter that returned nil took.
func (g *Gate) Leave() {
	if g != nil {
		<-g.slots
	}
}
