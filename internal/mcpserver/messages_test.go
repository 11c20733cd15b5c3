package mcpserver

import "testing"

// TestCatalogueInStep checks that every language has every text, that no
// text is empty, and that the texts of one id take the same format verbs in
// the same order (a Portuguese text cannot drop or swap an argument).
func TestCatalogueInStep(t *testing.T) {
	for _, bad := range catalogue.Check() {
		t.Error(bad)
	}
}

func TestNewMessagesFallsBackToEnglish(t *testing.T) {
	for _, lang := range []string{"", "fr", "EN", "en-GB"} {
		if m := newMessages(lang); m.Lang != "en" || m.get(msgListNone) != "No notes found." {
			t.Errorf("newMessages(%q) = %s", lang, m.Lang)
		}
	}
	for _, lang := range []string{"pt", "PT", "pt-BR", "pt_PT"} {
		if m := newMessages(lang); m.get(msgListNone) != "Nenhuma nota encontrada." {
			t.Errorf("%s: %q", lang, m.get(msgListNone))
		}
	}
}
