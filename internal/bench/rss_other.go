//go:build !unix

package bench

import (
	"os"
	"time"
)

// peakRSS is not measured on this system.
func peakRSS(int) int64 { return 0 }

// exitedMaxRSS is not measured on this system.
func exitedMaxRSS(*os.ProcessState) int64 { return 0 }

// procSelfRSS is not known here; the runtime's figure is used instead.
func procSelfRSS() int64 { return 0 }

// currentRSS is not measured on this system.
func currentRSS(int) int64 { return 0 }

// cpuTime is not measured on this system.
func cpuTime(int) time.Duration { return 0 }
