package teamclient

import (
	"context"
	"time"
)

// Clock is the client's time: the budget of a tool call, the timeout of
// each attempt and the pauses between attempts all read it, so that a test
// can run them on a clock of its own instead of waiting.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; stop
	// prevents that if it has not happened yet.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
	// Sleep waits d, or until ctx is done (then it returns ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real time.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
