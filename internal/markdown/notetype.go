package markdown

import "strings"

// NormalizeType is the one spelling of a note type (DESIGN.md section 2),
// shared by the parser (Note.Type), the index and its filters: trimmed,
// lowercase, and the Portuguese names mapped to the English ones (projeto ->
// project, nota -> note, diário or diario -> daily). Other types are kept
// as written, lowercased.
func NormalizeType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	switch t {
	case "projeto":
		return "project"
	case "nota":
		return "note"
	case "diario", "diário":
		return "daily"
	}
	return t
}
