package hugeheap

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// kernel writes the settings probed reads into a folder of the test's and
// points sysDir and procDir at it; an empty value leaves a file out.
func kernel(t *testing.T, enabled, pmdSize, overcommit string) {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, v string) {
		if v == "" {
			return
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("thp/enabled", enabled)
	write("thp/hpage_pmd_size", pmdSize)
	write("proc/sys/vm/overcommit_memory", overcommit)
	oldSys, oldProc := sysDir, procDir
	sysDir, procDir = filepath.Join(dir, "thp"), filepath.Join(dir, "proc")
	t.Cleanup(func() { sysDir, procDir = oldSys, oldProc })
}

// TestProbed: huge pages are used only when the kernel gives them on
// request, not under strict overcommit, and not when GODEBUG turns them
// off; the size is the kernel's when it is a power of two.
func TestProbed(t *testing.T) {
	for _, c := range []struct {
		name, enabled, size, overcommit, godebug string
		want                                     uintptr
	}{
		{"madvise", "always [madvise] never", "2097152", "0", "", 2 << 20},
		{"madvise, heuristic overcommit 1", "always [madvise] never", "2097152", "1", "", 2 << 20},
		{"other huge page size", "always [madvise] never", "33554432", "0", "", 32 << 20},
		{"no size file", "always [madvise] never", "", "0", "", 2 << 20},
		{"size not a power of two", "always [madvise] never", "3000000", "0", "", 2 << 20},
		{"always: the heap has them already", "[always] madvise never", "2097152", "0", "", 0},
		{"never", "always madvise [never]", "2097152", "0", "", 0},
		{"no transparent huge pages", "", "", "0", "", 0},
		{"strict overcommit", "always [madvise] never", "2097152", "2", "", 0},
		{"overcommit unknown", "always [madvise] never", "2097152", "", "", 0},
		{"GODEBUG disablethp", "always [madvise] never", "2097152", "0", "madvdontneed=1,disablethp=1", 0},
		{"GODEBUG other", "always [madvise] never", "2097152", "0", "disablethp=0", 2 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			kernel(t, c.enabled, c.size, c.overcommit)
			if got := probed(c.godebug); got != c.want {
				t.Errorf("probed = %d, want %d", got, c.want)
			}
		})
	}
}

// TestAvailable reads MemAvailable in bytes.
func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	old := procDir
	procDir = dir
	t.Cleanup(func() { procDir = old })
	if got := available(); got != 0 {
		t.Errorf("available with no meminfo = %d, want 0", got)
	}
	meminfo := "MemTotal:       24683520 kB\nMemFree:        22834560 kB\nMemAvailable:   23991808 kB\nBuffers: 1 kB\n"
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte(meminfo), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := available(), int64(23991808)<<10; got != want {
		t.Errorf("available = %d, want %d", got, want)
	}
}

// TestFreeHuge sums the free blocks of a huge page or more, every zone
// and node.
func TestFreeHuge(t *testing.T) {
	dir := t.TempDir()
	old := procDir
	procDir = dir
	t.Cleanup(func() { procDir = old })
	if got := freeHuge(2 << 20); got != 0 {
		t.Errorf("freeHuge with no buddyinfo = %d, want 0", got)
	}
	buddy := "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n" +
		"Node 0, zone    DMA32      2      4      2      2      1      2      0      3      3      1    753 \n" +
		"Node 1, zone   Normal   5502   3507   1863   1257    643    308    735    590    335      0    352 \n"
	if err := os.WriteFile(filepath.Join(dir, "buddyinfo"), []byte(buddy), 0o644); err != nil {
		t.Fatal(err)
	}
	// Orders 9 (2 MiB) and 10 (4 MiB).
	want := int64(1+1+0)*(2<<20) + int64(3+753+352)*(4<<20)
	if got := freeHuge(2 << 20); got != want {
		t.Errorf("freeHuge(2 MiB) = %d, want %d", got, want)
	}
	if got, want := freeHuge(4<<20), int64(3+753+352)*(4<<20); got != want {
		t.Errorf("freeHuge(4 MiB) = %d, want %d", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "buddyinfo"), []byte("Node 0, zone Normal 1 x 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := freeHuge(2 << 20); got != 0 {
		t.Errorf("freeHuge of a line it cannot read = %d, want 0", got)
	}
}

// TestReadyBelowMinOrOff: nothing is done for a small burst or when
// turned off.
func TestReadyBelowMinOrOff(t *testing.T) {
	before := Readied()
	if got := Ready(MinReady - 1); got != nil {
		t.Errorf("Ready(MinReady-1) = %v, want nil", got)
	}
	SetEnabled(false)
	t.Cleanup(func() { SetEnabled(true) })
	got := Ready(64 << 20)
	if got != nil || got.Bytes() != 0 {
		t.Errorf("Ready while off = %v, want nil", got)
	}
	got.End() // a nil Burst's End does nothing
	if Readied() != before {
		t.Errorf("Readied moved from %d to %d", before, Readied())
	}
}

// TestReadyAdvisesTheHeap, on this very kernel: the memory readied is not
// touched (the peak resident set does not grow by it; not checked under
// the race detector, whose shadow memory grows with the heap mapped),
// Ready reports it, and the large allocation that comes next lies in
// memory advised for huge pages (VmFlags hg in /proc/self/smaps).
func TestReadyAdvisesTheHeap(t *testing.T) {
	probeOnce.Do(probe)
	if hugePage == 0 {
		t.Skip("this kernel gives no transparent huge pages on request (transparent_hugepage not [madvise], or strict overcommit)")
	}
	const n = 256 << 20
	// Memory used and freed at the heap's end, which the block will
	// take in part: a block allocated with make would be cleared whole.
	used := make([]byte, 64<<20)
	for i := 0; i < len(used); i += 4096 {
		used[i] = 1
	}
	runtime.KeepAlive(used)
	used = nil
	runtime.GC()
	hwm0 := status(t, "VmHWM")
	before := Readied()
	burst := Ready(n)
	got := burst.Bytes()
	if got < n || got > n+int64(hugePage) {
		t.Fatalf("Ready(%d) = %d, want n to n and one huge page", n, got)
	}
	if Readied()-before != got {
		t.Errorf("Readied grew by %d, want %d", Readied()-before, got)
	}
	if grew := status(t, "VmHWM") - hwm0; grew > 32<<20 && !raceEnabled {
		t.Errorf("the peak resident set grew by %d MiB: the block was touched", grew>>20)
	}
	b := make([]byte, 96<<20) // more than the hole used left
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	// (Its first huge page may be the block's unaligned head.)
	flags, huge := mapping(t, uintptr(unsafe.Pointer(&b[len(b)/2])))
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the next allocation's mapping has VmFlags %q, want hg among them", flags)
	}
	t.Logf("AnonHugePages of that mapping: %d kB", huge)
	// Once the burst is over, the memory is back to small pages (nh: in
	// the kernel's madvise mode, the default), what it touched stays.
	burst.End()
	burst.End() // once
	flags, _ = mapping(t, uintptr(unsafe.Pointer(&b[len(b)/2])))
	if !strings.Contains(" "+flags+" ", " nh ") || strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("after End the mapping has VmFlags %q, want nh and not hg", flags)
	}
	runtime.KeepAlive(b)
}

// TestBurstsEndTogether: the memory of bursts on at once stays advised
// until the last of them ends.
func TestBurstsEndTogether(t *testing.T) {
	if !Usable() {
		t.Skip("this kernel gives no transparent huge pages on request (transparent_hugepage not [madvise], or strict overcommit)")
	}
	a := Ready(32 << 20)
	b := Ready(32 << 20)
	if a == nil || b == nil {
		t.Fatalf("Ready = %v, %v", a, b)
	}
	big := make([]byte, 48<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	addr := uintptr(unsafe.Pointer(&big[len(big)/2]))
	a.End()
	if flags, _ := mapping(t, addr); strings.Contains(" "+flags+" ", " nh ") {
		t.Errorf("with one burst still on, VmFlags %q: the memory was given back", flags)
	}
	b.End()
	mu.Lock()
	n, left := bursts, len(spans)
	mu.Unlock()
	if n != 0 || left != 0 {
		t.Errorf("after both ended: %d bursts on, %d ranges kept", n, left)
	}
	runtime.KeepAlive(big)
}

// status is a field of /proc/self/status in bytes.
func status(t *testing.T, field string) int64 {
	t.Helper()
	n, err := kBField("/proc/self/status", field)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// mapping returns the VmFlags and AnonHugePages (kB) of the mapping of
// /proc/self/smaps holding addr.
func mapping(t *testing.T, addr uintptr) (flags string, huge int64) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if r, _, ok := strings.Cut(line, " "); ok && strings.Contains(r, "-") && !strings.HasSuffix(r, ":") {
			lo, hi, _ := strings.Cut(r, "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if !in {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			huge, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			return strings.TrimSpace(rest), huge
		}
	}
	t.Fatalf("no mapping of /proc/self/smaps holds %#x", addr)
	return "", 0
}

// TestStartEarly: a burst begun early is had once, by whoever takes it,
// and is a burst like any other (advised, then ended); one begun while
// another waits to be taken is not.
func TestStartEarly(t *testing.T) {
	if TakeEarly() != nil {
		t.Fatal("an early burst was pending before the test")
	}
	StartEarly(32 << 20)
	StartEarly(64 << 20) // one is pending: nothing
	e := TakeEarly()
	if e == nil || TakeEarly() != nil {
		t.Fatalf("TakeEarly gave %v, then another", e)
	}
	if e.Asked() != 32<<20 {
		t.Errorf("Asked = %d, want the first StartEarly's", e.Asked())
	}
	b := e.Wait()
	select {
	case <-e.Done():
	default:
		t.Fatal("Done is open after Wait")
	}
	if !Usable() {
		if b != nil {
			t.Fatalf("no huge pages here, yet a burst of %d bytes", b.Bytes())
		}
		return
	}
	if b.Bytes() < 32<<20 || On() != 1 {
		t.Fatalf("burst of %d bytes, %d on; want 32 MiB or more, one", b.Bytes(), On())
	}
	b.End()
	if On() != 0 {
		t.Errorf("%d bursts on after End", On())
	}
}
