package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gcpause"
)

// TestWorkAfterFirstAnswer: the snapshot and the end of the collector's
// pause wait for the first search's answer: after the build neither has
// happened (nor has Settled returned), after the answer both do, the
// snapshot before Settled returns.
func TestWorkAfterFirstAnswer(t *testing.T) {
	defer func(w time.Duration) { afterBuildWait = w }(afterBuildWait)
	afterBuildWait = time.Hour // only the answer ends the wait
	userGC := os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
	dir := exampleCopy(t)
	cache := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: dir, Lang: "en", CacheDir: cache, PauseGC: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	snaps := func() []string {
		m, _ := filepath.Glob(filepath.Join(cache, "index-*.snap"))
		return m
	}
	if got := snaps(); len(got) != 0 {
		t.Fatalf("snapshot written before any answer: %v", got)
	}
	if !userGC && !gcpause.On() {
		t.Fatal("the collector's pause ended before any answer")
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.Settled(short); err != context.DeadlineExceeded {
		t.Fatalf("Settled before any answer: %v", err)
	}
	if _, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"}); err != nil {
		t.Fatal(err)
	}
	long, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Settled(long); err != nil {
		t.Fatalf("Settled after the first answer: %v", err)
	}
	if got := snaps(); len(got) != 1 {
		t.Fatalf("settled, snapshots %v", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(snaps()) == 0 || gcpause.On() {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the first answer: snapshots %v, pause on %v", snaps(), gcpause.On())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLeanPauseKeptForSnapshot: a build that ended in the collector's
// lean pacing keeps it while the snapshot is written, and ends it after;
// one that did not ends its pause before writing.
func TestLeanPauseKeptForSnapshot(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("the collector's settings come from the environment")
	}
	for _, c := range []struct {
		name  string
		limit int64
		lean  bool
	}{{"lean", 64 << 10, true}, {"paused", 1 << 30, false}} {
		t.Run(c.name, func(t *testing.T) {
			type state struct{ lean, on bool }
			seen := make(chan state, 1)
			testHookSnapshotWrite = func() {
				select {
				case seen <- state{gcpause.Lean(), gcpause.On()}:
				default: // a later write (on Close) is not this test's
				}
			}
			defer func() { testHookSnapshotWrite = nil }()
			ctx := context.Background()
			cache := t.TempDir()
			s, err := Open(ctx, Options{Dir: exampleCopy(t), Lang: "en", CacheDir: cache, PauseGC: c.limit})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Ready(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"}); err != nil {
				t.Fatal(err)
			}
			var st state
			select {
			case st = <-seen:
			case <-time.After(30 * time.Second):
				t.Fatal("no snapshot written 30 s after the first answer")
			}
			if st.lean != c.lean || st.on {
				t.Fatalf("while the snapshot was written: lean %v, paused %v; want lean %v, not paused", st.lean, st.on, c.lean)
			}
			deadline := time.Now().Add(30 * time.Second)
			for gcpause.Lean() || gcpause.On() {
				if time.Now().After(deadline) {
					t.Fatal("the pause still on 30 s after the snapshot began")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestSnapshotReservesHeap: reading the snapshot tells the collector's
// pause the heap the decoding takes (snapshotHeap times the file), so that
// a pause limit below it does not collect at every step.
func TestSnapshotReservesHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: pauses do nothing")
	}
	dir := exampleCopy(t)
	cache := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: dir, Lang: "en", CacheDir: cache, CacheWriteOnClose: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close() // writes the snapshot
	snaps, _ := filepath.Glob(filepath.Join(cache, "index-*.snap"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots: %v", snaps)
	}
	fi, err := os.Stat(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, Options{Dir: dir, Lang: "en", CacheDir: cache, CacheReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"}); err != nil {
		t.Fatal(err) // the first answer: the service's own pause ends
	}
	deadline := time.Now().Add(30 * time.Second)
	for gcpause.On() || gcpause.Lean() {
		if time.Now().After(deadline) {
			t.Fatal("30 s after the first answer the pause is still on")
		}
		time.Sleep(10 * time.Millisecond)
	}

	before := debug.SetMemoryLimit(-1)
	const pauseLimit = 4 << 10 // far below the snapshot's heap
	pause := gcpause.Start(pauseLimit)
	l := s.readSnapshot(pause, s.peekSnapshot(), nil)
	limit := debug.SetMemoryLimit(-1)
	pause.End()
	if l == nil {
		t.Fatal("the snapshot was not read")
	}
	if want := snapshotHeap * fi.Size(); limit < want-1024 || limit > want {
		t.Fatalf("reading a %d-byte snapshot in a %d-byte pause: memory limit %d, want about %d", fi.Size(), pauseLimit, limit, want)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("after the pause: memory limit %d, want %d as before", got, before)
	}
}

// TestCloseRightAfterFirstAnswer: a process that closes the service as soon
// as its first search is answered still leaves the snapshot (Close waits
// for the write that was waiting for that answer).
func TestCloseRightAfterFirstAnswer(t *testing.T) {
	// More notes than a cancelled write encodes before it stops.
	dir := t.TempDir()
	for i := range 1100 {
		body := fmt.Sprintf("# Note %d\n\nretry backoff number %d, see [[n%d]]\n", i, i, (i+1)%1100)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: dir, Lang: "en", CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "index-*.snap")); len(m) != 1 {
		t.Fatalf("snapshots after Close: %v", m)
	}
}

// TestHeapGivenBackAfterBuild: once the work after the first answer is
// done, the memory the heap no longer uses is given back to the system
// (the build's garbage, here 64 MiB of it freed before the answer), not
// kept by the process for the rest of its session.
func TestHeapGivenBackAfterBuild(t *testing.T) {
	defer func(w time.Duration) { afterBuildWait = w }(afterBuildWait)
	afterBuildWait = time.Hour // only the answer ends the wait
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: exampleCopy(t), Lang: "en", CacheDir: t.TempDir(), PauseGC: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	const garbage = 64 << 20
	b := make([]byte, garbage)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1 // backed by the system, as a build's memory is
	}
	b = nil
	runtime.GC()
	if free := heapFree(); free < garbage {
		t.Fatalf("%d bytes of free heap kept after the garbage was collected: the test cannot tell", free)
	}
	if _, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Settled(ctx); err != nil {
		t.Fatal(err)
	}
	if free := heapFree(); free >= garbage/2 {
		t.Errorf("settled, the process still keeps %d bytes of free heap", free)
	}
}

// heapFree is the heap memory the process keeps that is free (not given
// back to the system).
func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestHeapKeptWithoutPause: the heap is given back only by a service whose
// build ran with the collector's pause (a process serving one vault), not by
// one without it (a team server's project: a collection of the whole
// process each), and not by one closed before its first answer.
func TestHeapKeptWithoutPause(t *testing.T) {
	defer func(w time.Duration) { afterBuildWait = w }(afterBuildWait)
	afterBuildWait = time.Hour // only the answer ends the wait
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		pause int64
		close bool // before the first answer
		want  int64
	}{{"paused", 1 << 30, false, 1}, {"no pause", 0, false, 0}, {"closed first", 1 << 30, true, 0}} {
		s, err := Open(ctx, Options{Dir: exampleCopy(t), Lang: "en", CacheDir: t.TempDir(), PauseGC: c.pause})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		before := heapGivenBack.Load()
		if c.close {
			s.Close()
		} else {
			if _, err := s.Search(ctx, api.SearchRequest{Query: "retry backoff"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Settled(ctx); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}
		if got := heapGivenBack.Load() - before; got != c.want {
			t.Errorf("%s: heap given back %d times, want %d", c.name, got, c.want)
		}
	}
}
