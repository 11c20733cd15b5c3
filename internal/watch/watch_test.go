package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// liveness is how long a test waits for an expected event. It is not a
// performance bound: events normally arrive within milliseconds.
const liveness = 5 * time.Second

// ignoreLikeVault mirrors the vault's rule: dot segments, node_modules and
// _templates are skipped.
func ignoreLikeVault(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, ".") || seg == "node_modules" || seg == "_templates" {
			return true
		}
	}
	return false
}

// collector gathers the batches a running watcher delivers.
type collector struct {
	mu     sync.Mutex
	events []Event
	notify chan struct{}
}

func (c *collector) add(ev Event) {
	c.mu.Lock()
	c.events = append(c.events, ev)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// all returns the events delivered so far.
func (c *collector) all() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events)
}

// reset forgets the events delivered so far.
func (c *collector) reset() {
	c.mu.Lock()
	c.events = nil
	c.mu.Unlock()
}

// seen is the union of the paths of all events since the last reset.
func (c *collector) seen() map[string]bool {
	out := map[string]bool{}
	for _, ev := range c.all() {
		for _, p := range ev.Paths {
			out[p] = true
		}
	}
	return out
}

// wait blocks until every path in want has been reported since the last
// reset, failing the test after the liveness timeout.
func (c *collector) wait(t *testing.T, want ...string) map[string]bool {
	t.Helper()
	deadline := time.After(liveness)
	for {
		seen := c.seen()
		missing := []string{}
		for _, p := range want {
			if !seen[p] {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			return seen
		}
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("paths %q not reported within %v; got events %+v", missing, liveness, c.all())
		}
	}
}

// start runs a watcher on dir until the test ends.
func start(t *testing.T, dir string) (*Watcher, *collector) {
	t.Helper()
	return startAfter(t, dir, func() {})
}

// startAfter creates a watcher on dir, calls before, then runs the watcher
// until the test ends. Changes made by before are queued by the kernel but
// handled only once Run starts.
func startAfter(t *testing.T, dir string, before func()) (*Watcher, *collector) {
	t.Helper()
	w, err := New(dir, ignoreLikeVault, 10*time.Millisecond)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	before()
	return w, run(t, w)
}

// run runs w until the test ends and returns what it delivers.
func run(t *testing.T, w *Watcher) *collector {
	t.Helper()
	c := &collector{notify: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, c.add) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v after cancel, want nil", err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func watched(w *Watcher) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.dirs))
	for d := range w.dirs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func TestCreateModifyDeleteFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sub/existing.md", "x")
	_, c := start(t, dir)

	write(t, dir, "a.md", "one")
	c.wait(t, "a.md")

	c.reset()
	f, err := os.OpenFile(filepath.Join(dir, "a.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(" two"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "a.md")

	c.reset()
	write(t, dir, "sub/existing.md", "changed in a directory watched from the start")
	c.wait(t, "sub/existing.md")

	c.reset()
	if err := os.Remove(filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "a.md")
	for _, ev := range c.all() {
		if ev.Rescan {
			t.Errorf("unexpected Rescan in %+v", ev)
		}
		if !slices.IsSorted(ev.Paths) {
			t.Errorf("paths not sorted: %q", ev.Paths)
		}
	}
}

func TestRenameFileReportsBothPaths(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "notes/old.md", "x")
	_, c := start(t, dir)
	if err := os.Rename(filepath.Join(dir, "notes/old.md"), filepath.Join(dir, "notes/new.md")); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "notes/old.md", "notes/new.md")
}

func TestNewNestedTreeIsWatched(t *testing.T) {
	dir := t.TempDir()
	// The whole tree and a file in its deepest directory appear before the
	// watcher handles the creation of "x", so before it can watch anything
	// below it: the file must still be reported.
	w, c := startAfter(t, dir, func() {
		if err := os.MkdirAll(filepath.Join(dir, "x/y/z/w"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "x/y/z/w/deep.md", "deep")
	})
	c.wait(t, "x", "x/y", "x/y/z", "x/y/z/w", "x/y/z/w/deep.md")

	// Later changes in the deepest directory are seen through its own watch.
	c.reset()
	write(t, dir, "x/y/z/w/later.md", "later")
	c.wait(t, "x/y/z/w/later.md")
	if got := watched(w); !slices.Contains(got, "x/y/z/w") {
		t.Errorf("watched directories %q lack x/y/z/w", got)
	}
}

func TestRemoveDirectoryReportsIt(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "d/sub/f.md", "f")
	write(t, dir, "d/g.md", "g")
	w, c := start(t, dir)
	if got, want := watched(w), []string{"", "d", "d/sub"}; !slices.Equal(got, want) {
		t.Fatalf("watched at start = %q, want %q", got, want)
	}
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "d")
	if got, want := watched(w), []string{""}; !slices.Equal(got, want) {
		t.Errorf("watched after removal = %q, want %q", got, want)
	}
}

func TestRenameDirectoryMovesWatches(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "d/sub/f.md", "f")
	w, c := start(t, dir)
	if err := os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "e")); err != nil {
		t.Fatal(err)
	}
	// The old directory is reported as itself; the new one with its content.
	c.wait(t, "d", "e", "e/sub", "e/sub/f.md")

	// A change under the moved tree is reported under its new name only.
	c.reset()
	write(t, dir, "e/sub/new.md", "n")
	seen := c.wait(t, "e/sub/new.md")
	for p := range seen {
		if p == "d" || strings.HasPrefix(p, "d/") {
			t.Errorf("path %q reported under the directory's old name", p)
		}
	}
	if got, want := watched(w), []string{"", "e", "e/sub"}; !slices.Equal(got, want) {
		t.Errorf("watched after rename = %q, want %q", got, want)
	}
}

func TestIgnoredPathsAreNotReported(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".git/HEAD", "ref")
	write(t, dir, ".obsidian/app.json", "{}")
	write(t, dir, "node_modules/pkg/index.js", "")
	w, c := start(t, dir)
	for _, d := range watched(w) {
		if ignoreLikeVault(d) {
			t.Errorf("ignored directory %q is watched", d)
		}
	}

	write(t, dir, ".git/HEAD", "ref2")
	write(t, dir, ".git/objects/ab/cdef", "blob")
	write(t, dir, ".obsidian/workspace.json", "{}")
	write(t, dir, "node_modules/pkg/index.js", "x")
	write(t, dir, "notes/.note.md.swp", "swap")
	write(t, dir, ".trash/deleted.md", "gone")
	write(t, dir, "_templates/t.md", "tpl")
	// Editor temporary files without a dot segment are reported like any path.
	write(t, dir, "notes/note.md~", "backup")
	write(t, dir, "notes/4913", "")
	write(t, dir, "notes/note.md.tmp123", "tmp")
	// Events are delivered in order: once the sentinel is seen, every event
	// above has been handled.
	write(t, dir, "sentinel.md", "s")
	seen := c.wait(t, "sentinel.md", "notes/note.md~", "notes/4913", "notes/note.md.tmp123")
	for p := range seen {
		if ignoreLikeVault(p) {
			t.Errorf("ignored path %q was reported", p)
		}
	}
}

func TestNewErrorsHideTheDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.md")
	write(t, dir, "file.md", "x")
	for _, p := range []string{file, filepath.Join(dir, "missing")} {
		w, err := New(p, nil, time.Millisecond)
		if err == nil {
			w.Close()
			t.Fatalf("New(%s) succeeded, want an error", filepath.Base(p))
		}
		if strings.Contains(err.Error(), dir) {
			t.Errorf("error %q shows the absolute directory", err)
		}
	}
}

func TestRunTwiceAndClose(t *testing.T) {
	w, err := New(t.TempDir(), nil, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background(), func(Event) {}) }()
	deadline := time.Now().Add(liveness)
	for !w.running.Load() {
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
	if err := w.Run(context.Background(), func(Event) {}); !errors.Is(err, ErrRunning) {
		t.Errorf("second Run = %v, want ErrRunning", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Run after Close = %v, want nil", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Run(context.Background(), func(Event) {}); err != nil {
		t.Errorf("Run on a closed watcher = %v, want nil", err)
	}
}

// --- the debounce loop, driven by hand ---

type fakeTimer struct {
	c      chan time.Time
	mu     sync.Mutex
	resets []time.Duration
}

func (f *fakeTimer) C() <-chan time.Time { return f.c }
func (f *fakeTimer) Reset(d time.Duration) {
	f.mu.Lock()
	f.resets = append(f.resets, d)
	f.mu.Unlock()
}
func (f *fakeTimer) Stop() {}
func (f *fakeTimer) resetCalls() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.resets)
}

type loopHarness struct {
	w            *Watcher
	events       chan fsnotify.Event
	errs         chan error
	quiet, limit *fakeTimer
	out          chan Event
}

func newLoopHarness(t *testing.T, debounce time.Duration) *loopHarness {
	t.Helper()
	dir := t.TempDir()
	w, err := New(dir, ignoreLikeVault, debounce)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	h := &loopHarness{
		w:      w,
		events: make(chan fsnotify.Event),
		errs:   make(chan error),
		quiet:  &fakeTimer{c: make(chan time.Time)},
		limit:  &fakeTimer{c: make(chan time.Time)},
		out:    make(chan Event, 16),
	}
	timers := []timer{h.quiet, h.limit} // the loop creates quiet, then limit
	w.newTimer = func() timer {
		t := timers[0]
		timers = timers[1:]
		return t
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.loop(ctx, h.events, h.errs, func(ev Event) { h.out <- ev }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("loop returned %v", err)
		}
	})
	return h
}

func (h *loopHarness) write(rel string) {
	h.events <- fsnotify.Event{Name: filepath.Join(h.w.dir, filepath.FromSlash(rel)), Op: fsnotify.Write}
}

func (h *loopHarness) next(t *testing.T) Event {
	t.Helper()
	select {
	case ev := <-h.out:
		return ev
	case <-time.After(liveness):
		t.Fatal("no batch delivered")
		return Event{}
	}
}

func TestDebounceCoalescesBurst(t *testing.T) {
	const debounce = 50 * time.Millisecond
	h := newLoopHarness(t, debounce)
	var want []string
	for i := range 20 {
		p := fmt.Sprintf("burst/n%02d.md", i)
		h.write(p)
		h.write(p) // duplicates are merged
		want = append(want, p)
	}
	h.quiet.c <- time.Now() // the quiet period passes
	ev := h.next(t)
	if !slices.Equal(ev.Paths, want) || ev.Rescan {
		t.Errorf("batch = %+v, want the 20 paths once, sorted", ev)
	}
	select {
	case extra := <-h.out:
		t.Errorf("a burst produced more than one batch: %+v", extra)
	default:
	}
	// Every event restarted the quiet period; the batch's deadline was set once.
	if got := h.quiet.resetCalls(); len(got) != 40 || got[0] != debounce {
		t.Errorf("quiet timer resets = %v, want 40 x %v", got, debounce)
	}
	if got := h.limit.resetCalls(); !slices.Equal(got, []time.Duration{maxDelayFactor * debounce}) {
		t.Errorf("limit timer resets = %v, want one of %v", got, maxDelayFactor*debounce)
	}
}

func TestDebounceDeadlineFlushesDuringSteadyEvents(t *testing.T) {
	h := newLoopHarness(t, 10*time.Millisecond)
	h.write("a.md")
	h.write("b.md")
	h.limit.c <- time.Now() // events keep coming, but the batch is due
	if ev := h.next(t); !slices.Equal(ev.Paths, []string{"a.md", "b.md"}) {
		t.Errorf("first batch = %+v", ev)
	}
	h.write("c.md")
	h.quiet.c <- time.Now()
	if ev := h.next(t); !slices.Equal(ev.Paths, []string{"c.md"}) {
		t.Errorf("second batch = %+v", ev)
	}
	if got := len(h.limit.resetCalls()); got != 2 {
		t.Errorf("limit timer armed %d times, want once per batch (2)", got)
	}
}

func TestDebounceIgnoredPathsDoNotArmTimers(t *testing.T) {
	h := newLoopHarness(t, 10*time.Millisecond)
	h.write(".git/index")
	h.write("node_modules/x.js")
	h.write("real.md")
	h.quiet.c <- time.Now()
	if ev := h.next(t); !slices.Equal(ev.Paths, []string{"real.md"}) {
		t.Errorf("batch = %+v, want only real.md", ev)
	}
	if got := len(h.quiet.resetCalls()); got != 1 {
		t.Errorf("quiet timer armed %d times, want 1 (ignored events must not count)", got)
	}
}

func TestOverflowAsksForRescan(t *testing.T) {
	h := newLoopHarness(t, 10*time.Millisecond)
	h.errs <- fsnotify.ErrEventOverflow
	h.quiet.c <- time.Now()
	if ev := h.next(t); !ev.Rescan {
		t.Errorf("batch after overflow = %+v, want Rescan", ev)
	}
	// Other errors are logged, not delivered.
	h.errs <- errors.New("some transient error")
	h.write("after.md")
	h.quiet.c <- time.Now()
	if ev := h.next(t); ev.Rescan || !slices.Equal(ev.Paths, []string{"after.md"}) {
		t.Errorf("batch = %+v, want after.md without Rescan", ev)
	}
}

// Open watches the root alone; the caller's AddFolder watches a folder
// without listing it (an ignored one is refused, a second add is a no-op),
// a folder nobody added is not watched, and a folder created later is
// watched by the watcher itself, as with New.
func TestOpenWatchesAddedFolders(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/one.md", "x")
	write(t, dir, "a/deep/two.md", "x")
	write(t, dir, "b/three.md", "x")
	write(t, dir, ".hidden/four.md", "x")
	w, err := Open(dir, ignoreLikeVault, 10*time.Millisecond)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got := watched(w); !slices.Equal(got, []string{""}) {
		t.Fatalf("Open watches %q, want the root alone", got)
	}
	w.AddFolder("")
	w.AddFolder("a")
	w.AddFolder("a")
	w.AddFolder(".hidden")
	if got, want := watched(w), []string{"", "a"}; !slices.Equal(got, want) {
		t.Fatalf("after AddFolder: watching %q, want %q", got, want)
	}
	c := run(t, w)
	// b and a/deep were never added: their changes are not seen. The
	// write to a comes after them, so once it is reported theirs would
	// have been too.
	write(t, dir, "b/three.md", "changed")
	write(t, dir, "a/deep/two.md", "changed")
	write(t, dir, "a/one.md", "changed")
	seen := c.wait(t, "a/one.md")
	for _, p := range []string{"b/three.md", "a/deep/two.md"} {
		if seen[p] {
			t.Errorf("%s reported, but its folder was never added", p)
		}
	}
	// A folder created after Open is watched without AddFolder.
	c.reset()
	write(t, dir, "c/new.md", "x")
	c.wait(t, "c", "c/new.md")
	write(t, dir, "c/new.md", "changed")
	c.reset()
	write(t, dir, "c/later.md", "x")
	c.wait(t, "c/later.md")
}

// TestReplacedRootIsWatchedAgain: the watched directory moved away and
// another put at its path (a fresh clone, a restored backup) is watched in
// its place, with a rescan asked for; the old tree is no longer reported.
// The watcher used to ask for one rescan and then watch nothing at all.
func TestReplacedRootIsWatchedAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	write(t, dir, "d/a.md", "a")
	w, c := start(t, dir)
	waitWatched := func(what string, want ...string) {
		t.Helper()
		deadline := time.Now().Add(liveness)
		for !slices.Equal(watched(w), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: watched %q, want %q", what, watched(w), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	waitWatched("root moved away", []string{}...)
	c.reset()
	write(t, dir, "d/b.md", "b")
	waitWatched("new root in place", "", "d")
	deadline := time.Now().Add(liveness)
	for !slices.ContainsFunc(c.all(), func(ev Event) bool { return ev.Rescan }) {
		if time.Now().After(deadline) {
			t.Fatalf("no rescan asked for after the root was replaced; got %+v", c.all())
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.reset()
	write(t, dir+".old", "d/old.md", "o")
	write(t, dir, "d/c.md", "c")
	if seen := c.wait(t, "d/c.md"); seen["d/old.md"] {
		t.Errorf("a change in the moved-away tree was reported: %v", seen)
	}
}

// TestRemovedRootIsWatchedAgain: the watched directory removed while
// something holds it open (the vault does), so that the kernel does not
// tell of its removal, and made again at its path: the new one is watched,
// with a rescan asked for. Nothing was seen of it before.
func TestRemovedRootIsWatchedAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	write(t, dir, "d/a.md", "a")
	held, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, c := start(t, dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "e/b.md", "b")
	deadline := time.Now().Add(liveness)
	for !slices.ContainsFunc(c.all(), func(ev Event) bool { return ev.Rescan }) {
		if time.Now().After(deadline) {
			t.Fatalf("no rescan asked for after the root was made again; got %+v", c.all())
		}
		time.Sleep(5 * time.Millisecond)
	}
	write(t, dir, "e/c.md", "c")
	c.wait(t, "e/c.md")
}

// TestChmodIsReported: a file made readable again (or unreadable) is
// reported, so that a note that could not be read is read again; nothing
// else tells of it.
func TestChmodIsReported(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sub/a.md", "a")
	_, c := start(t, dir)
	if err := os.Chmod(filepath.Join(dir, "sub", "a.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "sub/a.md")
}

// lockedBuffer is a log destination safe for the watcher's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSetLoggerRoutesWarnings: the watcher's warnings go to the logger it is
// given (the server's, with its level and format), not to slog's default,
// which wrote them to stderr in another format whatever the level asked.
func TestSetLoggerRoutesWarnings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	write(t, dir, "a.md", "a")
	w, err := New(dir, ignoreLikeVault, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var buf lockedBuffer
	w.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	run(t, w)
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(liveness)
	for !strings.Contains(buf.String(), "level=WARN") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning logged to the given logger after the root moved away; got %q", buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
