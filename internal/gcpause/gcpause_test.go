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
// the pause; below it, the pause goes on.
func TestCheckEndsEarly(t *testing.T) {
	userSettings(t)
	old := debug.SetGCPercent(50)
	defer debug.SetGCPercent(old)
	p := Start(1 << 40)
	p.Check()
	if !On() {
		t.Fatal("Check ended a pause far below its limit")
	}
	p.End()
	keep := make([]byte, 8<<20) // live, with what the test binary holds
	runtime.GC()
	p = Start(4 << 20)
	p.Check()
	runtime.KeepAlive(keep)
	if On() {
		p.End()
		t.Fatal("Check left a pause on with the live heap above half its limit")
	}
	if pc, _ := settings(); pc != 50 {
		t.Fatalf("after Check: GOGC %d, want 50", pc)
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
