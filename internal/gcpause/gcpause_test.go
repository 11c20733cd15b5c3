package gcpause

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// settings returns GOGC and the memory limit without changing them.
func settings() (int, int64) {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p, debug.SetMemoryLimit(-1)
}

func userSettings(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: pauses do nothing")
	}
}

// TestPauseAndRestore: a pause turns pacing off under its limit, a second
// pause meanwhile does nothing, and End brings back exactly the settings
// before, once.
func TestPauseAndRestore(t *testing.T) {
	userSettings(t)
	old := debug.SetGCPercent(50)
	defer debug.SetGCPercent(old)
	_, limit := settings()
	p := Start(1 << 30)
	if pc, l := settings(); pc != -1 || l != 1<<30 || !On() {
		t.Fatalf("during the pause: GOGC %d, limit %d, on %v; want -1, %d, true", pc, l, On(), 1<<30)
	}
	second := Start(1 << 20)
	if _, l := settings(); l != 1<<30 {
		t.Fatalf("a second pause changed the limit to %d", l)
	}
	second.End()
	if !On() {
		t.Fatal("ending the second pause ended the first")
	}
	p.End()
	if pc, l := settings(); pc != 50 || l != limit || On() {
		t.Fatalf("after the pause: GOGC %d, limit %d, on %v; want 50, %d, false", pc, l, On(), limit)
	}
	debug.SetGCPercent(70)
	p.End() // once only: a later change of the settings stays
	if pc, _ := settings(); pc != 70 {
		t.Fatalf("a second End changed GOGC to %d", pc)
	}
}

// TestCheckEndsEarly: once the live heap passes half the limit, Check ends
// the pause of the pacing: GOGC is back, under a memory limit that follows
// what is live (at least leanFloor limits), until End restores the limit
// before; below half the limit, the pause goes on.
func TestCheckEndsEarly(t *testing.T) {
	userSettings(t)
	old := debug.SetGCPercent(50)
	defer debug.SetGCPercent(old)
	_, limit := settings()
	p := Start(1 << 40)
	p.Check()
	if !On() || Lean() {
		t.Fatal("Check ended a pause far below its limit")
	}
	p.End()
	keep := make([]byte, 8<<20) // live, with what the test binary holds
	runtime.GC()
	const pause = 4 << 20
	p = Start(pause)
	if p.Lean() {
		t.Fatal("a pause is lean before any Check")
	}
	p.Check()
	if On() || !Lean() || !p.Lean() {
		p.End()
		t.Fatalf("after Check with the live heap above half the limit: paused %v, lean %v; want false, true", On(), Lean())
	}
	pc, l := settings()
	if pc != 50 || l < pause*7/4 || l < 8<<20 || l >= limit {
		t.Fatalf("after Check: GOGC %d, limit %d; want 50 and a limit of at least 1.25x the %d bytes live", pc, l, 8<<20)
	}
	more := make([]byte, 32<<20)
	runtime.GC()
	p.Check() // the limit follows what is live
	runtime.KeepAlive(keep)
	runtime.KeepAlive(more)
	if pc, l2 := settings(); pc != 50 || l2 < 40<<20 {
		t.Fatalf("a second Check with 40 MiB more live: GOGC %d, limit %d", pc, l2)
	}
	p.End()
	if pc, l := settings(); pc != 50 || l != limit || Lean() || p.Lean() {
		t.Fatalf("after End: GOGC %d, limit %d, lean %v; want 50, %d, false", pc, l, Lean(), limit)
	}
}

// TestReserve: while paused, Reserve raises the memory limit to what it is
// told (never lower, never above the limit before the pause), the pause
// goes on by its own limit (Check, the lean pacing), and End restores the
// limit before; in the lean pacing Reserve does nothing.
func TestReserve(t *testing.T) {
	userSettings(t)
	old := debug.SetGCPercent(50)
	defer debug.SetGCPercent(old)
	oldLimit := debug.SetMemoryLimit(3 << 30)
	defer debug.SetMemoryLimit(oldLimit)
	runtime.GC()

	p := Start(1 << 30)
	p.Reserve(512 << 20) // below the pause's limit
	if pc, l := settings(); pc != -1 || l != 1<<30 {
		t.Fatalf("a reserve below the limit: GOGC %d, limit %d; want -1, %d", pc, l, 1<<30)
	}
	p.Reserve(2 << 30)
	p.Reserve(1536 << 20) // a smaller reserve after it keeps the larger
	if pc, l := settings(); pc != -1 || l != 2<<30 || !On() {
		t.Fatalf("after Reserve(2 GiB): GOGC %d, limit %d, paused %v; want -1, %d, true", pc, l, On(), 2<<30)
	}
	p.Reserve(8 << 30)
	if _, l := settings(); l != 3<<30 {
		t.Fatalf("a reserve above the limit before the pause: limit %d, want %d", l, 3<<30)
	}
	p.End()
	if pc, l := settings(); pc != 50 || l != 3<<30 {
		t.Fatalf("after End: GOGC %d, limit %d; want 50, %d", pc, l, 3<<30)
	}

	// Check goes by the pause's own limit, not by the reserve: 8 MiB live
	// is past half of a 4 MiB pause however much was reserved.
	keep := make([]byte, 8<<20)
	runtime.GC()
	p = Start(4 << 20)
	p.Reserve(1 << 30)
	p.Check()
	lean := Lean()
	_, l := settings()
	p.Reserve(2 << 30) // the lean pacing: nothing
	_, l2 := settings()
	p.End()
	runtime.KeepAlive(keep)
	if !lean || l >= 1<<30 || l2 != l {
		t.Fatalf("Check after a reserve: lean %v, limit %d then %d after a second reserve; want true, the lean limit (far below 1 GiB) twice", lean, l, l2)
	}

	var none Pause
	none.Reserve(1 << 40) // a pause that did nothing does nothing
	if _, l := settings(); l != 3<<30 {
		t.Fatalf("Reserve of an empty pause changed the limit to %d", l)
	}
}

func TestLeanLimit(t *testing.T) {
	const m = 1 << 20
	for _, c := range []struct {
		limit, live int64
		percent     int
		memory      int64
		want        int64
	}{
		{512 * m, 300 * m, 50, math.MaxInt64, 896 * m},  // the floor
		{512 * m, 800 * m, 50, math.MaxInt64, 1000 * m}, // 1.25x what is live
		{512 * m, 800 * m, 100, math.MaxInt64, 1200 * m},
		{512 * m, 800 * m, 50, 900 * m, 900 * m}, // never above the limit before
		{512 * m, 800 * m, -1, 2000 * m, 2000 * m},
	} {
		if got := leanLimit(c.limit, c.live, c.percent, c.memory); got != c.want {
			t.Errorf("leanLimit(%d MiB, %d MiB live, GOGC %d, %d) = %d MiB, want %d MiB", c.limit/m, c.live/m, c.percent, c.memory, got/m, c.want/m)
		}
	}
}

// TestUserSettingsWin: with GOGC in the environment a pause does nothing.
func TestUserSettingsWin(t *testing.T) {
	t.Setenv("GOGC", "100")
	before, limit := settings()
	p := Start(1 << 20)
	if pc, l := settings(); pc != before || l != limit || On() {
		t.Fatalf("GOGC set by the user: the pause changed GOGC to %d, limit to %d", pc, l)
	}
	p.Check()
	p.End()
}
