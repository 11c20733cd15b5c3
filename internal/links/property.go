package links

import "strings"

// propertyEncode writes s (a link target or alias, as the parser reports
// it) for a link inside a quoted frontmatter property (markdown.Link.Quote):
// in a single-quoted YAML scalar a quote is doubled; in a double-quoted one
// a quote or a backslash would need an escape, which the parser does not
// read back as a link, so such a name cannot be written there.
func propertyEncode(s string, quote byte) (string, bool) {
	switch quote {
	case '\'':
		return strings.ReplaceAll(s, "'", "''"), true
	case '"':
		return s, !strings.ContainsAny(s, `"\`)
	}
	return s, false
}
