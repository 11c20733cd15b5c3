package markdown

import "strings"

// Links in properties. Obsidian lets a frontmatter property hold internal
// links: a text property whose value is quoted (`related: "[[auth-guard]]"`)
// or the quoted items of a list (`links:` then `  - "[[a]]"`, or
// `up: ["[[a]]", "[[b]]"]`); it shows them as backlinks and keeps them right
// when a note is renamed. The parser reports them among Note.Links, first
// (they come first in the file), with byte offsets in the source like any
// other link and Quote set to the scalar's quote.
//
// What counts, decided to be exact rather than generous (a link reported
// where the YAML says otherwise would be rewritten into nonsense):
//
//   - only a decoded, valid frontmatter (a block that is invalid YAML, too
//     large or refused has no property links);
//   - only single-line quoted scalars: the whole value of a top-level key
//     line, an item of the block sequence that follows a key with no value,
//     or a quoted item of a one-line flow sequence; the decoded scalar must
//     be one of the decoded values (a string value or a list item), which
//     rules out lines inside block scalars and anything the line scan could
//     misread;
//   - inside it, every [[...]] and ![[...]] as in the body; a double-quoted
//     scalar with a backslash escape is skipped (its bytes are not its
//     value), a single-quoted one may hold '' (one quote), and the link's
//     Target, Anchor and Alias are then the decoded text while the offsets
//     stay those of the source;
//   - an unquoted [[x]] is a YAML nested list, not a link (Obsidian requires
//     the quotes too), and a date property naming a daily note
//     (created: 2026-08-20) is a date, not a link.

// propertyLinks records the links of the frontmatter content src[cs:ce],
// whose first line is line 2 (the opening delimiter is line 1).
func (p *parser) propertyLinks(cs, ce int) {
	values := propertyValues(p.note.Frontmatter)
	if len(values) == 0 {
		return
	}
	src := p.src
	list := false // a key with no value was just read: a block sequence may follow
	ln := 2
	for pos := cs; pos < ce; ln++ {
		end, next := ce, ce
		if i := strings.IndexByte(src[pos:ce], '\n'); i >= 0 {
			end, next = pos+i, pos+i+1
		}
		if end > pos && src[end-1] == '\r' {
			end--
		}
		line := src[pos:end]
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case trimmed == "" || trimmed[0] == '#':
		case line[0] != ' ' && line[0] != '\t' && line[0] != '-':
			vs, ok := valueOf(src, pos, end)
			list = ok && (vs == end || src[vs] == '#')
			if !ok || list {
				break
			}
			p.propertyValue(vs, end, ln, values)
		case trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ' || trimmed[1] == '\t'):
			if list {
				i := end - len(trimmed) + 1
				p.propertyScalar(skipBlanks(src, i, end), end, ln, values, false)
			}
		default:
			list = false // a continuation or a nested block: not read
		}
		pos = next
	}
}

// propertyValues is the set of string values of a frontmatter: top-level
// strings and the strings of top-level lists.
func propertyValues(fm map[string]any) map[string]bool {
	var set map[string]bool
	add := func(v any) {
		if s, ok := v.(string); ok && strings.Contains(s, "[[") {
			if set == nil {
				set = make(map[string]bool)
			}
			set[s] = true
		}
	}
	for _, v := range fm {
		if list, ok := v.([]any); ok {
			for _, x := range list {
				add(x)
			}
			continue
		}
		add(v)
	}
	return set
}

// valueOf reads past the key of the key line [ls, le), plain (up to the
// first ':' followed by a blank or the end) or quoted, and returns the offset
// of the value (past blanks; le when there is none).
func valueOf(src string, ls, le int) (int, bool) {
	var colon int
	switch q := src[ls]; q {
	case '"', '\'':
		cl := strings.IndexByte(src[ls+1:le], q)
		if cl < 0 {
			return 0, false
		}
		colon = ls + 1 + cl + 1
		if colon >= le || src[colon] != ':' {
			return 0, false
		}
	default:
		colon = -1
		for i := ls; i < le; i++ {
			if src[i] == ':' && (i+1 == le || src[i+1] == ' ' || src[i+1] == '\t') {
				colon = i
				break
			}
		}
		if colon < 0 {
			return 0, false
		}
	}
	return skipBlanks(src, colon+1, le), true
}

// propertyValue reads the value [vs, le) of a key line: a quoted scalar, or
// a one-line flow sequence of scalars.
func (p *parser) propertyValue(vs, le, ln int, values map[string]bool) {
	if p.src[vs] != '[' {
		p.propertyScalar(vs, le, ln, values, false)
		return
	}
	src := p.src
	for i := vs + 1; i < le; {
		i = skipBlanks(src, i, le)
		if i >= le {
			return
		}
		switch src[i] {
		case '"', '\'':
			end := p.propertyScalar(i, le, ln, values, true)
			if end < 0 {
				return
			}
			i = skipBlanks(src, end, le)
		default:
			// A plain item holds no ',' or ']' (nor a link: it cannot start
			// with '['): skip it.
			if src[i] == '[' || src[i] == '{' {
				return
			}
			for i < le && src[i] != ',' && src[i] != ']' {
				i++
			}
		}
		if i >= le {
			return
		}
		switch src[i] {
		case ',':
			i++
		case ']':
			return
		default:
			return
		}
	}
}

// propertyScalar reads the quoted scalar starting at qs, in the line ending
// at le, and records its links. inFlow says it is an item of a flow
// sequence (what follows it is the sequence's business); otherwise only
// blanks and a comment may follow. It returns the offset after the closing
// quote, or -1 when there is no quoted scalar there.
func (p *parser) propertyScalar(qs, le, ln int, values map[string]bool, inFlow bool) int {
	src := p.src
	if qs >= le || src[qs] != '"' && src[qs] != '\'' {
		return -1
	}
	q := src[qs]
	qe := -1 // offset of the closing quote
	for i := qs + 1; i < le; i++ {
		if src[i] == '\\' && q == '"' {
			return -1 // an escape: the bytes are not the value
		}
		if src[i] == q {
			if q == '\'' && i+1 < le && src[i+1] == '\'' {
				i++ // '' is one quote
				continue
			}
			qe = i
			break
		}
	}
	if qe < 0 {
		return -1
	}
	if !inFlow {
		if rest := skipBlanks(src, qe+1, le); rest < le && (src[rest] != '#' || rest == qe+1) {
			return -1 // not the whole value
		}
	}
	raw := src[qs+1 : qe]
	decoded := raw
	if q == '\'' {
		decoded = strings.ReplaceAll(raw, "''", "'")
	}
	if !values[decoded] {
		return qe + 1
	}
	first := len(p.note.Links)
	p.wikiFrom, p.wikiClose = -1, -1
	for i := qs + 1; i < qe; {
		j := strings.Index(src[i:qe], "[[")
		if j < 0 {
			break
		}
		open := i + j
		start, kind := open, WikiLink
		if open > qs+1 && src[open-1] == '!' {
			start, kind = open-1, Embed
		}
		if end, ok := p.wikiLink(start, open, qe, ln, kind); ok {
			i = end
		} else {
			i = open + 2
		}
	}
	for k := first; k < len(p.note.Links); k++ {
		l := &p.note.Links[k]
		l.Quote = q
		if q == '\'' && strings.Contains(src[l.Start:l.End], "''") {
			l.Target = strings.ReplaceAll(l.Target, "''", "'")
			l.Anchor = strings.ReplaceAll(l.Anchor, "''", "'")
			l.Alias = strings.ReplaceAll(l.Alias, "''", "'")
		}
	}
	return qe + 1
}
