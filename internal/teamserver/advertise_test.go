package teamserver

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A replica asks its advertised URL which replica answers there: another
// one makes it not ready, saying why; nothing at all is logged as an error,
// its readiness left alone; itself is fine.
func TestAdvertiseChecked(t *testing.T) {
	c := newCluster(t, 1)
	a := c.reps[0]
	// The pauses between attempts, taken at once and counted: only the
	// replica advertised where nothing listens tries more than once.
	var pmu sync.Mutex
	var pauses []time.Duration
	c.pause = func(ctx context.Context, d time.Duration) bool {
		pmu.Lock()
		pauses = append(pauses, d)
		pmu.Unlock()
		return ctx.Err() == nil
	}
	var logB, logC lockedLog
	// B was given A's address (a unit file copied from A's machine).
	b := c.startFull("", c.db, a.http.URL, slog.New(slog.NewTextHandler(&logB, nil)))
	// C was given an address where nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := "http://" + ln.Addr().String()
	ln.Close()
	cc := c.startFull("", c.db, nowhere, slog.New(slog.NewTextHandler(&logC, nil)))

	ready := func(rp *replicaProc) answer { return c.do(rp, "GET", "/readyz", nil) }
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && (ready(b).status == 200 || !strings.Contains(logC.String(), "does not reach this replica")) {
		time.Sleep(20 * time.Millisecond)
	}
	got := ready(b)
	if got.status != 503 || !strings.Contains(string(got.body), "reaches another replica ("+a.srv.instance+")") {
		t.Errorf("readiness of the replica advertised at another's URL: %d %s", got.status, got.body)
	}
	if !strings.Contains(logB.String(), "the --advertise URL reaches another replica") || !strings.Contains(logB.String(), "answered_by="+a.srv.instance) {
		t.Errorf("its log does not say so:\n%s", logB.String())
	}
	if !strings.Contains(logC.String(), `level=ERROR msg="the --advertise URL does not reach this replica`) {
		t.Errorf("the log of the replica advertised where nothing listens:\n%s", logC.String())
	}
	pmu.Lock()
	if want := []time.Duration{time.Second, time.Second, time.Second, time.Second}; !slices.Equal(pauses, want) {
		t.Errorf("pauses between the attempts: %v, want %v (5 attempts a second apart, by the one advertised where nothing listens)", pauses, want)
	}
	pmu.Unlock()
	for name, rp := range map[string]*replicaProc{"the replica at its own URL": a, "the one advertised where nothing listens": cc} {
		if got := ready(rp); got.status != 200 {
			t.Errorf("readiness of %s: %d %s", name, got.status, got.body)
		}
	}
}

// lockedLog is a log's text, written by one goroutine and read by another.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
