//go:build unix

package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestIndexWriteKilled: the process is killed (SIGKILL) while it holds
// index.lock, after the commit was made: the commit stands, the index is
// the one before, whole, and the lock is left behind exactly as a killed
// git leaves it (the next commit reports ErrIndexLocked until it is
// removed; then everything is as after an interrupted git add).
func TestIndexWriteKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := newRepo(t, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	before := gitOut(t, dir, "ls-files", "-s")
	writeFile(t, dir, "a.md", "ours\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestIndexWriteKilledChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GITX_KILL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed (err %v):\n%s", err, out)
	}
	if got := gitOut(t, dir, "show", "HEAD:a.md"); got != "ours" {
		t.Fatalf("HEAD:a.md = %q, want the commit made before the kill", got)
	}
	lock := filepath.Join(dir, ".git", "index.lock")
	if _, err := os.Lstat(lock); err != nil {
		t.Fatalf("no index.lock after the kill: %v", err)
	}
	if got := gitOut(t, dir, "ls-files", "-s"); got != before {
		t.Fatalf("the index changed:\n%s\nwas\n%s", got, before)
	}
	r := open(t, dir)
	r.lockRetries, r.lockWait = 1, 1
	writeFile(t, dir, "b.md", "next\n")
	if _, err := r.Commit(context.Background(), []string{"b.md"}, "next"); !errors.Is(err, ErrIndexLocked) {
		t.Fatalf("commit with the stale lock: %v, want ErrIndexLocked", err)
	}
	os.Remove(lock)
	commitOne(t, r, "a.md", "b.md")
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status = %q", st)
	}
	if err := gitCmd(dir, "fsck", "--strict").Run(); err != nil {
		t.Fatalf("fsck: %v", err)
	}
}

// TestIndexWriteKilledChild is the child of TestIndexWriteKilled.
func TestIndexWriteKilledChild(t *testing.T) {
	dir := os.Getenv("GITX_KILL_DIR")
	if dir == "" {
		t.Skip("run by TestIndexWriteKilled")
	}
	testHookIndexWrite = func() error {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	commitOne(t, open(t, dir), "a.md")
	t.Fatal("the commit returned without being killed")
}
