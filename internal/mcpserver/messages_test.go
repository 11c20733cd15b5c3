package mcpserver

import (
	"regexp"
	"slices"
	"testing"
)

var verbRE = regexp.MustCompile(`%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// TestCatalogueInStep checks that every language has every text, that no
// text is empty, and that the texts of one id take the same format verbs in
// the same order (a Portuguese text cannot drop or swap an argument).
func TestCatalogueInStep(t *testing.T) {
	en := catalogue["en"]
	if len(catalogue) < 2 {
		t.Fatalf("catalogue has %d languages", len(catalogue))
	}
	for lang, texts := range catalogue {
		for id, s := range texts {
			if s == "" {
				t.Errorf("%s: %s is empty", lang, id)
			}
			if _, ok := en[id]; !ok {
				t.Errorf("%s: %s has no English text", lang, id)
			}
		}
		for id, s := range en {
			other, ok := texts[id]
			if !ok {
				t.Errorf("%s: missing %s", lang, id)
				continue
			}
			if a, b := verbRE.FindAllString(s, -1), verbRE.FindAllString(other, -1); !slices.Equal(a, b) {
				t.Errorf("%s: %s takes %v, English takes %v", lang, id, b, a)
			}
		}
	}
}

func TestNewMessagesFallsBackToEnglish(t *testing.T) {
	for _, lang := range []string{"", "fr", "EN", "en-GB"} {
		if m := newMessages(lang); m.lang != "en" || m.get(msgListNone) != "No notes found." {
			t.Errorf("newMessages(%q) = %s", lang, m.lang)
		}
	}
	for _, lang := range []string{"pt", "PT", "pt-BR", "pt_PT"} {
		if m := newMessages(lang); m.get(msgListNone) != "Nenhuma nota encontrada." {
			t.Errorf("%s: %q", lang, m.get(msgListNone))
		}
	}
}
