package vault

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// profile is the language of what the server writes into notes: frontmatter
// keys and section names. Reading accepts both spellings.
type profile struct {
	typeKey, createdKey              string
	noteType                         string
	notesSection, capturesSection    string
	contextLabel, linksSection       string
	domainsSection, knowledgeIndexTi string
}

var profiles = map[string]profile{
	"en": {typeKey: "type", createdKey: "created", noteType: "note",
		notesSection: "Notes", capturesSection: "Captures", contextLabel: "Context", linksSection: "Links",
		domainsSection: "Domains", knowledgeIndexTi: "Knowledge index"},
	"pt": {typeKey: "tipo", createdKey: "criado", noteType: "nota",
		notesSection: "Notas", capturesSection: "Capturas", contextLabel: "Contexto", linksSection: "Links",
		domainsSection: "Domínios", knowledgeIndexTi: "Índice do conhecimento"},
}

func profileFor(lang string) profile {
	if p, ok := profiles[lang]; ok {
		return p
	}
	return profiles["en"]
}

// synonyms of each frontmatter key in the other profile.
var keySynonyms = map[string][]string{
	"type": {"tipo"}, "tipo": {"type"},
	"created": {"criado"}, "criado": {"created"},
	"updated": {"atualizado"}, "atualizado": {"updated"},
}

// hasKey reports whether fm has key in either spelling (case-insensitive).
func hasKey(fm map[string]any, key string) bool {
	for k := range fm {
		if strings.EqualFold(k, key) {
			return true
		}
		for _, syn := range keySynonyms[key] {
			if strings.EqualFold(k, syn) {
				return true
			}
		}
	}
	return false
}

// setKey sets key, replacing an existing spelling of it (either profile).
func setKey(fm map[string]any, key string, v any) {
	for k := range fm {
		if strings.EqualFold(k, key) {
			fm[k] = v
			return
		}
		for _, syn := range keySynonyms[key] {
			if strings.EqualFold(k, syn) {
				fm[k] = v
				return
			}
		}
	}
	fm[key] = v
}

// keyOrder puts the well-known keys first, in this order; others follow
// alphabetically.
var keyOrder = map[string]int{
	"title": 0, "aliases": 1, "type": 2, "tipo": 2, "tags": 3, "status": 4,
	"created": 5, "criado": 5, "updated": 6, "atualizado": 6,
}

// renderFrontmatter writes fm as a YAML block between --- lines, keys in a
// stable, readable order.
func renderFrontmatter(fm map[string]any) (string, error) {
	keys := make([]string, 0, len(fm))
	for k := range fm {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := keyOrder[strings.ToLower(keys[i])]
		oj, jok := keyOrder[strings.ToLower(keys[j])]
		switch {
		case iok && jok && oi != oj:
			return oi < oj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	node := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range keys {
		var val yaml.Node
		if str, ok := fm[k].(string); ok && isoDate.MatchString(str) {
			// A date stays a plain YAML date (created: 2026-11-29), as
			// Obsidian writes it, not a quoted string.
			val = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: str}
		} else if err := val.Encode(fm[k]); err != nil {
			return "", fmt.Errorf("frontmatter key %q: %w", k, err)
		}
		if seq, ok := fm[k].([]any); ok && len(seq) <= 8 && allScalars(seq) {
			val.Style = yaml.FlowStyle
		}
		if seq, ok := fm[k].([]string); ok && len(seq) <= 8 {
			val.Style = yaml.FlowStyle
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &val)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return "", err
	}
	enc.Close()
	return "---\n" + buf.String() + "---\n", nil
}

var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func allScalars(seq []any) bool {
	for _, v := range seq {
		switch v.(type) {
		case string, int, int64, float64, bool, nil:
		default:
			return false
		}
	}
	return true
}
