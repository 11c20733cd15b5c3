package writelock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// liveness bounds every wait of these tests; it is never a timing assertion,
// only a guard against a hang.
const liveness = 20 * time.Second

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

func lockPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "vaultmcp.lock")
}

func acquire(t *testing.T, l *Lock) (func(), bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	release, exclusive, err := l.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return release, exclusive
}

// waitQueue waits until n writers wait for the turn.
func waitQueue(t *testing.T, l *Lock, n int) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for {
		l.mu.Lock()
		got := len(l.queue)
		l.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue length %d, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// fileFree reports whether another open file description can lock the file,
// as another process would.
func fileFree(t *testing.T, path string) bool {
	t.Helper()
	f := flock.New(path)
	ok, err := f.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		f.Unlock()
	}
	return ok
}

func TestFIFO(t *testing.T) {
	l := New(lockPath(t), 0)
	first, exclusive := acquire(t, l)
	if !exclusive {
		t.Fatal("first writer not exclusive")
	}
	const n = 30
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, exclusive := acquire(t, l)
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if !exclusive {
				t.Errorf("writer %d not exclusive", i)
			}
			release()
		}()
		waitQueue(t, l, i+1) // writer i is queued before writer i+1 starts
	}
	first()
	wg.Wait()
	for i, got := range order {
		if got != i {
			t.Fatalf("order = %v, want 0..%d", order, n-1)
		}
	}
	if len(order) != n {
		t.Fatalf("%d writers ran, want %d", len(order), n)
	}
	if !fileFree(t, l.path) {
		t.Fatal("lock file still held after the last release")
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	l := New(lockPath(t), 0)
	holder, _ := acquire(t, l)
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	run := func(name string, ctx context.Context, wantErr bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, _, err := l.Acquire(ctx)
			if wantErr {
				if !errors.Is(err, context.Canceled) || release != nil {
					t.Errorf("%s: err = %v, want context.Canceled and no release", name, err)
				}
				return
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			release()
		}()
	}
	live, cancelLive := context.WithTimeout(context.Background(), liveness)
	defer cancelLive()
	doomed, cancel := context.WithCancel(context.Background())
	run("a", live, false)
	waitQueue(t, l, 1)
	run("b", doomed, true)
	waitQueue(t, l, 2)
	run("c", live, false)
	waitQueue(t, l, 3)
	cancel()
	waitQueue(t, l, 2) // b left the queue
	holder()
	wg.Wait()
	if strings.Join(order, ",") != "a,c" {
		t.Fatalf("order = %v, want a,c", order)
	}
	// Already cancelled: refused at once, nothing held.
	if _, _, err := l.Acquire(doomed); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	release, exclusive := acquire(t, l)
	if !exclusive {
		t.Fatal("not exclusive after cancellations")
	}
	release()
}

// TestCancellationStress races cancellations against hand-overs: mutual
// exclusion must hold throughout and the lock must end free.
func TestCancellationStress(t *testing.T) {
	l := New(lockPath(t), 0)
	var inside, maxInside, done atomic.Int32
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(20_000))*time.Microsecond)
			defer cancel()
			release, exclusive, err := l.Acquire(ctx)
			if err != nil {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("writer %d: %v", i, err)
				}
				return
			}
			if !exclusive {
				t.Errorf("writer %d not exclusive", i)
			}
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Duration(rand.IntN(100)) * time.Microsecond)
			inside.Add(-1)
			done.Add(1)
			release()
			release() // a second call is harmless
		}()
	}
	wg.Wait()
	if m := maxInside.Load(); m != 1 {
		t.Fatalf("%d writers inside at once", m)
	}
	l.mu.Lock()
	busy, queued, refs := l.busy, len(l.queue), l.fileRefs
	l.mu.Unlock()
	if busy || queued != 0 || refs != 0 {
		t.Fatalf("lock not free at the end: busy=%v queued=%d refs=%d", busy, queued, refs)
	}
	if !fileFree(t, l.path) {
		t.Fatal("lock file still held")
	}
	t.Logf("%d of 200 writers got the lock", done.Load())
}

func TestStuckHolder(t *testing.T) {
	path := lockPath(t)
	l := New(path, 100*time.Millisecond)
	stuckRelease, exclusive := acquire(t, l)
	if !exclusive {
		t.Fatal("first writer not exclusive")
	}
	// The next writer gets the turn once the first is declared stuck.
	next, exclusive := acquire(t, l)
	if exclusive {
		t.Fatal("writer after a stuck one was told it is exclusive")
	}
	next()
	// The stuck writer still runs, so the process keeps the file lock and
	// later writers are still not guaranteed exclusivity.
	if fileFree(t, path) {
		t.Fatal("file lock dropped while the stuck writer still runs")
	}
	again, exclusive := acquire(t, l)
	if exclusive {
		t.Fatal("exclusive while the stuck writer still runs")
	}
	// A writer waits behind the current one, as always.
	got := make(chan bool)
	go func() {
		release, exclusive := acquire(t, l)
		release()
		got <- exclusive
	}()
	waitQueue(t, l, 1)
	// The stuck writer finishes late: harmless to the queue.
	stuckRelease()
	stuckRelease()
	l.mu.Lock()
	queued := len(l.queue)
	l.mu.Unlock()
	if queued != 1 {
		t.Fatalf("the stuck release disturbed the queue: %d waiting", queued)
	}
	again()
	if exclusive := <-got; !exclusive {
		t.Fatal("not exclusive after the stuck writer released")
	}
	if !fileFree(t, path) {
		t.Fatal("file lock still held after every release")
	}
	last, exclusive := acquire(t, l)
	if !exclusive {
		t.Fatal("not exclusive once everything was released")
	}
	last()
}

// TestOtherProcessStuck uses a second Lock on the same file: its own open
// file description, so the kernel treats it as another process would be.
func TestOtherProcessStuck(t *testing.T) {
	path := lockPath(t)
	other := New(path, 0)
	otherRelease, _ := acquire(t, other)
	l := New(path, 100*time.Millisecond)
	release, exclusive := acquire(t, l)
	if exclusive {
		t.Fatal("exclusive although another process holds the file lock")
	}
	release()
	if fileFree(t, path) {
		t.Fatal("our release dropped the other process's file lock")
	}
	otherRelease()
	release, exclusive = acquire(t, l)
	if !exclusive {
		t.Fatal("not exclusive once the other process released")
	}
	release()
}

// TestBusyProcessDoesNotStarveAnother: one Lock takes and releases the file
// lock in a tight loop; a second one must still get exclusive turns (the
// gate). Its stuck bound of 3 s is a generous liveness bound: with the gate
// a turn comes within milliseconds; without it (measured) the second Lock
// waited up to 6 s and would go ahead non-exclusively.
func TestBusyProcessDoesNotStarveAnother(t *testing.T) {
	path := lockPath(t)
	busy := New(path, 0)
	stop := make(chan struct{})
	var loops atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			release, _ := acquire(t, busy)
			loops.Add(1)
			time.Sleep(200 * time.Microsecond) // some work
			release()
		}
	}()
	for loops.Load() < 100 {
		time.Sleep(time.Millisecond)
	}
	l := New(path, 3*time.Second)
	for range 10 {
		release, exclusive := acquire(t, l)
		if !exclusive {
			t.Error("not exclusive")
		}
		release()
	}
	close(stop)
	wg.Wait()
}

func TestLockFileError(t *testing.T) {
	l := New(filepath.Join(t.TempDir(), "missing-dir", "vaultmcp.lock"), 0)
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	for range 2 { // the failed writer passed the turn on
		if _, _, err := l.Acquire(ctx); err == nil || !strings.Contains(err.Error(), "vaultmcp.lock") {
			t.Fatalf("err = %v, want an error naming the lock file", err)
		}
	}
}

// TestTwoProcesses runs this test binary twice as helper processes that
// increment one counter file 50 times each under the lock.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "counter")
	if err := os.WriteFile(counter, []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	const perProcess = 50
	var cmds []*exec.Cmd
	for i := range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			"VAULTMCP_WRITELOCK_HELPER=1",
			"WRITELOCK_PATH="+filepath.Join(dir, "vaultmcp.lock"),
			"WRITELOCK_COUNTER="+counter,
			"WRITELOCK_N="+strconv.Itoa(perProcess),
			"WRITELOCK_NAME="+strconv.Itoa(i),
		)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper %d output:\n%s", i, out.String())
			}
		})
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(counter)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != strconv.Itoa(2*perProcess) {
		t.Fatalf("counter = %s, want %d", got, 2*perProcess)
	}
}

// TestHelperProcess is the body of one helper process of TestTwoProcesses:
// two goroutines share its N increments.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("VAULTMCP_WRITELOCK_HELPER") != "1" {
		t.Skip("run by TestTwoProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("WRITELOCK_N"))
	counter := os.Getenv("WRITELOCK_COUNTER")
	l := New(os.Getenv("WRITELOCK_PATH"), time.Minute)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 2 {
				if err := increment(l, counter); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// increment reads the counter, pauses, and writes it back plus one, under
// the lock: without the lock, two processes would lose increments.
func increment(l *Lock, counter string) error {
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	release, exclusive, err := l.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	if !exclusive {
		return errors.New("not exclusive")
	}
	b, err := os.ReadFile(counter)
	if err != nil {
		return err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("counter %q: %w", b, err)
	}
	time.Sleep(time.Millisecond)
	return os.WriteFile(counter, []byte(strconv.Itoa(v+1)), 0o644)
}
