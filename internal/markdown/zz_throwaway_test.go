package markdown

import (
	"testing"
	"time"
)

func FuzzThrowawaySlow(f *testing.F) {
	f.Add([]byte("---\na: 1\n---\n# T\n[[x]] [y](z.md) #tag ```a``` "))
	f.Fuzz(func(t *testing.T, src []byte) {
		st := time.Now()
		Parse("fuzz.md", src)
		if d := time.Since(st); d > 200*time.Millisecond {
			t.Fatalf("slow: %v for %d bytes", d, len(src))
		}
	})
}
