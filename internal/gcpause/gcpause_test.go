package gcpause

import (
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
// the pause of the pacing and paces what is left at half the GOGC before,
// under the memory limit before, until End restores both; below it, the
// pause goes on.
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
	p = Start(4 << 20)
	p.Check()
	runtime.KeepAlive(keep)
	if On() || !Lean() {
		p.End()
		t.Fatalf("after Check with the live heap above half the limit: paused %v, lean %v; want false, true", On(), Lean())
	}
	if pc, l := settings(); pc != 25 || l != limit {
		t.Fatalf("after Check: GOGC %d, limit %d; want 25, %d", pc, l, limit)
	}
	p.Check() // once lean, a Check changes nothing
	if pc, _ := settings(); pc != 25 {
		t.Fatalf("a second Check: GOGC %d, want 25", pc)
	}
	p.End()
	if pc, l := settings(); pc != 50 || l != limit || Lean() {
		t.Fatalf("after End: GOGC %d, limit %d, lean %v; want 50, %d, false", pc, l, Lean(), limit)
	}
}

func TestLeanPercent(t *testing.T) {
	for _, c := range [][2]int{{50, 25}, {100, 50}, {1, 1}, {3, 1}, {-1, -1}, {0, 0}} {
		if got := leanPercent(c[0]); got != c[1] {
			t.Errorf("leanPercent(%d) = %d, want %d", c[0], got, c[1])
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
