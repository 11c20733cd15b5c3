package msgcat

import (
	"slices"
	"testing"
)

type id string

var cat = Catalogue[id]{
	"en": {"a": "no notes", "b": "%s has %d links"},
	"pt": {"a": "nenhuma nota", "b": "%s tem %d links"},
}

func TestFor(t *testing.T) {
	for _, lang := range []string{"", "fr", "EN", "en-GB", " en "} {
		if tx := cat.For(lang); tx.Lang != "en" || tx.Get("a") != "no notes" {
			t.Errorf("For(%q) = %s %q", lang, tx.Lang, tx.Get("a"))
		}
	}
	for _, lang := range []string{"pt", "PT", "pt-BR", "pt_PT"} {
		if tx := cat.For(lang); tx.Lang != "pt" || tx.Get("b", "x.md", 2) != "x.md tem 2 links" {
			t.Errorf("For(%q) = %s %q", lang, tx.Lang, tx.Get("b", "x.md", 2))
		}
	}
}

func TestGetFallsBackToEnglish(t *testing.T) {
	c := Catalogue[id]{"en": {"a": "one", "b": "two"}, "pt": {"a": "um"}}
	if got := c.For("pt").Get("b"); got != "two" {
		t.Errorf("missing Portuguese text: %q", got)
	}
}

func TestCheck(t *testing.T) {
	if bad := cat.Check(); len(bad) != 0 {
		t.Errorf("a sound catalogue: %v", bad)
	}
	c := Catalogue[id]{
		"en": {"a": "%s and %d", "b": "x", "c": "y"},
		"pt": {"a": "%d e %s", "b": "", "d": "z"},
	}
	want := []string{
		"pt: a takes [%d %s], English takes [%s %d]",
		"pt: b is empty",
		"pt: d has no English text",
		"pt: missing c",
	}
	if got := c.Check(); !slices.Equal(got, want) {
		t.Errorf("Check:\n got %q\nwant %q", got, want)
	}
	if got := (Catalogue[id]{"en": {"a": "x"}}).Check(); len(got) != 1 {
		t.Errorf("one language: %q", got)
	}
}
