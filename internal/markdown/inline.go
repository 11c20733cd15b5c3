package markdown

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// special marks the bytes the inline scanner stops at.
var special = [256]bool{'\\': true, '`': true, '!': true, '[': true, ']': true, '#': true}

// maxLinkParens bounds nested parentheses in a markdown link destination
// (as cmark does).
const maxLinkParens = 32

// scanInline reads links, and tags when tags is set, in the text [s, e) of
// line ln. Code spans are skipped; backslash escapes are honoured. Markdown
// links use CommonMark's bracket matching: a '[' is an opener, a ']' closes
// the nearest one, and a link inside a link deactivates the outer openers
// (an image may hold a link, a link may hold an image).
func (p *parser) scanInline(s, e, ln int, tags bool) {
	src := p.src
	p.openers = p.openers[:0]
	p.tickFail = p.tickFail[:0]
	p.wikiFrom, p.wikiClose = -1, -1
	p.budget = 4*(e-s) + 1024
	first := len(p.note.Links)

	for i := s; i < e; {
		c := src[i]
		if !special[c] {
			i++
			continue
		}
		switch c {
		case '\\':
			if i+1 < e && isASCIIPunct(src[i+1]) {
				i += 2
			} else {
				i++
			}
		case '`':
			n := 1
			for i+n < e && src[i+n] == '`' {
				n++
			}
			if cl := p.closingTicks(i+n, e, n); cl >= 0 {
				i = cl + n
			} else {
				i += n
			}
		case '!':
			if i+1 >= e || src[i+1] != '[' {
				i++
				continue
			}
			if i+2 < e && src[i+2] == '[' {
				if end, ok := p.wikiLink(i, i+1, e, ln, Embed); ok {
					i = end
					continue
				}
			}
			p.openers = append(p.openers, opener{start: i, br: i + 1, image: true, active: true})
			i += 2
		case '[':
			if i+1 < e && src[i+1] == '[' {
				if end, ok := p.wikiLink(i, i, e, ln, WikiLink); ok {
					i = end
					continue
				}
			}
			p.openers = append(p.openers, opener{start: i, br: i, active: true})
			i++
		case ']':
			k := len(p.openers) - 1
			if k < 0 {
				i++
				continue
			}
			o := p.openers[k]
			p.openers = p.openers[:k]
			if !o.active || i+1 >= e || src[i+1] != '(' || p.budget <= 0 {
				i++
				continue
			}
			end, ok := p.markdownLink(o, i, e, ln)
			if !ok {
				i++
				continue
			}
			if !o.image {
				for j := range p.openers {
					if !p.openers[j].image {
						p.openers[j].active = false
					}
				}
			}
			i = end
		case '#':
			if tags {
				if end := p.tag(i, s, e); end > i {
					i = end
					continue
				}
			}
			i++
		}
	}

	// A link holding an image is recorded after the image: keep Start order.
	if links := p.note.Links[first:]; len(links) > 1 {
		if !slices.IsSortedFunc(links, cmpStart) {
			slices.SortStableFunc(links, cmpStart)
		}
	}
}

func cmpStart(a, b Link) int { return a.Start - b.Start }

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// closingTicks finds the next run of exactly n backticks in [from, e), or -1.
// A failed search is remembered for the rest of the line, which keeps a line
// of many unmatched runs linear in practice.
func (p *parser) closingTicks(from, e, n int) int {
	if slices.Contains(p.tickFail, n) {
		return -1
	}
	src := p.src
	for k := from; k < e; {
		i := strings.IndexByte(src[k:e], '`')
		if i < 0 {
			break
		}
		k += i
		run := 1
		for k+run < e && src[k+run] == '`' {
			run++
		}
		if run == n {
			return k
		}
		k += run
	}
	p.tickFail = append(p.tickFail, n)
	return -1
}

// wikiCloseAt returns the offset of the first "]]" at or after from in the
// line ending at e, or -1. The last answer is reused when still valid, so a
// line full of "[[" without "]]" is scanned once.
func (p *parser) wikiCloseAt(from, e int) int {
	if p.wikiFrom >= 0 && from >= p.wikiFrom && (p.wikiClose < 0 || p.wikiClose >= from) {
		return p.wikiClose
	}
	p.wikiFrom, p.wikiClose = from, -1
	if i := strings.Index(p.src[from:e], "]]"); i >= 0 {
		p.wikiClose = from + i
	}
	return p.wikiClose
}

// wikiLink reads [[target#anchor|alias]] whose "[[" is at open (start is the
// '!' of an embed). It returns the offset after "]]".
func (p *parser) wikiLink(start, open, e, ln int, kind LinkKind) (int, bool) {
	src := p.src
	in := open + 2
	cl := p.wikiCloseAt(in, e)
	if cl < 0 {
		return 0, false
	}
	// "[[a [[b]]": only the inner one is a link.
	if strings.Contains(src[in:cl], "[[") {
		return 0, false
	}
	tpEnd, aliasStart := cl, -1
	if i := strings.IndexByte(src[in:cl], '|'); i >= 0 {
		tpEnd, aliasStart = in+i, in+i+1
		if tpEnd > in && src[tpEnd-1] == '\\' {
			tpEnd-- // "[[t\|alias]]" inside a table: the pipe is escaped for the table only
		}
	}
	tEnd, anchor := tpEnd, ""
	if i := strings.IndexByte(src[in:tpEnd], '#'); i >= 0 {
		tEnd = in + i
		anchor = strings.TrimSpace(src[tEnd+1 : tpEnd])
	}
	ts, te := trimSpan(src, in, tEnd)
	if ts == te {
		if anchor == "" {
			return 0, false
		}
		ts, te = in, in
	}
	l := Link{
		Kind:        kind,
		Target:      src[ts:te],
		Anchor:      anchor,
		Start:       start,
		End:         cl + 2,
		TargetStart: ts,
		TargetEnd:   te,
		Line:        ln,
	}
	if aliasStart >= 0 {
		l.Alias, l.HasAlias = strings.TrimSpace(src[aliasStart:cl]), true
	}
	p.note.Links = append(p.note.Links, l)
	return cl + 2, true
}

// trimSpan trims spaces and tabs around src[s:e].
func trimSpan(src string, s, e int) (int, int) {
	for s < e && (src[s] == ' ' || src[s] == '\t') {
		s++
	}
	for e > s && (src[e-1] == ' ' || src[e-1] == '\t') {
		e--
	}
	return s, e
}

// markdownLink reads the "(destination "title")" after the ']' at rb that
// closes opener o. It returns the offset after ')' and whether the syntax is
// a link; a link with a URL scheme, or with an empty destination, is
// consumed but not recorded.
func (p *parser) markdownLink(o opener, rb, e, ln int) (int, bool) {
	src := p.src
	j := skipBlanks(src, rb+2, e)
	var ds, de int
	if j < e && src[j] == '<' {
		k := j + 1
		for k < e && src[k] != '>' {
			switch src[k] {
			case '<':
				return 0, false
			case '\\':
				k++
			}
			k++
		}
		if k >= e {
			p.budget -= k - rb
			return 0, false
		}
		ds, de, j = j+1, k, k+1
	} else {
		ds = j
		depth := 0
	dest:
		for j < e {
			switch c := src[j]; {
			case c == '\\' && j+1 < e && isASCIIPunct(src[j+1]):
				j += 2
				continue
			case c <= ' ' || c == 0x7f:
				break dest
			case c == '(':
				if depth++; depth > maxLinkParens {
					p.budget -= j - rb
					return 0, false
				}
			case c == ')':
				if depth == 0 {
					break dest
				}
				depth--
			}
			j++
		}
		if depth != 0 {
			p.budget -= j - rb
			return 0, false
		}
		de = j
	}
	k := skipBlanks(src, j, e)
	if k > j && k < e && (src[k] == '"' || src[k] == '\'' || src[k] == '(') {
		closer := src[k]
		if closer == '(' {
			closer = ')'
		}
		m := k + 1
		for m < e && src[m] != closer {
			if src[m] == '\\' {
				m++
			}
			m++
		}
		if m >= e {
			p.budget -= m - rb
			return 0, false
		}
		k = skipBlanks(src, m+1, e)
	}
	p.budget -= k - rb
	if k >= e || src[k] != ')' {
		return 0, false
	}
	end := k + 1

	raw := src[ds:de]
	if raw == "" || hasScheme(raw) {
		return end, true
	}
	tEnd, anchor := de, ""
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		tEnd = ds + i
		anchor = decodeDest(src[tEnd+1 : de])
	}
	target := decodeDest(src[ds:tEnd])
	if target == "" && anchor == "" {
		return end, true
	}
	text := src[o.br+1 : rb]
	p.note.Links = append(p.note.Links, Link{
		Kind:        MarkdownLink,
		Target:      target,
		Anchor:      anchor,
		Alias:       text,
		HasAlias:    text != "",
		Start:       o.start,
		End:         end,
		TargetStart: ds,
		TargetEnd:   tEnd,
		Line:        ln,
	})
	return end, true
}

// skipBlanks skips spaces and tabs.
func skipBlanks(src string, i, e int) int {
	for i < e && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// hasScheme reports whether a destination starts with a URL scheme
// ([a-z][a-z0-9+.-]*:, any case): http:, mailto:, obsidian:, ...
func hasScheme(s string) bool {
	if s == "" || !isASCIILetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return true
		case isASCIILetter(c) || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-':
		default:
			return false
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// decodeDest resolves backslash escapes and %XX escapes of a markdown link
// destination; an invalid % escape is kept as written.
func decodeDest(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			i++
			b = append(b, s[i])
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// tag reads an inline #tag whose '#' is at i in the text [s, e) and records
// it; it returns the offset after the tag, or i when there is none. The '#'
// must start the text or follow white space or an opening/separating
// punctuation mark (not a letter, digit, '/', '&', '=' or '#', so URL
// fragments, HTML entities and "C#" are not tags). A tag is letters, digits,
// '_', '-' and '/', with at least one character that is not a digit.
func (p *parser) tag(i, s, e int) int {
	src := p.src
	if i > s && !tagMayFollow(src, s, i) {
		return i
	}
	j := i + 1
	nonDigit := false
	for j < e {
		c := src[j]
		if c < utf8.RuneSelf {
			switch {
			case c >= '0' && c <= '9':
			case isASCIILetter(c) || c == '_' || c == '-' || c == '/':
				nonDigit = true
			default:
				goto done
			}
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(src[j:e])
		switch {
		case unicode.IsDigit(r):
		case unicode.IsLetter(r) || unicode.IsMark(r):
			nonDigit = true
		default:
			goto done
		}
		j += size
	}
done:
	t := strings.TrimRight(src[i+1:j], "/")
	if !nonDigit || t == "" || strings.Trim(t, "0123456789") == "" {
		return i
	}
	t = strings.ToLower(t)
	p.chunkTags.add(t)
	p.tags.add(t)
	return j
}

func tagMayFollow(src string, s, i int) bool {
	c := src[i-1]
	if c < utf8.RuneSelf {
		switch c {
		case ' ', '\t', '(', '[', '{', ',', ';', ':', '!', '?', '"', '\'', '*', '~', '>', '|':
			return true
		}
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(src[s:i])
	return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
}
