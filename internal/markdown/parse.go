package markdown

import (
	"strings"
	"unsafe"
)

// How a note is read (DESIGN.md section 4, and the decisions taken where it
// is silent):
//
//   - The parser is one pass over the lines of the file, with byte offsets;
//     strings in the result are sub-strings of one copy of the source, so
//     keeping any of them keeps the note's text alive (clone what you keep
//     long-term without the rest).
//   - A UTF-8 BOM is skipped; line endings are LF or CRLF (a lone CR is not a
//     line break). Line numbers are 1-based and count the frontmatter.
//   - Frontmatter: see findFrontmatter and decodeFrontmatter. Links written
//     as property values (related: "[[note]]") are reported, see
//     property_links.go; tags written inside frontmatter values other than
//     the tags key are not.
//   - Code fences follow CommonMark (``` or ~~~, 3 or more, up to 3 spaces of
//     indent, closed by the same character at least as long, no backtick in
//     a backtick fence's info string, unclosed runs to the end of the file).
//     Blockquote containers are understood, because Obsidian callouts hold
//     code ("> ```md"): a fence opened inside a quote ends when the quote
//     does. List items are not containers here: a fence indented 4 or more
//     spaces under a list item is not recognised. Indented code blocks are not
//     treated as code.
//   - Headings are ATX only (# to ######, then a space, a tab or the end of
//     the line; up to 3 spaces of indent), at top level (not inside a
//     blockquote). Setext headings (text underlined by === or ---) are not
//     supported: Obsidian users write ATX headings, and "---" under a line is
//     far more often meant as a rule.
//   - Inline syntax is read per line: a code span or a link does not continue
//     on the next line. Reference-style markdown links ([x][ref]), HTML and
//     comments (<!-- -->, %% %%) are not interpreted.
//   - The text of a heading that splits chunks (## and ###) is the chunk's
//     heading trail, not its prose; other headings (# and ####..######) stay
//     in the prose of their chunk. Tags are not read in heading lines.

// Parse parses one note. name is the file name (or a vault path), used for
// the fallback title: its base name without .md or .markdown. src is the
// whole file. Parse never fails: problems become Note.Diagnostics.
func Parse(name string, src []byte) *Note {
	return parse(name, string(src))
}

// ParseOwned is Parse for src that nothing modifies any more (a file just
// read): the note's strings share its bytes instead of a copy of them. The
// first index build parses every note this way (a copy of every file was a
// tenth of what it allocated).
func ParseOwned(name string, src []byte) *Note {
	if len(src) == 0 {
		return parse(name, "")
	}
	return parse(name, unsafe.String(&src[0], len(src)))
}

func parse(name, src string) *Note {
	p := &parser{src: src, note: &Note{BodyLine: 1}}
	p.run(name)
	return p.note
}

const bom = "\xEF\xBB\xBF"

// seg is a run of consecutive source lines [s, e) (e excludes the last line's
// terminator); next is the offset of the line after the run.
type seg struct{ s, e, next int }

// opener is a '[' or '![' that may start a markdown link.
type opener struct {
	start  int // offset of '!' for an image, of '[' otherwise
	br     int // offset of '['
	image  bool
	active bool
}

type parser struct {
	src  string
	note *Note

	// Fence state.
	inFence    bool
	fenceChar  byte
	fenceLen   int
	fenceQuote int // blockquote depth holding the fence
	// fenceIndent is the columns of indentation before the opening fence
	// (a fence in a list item is indented to the item's text).
	fenceIndent int
	// inList says the lines since the last list marker are the list's:
	// blank, indented, or other items (see fenceOpen).
	inList bool
	// para says the last line was a paragraph's (which an indented line
	// continues); inIndented that the last non-blank line was indented
	// code (CommonMark: four columns or more, not within a list, not
	// continuing a paragraph).
	para, inIndented bool

	// Current chunk.
	chunkStart int
	headed     bool
	trail      []string
	h2         string
	hasH2      bool
	prose      []seg
	code       []seg
	chunkTags  strSet

	tags     strSet // frontmatter then inline tags of the note
	blockIDs strSet

	// Per-line scratch of the inline scanner.
	openers   []opener
	tickFail  []int // backtick run lengths with no closer further on the line
	wikiFrom  int   // the last "]]" search started here ...
	wikiClose int   // ... and found this offset (-1: none)
	budget    int   // bytes of markdown link destination scanning left on the line
}

func (p *parser) run(name string) {
	src, n := p.src, p.note
	if strings.HasPrefix(src, bom) {
		n.BodyOffset = len(bom)
	}
	fmStart, fmEnd := -1, -1
	if cs, ce, body, bodyLine, ok := findFrontmatter(src, n.BodyOffset); ok {
		n.BodyOffset, n.BodyLine = body, bodyLine
		decodeFrontmatter(n, src[cs:ce], 2)
		fmStart, fmEnd = cs, ce
	}
	for _, t := range n.Tags {
		p.tags.add(t)
	}

	from := n.BodyOffset
	if n.Frontmatter != nil {
		from = fmStart
	}
	if c := strings.Count(src[from:], "[["); c > 0 {
		n.Links = make([]Link, 0, c) // one allocation even for a MOC with thousands of links
	}
	if n.Frontmatter != nil && fmStart >= 0 {
		p.propertyLinks(fmStart, fmEnd)
	}

	p.chunkStart = n.BodyLine
	ln := n.BodyLine
	for pos := n.BodyOffset; pos < len(src); ln++ {
		end, next := len(src), len(src)
		if i := strings.IndexByte(src[pos:], '\n'); i >= 0 {
			end, next = pos+i, pos+i+1
		}
		if end > pos && src[end-1] == '\r' {
			end--
		}
		p.line(pos, end, next, ln)
		pos = next
	}
	p.finishChunk(max(ln-1, p.chunkStart), true)

	n.Tags = p.tags.list
	n.BlockIDs = p.blockIDs.list
	if n.Title == "" {
		n.Title = baseName(name)
	}
}

// line handles the body line [ls, le) numbered ln; next is the offset of the
// following line.
func (p *parser) line(ls, le, next, ln int) {
	src := p.src
	if p.inFence {
		s, inside := ls, true
		if p.fenceQuote > 0 {
			var depth int
			s, depth = stripQuotes(src, ls, le, p.fenceQuote)
			inside = depth == p.fenceQuote
		}
		if inside {
			if isFenceClose(src[s:le], p.fenceChar, p.fenceLen, p.fenceIndent) {
				p.inFence = false
			} else {
				p.code = addSeg(p.code, s, le, next)
			}
			return
		}
		p.inFence = false // the blockquote holding the fence has ended
	}

	s, q := ls, 0
	if i := skipSpaces(src, ls, le, 3); i < le && src[i] == '>' {
		s, q = stripQuotes(src, ls, le, le-ls)
	}
	line := src[s:le]
	cols, i := indent(line)
	blank := i == len(line)
	para := p.para
	p.para = false
	switch {
	case blank:
		if p.inIndented {
			p.code = addSeg(p.code, s, le, next)
			return
		}
	case cols >= 4 && !p.inList && !para && q == 0:
		// Indented code: its text is not links, tags or headings.
		p.inIndented = true
		p.code = addSeg(p.code, s, le, next)
		return
	default:
		p.inIndented = false
	}
	marker := listMarkerEnd(line, i)
	item := cols <= 3 && marker > i
	switch {
	case item:
		p.inList = true
	case !blank && cols == 0:
		p.inList = false // a line at the margin ends the list
	}
	if c, l, ind, ok := fenceOpen(line, cols, i, marker); ok && (ind <= 3 || p.inList) {
		p.inFence, p.fenceChar, p.fenceLen, p.fenceQuote, p.fenceIndent = true, c, l, q, ind
		return
	}
	if q == 0 {
		if level, ts := atxHeading(src, ls, le); level > 0 {
			text := headingText(src[ts:le])
			p.note.Headings = append(p.note.Headings, Heading{Level: level, Text: text, Line: ln})
			if level == 2 || level == 3 {
				p.split(level, text, ln)
			} else {
				p.prose = addSeg(p.prose, ls, le, next)
			}
			k := len(p.note.Links)
			p.scanInline(ts, le, ln, false)
			if level == 1 && p.note.Title == "" && text != "" {
				p.note.Title = headingText(shownText(src[ts:le], ts, p.note.Links[k:]))
			}
			p.blockID(ls, le)
			return
		}
	}
	p.prose = addSeg(p.prose, ls, le, next)
	p.scanInline(ls, le, ln, true)
	p.blockID(ls, le)
	p.para = !blank
}

func addSeg(segs []seg, s, e, next int) []seg {
	if k := len(segs) - 1; k >= 0 && segs[k].next == s {
		segs[k].e, segs[k].next = e, next
		return segs
	}
	return append(segs, seg{s, e, next})
}

// split starts the chunk of a ## or ### heading on line ln.
func (p *parser) split(level int, text string, ln int) {
	p.finishChunk(ln-1, false)
	switch {
	case level == 2:
		p.h2, p.hasH2 = text, true
		p.trail = []string{text}
	case p.hasH2:
		p.trail = []string{p.h2, text}
	default:
		p.trail = []string{text}
	}
	p.headed = true
	p.chunkStart = ln
}

// finishChunk closes the current chunk at line end. The chunk before the
// first split heading is kept only when it has content or is the only one.
func (p *parser) finishChunk(end int, eof bool) {
	prose := strings.TrimSpace(p.joinSegs(p.prose))
	code := strings.TrimRight(strings.TrimLeft(p.joinSegs(p.code), "\n"), " \t\n")
	keep := p.headed || prose != "" || strings.TrimSpace(code) != "" || eof
	if keep {
		p.note.Chunks = append(p.note.Chunks, Chunk{
			Headings:  p.trail,
			StartLine: p.chunkStart,
			EndLine:   max(end, p.chunkStart),
			Prose:     prose,
			Code:      code,
			Tags:      p.chunkTags.list,
		})
	}
	p.prose, p.code = p.prose[:0], p.code[:0]
	p.chunkTags = strSet{}
}

// joinSegs joins runs of lines with '\n', with CRLF line ends made LF. A
// single LF run is a sub-string of the source (no copy).
func (p *parser) joinSegs(segs []seg) string {
	var s string
	switch len(segs) {
	case 0:
		return ""
	case 1:
		s = p.src[segs[0].s:segs[0].e]
	default:
		size := 0
		for _, sg := range segs {
			size += sg.e - sg.s + 1
		}
		var b strings.Builder
		b.Grow(size)
		for i, sg := range segs {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.src[sg.s:sg.e])
		}
		s = b.String()
	}
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// blockID records a "^id" written at the end of the line [ls, le), after a
// space or alone on the line.
func (p *parser) blockID(ls, le int) {
	t := trimLineEnd(p.src[ls:le])
	k := len(t)
	for k > 0 && isBlockIDChar(t[k-1]) {
		k--
	}
	if k == len(t) || k == 0 || t[k-1] != '^' {
		return
	}
	if k >= 2 && t[k-2] != ' ' && t[k-2] != '\t' {
		return
	}
	p.blockIDs.add(t[k:])
}

func isBlockIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// skipSpaces skips up to max spaces from i.
func skipSpaces(src string, i, le, max int) int {
	for n := 0; n < max && i < le && src[i] == ' '; n++ {
		i++
	}
	return i
}

// stripQuotes consumes up to max blockquote markers ("> ", up to 3 spaces of
// indent each) from the line [ls, le) and returns where the content starts
// and how many markers were consumed.
func stripQuotes(src string, ls, le, max int) (int, int) {
	i, depth := ls, 0
	for depth < max {
		j := skipSpaces(src, i, le, 3)
		if j >= le || src[j] != '>' {
			break
		}
		j++
		if j < le && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		i = j
		depth++
	}
	return i, depth
}

// shownText is the text s (at offset base of the source) as Obsidian shows
// it, links being the links the parser found in it: a wiki-link or embed as
// its alias, or its target ("note > heading" for a heading link), a
// markdown link as its text. "An Introduction to [[dataview|Dataview]]" is
// shown "An Introduction to Dataview"; text in code is left as written.
func shownText(s string, base int, links []Link) string {
	if len(links) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, l := range links {
		start, end := l.Start-base, l.End-base
		if start < at || end > len(s) {
			continue
		}
		b.WriteString(s[at:start])
		anchor := strings.TrimPrefix(l.Anchor, "^")
		switch {
		case l.HasAlias && strings.TrimSpace(l.Alias) != "":
			b.WriteString(strings.TrimSpace(l.Alias))
		case l.Target == "":
			b.WriteString(anchor)
		case anchor == "":
			b.WriteString(l.Target)
		default:
			b.WriteString(l.Target + " > " + anchor)
		}
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

// fenceOpen reports whether line, whose text starts at i after cols
// columns of indentation (see indent) and after a list marker up to marker
// (listMarkerEnd; i when none), opens a fenced code block, and the columns
// of indentation before the fence. It may follow a list marker
// ("- ```", "1. ```"), and be indented any amount: the caller takes one
// indented four columns or more only within a list (parser.inList), where
// it stands at an item's text (CommonMark's limit of three spaces applies
// relative to the item); elsewhere such a line is indented code.
func fenceOpen(line string, cols, i, marker int) (byte, int, int, bool) {
	if i < len(line) && line[i] != '`' && line[i] != '~' {
		if j := marker; j > i {
			c2, i2 := indent(line[j:])
			cols, i = cols+(j-i)+c2, j+i2
		}
	}
	if i >= len(line) || line[i] != '`' && line[i] != '~' {
		return 0, 0, 0, false
	}
	c := line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 || c == '`' && strings.IndexByte(line[j:], '`') >= 0 {
		return 0, 0, 0, false
	}
	return c, j - i, cols, true
}

// isFenceClose reports whether line closes a fence of n characters c opened
// at indent columns: a run of at least n of them, indented at most three
// columns more than the opening fence (less is fine: the list item holding
// the fence may have ended), with nothing after it but blanks.
func isFenceClose(line string, c byte, n, open int) bool {
	cols, i := indent(line)
	if cols > max(open, 0)+3 {
		return false
	}
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < n {
		return false
	}
	for ; j < len(line); j++ {
		if line[j] != ' ' && line[j] != '\t' {
			return false
		}
	}
	return true
}

// indent measures the blanks at the start of line: their columns (a tab
// advances to the next multiple of 4) and the offset of the first other
// byte.
func indent(line string) (cols, i int) {
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, i
		}
	}
	return cols, i
}

// listMarkerEnd returns the offset after the list marker that starts at i
// ("-", "*", "+", or 1-9 digits and "." or ")") and the blank after it, or
// i when there is none.
func listMarkerEnd(line string, i int) int {
	j := i
	switch {
	case j < len(line) && (line[j] == '-' || line[j] == '*' || line[j] == '+'):
		j++
	default:
		for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j == i || j >= len(line) || line[j] != '.' && line[j] != ')' {
			return i
		}
		j++
	}
	if j >= len(line) || line[j] != ' ' && line[j] != '\t' {
		return i
	}
	return j
}

// atxHeading returns the level of an ATX heading on the line [ls, le) and
// where its content starts; level 0 when the line is not a heading.
func atxHeading(src string, ls, le int) (level, ts int) {
	i := skipSpaces(src, ls, le, 3)
	j := i
	for j < le && src[j] == '#' {
		j++
	}
	level = j - i
	if level < 1 || level > 6 || j < le && src[j] != ' ' && src[j] != '\t' {
		return 0, 0
	}
	return level, j
}

// headingText trims a heading's content and removes an optional closing
// sequence of '#'s (which CommonMark requires to follow a space: "C#" stays).
func headingText(s string) string {
	s = strings.Trim(s, " \t")
	k := len(s)
	for k > 0 && s[k-1] == '#' {
		k--
	}
	switch {
	case k == 0:
		return ""
	case k < len(s) && (s[k-1] == ' ' || s[k-1] == '\t'):
		return strings.TrimRight(s[:k], " \t")
	}
	return s
}

// baseName is the file name without directories and without .md/.markdown.
func baseName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for _, ext := range []string{".md", ".markdown"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

// strSet is an insertion-ordered set of strings, cheap while small.
type strSet struct {
	list []string
	m    map[string]struct{}
}

func (s *strSet) add(v string) {
	if s.m == nil {
		for _, x := range s.list {
			if x == v {
				return
			}
		}
		s.list = append(s.list, v)
		if len(s.list) > 16 {
			s.m = make(map[string]struct{}, 2*len(s.list))
			for _, x := range s.list {
				s.m[x] = struct{}{}
			}
		}
		return
	}
	if _, ok := s.m[v]; !ok {
		s.m[v] = struct{}{}
		s.list = append(s.list, v)
	}
}
