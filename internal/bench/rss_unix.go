//go:build unix

package bench

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// peakRSS returns the peak resident set size of a running process in bytes
// (VmHWM from /proc on Linux), or 0 when the system does not tell.
func peakRSS(pid int) int64 { return procStatus(pid, "VmHWM:") }

// currentRSS is the resident set size of a running process now (VmRSS).
func currentRSS(pid int) int64 { return procStatus(pid, "VmRSS:") }

func procStatus(pid int, field string) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// exitedMaxRSS returns the peak RSS of an exited child from its rusage.
func exitedMaxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // kilobytes on Linux and the BSDs
}

// procSelfRSS is this process's resident set size from /proc/self/statm,
// or 0 when there is no /proc.
func procSelfRSS() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// cpuTime is the CPU time (user and system) a running process has used,
// with that of its children it has waited for (git, for the server's
// commits), from /proc/PID/stat on Linux, or 0 when the system does not
// tell. The kernel counts it in clock ticks of 1/100 s (USER_HZ, 100 on
// Linux).
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 15 { // utime, stime, cutime, cstime: fields 14-17, 12-15 here
		return 0
	}
	var ticks int64
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
