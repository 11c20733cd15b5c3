package links

import "slices"

// idSlots holds values by id, a small number the graph keeps in place of a
// pointer (see srcSet and storedLink): an id given back is taken by the
// next value put. It serves the graph's notes and sets and the resolver's
// paths.
type idSlots[T any] struct {
	at   []T
	free []uint32
}

// put stores v and returns its id.
func (s *idSlots[T]) put(v T) uint32 {
	if k := len(s.free); k > 0 {
		id := s.free[k-1]
		s.free = s.free[:k-1]
		s.at[id] = v
		return id
	}
	s.at = append(s.at, v)
	return uint32(len(s.at) - 1)
}

// release gives id back. Its value stays until the id is taken again: a
// caller that must not keep it clears it first.
func (s *idSlots[T]) release(id uint32) { s.free = append(s.free, id) }

// grow makes room for n more values.
func (s *idSlots[T]) grow(n int) { s.at = slices.Grow(s.at, n) }

// clone returns an independent copy.
func (s *idSlots[T]) clone() idSlots[T] {
	return idSlots[T]{at: slices.Clone(s.at), free: slices.Clone(s.free)}
}
