package pollpipe

import (
	"os"
	"strconv"
	"syscall"
)

func reopen(f *os.File) (*os.File, bool) {
	if f == nil {
		return f, false
	}
	rc, err := f.SyscallConn() // not f.Fd(), which would put f in blocking mode
	if err != nil {
		return f, false
	}
	var (
		fd       int
		pipe, nb bool
	)
	if rc.Control(func(u uintptr) {
		fd = int(u)
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil {
			pipe = st.Mode&syscall.S_IFMT == syscall.S_IFIFO
		}
		if fl, err := fcntl(fd, syscall.F_GETFL); err == nil {
			nb = fl&syscall.O_NONBLOCK != 0
		}
	}) != nil || !pipe || nb {
		// Not a pipe, or in non-blocking mode already: the os package
		// reads a non-blocking descriptor through the poller itself.
		return f, false
	}
	// O_NONBLOCK on the open itself: opening a pipe for reading otherwise
	// waits for a writer, forever when the client has closed its end.
	g, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return f, false
	}
	return g, true
}

func fcntl(fd, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
