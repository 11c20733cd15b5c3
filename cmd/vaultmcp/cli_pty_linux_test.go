package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal: the program under test writes to tty as
// to a person's terminal, the test reads what it shows from ptm.
func openPTY(t *testing.T) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		ptm.Close()
		t.Skipf("unlocking the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		ptm.Close()
		t.Skipf("naming the pseudo-terminal: %v", e)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ptm.Close()
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	return ptm, tty
}

// onTerminal runs vaultmcp with stdout and stderr on a terminal and returns
// what the terminal showed and the exit status.
func onTerminal(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	ptm, tty := openPTY(t)
	defer ptm.Close()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&shown, ptm) // ends with EIO once the program exits
	}()
	err := cmd.Wait()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal did not close")
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return shown.String(), code
}

// TestSearchOnATerminal: on a person's terminal, search shows its results
// in colour (none with NO_COLOR) and the files it could not index in its
// footer, but no raw log line; -v shows the warnings.
func TestSearchOnATerminal(t *testing.T) {
	vault := copyExampleVault(t)
	os.WriteFile(filepath.Join(vault, "bad:name.md"), []byte("# Bad\n\nretry\n"), 0o644)
	env := []string{"VAULTMCP_CACHE_DIR=off"}

	shown, code := onTerminal(t, env, "search", "--vault", vault, "retry backoff")
	if code != 0 || !strings.Contains(shown, "\x1b[1m1. 02-wiki/") || !strings.Contains(shown, "Could not index: bad:name.md") {
		t.Errorf("exit %d, terminal:\n%q", code, shown)
	}
	if strings.Contains(shown, "level=") || strings.Contains(shown, "msg=") {
		t.Errorf("raw log lines on a terminal:\n%s", shown)
	}

	shown, _ = onTerminal(t, append(env, "NO_COLOR=1"), "search", "--vault", vault, "retry backoff")
	for _, sgr := range []string{"\x1b[1m", "\x1b[2m", "\x1b[0m"} {
		if strings.Contains(shown, sgr) {
			t.Errorf("NO_COLOR: colour %q on the terminal:\n%q", sgr, shown)
		}
	}
	if !strings.Contains(shown, "1. 02-wiki/") {
		t.Errorf("NO_COLOR: no results:\n%q", shown)
	}

	shown, _ = onTerminal(t, env, "search", "-v", "--vault", vault, "retry backoff")
	if !strings.Contains(shown, "level=WARN") {
		t.Errorf("-v: no warning on the terminal:\n%s", shown)
	}
}

// TestServeOnATerminal: vaultmcp typed in a terminal (stdin a terminal)
// says on stderr what it is waiting for and how to search instead; stdout
// still carries nothing but frames (here none), and Ctrl-D ends it.
func TestServeOnATerminal(t *testing.T) {
	vault := copyExampleVault(t)
	ptm, tty := openPTY(t)
	defer ptm.Close()
	cmd := exec.Command(binary, "--vault", vault)
	cmd.Env = append(cleanEnv(), "VAULTMCP_CACHE_DIR=off")
	var stdout, stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	go io.Copy(io.Discard, ptm)                     // the terminal's echo
	if _, err := ptm.Write([]byte{4}); err != nil { // Ctrl-D: the end of the input
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout carries %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "vaultmcp: serving MCP over stdio: an MCP client") ||
		!strings.Contains(stderr.String(), "To search from a terminal: vaultmcp search QUERY") {
		t.Errorf("stderr:\n%s", stderr.String())
	}

	// A pipe on stdin (an MCP client) gets no such line.
	cmd = exec.Command(binary, "--vault", vault)
	cmd.Env = append(cleanEnv(), "VAULTMCP_CACHE_DIR=off")
	stderr.Reset()
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &stderr
	if out, err := cmd.Output(); err != nil || len(out) != 0 || strings.Contains(stderr.String(), "serving MCP over stdio") {
		t.Errorf("stdin a pipe: %v, stdout %q, stderr:\n%s", err, out, stderr.String())
	}
}
