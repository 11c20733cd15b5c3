// Package markdown parses one Obsidian note: frontmatter, title, chunks,
// headings, wiki-links, markdown links, tags and line numbers. It is pure:
// it never touches the disk.
package markdown

// LinkKind tells the syntax a link was written in.
type LinkKind uint8

const (
	// WikiLink is [[target]], [[target|alias]], [[target#heading]], [[target#^block]].
	WikiLink LinkKind = iota
	// Embed is ![[target]] with the same inner forms as WikiLink.
	Embed
	// MarkdownLink is [text](path.md) or ![text](path.md) to a local file
	// (URLs with a scheme, and mailto:, are not links to notes and are not reported).
	MarkdownLink
)

// Link is one link found outside code (fences, indented code is NOT treated
// specially, inline code spans are skipped), in the body or in a
// frontmatter property.
type Link struct {
	Kind LinkKind
	// Target is the link path as the author wrote it, without the anchor;
	// percent-decoded for markdown links; "" for a same-note link like [[#Heading]].
	Target string
	// Anchor is what follows '#': a heading ("Setup > Retry" style nested
	// headings are kept as written, e.g. "Setup#Retry") or a block id "^abc".
	// Empty when the link has no anchor.
	Anchor string
	// Alias is the display text: after '|' for wiki-links, the bracket text
	// for markdown links. HasAlias says whether one was written.
	Alias    string
	HasAlias bool
	// Quote is set for a link written in a frontmatter property's value
	// (related: "[[note]]", or an item of a list of such values): the quote
	// of the YAML scalar holding it, '"' or '\'', for which a rewritten
	// target must be written (see property_links.go); 0 for a link in the
	// body.
	Quote byte
	// Start and End are the byte offsets of the whole link in the source
	// (including "![[", "]]", "[...](...)"), End exclusive.
	Start, End int
	// TargetStart and TargetEnd are the byte offsets of the target text as it
	// appears in the source (before percent-decoding), End exclusive; for a
	// same-note link they are equal and point just after the opening brackets.
	TargetStart, TargetEnd int
	// Line is the 1-based line number in the file (frontmatter counted).
	Line int
}

// InProperty reports whether the link is written in a frontmatter
// property's value rather than in the body.
func (l Link) InProperty() bool { return l.Quote != 0 }

// Heading is one ATX heading outside code fences.
type Heading struct {
	Level int    // 1..6
	Text  string // heading text, trimmed, trailing #'s removed
	Line  int    // 1-based absolute line
}

// Chunk is a searchable piece of a note: the text before the first ## / ###
// heading, then one chunk per ## or ### heading outside code fences.
type Chunk struct {
	// Headings is the heading trail: ["H2"] or ["H2", "H3"]; empty for the
	// chunk before the first split heading.
	Headings []string
	// StartLine and EndLine are 1-based absolute line numbers, inclusive.
	// StartLine of a headed chunk is the heading's line.
	StartLine, EndLine int
	// Prose is the chunk's text outside code fences (heading line excluded,
	// inline markup kept as is; the analyzer drops punctuation).
	Prose string
	// Code is the text inside fenced code blocks of the chunk.
	Code string
	// Tags are the inline #tags found in this chunk's prose (lowercase, no '#').
	Tags []string
}

// Note is the parsed form of one note.
type Note struct {
	// Title is the first "# " heading outside code fences, else the file
	// name without its extension.
	Title string
	// Frontmatter is the decoded YAML mapping, nil when absent, invalid,
	// too large or refused (see Diagnostics).
	Frontmatter map[string]any
	// BodyLine is the 1-based line where the body starts (1 when there is no
	// frontmatter block; the line after the closing '---' otherwise).
	BodyLine int
	// BodyOffset is the byte offset where the body starts.
	BodyOffset int
	// Type and Status come from frontmatter (type or tipo; status), lowercased;
	// Portuguese type names are mapped to English ones: projeto->project, nota->note.
	Type, Status string
	// Created and Updated come from created/criado and updated/atualizado, as strings.
	Created, Updated string
	// Tags: frontmatter tags (list or comma string, '#' stripped) then inline
	// tags, lowercased, de-duplicated, in first-seen order.
	Tags []string
	// Aliases from frontmatter `aliases` (list or string).
	Aliases []string
	// Headings in document order, outside code fences.
	Headings []Heading
	// BlockIDs are the "^id" block identifiers at line ends (without '^').
	BlockIDs []string
	Chunks   []Chunk
	Links    []Link
	// Diagnostics are one-line human messages about problems that did not
	// stop parsing ("invalid YAML frontmatter: ...", "frontmatter over 64 KiB ignored").
	Diagnostics []string
}
