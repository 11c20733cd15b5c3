package hugeheap

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

var (
	probeOnce sync.Once
	// hugePage is the size of a transparent huge page when the kernel
	// gives them on request; 0 when Ready cannot use them.
	hugePage uintptr
	mu       sync.Mutex // one block at a time; guards the two below
	// bursts is how many bursts are on; spans are the ranges advised for
	// them, given back to the default when the last ends.
	bursts int
	spans  [][2]uintptr
	// sysDir and procDir are where the kernel's settings are read (tests
	// point them at a folder of their own).
	sysDir  = "/sys/kernel/mm/transparent_hugepage"
	procDir = "/proc"
)

// probe decides once whether huge pages are to be had on request.
func probe() {
	hugePage = probed(os.Getenv("GODEBUG"))
}

// probed is the huge page size Ready may use under the kernel settings
// read from sysDir and procDir and the GODEBUG given; 0 for none.
func probed(godebug string) uintptr {
	for _, kv := range strings.Split(godebug, ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return 0
		}
	}
	mode, err := os.ReadFile(sysDir + "/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return 0 // "[always]": the heap has them already; "[never]": none
	}
	if oc, err := os.ReadFile(procDir + "/sys/vm/overcommit_memory"); err != nil || strings.TrimSpace(string(oc)) == "2" {
		return 0
	}
	size := uintptr(2 << 20)
	if b, err := os.ReadFile(sysDir + "/hpage_pmd_size"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v >= 1<<20 && v&(v-1) == 0 {
			size = uintptr(v)
		}
	}
	return size
}

// available is MemAvailable of /proc/meminfo in bytes; 0 when unknown.
func available() int64 {
	n, err := kBField(procDir+"/meminfo", "MemAvailable")
	if err != nil {
		return 0
	}
	return n
}

// kBField reads the line "field: N kB" of a file such as /proc/meminfo or
// /proc/self/status and returns N KiB in bytes.
func kBField(path, field string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s", path, field)
}

// freeHuge is how much free memory the kernel holds in blocks of at least
// a huge page (/proc/buddyinfo): what it can fault in huge pages without
// compacting memory first, which under the usual defrag setting
// (madvise) a fault in advised memory would wait for (an earlier trial
// here: 590-620 ms to read a 254 MiB snapshot into advised memory when the
// kernel had to compact, against 160-190 ms in small pages). Unknown, 0.
func freeHuge(hp uintptr) int64 {
	b, err := os.ReadFile(procDir + "/buddyinfo")
	if err != nil {
		return 0
	}
	minOrder := 0
	for uintptr(4096)<<minOrder < hp {
		minOrder++
	}
	var free int64
	for _, line := range strings.Split(string(b), "\n") {
		_, counts, ok := strings.Cut(line, "zone")
		if !ok {
			continue
		}
		f := strings.Fields(counts)
		if len(f) < 2 {
			continue
		}
		for order, c := range f[1:] { // f[0] is the zone's name
			n, err := strconv.ParseInt(c, 10, 64)
			if err != nil {
				return 0
			}
			if order >= minOrder {
				free += n << order * 4096
			}
		}
	}
	return free
}

func usable() bool {
	probeOnce.Do(probe)
	return hugePage != 0
}

func ready(n int64) int64 {
	probeOnce.Do(probe)
	hp := hugePage
	if hp == 0 {
		return 0
	}
	n = min(n, available()/2, freeHuge(hp))
	if n < MinReady {
		return 0
	}
	mu.Lock()
	defer mu.Unlock()
	// The block is taken without clearing it: make would clear all of it
	// whenever any of its pages had been used before (the runtime clears
	// a large allocation whole or not at all), faulting it in 4 KiB pages,
	// 100 ms of a start from the hub's snapshot in most runs here.
	// strings.Builder.Grow allocates without clearing (bytealg.MakeNoZero);
	// only the byte written, which gives the block's address, is touched.
	// It is one huge page larger, so that n bytes of it are aligned.
	size := n + int64(hp)
	var sb strings.Builder
	sb.Grow(int(size))
	sb.WriteByte(0)
	block := unsafe.Slice(unsafe.StringData(sb.String()), size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	lo := (p + hp - 1) &^ (hp - 1)
	hi := (p + uintptr(size)) &^ (hp - 1)
	if lo >= hi {
		return 0
	}
	if err := syscall.Madvise(block[lo-p:hi-p], syscall.MADV_HUGEPAGE); err != nil {
		return 0
	}
	runtime.KeepAlive(block)
	bursts++
	spans = append(spans, [2]uintptr{lo, hi})
	// Collects the block and returns it, untouched, to the released
	// memory: the runtime then knows it is zero (no clearing before reuse)
	// and counts none of it against a memory limit.
	debug.FreeOSMemory()
	return int64(hi - lo)
}

// end ends a burst; the last one gives every range advised back to the
// kernel's default (in its madvise mode, MADV_NOHUGEPAGE is that default:
// no huge page on a fault, none made by khugepaged).
func end() {
	mu.Lock()
	defer mu.Unlock()
	if bursts--; bursts > 0 {
		return
	}
	for _, s := range spans {
		syscall.Syscall(syscall.SYS_MADVISE, s[0], s[1]-s[0], syscall.MADV_NOHUGEPAGE)
	}
	spans = nil
}

func on() int {
	mu.Lock()
	defer mu.Unlock()
	return bursts
}
