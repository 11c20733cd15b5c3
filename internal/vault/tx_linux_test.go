package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestMoveDiskFullMidway: the file size limit (as a full disk would) makes
// one of a move's link rewrites fail while it is staged. The move is
// refused with the file named, and nothing of it is visible: no note
// changed, no temporary file left, nothing committed. The limit is the
// whole process's, so the move runs in a child (the test binary's own log
// of opened files, which go test keeps, must not hit it).
func TestMoveDiskFullMidway(t *testing.T) {
	dir := linkedVault(t, 30)
	big := filepath.Join(dir, "notes/n015.md")
	data, _ := os.ReadFile(big)
	os.WriteFile(big, append(data, []byte(strings.Repeat("filler line\n", 12000))...), 0o644)
	gitRun(t, dir, "commit", "-qam", "a big note")
	head := gitRun(t, dir, "rev-parse", "HEAD")

	cmd := exec.Command(os.Args[0], "-test.run=^TestMoveDiskFullChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "VAULTMCP_FSIZE_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "SKIP") {
		t.Skipf("no file size limit here:\n%s", out)
	}
	if !strings.Contains(string(out), "refused with EFBIG") {
		t.Fatalf("the child did not run the move:\n%s", out)
	}
	gitClean(t, dir)
	noTemps(t, dir)
	if gitRun(t, dir, "rev-parse", "HEAD") != head || !exists(dir, "02-wiki/go/target.md") {
		t.Fatal("part of the move happened")
	}
	if got := read(t, dir, "notes/n003.md"); !strings.Contains(got, "[[target]]") {
		t.Fatalf("a link was rewritten:\n%s", got)
	}
}

// TestMoveDiskFullChild is the child of TestMoveDiskFullMidway.
func TestMoveDiskFullChild(t *testing.T) {
	dir := os.Getenv("VAULTMCP_FSIZE_DIR")
	if dir == "" {
		t.Skip("run by TestMoveDiskFullMidway")
	}
	s := openAt(t, dir)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	signal.Ignore(syscall.SIGXFSZ) // writes fail with EFBIG instead of killing the process
	defer signal.Reset(syscall.SIGXFSZ)
	lim := old
	lim.Cur = 64 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	_, err := s.Move(context.Background(), api.MoveRequest{From: "02-wiki/go/target.md", To: "02-wiki/go/renamed.md"})
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil || !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), "notes/n015.md") {
		t.Fatalf("err = %v, want EFBIG naming notes/n015.md", err)
	}
	fmt.Println("refused with EFBIG:", err)
}

// TestRunningServerFinishesACrashedWrite: a server that is already running
// on the vault finds the journal record a crashed process left (killed
// just after its commit record) and rolls it forward before its own next
// write, which then commits on top.
func TestRunningServerFinishesACrashedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	const n = 12
	dir := linkedVault(t, n)
	running := openAt(t, dir)
	runChild(t, dir, "recorded")
	if _, err := running.WriteNote(context.Background(), api.WriteRequest{Path: "notes/fresh.md", Content: "# Fresh\n"}); err != nil {
		t.Fatal(err)
	}
	gitClean(t, dir)
	if exists(dir, "02-wiki/go/target.md") || !strings.Contains(read(t, dir, "notes/n011.md"), "[[renamed]]") {
		t.Fatal("the crashed move was not finished")
	}
	log := gitRun(t, dir, "log", "--format=%s")
	if !strings.Contains(log, "move 02-wiki/go/target.md -> 02-wiki/go/renamed.md") || !strings.HasPrefix(log, "docs(vault): create notes/fresh.md") {
		t.Fatalf("history:\n%s", log)
	}
	// The running server's index follows: the note is found at its new name.
	res, err := running.Backlinks(context.Background(), api.BacklinksRequest{Path: "02-wiki/go/renamed.md"})
	if err != nil || len(res.Backlinks) != n+1 {
		t.Fatalf("backlinks of the moved note: %+v, %v", res, err)
	}
}
