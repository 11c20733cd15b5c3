package snapshot

import (
	"errors"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A real write error in the middle (the file size limit, as a full disk
// would do): Write fails, the old snapshot stays, no temporary is left.
func TestWriteErrorMidway(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.snap")
	if err := Write(path, "k", func(e *Enc) error { e.String("old"); return nil }); err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	signal.Ignore(syscall.SIGXFSZ) // the write fails with EFBIG instead of killing the process
	defer signal.Reset(syscall.SIGXFSZ)
	lim := old
	lim.Cur = 256 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	err := Write(path, "k", func(e *Enc) error {
		for range 64 {
			e.String(strings.Repeat("x", 64<<10))
		}
		return nil
	})
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil || !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("write past the limit: %v", err)
	}
	oldKept(t, dir, path)
}
