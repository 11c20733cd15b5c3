//go:build unix

package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// watch starts a watchdog that stops the cluster and removes its folder
// once this process has exited, however it exits (a package without Main, a
// panic, a timeout). It runs in a process group of its own, with no tie to
// the test's output, so neither go test nor a Ctrl-C waits for it or kills
// it first.
func (c *cluster) watch() error {
	stop := []string{shellQuote(c.bin.pgctl), "-D", shellQuote(filepath.Join(c.dir, "data")), "-m", "immediate", "-w", "stop"}
	if c.asPG {
		stop = append([]string{"runuser", "-u", "postgres", "--"}, stop...)
	}
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done; %s >/dev/null 2>&1; rm -rf %s",
		os.Getpid(), strings.Join(stop, " "), shellQuote(c.dir))
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
