package pollpipe

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// blockingPipe is a pipe as a child process inherits it: both ends in
// blocking mode (os.Pipe would put them in non-blocking mode).
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func nonBlocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	var ferr error
	if err := rc.Control(func(fd uintptr) { fl, ferr = fcntl(int(fd), syscall.F_GETFL) }); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	return fl&syscall.O_NONBLOCK != 0
}

func TestReopenBlockingPipe(t *testing.T) {
	r, w := blockingPipe(t)
	g, ok := Reopen(r)
	if !ok || g == r {
		t.Fatalf("Reopen of a blocking pipe = %v, %v; want a new file", g, ok)
	}
	defer g.Close()
	// Read through the poller: only a polled file takes a deadline.
	if err := g.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("the reopened pipe takes no deadline, so it is not polled: %v", err)
	}
	buf := make([]byte, 8)
	if _, err := g.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of an empty pipe = %v, want the deadline", err)
	}
	g.SetReadDeadline(time.Time{})
	// The inherited descriptor is untouched.
	if nonBlocking(t, r) {
		t.Fatal("Reopen put the original descriptor in non-blocking mode")
	}
	// The same bytes, then the end of the input when the writer closes.
	if _, err := w.Write([]byte("one\ntwo\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := io.ReadAll(g)
	if err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("read %q, %v", got, err)
	}
}

func TestReopenAfterWriterClosed(t *testing.T) {
	// The client may have written its requests and closed its end before
	// the server opens the pipe again: the open must not wait for a writer.
	r, w := blockingPipe(t)
	w.Write([]byte("last\n"))
	w.Close()
	g, ok := Reopen(r)
	if !ok {
		t.Fatal("not reopened")
	}
	defer g.Close()
	got, err := io.ReadAll(g)
	if err != nil || string(got) != "last\n" {
		t.Fatalf("read %q, %v", got, err)
	}
}

func TestCloseEndsARead(t *testing.T) {
	r, _ := blockingPipe(t)
	g, ok := Reopen(r)
	if !ok {
		t.Fatal("not reopened")
	}
	done := make(chan error, 1)
	go func() {
		_, err := g.Read(make([]byte, 1))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	g.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("read after close = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the reopened pipe did not end the read")
	}
}

func TestReopenLeavesOthers(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if g, ok := Reopen(f); ok || g != f {
		t.Fatal("a regular file was reopened")
	}
	pr, pw, err := os.Pipe() // non-blocking already: polled by the os package
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if g, ok := Reopen(pr); ok || g != pr {
		t.Fatal("a non-blocking pipe was reopened")
	}
	if g, ok := Reopen(nil); ok || g != nil {
		t.Fatal("nil was reopened")
	}
}
