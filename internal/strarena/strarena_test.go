package strarena

import (
	"testing"
	"unsafe"
)

// TestCopy: copies read as the strings given, those that fit are side by
// side in one allocation, none shares the given bytes, and a string past the
// room counted is copied on its own without disturbing the others.
func TestCopy(t *testing.T) {
	src := []byte("alpha beta gamma delta")
	in := []string{string(src[0:5]), "", string(src[6:10]), string(src[11:16])}
	size := 0
	for _, s := range in {
		size += len(s)
	}
	at := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	a := New(size)
	var got []string
	for _, s := range in {
		got = append(got, a.Copy(s))
	}
	extra := a.Copy("delta")
	b := New(len("name.md") + len("x"))
	joined, x := b.Join("name", ".md"), b.Copy("x")
	if joined != "name.md" || x != "x" || at(x) != at(joined)+7 {
		t.Errorf("joined %q then %q, not side by side", joined, x)
	}
	if j := b.Join("over", ".md"); j != "over.md" {
		t.Errorf("join past the room reads %q", j)
	}
	for i, s := range in {
		if got[i] != s {
			t.Errorf("copy %d reads %q, want %q", i, got[i], s)
		}
	}
	if extra != "delta" {
		t.Errorf("copy past the room reads %q", extra)
	}
	if at(got[2]) != at(got[0])+5 || at(got[3]) != at(got[2])+4 {
		t.Errorf("copies not side by side in one allocation")
	}
	for i, s := range append(got, extra) {
		if s != "" && at(s) >= uintptr(unsafe.Pointer(&src[0])) && at(s) < uintptr(unsafe.Pointer(&src[0]))+uintptr(len(src)) {
			t.Errorf("copy %d shares the given bytes", i)
		}
	}
	if extra2 := (&Arena{}).Copy("x"); extra2 != "x" {
		t.Errorf("zero arena copy reads %q", extra2)
	}
}
