//go:build unix

package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An admin git run (a team server's new project, its backups) ends at its
// bound even when git hangs and a process it started keeps git's output
// open (a filter, ssh): the commit of an import was not bounded at all,
// and neither run gave up on such a process.
func TestAdminGitIsBounded(t *testing.T) {
	bin := t.TempDir()
	pidFile := filepath.Join(bin, "child.pid")
	script := "#!/bin/sh\nsleep 300 &\necho $! >> '" + pidFile + "'\nwait\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Cleanup(func() {
		b, _ := os.ReadFile(pidFile)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	old := AdminTimeout
	AdminTimeout = 50 * time.Millisecond
	t.Cleanup(func() { AdminTimeout = old })

	dir := t.TempDir()
	if _, err := Admin(context.Background(), dir, "status"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Admin of a hanging git: %v, want a timeout", err)
	}
	if err := CommitAll(context.Background(), dir, "m", true); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CommitAll of a hanging git: %v, want a timeout", err)
	}
}
