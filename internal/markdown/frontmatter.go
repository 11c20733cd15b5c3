package markdown

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFrontmatter is the largest frontmatter block (the bytes between the
// opening and the closing delimiter lines) that is decoded. A larger block is
// still recognised as frontmatter (so it is not indexed as body text) but its
// content is ignored and a diagnostic is recorded.
const MaxFrontmatter = 64 << 10

// Diagnostic texts that do not carry a variable part.
const (
	diagFrontmatterTooLarge = "frontmatter over 64 KiB ignored"
	diagFrontmatterAliases  = "frontmatter refused: YAML aliases (*name) are not allowed"
	diagFrontmatterNotMap   = "frontmatter ignored: it is not a YAML mapping"
)

// findFrontmatter locates a frontmatter block. start is the offset of the
// first line (after a UTF-8 BOM). The block exists only when the first line is
// "---" (trailing spaces, tabs and a CR tolerated) and a later line is "---" or
// "..."; an unclosed block is not frontmatter. It returns the content range
// [cs, ce), the offset and the 1-based line where the body starts.
func findFrontmatter(src string, start int) (cs, ce, body, bodyLine int, ok bool) {
	first, next := lineAt(src, start)
	if trimLineEnd(first) != "---" {
		return 0, 0, 0, 0, false
	}
	cs = next
	line := 2
	for pos := next; pos < len(src); line++ {
		l, nx := lineAt(src, pos)
		if t := trimLineEnd(l); t == "---" || t == "..." {
			return cs, pos, nx, line + 1, true
		}
		pos = nx
	}
	return 0, 0, 0, 0, false
}

// lineAt returns the line starting at pos (without its '\n') and the offset
// of the next line.
func lineAt(src string, pos int) (string, int) {
	if i := strings.IndexByte(src[pos:], '\n'); i >= 0 {
		return src[pos : pos+i], pos + i + 1
	}
	return src[pos:], len(src)
}

// trimLineEnd removes trailing spaces, tabs and carriage returns.
func trimLineEnd(s string) string {
	i := len(s)
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\r') {
		i--
	}
	return s[:i]
}

// decodeFrontmatter decodes the block content into n. firstLine is the
// absolute line number of the first content line (used to make YAML error
// positions absolute). Content in the simple subset that fastFrontmatter
// reads is decoded without the YAML library, with the same result; anything
// else goes to decodeYAMLFrontmatter.
func decodeFrontmatter(n *Note, content string, firstLine int) {
	if len(content) > MaxFrontmatter {
		n.Diagnostics = append(n.Diagnostics, diagFrontmatterTooLarge)
		return
	}
	if fastFrontmatter(n, content) {
		return
	}
	decodeYAMLFrontmatter(n, []byte(content), firstLine)
}

// decodeYAMLFrontmatter decodes content (at most MaxFrontmatter bytes) with
// the YAML library.
func decodeYAMLFrontmatter(n *Note, content []byte, firstLine int) {
	var doc yaml.Node
	if err := yamlUnmarshal(content, &doc); err != nil {
		n.Diagnostics = append(n.Diagnostics, "invalid YAML frontmatter: "+yamlMessage(err, firstLine))
		return
	}
	// Aliases are refused before any value is built: an alias node is a
	// pointer into the tree, and expanding nested ones is how "billion laughs"
	// documents blow up. The tree itself is linear in the input size.
	if hasAlias(&doc) {
		n.Diagnostics = append(n.Diagnostics, diagFrontmatterAliases)
		return
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			n.Frontmatter = map[string]any{}
			return
		}
		root = root.Content[0]
	}
	switch {
	case root.Kind == yaml.MappingNode:
	case root.Kind == 0, root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null":
		// Nothing but comments, or an explicit null: an empty mapping.
		n.Frontmatter = map[string]any{}
		return
	default:
		n.Diagnostics = append(n.Diagnostics, diagFrontmatterNotMap)
		return
	}

	m := make(map[string]any, len(root.Content)/2)
	var f fmFields
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue // a complex key cannot be a property name
		}
		if _, dup := m[k.Value]; dup {
			n.Diagnostics = append(n.Diagnostics, fmt.Sprintf("duplicate frontmatter key %q (last value kept)", k.Value))
		}
		m[k.Value] = nodeValue(v)
		switch field := fieldOf(k.Value); field {
		case fieldNone:
		case fieldTags:
			n.Tags = appendYAMLTags(n.Tags, v)
		case fieldAliases:
			n.Aliases = appendYAMLAliases(n.Aliases, v)
		default:
			f[field] = scalarString(v)
		}
	}
	n.Frontmatter = m
	f.finish(n)
}

// fieldKind names the frontmatter keys that fill typed Note fields.
type fieldKind uint8

const (
	fieldNone fieldKind = iota
	fieldType
	fieldTipo
	fieldStatus
	fieldTags
	fieldAliases
	fieldCreated
	fieldCriado
	fieldUpdated
	fieldAtualizado
	numFieldKinds
)

// fieldOf tells which typed field a frontmatter key fills (keys are matched
// without regard to case).
func fieldOf(key string) fieldKind {
	switch strings.ToLower(key) {
	case "type":
		return fieldType
	case "tipo":
		return fieldTipo
	case "status":
		return fieldStatus
	case "tags", "tag":
		return fieldTags
	case "aliases", "alias":
		return fieldAliases
	case "created":
		return fieldCreated
	case "criado":
		return fieldCriado
	case "updated":
		return fieldUpdated
	case "atualizado":
		return fieldAtualizado
	}
	return fieldNone
}

// fmFields collects the trimmed text of a non-null scalar value ("" for any
// other value) of each single-valued typed field while the keys are read in
// order: a later key overrides an earlier one of the same field.
type fmFields [numFieldKinds]string

// finish writes the fields to n: English keys win over Portuguese ones.
func (f *fmFields) finish(n *Note) {
	n.Type = NormalizeType(firstNonEmpty(f[fieldType], f[fieldTipo]))
	n.Status = strings.ToLower(f[fieldStatus])
	n.Created = firstNonEmpty(f[fieldCreated], f[fieldCriado])
	n.Updated = firstNonEmpty(f[fieldUpdated], f[fieldAtualizado])
}

// yamlUnmarshal shields the parser from a panic inside the YAML library: a
// note's content must never crash the indexer.
func yamlUnmarshal(in []byte, out *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: parser failure: %v", r)
		}
	}()
	return yaml.Unmarshal(in, out)
}

// yamlMessage renders a YAML error as one line, without the "yaml: " prefix,
// with a leading "line N:" made absolute (file lines, frontmatter counted).
func yamlMessage(err error, firstLine int) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if ln, convErr := strconv.Atoi(rest[:i]); convErr == nil {
				msg = "line " + strconv.Itoa(ln+firstLine-1) + rest[i:]
			}
		}
	}
	return msg
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// nodeValue converts a decoded (alias-free) node to plain Go values:
// map[string]any, []any, string, int, float64, bool or nil. Timestamps stay
// strings as written ("2026-01-02"), as do non-finite floats (JSON cannot
// carry them) and scalars with custom tags.
func nodeValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return nodeValue(n.Content[0])
		}
		return nil
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = nodeValue(c)
		}
		return out
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode {
				out[k.Value] = nodeValue(n.Content[i+1])
			}
		}
		return out
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!null":
			return nil
		case "!!bool", "!!int", "!!float":
			if v, ok := plainScalar(tag, n.Value); ok {
				return v
			}
			var v any
			if err := n.Decode(&v); err != nil {
				return n.Value
			}
			if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
				return n.Value
			}
			return v
		default:
			return n.Value
		}
	}
	return nil
}

// plainScalar converts the common spellings of booleans, decimal integers and
// floats the way the YAML library resolves them, without its decoder (an
// allocation-heavy call per scalar); other spellings (0x1F, 0o17, 1_000,
// .inf, explicit tags) are left to the library.
func plainScalar(tag, s string) (any, bool) {
	switch tag {
	case "!!bool":
		if b, err := strconv.ParseBool(s); err == nil && len(s) > 1 {
			return b, true
		}
	case "!!int":
		if s != "" && len(s) <= 18 && (s[0] != '0' || len(s) == 1) && strings.Trim(s, "0123456789") == "" {
			i, err := strconv.Atoi(s)
			return i, err == nil
		}
	case "!!float":
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && strings.IndexByte(s, '_') < 0 {
			return f, true
		}
	}
	return nil, false
}

// scalarString is the trimmed text of a non-null scalar, else "".
func scalarString(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}

func appendYAMLTags(tags []string, v *yaml.Node) []string {
	switch v.Kind {
	case yaml.ScalarNode:
		return appendTagList(tags, scalarString(v))
	case yaml.SequenceNode:
		for _, c := range v.Content {
			tags = appendTagList(tags, scalarString(c))
		}
	}
	return tags
}

// appendTagList splits s on commas and white space, strips leading '#'s and
// lowercases each tag.
func appendTagList(tags []string, s string) []string {
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
		var t string
		if i < 0 {
			t, s = s, ""
		} else {
			t, s = s[:i], s[i+1:]
		}
		t = strings.TrimLeft(t, "#")
		if t != "" {
			tags = append(tags, strings.ToLower(t))
		}
	}
	return tags
}

// appendYAMLAliases reads a list of aliases, or a string holding a
// comma-separated list (the older Obsidian form).
func appendYAMLAliases(aliases []string, v *yaml.Node) []string {
	switch v.Kind {
	case yaml.ScalarNode:
		return appendAliasList(aliases, scalarString(v))
	case yaml.SequenceNode:
		for _, c := range v.Content {
			if a := scalarString(c); a != "" {
				aliases = append(aliases, a)
			}
		}
	}
	return aliases
}

// appendAliasList appends the comma-separated aliases of s.
func appendAliasList(aliases []string, s string) []string {
	for a := range strings.SplitSeq(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			aliases = append(aliases, a)
		}
	}
	return aliases
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
