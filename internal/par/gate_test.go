package par

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// No more than the gate's count hold it at once, and every caller gets in.
func TestGateBoundsHolders(t *testing.T) {
	g := NewGate(3)
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			if err := g.Enter(context.Background()); err != nil {
				t.Error(err)
				return
			}
			n := in.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			in.Add(-1)
			g.Leave()
		})
	}
	wg.Wait()
	if m := most.Load(); m < 1 || m > 3 {
		t.Fatalf("%d held the gate at once, at most 3 may", m)
	}
}

// A waiter whose context ends gives up holding nothing.
func TestGateCancel(t *testing.T) {
	g := NewGate(1)
	if err := g.Enter(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Enter(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	g.Leave()
	if len(g.slots) != 0 {
		t.Fatalf("%d places still held after the only holder left", len(g.slots))
	}
	var nilGate *Gate
	if err := nilGate.Enter(ctx); err != nil {
		t.Fatalf("a nil gate refused: %v", err)
	}
	nilGate.Leave()
}
