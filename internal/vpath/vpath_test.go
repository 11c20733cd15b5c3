package vpath

import "testing"

func TestBelowWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir        string
		below, within bool
	}{
		{"notes/a.md", "notes", true, true},
		{"notes/deep/a.md", "notes", true, true},
		{"notes", "notes", false, true},
		{"notes2/a.md", "notes", false, false},
		{"notes.md", "notes", false, false},
		{"note", "notes", false, false},
		{"a.md", "", true, true},
		{"", "", false, true},
		{"", "notes", false, false},
		{"Notes/a.md", "notes", false, false}, // paths compare as written
	} {
		if got := Below(c.p, c.dir); got != c.below {
			t.Errorf("Below(%q, %q) = %v, want %v", c.p, c.dir, got, c.below)
		}
		if got := Within(c.p, c.dir); got != c.within {
			t.Errorf("Within(%q, %q) = %v, want %v", c.p, c.dir, got, c.within)
		}
	}
}
