package teamserver

import (
	"strings"
	"testing"
)

func TestAcceptedLang(t *testing.T) {
	have := []string{"en", "pt"}
	for header, want := range map[string]string{
		"":                            "",
		"pt":                          "pt",
		"PT-br":                       "pt",
		"pt-BR,pt;q=0.9,en;q=0.8":     "pt",
		"fr, en;q=0.5":                "en",
		"fr":                          "",
		"*":                           "",
		"en;q=0, pt;q=0.1":            "pt",
		"en;q=bad, pt;q=0.2":          "pt",
		"en;q=0.4, pt;q=0.4":          "en",
		"de;q=1, pt ; q=0.7, en;q=.3": "pt",
	} {
		if got := acceptedLang(header, have); got != want {
			t.Errorf("acceptedLang(%q) = %q, want %q", header, got, want)
		}
	}
}

// A request's Accept-Language words the vault's refusals; a language the
// vault has no texts in leaves the server's.
func TestRefusalsFollowAcceptLanguage(t *testing.T) {
	e := newEnv(t, envOpts{})
	edit := []byte(`{"path":"02-wiki/go/context.md","old_text":"no such text anywhere","new_text":"x"}`)
	for header, want := range map[string]string{
		"pt-BR,pt;q=0.9": "não encontrado em 02-wiki/go/context.md",
		"fr":             "not found in 02-wiki/go/context.md",
		"":               "not found in 02-wiki/go/context.md",
	} {
		var h []string
		if header != "" {
			h = []string{"Accept-Language", header}
		}
		a := e.do("POST", "/api/projects/ex/edit", e.rw, edit, h...)
		wantStatus(t, "edit with no match, Accept-Language "+header, a, 422, "no_match")
		if !strings.Contains(string(a.body), want) {
			t.Errorf("Accept-Language %q: %s, want %q", header, a.body, want)
		}
	}
}
