package markdown

import "strings"

// SplitFrontmatter splits a note into its frontmatter block and the rest,
// by the rules Parse uses (see findFrontmatter): block runs from the start
// of src (a UTF-8 BOM included) through the line break of the closing
// delimiter line, and body is what follows. block is "" when src has no
// frontmatter (an unclosed block is not one); body is then src itself.
func SplitFrontmatter(src string) (block, body string) {
	start := 0
	if strings.HasPrefix(src, bom) {
		start = len(bom)
	}
	if _, _, end, _, ok := findFrontmatter(src, start); ok {
		return src[:end], src[end:]
	}
	return "", src
}

// ParseFrontmatter decodes the frontmatter of src, a whole note or a block as
// SplitFrontmatter returns it, exactly as Parse decodes it: the mapping, nil
// when there is no block or when it is invalid YAML, too large or refused,
// and the diagnostics of the decoding (why it is nil, duplicate keys).
func ParseFrontmatter(src string) (map[string]any, []string) {
	content, ok := FrontmatterContent(src)
	if !ok {
		return nil, nil
	}
	n := &Note{}
	decodeFrontmatter(n, content, 2)
	return n.Frontmatter, n.Diagnostics
}

// FrontmatterContent returns the YAML of the frontmatter of src, a whole
// note or a block as SplitFrontmatter returns it: the lines between the
// delimiter lines, by the rules Parse uses; false when src has none.
func FrontmatterContent(src string) (string, bool) {
	start := 0
	if strings.HasPrefix(src, bom) {
		start = len(bom)
	}
	cs, ce, _, _, ok := findFrontmatter(src, start)
	if !ok {
		return "", false
	}
	return src[cs:ce], true
}

// UnclosedFence returns the line that closes the code fence src ends inside
// ("```", "~~~~", "> ```" for a fence in a quote, indented as the fence in a
// list item), or "" when src ends outside any fence. CommonMark closes such
// a fence at the end of the document: text appended after it would be code
// unless the fence is closed first.
func UnclosedFence(src string) string {
	p := &parser{src: src, note: &Note{BodyLine: 1}}
	p.run("")
	if !p.inFence {
		return ""
	}
	return strings.Repeat("> ", p.fenceQuote) + strings.Repeat(" ", p.fenceIndent) + strings.Repeat(string(p.fenceChar), p.fenceLen)
}
