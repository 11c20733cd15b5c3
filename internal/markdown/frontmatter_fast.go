package markdown

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastFrontmatter decodes frontmatter written in the simple subset nearly all
// notes use, without the YAML library, and gives exactly what
// decodeYAMLFrontmatter gives for it: the same map values with the same Go
// types, the same typed Note fields, no diagnostic. It returns false, leaving
// n untouched, as soon as it meets anything it is not certain about; the
// caller then uses the YAML library.
//
// The subset, line by line (a line ends at LF; a CR right before the LF is
// dropped):
//
//   - The characters are valid UTF-8, printable for YAML: no control
//     character other than LF (and CR before LF), no tab, no U+0085, U+2028,
//     U+2029 (YAML line breaks), U+FEFF, U+FFFE or U+FFFF.
//   - A blank line (spaces only) or a comment line (spaces, then '#') is
//     skipped, wherever it is.
//   - A key line starts at column 0 with a plain key: an ASCII letter, digit,
//     '_' or a non-ASCII character, then any of those or '-', '.', '/' and
//     single or repeated spaces, not ending with a space, at most maxFastKey
//     bytes, then ':' followed by a space or the end of the line. Keys are
//     unique.
//   - After the key, on the same line: nothing or a comment (the value is
//     null, or the block sequence below); a single-line scalar; or a
//     single-line flow sequence. Anything may be followed by spaces and a
//     comment that starts after a space.
//   - A block sequence: the lines after a key line with no value, all at
//     the same indentation (0 allowed), each "-" alone (null), "- " and a
//     comment (null), or "- " and a single-line scalar. It ends at the first
//     line at column 0 that is not an item; a line indented otherwise (a
//     continuation, a nested block) is refused.
//   - A flow sequence: '[' then scalars separated by ',' then ']', all on the
//     line, no empty item, no trailing comma, no nesting.
//   - A single-quoted scalar closed on its line (a doubled quote is one quote); a
//     double-quoted scalar closed on its line without any backslash.
//   - A plain scalar not starting with an indicator (- ? : , [ ] { } # & * !
//     | > ' " % @ `), except '-' followed by a digit; in block context it must
//     hold no ": " and not end with ':', in a flow sequence it must hold none
//     of ": ? [ { }" and no " #". Its value is resolved by resolvePlain, which
//     refuses the spellings it does not settle with certainty.
//
// Values are sub-strings of content (no copy) except single-quoted scalars
// with a doubled quote.
func fastFrontmatter(n *Note, content string) bool {
	keys, ok := fastChars(content)
	if !ok {
		return false
	}
	var (
		m       = make(map[string]any, keys)
		f       fmFields
		tags    = n.Tags
		aliases = n.Aliases
		scratch [16]fmScalar
	)
	for pos := 0; pos < len(content); {
		line, next := fmLine(content, pos)
		pos = next
		if blankOrComment(line) {
			continue
		}
		key, rest, ok := fmKey(line)
		if !ok {
			return false
		}
		if _, dup := m[key]; dup {
			return false // the YAML path reports it
		}
		rest = trimLeftSpaces(rest)
		var (
			sc    fmScalar
			items = scratch[:0]
			seq   bool
		)
		switch {
		case rest == "" || rest[0] == '#':
			if items, pos, seq, ok = blockSeq(content, pos, items); !ok {
				return false
			}
		case rest[0] == '[':
			if items, ok = flowSeq(rest, items); !ok {
				return false
			}
			seq = true
		default:
			if sc, ok = blockScalar(rest); !ok {
				return false
			}
		}
		field := fieldOf(key)
		if seq {
			list := make([]any, len(items))
			for i, it := range items {
				list[i] = it.val
			}
			m[key] = list
			switch field {
			case fieldTags:
				for _, it := range items {
					tags = appendTagList(tags, it.fieldText())
				}
			case fieldAliases:
				for _, it := range items {
					if a := it.fieldText(); a != "" {
						aliases = append(aliases, a)
					}
				}
			case fieldNone:
			default:
				f[field] = "" // a sequence is not a scalar
			}
			continue
		}
		m[key] = sc.val
		switch field {
		case fieldTags:
			tags = appendTagList(tags, sc.fieldText())
		case fieldAliases:
			aliases = appendAliasList(aliases, sc.fieldText())
		case fieldNone:
		default:
			f[field] = sc.fieldText()
		}
	}
	n.Frontmatter = m
	n.Tags, n.Aliases = tags, aliases
	f.finish(n)
	return true
}

// maxFastKey bounds the length of a key in the fast path (the YAML scanner
// refuses an implicit key over 1024 characters).
const maxFastKey = 128

// fmScalar is a scalar of the fast path: its text as written (unquoted) and
// the value the YAML path gives for it (nil for null).
type fmScalar struct {
	text string
	val  any
}

// fieldText is scalarString for a fast-path scalar.
func (s fmScalar) fieldText() string {
	if s.val == nil {
		return ""
	}
	return strings.TrimSpace(s.text)
}

// fastChars checks the characters of content (see fastFrontmatter) and counts
// the lines that may hold a key, for sizing the map.
func fastChars(s string) (keys int, ok bool) {
	lineStart := true
	for i := 0; i < len(s); {
		c := s[i]
		if lineStart && c != ' ' && c != '-' && c != '#' && c != '\n' && c != '\r' {
			keys++
		}
		lineStart = c == '\n'
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c < 0x7f, c == '\n':
			case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			default:
				return 0, false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r < 0xA0 ||
			r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF {
			return 0, false
		}
		i += size
	}
	return keys, true
}

// fmLine returns the line at pos without its LF and a CR before it, and the
// offset of the next line.
func fmLine(s string, pos int) (string, int) {
	line, next := lineAt(s, pos)
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, next
}

// blankOrComment reports a line of spaces, or of spaces then a comment.
func blankOrComment(line string) bool {
	t := trimLeftSpaces(line)
	return t == "" || t[0] == '#'
}

func trimLeftSpaces(s string) string { return s[skipSpacesFrom(s, 0):] }

func trimRightSpaces(s string) string {
	i := len(s)
	for i > 0 && s[i-1] == ' ' {
		i--
	}
	return s[:i]
}

// fmKey splits a key line into its key and what follows the ':'.
func fmKey(line string) (key, rest string, ok bool) {
	if line == "" || !isKeyStart(line[0]) {
		return "", "", false
	}
	for i := 1; i < len(line) && i <= maxFastKey; i++ {
		switch c := line[i]; {
		case c == ':':
			if i+1 < len(line) && line[i+1] != ' ' || line[i-1] == ' ' {
				return "", "", false
			}
			return line[:i], line[i+1:], true
		case isKeyStart(c), c == '-', c == '.', c == '/', c == ' ':
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func isKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= utf8.RuneSelf
}

// blockSeq reads the value of a key line that has none on its line: a block
// sequence on the lines from pos (seq true, items appended, next is where the
// following key line starts), or null (seq false, next is pos).
func blockSeq(s string, pos int, items []fmScalar) (_ []fmScalar, next int, seq, ok bool) {
	indent := -1
	for q := pos; q < len(s); {
		line, nx := fmLine(s, q)
		if blankOrComment(line) {
			q = nx
			continue
		}
		in := len(line) - len(trimLeftSpaces(line))
		if indent < 0 {
			if !isItem(line, in) {
				return items, pos, false, true // null: the line is the next key's
			}
			indent = in
		} else if in != indent || !isItem(line, in) {
			return items, q, true, true
		}
		sc := fmScalar{} // "-" alone, or "- " and a comment: null
		if rest := trimLeftSpaces(line[in+1:]); rest != "" && rest[0] != '#' {
			if sc, ok = blockScalar(rest); !ok {
				return items, pos, false, false
			}
		}
		items = append(items, sc)
		q = nx
	}
	if indent < 0 {
		return items, pos, false, true
	}
	return items, len(s), true, true
}

// isItem reports a block sequence entry "-" at offset in of line.
func isItem(line string, in int) bool {
	return in < len(line) && line[in] == '-' && (in+1 == len(line) || line[in+1] == ' ')
}

// blockScalar reads a single-line scalar in block context and what may follow
// it on the line. s starts with a non-space.
func blockScalar(s string) (fmScalar, bool) {
	if s[0] == '"' || s[0] == '\'' {
		text, rest, ok := quoted(s)
		if !ok || !onlyComment(rest) {
			return fmScalar{}, false
		}
		return fmScalar{text, text}, true
	}
	if !isPlainStart(s) {
		return fmScalar{}, false
	}
	end := len(s)
scan:
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return fmScalar{}, false // a mapping, or an error
			}
		case '#':
			if s[i-1] == ' ' {
				end = i
				break scan
			}
		}
	}
	text := trimRightSpaces(s[:end])
	val, ok := resolvePlain(text)
	return fmScalar{text, val}, ok
}

// flowSeq reads a single-line flow sequence s ("[...]" and what may follow).
func flowSeq(s string, items []fmScalar) ([]fmScalar, bool) {
	i := skipSpacesFrom(s, 1)
	if i < len(s) && s[i] == ']' {
		return items, onlyComment(s[i+1:])
	}
	for {
		i = skipSpacesFrom(s, i)
		if i >= len(s) {
			return items, false
		}
		var sc fmScalar
		if c := s[i]; c == '"' || c == '\'' {
			text, rest, ok := quoted(s[i:])
			if !ok {
				return items, false
			}
			sc, i = fmScalar{text, text}, len(s)-len(rest)
		} else {
			if !isPlainStart(s[i:]) {
				return items, false
			}
			j := i + 1
			for ; j < len(s) && s[j] != ',' && s[j] != ']'; j++ {
				switch s[j] {
				case ':', '?', '[', '{', '}':
					return items, false
				case '#':
					if s[j-1] == ' ' {
						return items, false
					}
				}
			}
			text := trimRightSpaces(s[i:j])
			val, ok := resolvePlain(text)
			if !ok {
				return items, false
			}
			sc, i = fmScalar{text, val}, j
		}
		items = append(items, sc)
		i = skipSpacesFrom(s, i)
		if i >= len(s) {
			return items, false
		}
		switch s[i] {
		case ']':
			return items, onlyComment(s[i+1:])
		case ',':
			i = skipSpacesFrom(s, i+1)
			if i < len(s) && s[i] == ']' {
				return items, false // trailing comma
			}
		default:
			return items, false
		}
	}
}

func skipSpacesFrom(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// onlyComment reports that rest, what follows a value on its line, is empty,
// spaces, or spaces then a comment.
func onlyComment(rest string) bool {
	t := trimLeftSpaces(rest)
	return t == "" || t[0] == '#' && len(t) < len(rest)
}

// quoted reads a quoted scalar at the start of s, closed on the line: its
// text and what follows the closing quote. Double-quoted scalars with a
// backslash (an escape) are refused.
func quoted(s string) (text, rest string, ok bool) {
	if s[0] == '"' {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				return "", "", false
			case '"':
				return s[1:i], s[i+1:], true
			}
		}
		return "", "", false
	}
	doubled := false
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			doubled = true
			i++
			continue
		}
		text = s[1:i]
		if doubled {
			text = strings.ReplaceAll(text, "''", "'")
		}
		return text, s[i+1:], true
	}
	return "", "", false
}

// isPlainStart reports whether a plain scalar may start s in the fast path:
// not an indicator, except '-' followed by a digit.
func isPlainStart(s string) bool {
	switch s[0] {
	case '-':
		return len(s) > 1 && s[1] >= '0' && s[1] <= '9'
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// resolvePlain gives the value the YAML path gives for the plain scalar s
// (yaml.v3's resolver, then nodeValue's conversion), or ok false when the
// spelling is not one this function settles with certainty:
//
//   - "" and ~ null Null NULL are nil; true True TRUE, false False FALSE are
//     bools. Any other word starting with one of yYnNtTfFoO~< is a string
//     ("yes", "on", "No" are strings in YAML 1.2 as yaml.v3 resolves them),
//     except "<<" (the merge key), refused.
//   - A scalar starting with '.' is refused (.inf, .nan, .5).
//   - A scalar starting with a digit or a sign is numeric-looking: see
//     resolveNumeric.
//   - Anything else is a string.
func resolvePlain(s string) (any, bool) {
	if s == "" {
		return nil, true
	}
	switch c := s[0]; c {
	case '.':
		return nil, false
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return resolveNumeric(s)
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~', '<':
		switch s {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		case "~", "null", "Null", "NULL":
			return nil, true
		case "<<":
			return nil, false
		}
	}
	return s, true
}

// resolveNumeric resolves a plain scalar that starts with a digit or a sign.
// yaml.v3 tries, in order: a timestamp (kept as written by nodeValue),
// base-prefixed or decimal integers, YAML-style floats, 0b/0o integers
// (whose digits may carry their own sign), all after removing every '_';
// whatever fails them all is a string. So:
//
//   - A character that none of those forms can hold (outside 0-9 a-f A-F x X
//     o O + - . _) makes a string, as written ("3d_embeds", "10:30").
//   - Otherwise any '_' is refused.
//   - A sign right after a digit, a '.' or a sign (only the start, an
//     exponent or a 0b/0o prefix may precede one) makes a string, as in
//     dates ("2026-01-02"), and so do two '.'s ("1.2.3").
//   - -?(0|[1-9][0-9]{0,17}) is an int, -?[0-9]+.[0-9]+ (up to 32 bytes) a
//     float64.
//   - Everything else (0x1F, 0o17, 012, +1, 1e3, 1.) is refused.
func resolveNumeric(s string) (any, bool) {
	underscore := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == '+', c == '-':
		case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F', c == 'x', c == 'X', c == 'o', c == 'O':
		case c == '_':
			underscore = true
		default:
			return s, true
		}
	}
	if underscore {
		return nil, false
	}
	dots, digits, otherSigns := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		case c == '+' || c == '-':
			if i > 0 {
				if p := s[i-1]; p >= '0' && p <= '9' || p == '.' || p == '+' || p == '-' {
					return s, true
				}
				otherSigns++
			}
		}
	}
	if dots > 1 {
		return s, true
	}
	body := s
	if s[0] == '-' {
		body = s[1:]
	}
	if otherSigns > 0 || body == "" || body[0] < '0' || body[0] > '9' {
		return nil, false
	}
	switch {
	case dots == 0 && digits == len(body) && len(body) <= 18 && (body[0] != '0' || len(body) == 1):
		i, err := strconv.Atoi(s)
		return i, err == nil
	case dots == 1 && digits == len(body)-1 && len(s) <= 32 && body[len(body)-1] != '.':
		// body is digits '.' digits: it starts with a digit (checked above)
		// and ends with one.
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return nil, false
}
