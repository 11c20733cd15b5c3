package teamserver

import (
	"fmt"
	"testing"
	"time"
)

// The rate limiter keeps a bucket per key; with OAuth every user is a key,
// so the buckets of users gone quiet (full again, the same as none) are
// dropped rather than kept for the life of the server.
func TestLimiterForgetsFullBuckets(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter(2, 4, func() time.Time { return now })
	for i := range 10_000 {
		if ok, _ := l.take(fmt.Sprint("user-", i)); !ok {
			t.Fatalf("user-%d refused its first request", i)
		}
		if i%100 == 99 {
			now = now.Add(3 * time.Second) // every bucket so far is full again
		}
	}
	if n := len(l.buckets); n > 4*minSweep {
		t.Errorf("%d buckets kept for 10,000 users of whom 100 were active lately", n)
	}
}

// A bucket that is not full is never dropped: a key that used its burst
// stays limited however many other keys come.
func TestLimiterKeepsDrainedBuckets(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter(1, 3, func() time.Time { return now })
	for range 3 {
		if ok, _ := l.take("busy"); !ok {
			t.Fatal("the burst was refused")
		}
	}
	for i := range 1_000 {
		l.take(fmt.Sprint("other-", i))
	}
	if ok, wait := l.take("busy"); ok || wait <= 0 {
		t.Errorf("the drained key was let through (ok %v, wait %v) after other keys came", ok, wait)
	}
}

// touchDue writes a key's last use at most once a minute, and forgets the
// keys not seen for a minute (for them the next use is due anyway).
func TestTouchDueForgetsOldKeys(t *testing.T) {
	s := &Server{touched: make(map[string]time.Time)}
	now := time.Unix(1_700_000_000, 0)
	if !s.touchDue("k", now) {
		t.Fatal("first use not due")
	}
	if s.touchDue("k", now.Add(keyTouchEvery/2)) {
		t.Error("due again within keyTouchEvery")
	}
	if !s.touchDue("k", now.Add(keyTouchEvery)) {
		t.Error("not due after keyTouchEvery")
	}
	for i := range 10_000 {
		if !s.touchDue(fmt.Sprint("user-", i), now) {
			t.Fatalf("user-%d: first use not due", i)
		}
		if i%100 == 99 {
			now = now.Add(keyTouchEvery)
		}
	}
	if n := len(s.touched); n > 4*minSweep {
		t.Errorf("%d keys remembered for 10,000 users of whom 100 were active lately", n)
	}
}
