// Package strarena copies strings that live and die together (a note's
// link targets, its headings) into one allocation instead of one each: the
// collector marks one object where it marked many, at every cycle for as
// long as they live.
package strarena

import "unsafe"

// Arena holds the copies; its zero value copies every string on its own.
type Arena struct{ b []byte }

// New returns an arena with room for size bytes: the total length of the
// strings to copy, counted first.
func New(size int) Arena { return Arena{b: make([]byte, 0, size)} }

// Copy returns a copy of s, in the arena while it has room (a string that
// does not fit is copied on its own). The bytes of a copy are never written
// again: the arena only appends past them, into room it never outgrows.
func (a *Arena) Copy(s string) string { return a.Join(s, "") }

// Join returns a copy of s followed by suffix, as Copy does.
func (a *Arena) Join(s, suffix string) string {
	n := len(s) + len(suffix)
	if n == 0 {
		return ""
	}
	if cap(a.b)-len(a.b) < n {
		return s + suffix
	}
	at := len(a.b)
	a.b = append(append(a.b, s...), suffix...)
	return unsafe.String(&a.b[at], n)
}
