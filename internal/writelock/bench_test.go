package writelock

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAcquireRelease measures an uncontended write turn, file lock
// included (open, flock, unlock, close).
func BenchmarkAcquireRelease(b *testing.B) {
	l := New(filepath.Join(b.TempDir(), "vaultmcp.lock"), time.Minute)
	ctx := context.Background()
	for b.Loop() {
		release, _, err := l.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
}
