// Package msgcat holds catalogues of fixed texts by language: the tool
// output's (internal/mcpserver) and the vault's own warnings and refusals
// (internal/vault), both in the language VAULT_LANG names ("en", the
// default, or "pt").
package msgcat

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Catalogue holds the texts by language, then by id. English holds every id.
type Catalogue[ID ~string] map[string]map[ID]string

// Texts renders the texts of one language of a catalogue.
type Texts[ID ~string] struct {
	// Lang is the language rendered: one of the catalogue's.
	Lang  string
	texts map[ID]string
	en    map[ID]string
}

// Base returns the language part of a tag, lowercased: "pt-BR" and "PT"
// give "pt".
func Base(lang string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(lang, "-_"); i >= 0 {
		lang = lang[:i]
	}
	return lang
}

// For returns the texts of lang (any tag of it: "pt", "PT", "pt-BR"); an
// unknown or empty language falls back to English.
func (c Catalogue[ID]) For(lang string) *Texts[ID] {
	lang = Base(lang)
	if t, ok := c[lang]; ok {
		return &Texts[ID]{Lang: lang, texts: t, en: c["en"]}
	}
	return &Texts[ID]{Lang: "en", texts: c["en"], en: c["en"]}
}

// All returns the texts of every language of the catalogue, by language.
func (c Catalogue[ID]) All() map[string]*Texts[ID] {
	all := make(map[string]*Texts[ID], len(c))
	for lang := range c {
		all[lang] = c.For(lang)
	}
	return all
}

// Get returns the text of id, formatted with args when there are any.
func (t *Texts[ID]) Get(id ID, args ...any) string {
	s, ok := t.texts[id]
	if !ok {
		// Unreachable while the catalogue's check passes; English rather
		// than nothing.
		s = t.en[id]
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

var verbRE = regexp.MustCompile(`%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// Check returns what is wrong with the catalogue, one line each: a second
// language missing, a language without some id or with an id English lacks,
// an empty text, or the texts of one id taking different format verbs or
// the same in another order (a translation cannot drop or swap an
// argument). The catalogues' tests call it.
func (c Catalogue[ID]) Check() []string {
	var bad []string
	en := c["en"]
	if len(en) == 0 || len(c) < 2 {
		bad = append(bad, fmt.Sprintf("the catalogue has %d languages and %d English texts", len(c), len(en)))
	}
	langs := make([]string, 0, len(c))
	for lang := range c {
		langs = append(langs, lang)
	}
	slices.Sort(langs)
	for _, lang := range langs {
		texts := c[lang]
		for id, s := range texts {
			if s == "" {
				bad = append(bad, fmt.Sprintf("%s: %s is empty", lang, id))
			}
			if _, ok := en[id]; !ok {
				bad = append(bad, fmt.Sprintf("%s: %s has no English text", lang, id))
			}
		}
		for id, s := range en {
			other, ok := texts[id]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s: missing %s", lang, id))
				continue
			}
			if a, b := verbRE.FindAllString(s, -1), verbRE.FindAllString(other, -1); !slices.Equal(a, b) {
				bad = append(bad, fmt.Sprintf("%s: %s takes %v, English takes %v", lang, id, b, a))
			}
		}
	}
	slices.Sort(bad)
	return bad
}
