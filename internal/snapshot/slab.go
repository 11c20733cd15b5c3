package snapshot

// Slab hands out slices of blocks allocated for many, so that a decoder
// allocates what it decodes (a note's tags, a graph's records) in a few
// blocks rather than an object or two an item. Each slice has no spare
// capacity: appending to one copies it, never overwriting the next.
type Slab[T any] struct{ buf []T }

// SlabBlock is how many items a Slab allocates at least at a time.
const SlabBlock = 1024

// Take returns n items, nil for none.
func (s *Slab[T]) Take(n int) []T {
	if n == 0 {
		return nil
	}
	if len(s.buf) < n {
		s.buf = make([]T, max(n, SlabBlock))
	}
	out := s.buf[:n:n]
	s.buf = s.buf[n:]
	return out
}
