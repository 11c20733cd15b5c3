package snapshot

import "testing"

// TestSlab: slices without spare capacity, a take larger than a block whole.
func TestSlab(t *testing.T) {
	var s Slab[int]
	if s.Take(0) != nil {
		t.Fatal("take(0) is not nil")
	}
	a := s.Take(3)
	b := s.Take(2)
	a = append(a, 9) // no spare capacity: a copy
	b[0] = 7
	if len(a) != 4 || a[3] != 9 || b[0] != 7 || len(b) != 2 || cap(b) != 2 {
		t.Fatalf("a %v b %v", a, b)
	}
	if big := s.Take(SlabBlock + 1); len(big) != SlabBlock+1 {
		t.Fatalf("a take larger than a block: %d items", len(big))
	}
}
