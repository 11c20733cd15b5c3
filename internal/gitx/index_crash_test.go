//go:build unix

package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestIndexWriteKilled: the process is killed (SIGKILL) while it holds
// index.lock, after the commit was made, the new index written but not yet
// in place: the commit stands, the index is
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
	runKilledChild(t, "TestIndexWriteKilledChild", dir)
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
	// The killed process listed the lock in its ledger: it is cleared,
	// and only it (the ledger goes too).
	if removed, err := r.ClearCrashedLocks(); err != nil || len(removed) != 1 || removed[0] != lock {
		t.Fatalf("ClearCrashedLocks = %v, %v; want %s", removed, err, lock)
	}
	if ledgers, _ := filepath.Glob(filepath.Join(dir, ".git", LockLedgerPrefix+"*")); len(ledgers) != 0 {
		t.Errorf("ledgers left: %v", ledgers)
	}
	// The commit stands, the index is the one before: a.md shows as
	// changed until its entry is set to HEAD's.
	if st := gitOut(t, dir, "status", "--porcelain", "--", "a.md"); st == "" {
		t.Fatal("a.md clean before ResetIndex: the kill did not leave the index behind")
	}
	if err := r.ResetIndex(context.Background(), []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	if st := gitOut(t, dir, "status", "--porcelain", "--", "a.md"); st != "" {
		t.Fatalf("a.md after ResetIndex: %q", st)
	}
	commitOne(t, r, "a.md", "b.md")
	cleanAndWhole(t, dir)
}

// TestClearCrashedLocksSparesOthers: a lock at a path the ledger lists but
// taken since by another program (another file) is left alone.
func TestClearCrashedLocksSparesOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := killedMidCommit(t)
	lock := filepath.Join(dir, ".git", "index.lock")
	os.Remove(lock)
	if err := os.WriteFile(lock, []byte("another program's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Taken later (its inode number may be the freed one's).
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(lock, later, later); err != nil {
		t.Fatal(err)
	}
	if removed, err := open(t, dir).ClearCrashedLocks(); err != nil || len(removed) != 0 {
		t.Fatalf("ClearCrashedLocks = %v, %v; want nothing removed", removed, err)
	}
	if _, err := os.Lstat(lock); err != nil {
		t.Fatalf("another program's lock was removed: %v", err)
	}
}

// TestIndexWriteKilledChild is the child of TestIndexWriteKilled.
func TestIndexWriteKilledChild(t *testing.T) {
	dir := os.Getenv("GITX_KILL_DIR")
	if dir == "" {
		t.Skip("run by TestIndexWriteKilled")
	}
	testHookIndexInstall = func() {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	commitOne(t, open(t, dir), "a.md")
	t.Fatal("the commit returned without being killed")
}

// TestRefUpdateKilled: the process is killed (SIGKILL) while it holds the
// branch's lock, its new value written but not yet renamed into place: the
// branch is where it was, the commit before stands, the index is the one
// before, and the locks are left behind as a killed git leaves them (the
// next commit fails and says so; once they are removed, everything is as
// after an interrupted git commit).
func TestRefUpdateKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := newRepo(t, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	r := open(t, dir)
	writeFile(t, dir, "a.md", "first\n")
	first := commitOne(t, r, "a.md")
	before := gitOut(t, dir, "ls-files", "-s")
	writeFile(t, dir, "a.md", "ours\n")
	runKilledChild(t, "TestRefUpdateKilledChild", dir)
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != first {
		t.Fatalf("HEAD = %s, want %s: the branch moved", got, first)
	}
	if got := gitOut(t, dir, "ls-files", "-s"); got != before {
		t.Fatalf("the index changed:\n%s\nwas\n%s", got, before)
	}
	branch := gitOut(t, dir, "symbolic-ref", "HEAD")
	locks := []string{filepath.Join(dir, ".git", filepath.FromSlash(branch)+".lock"), filepath.Join(dir, ".git", "HEAD.lock")}
	for _, l := range locks {
		if _, err := os.Lstat(l); err != nil {
			t.Fatalf("no lock after the kill: %v", err)
		}
	}
	// Removing the index lock alone is not enough: git cannot lock the branch.
	os.Remove(filepath.Join(dir, ".git", "index.lock"))
	r2 := open(t, dir)
	r2.lockRetries, r2.lockWait = 1, 1
	if _, err := r2.Commit(context.Background(), []string{"a.md"}, "next"); err == nil {
		t.Fatal("a commit with the branch's lock held succeeded")
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != first {
		t.Fatalf("HEAD = %s after a refused commit", got)
	}
	// The killed process's ledger lists both locks: they are cleared.
	removed, err := r2.ClearCrashedLocks()
	if err != nil || len(removed) < 2 {
		t.Fatalf("ClearCrashedLocks = %v, %v", removed, err)
	}
	for _, l := range locks {
		if _, err := os.Lstat(l); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", l, err)
		}
	}
	commitOne(t, r2, "a.md")
	if got := gitOut(t, dir, "show", "HEAD:a.md"); got != "ours" {
		t.Fatalf("HEAD:a.md = %q", got)
	}
	cleanAndWhole(t, dir)
}

// TestRefUpdateKilledChild is the child of TestRefUpdateKilled.
func TestRefUpdateKilledChild(t *testing.T) {
	dir := os.Getenv("GITX_KILL_DIR")
	if dir == "" {
		t.Skip("run by TestRefUpdateKilled")
	}
	testHookRefUpdate = func() {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	commitOne(t, open(t, dir), "a.md")
	t.Fatal("the commit returned without being killed")
}

// runKilledChild runs the test binary's test child on dir and checks it was
// killed by SIGKILL.
func runKilledChild(t *testing.T, child, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GITX_KILL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed (err %v):\n%s", err, out)
	}
}

// TestClearCrashedLocksOfThisProcessID: a ledger named with this process's
// id that this process never wrote is a dead process's whose id came round
// again (a server that is a container's first process has the same id at
// every start): its locks are cleared as any dead process's.
func TestClearCrashedLocksOfThisProcessID(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := killedMidCommit(t)
	ledgers, _ := filepath.Glob(filepath.Join(dir, ".git", LockLedgerPrefix+"*"))
	if len(ledgers) != 1 {
		t.Fatalf("ledgers after the kill: %v", ledgers)
	}
	mine := filepath.Join(dir, ".git", LockLedgerPrefix+strconv.Itoa(os.Getpid()))
	if err := os.Rename(ledgers[0], mine); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, ".git", "index.lock")
	if removed, err := open(t, dir).ClearCrashedLocks(); err != nil || len(removed) != 1 || removed[0] != lock {
		t.Fatalf("ClearCrashedLocks = %v, %v; want %s", removed, err, lock)
	}
	if _, err := os.Lstat(mine); !os.IsNotExist(err) {
		t.Errorf("the dead process's ledger is still there: %v", err)
	}
}

// TestClearCrashedLocksKeepsThisProcessLocks: the ledger this process is
// writing (a commit of its own under way) is never taken for a dead one's,
// however the git directory's path is spelled.
func TestClearCrashedLocksKeepsThisProcessLocks(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	r := open(t, dir)
	l := r.ledger("")
	lock := filepath.Join(dir, ".git", "index.lock")
	l.intend(lock)
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	l.took(lock, f)
	f.Close()
	defer func() {
		os.Remove(lock)
		l.released(lock)
	}()
	link := filepath.Join(t.TempDir(), "gitdir")
	if err := os.Symlink(filepath.Join(dir, ".git"), link); err != nil {
		t.Fatal(err)
	}
	for _, gitDir := range []string{filepath.Join(dir, ".git"), link, filepath.Join(dir, ".git", "..", ".git")} {
		if removed, err := ClearCrashedLocks(gitDir); err != nil || len(removed) != 0 {
			t.Fatalf("ClearCrashedLocks(%s) = %v, %v; want this process's lock kept", gitDir, removed, err)
		}
		if _, err := os.Lstat(lock); err != nil {
			t.Fatalf("this process's lock was removed: %v", err)
		}
	}
}

// killedMidCommit is a repository whose a.md a child process was
// committing when it was killed holding git's index lock.
func killedMidCommit(t *testing.T) string {
	t.Helper()
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	writeFile(t, dir, "a.md", "ours\n")
	runKilledChild(t, "TestIndexWriteKilledChild", dir)
	return dir
}
