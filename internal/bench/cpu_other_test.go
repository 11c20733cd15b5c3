//go:build !unix

package bench

import "time"

// processCPU is not told on this system: the CPU figure reads 0.
func processCPU() time.Duration { return 0 }
