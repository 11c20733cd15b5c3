package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// cpuTime reads a process's CPU time, with that of the children it waited
// for: a child that burns CPU shows in its parent's figure once waited for.
func TestCPUTimeCountsWaitedChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	before := cpuTime(os.Getpid())
	deadline := time.Now().Add(150 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = n * n
	}
	mine := cpuTime(os.Getpid())
	if mine <= before {
		t.Fatalf("CPU time did not grow: %v then %v", before, mine)
	}
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Skipf("no shell to burn CPU in: %v", err)
	}
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if after := cpuTime(os.Getpid()); after-mine < child/2 {
		t.Fatalf("the waited child's %v of CPU is not counted: %v then %v", child, mine, after)
	}
	if cpuTime(-1) != 0 {
		t.Fatal("a process that does not exist has CPU time")
	}
}
