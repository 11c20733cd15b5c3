package vault

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// validateLearn checks a request and normalises it.
func validateLearn(m *texts, req api.LearnRequest) (*learning, error) {
	in := &learning{confirm: req.ConfirmNewDomain}
	var err error
	if in.title, err = oneLine(m, "title", req.Title, maxTitleRunes); err != nil {
		return nil, err
	}
	if in.title == "" {
		return nil, api.Invalid("title", "%s", m.Get(vEmpty))
	}
	if in.slug = slugify(in.title); in.slug == "" {
		return nil, api.Invalid("title", "%s", m.Get(vTitleLetter))
	}
	if in.insight, err = multiLine(m, "insight", req.Insight); err != nil {
		return nil, err
	}
	if in.insight == "" {
		return nil, api.Invalid("insight", "%s", m.Get(vEmpty))
	}
	if in.context, err = multiLine(m, "context", req.Context); err != nil {
		return nil, err
	}
	if in.domain, err = validateDomain(m, req.Domain); err != nil {
		return nil, err
	}
	if in.project, err = oneLine(m, "project", req.Project, maxLineRunes); err != nil {
		return nil, err
	}
	if len(req.Tags) > maxLearnItems {
		return nil, api.Invalid("tags", "%s", m.Get(vMaxTags, maxLearnItems))
	}
	seen := map[string]bool{}
	for _, tag := range req.Tags {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "#")
		switch {
		case tag == "":
			return nil, api.Invalid("tags", "%s", m.Get(vEmptyTag))
		case strings.ContainsFunc(tag, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(tagRefused, r) }):
			return nil, api.Invalid("tags", "%s", m.Get(vTagWord, tag, spaced(tagRefused)))
		case strings.Trim(tag, "0123456789/") == "":
			// Obsidian takes no tag of digits alone (#2026 is not one):
			// the note would carry a tag that no tag search finds.
			return nil, api.Invalid("tags", "%s", m.Get(vTagDigits, tag))
		}
		if _, err := oneLine(m, "tags", tag, maxLineRunes); err != nil {
			return nil, err
		}
		if !seen[strings.ToLower(tag)] {
			seen[strings.ToLower(tag)] = true
			in.tags = append(in.tags, tag)
		}
	}
	if len(req.Links) > maxLearnItems {
		return nil, api.Invalid("links", "%s", m.Get(vMaxLinks, maxLearnItems))
	}
	for _, l := range req.Links {
		l, err := oneLine(m, "links", l, maxLineRunes)
		if err != nil {
			return nil, err
		}
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "[["), "]]"))
		switch {
		case l == "":
			return nil, api.Invalid("links", "%s", m.Get(vEmptyLink))
		case strings.Contains(l, "[[") || strings.Contains(l, "]]"):
			return nil, api.Invalid("links", "%s", m.Get(vLinkName, l))
		}
		if !seen["\x00"+l] {
			seen["\x00"+l] = true
			in.links = append(in.links, l)
		}
	}
	return in, nil
}

// tagRefused are the characters a tag may not hold besides white space (the
// refusal names each, so that an agent can correct the tag at once).
const tagRefused = ",#[]{}\"'|"

// spaced is chars, one by one, separated by spaces.
func spaced(chars string) string {
	return strings.Join(strings.Split(chars, ""), " ")
}

// oneLine normalises a one-line field: valid UTF-8, runs of white space
// (line breaks included) become one space, no control or bidirectional
// formatting character, at most max characters.
func oneLine(m *texts, field, s string, max int) (string, error) {
	if !utf8.ValidString(s) {
		return "", api.Invalid(field, "%s", m.Get(vUTF8))
	}
	s = strings.Join(strings.Fields(s), " ")
	if strings.ContainsFunc(s, badLineRune) {
		return "", api.Invalid(field, "%s", m.Get(vControlLine))
	}
	if utf8.RuneCountInString(s) > max {
		return "", api.Invalid(field, "%s", m.Get(vMaxChars, max))
	}
	return s, nil
}

// multiLine normalises a multi-line field: valid UTF-8, LF line ends, trimmed, no
// control character but tab and line feed, bounded.
func multiLine(m *texts, field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", api.Invalid(field, "%s", m.Get(vUTF8))
	}
	s = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"))
	if strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }) {
		return "", api.Invalid(field, "%s", m.Get(vControl))
	}
	if utf8.RuneCountInString(s) > maxLearnText {
		return "", api.Invalid(field, "%s", m.Get(vMaxChars, maxLearnText))
	}
	return s, nil
}

func badLineRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u200b' || r == '\ufeff' || r == '\u2028' || r == '\u2029'
}

// validateDomain checks a domain name (DESIGN.md section 6 step 1): one
// folder name, no spaces, none of / \ : * ? " < > |, not starting or ending
// with "." (Windows drops a trailing one), at most 64 characters.
func validateDomain(m *texts, d string) (string, error) {
	if !utf8.ValidString(d) {
		return "", api.Invalid("domain", "%s", m.Get(vUTF8))
	}
	// A new domain's folder is named in the composed form (NFC), the form
	// Obsidian and most tools write, whatever form the agent sent.
	d = norm.NFC.String(strings.TrimSpace(d))
	switch {
	case d == "":
		return "", api.Invalid("domain", "%s", m.Get(vEmpty))
	case utf8.RuneCountInString(d) > maxDomainRunes:
		return "", api.Invalid("domain", "%s", m.Get(vMaxChars, maxDomainRunes))
	case strings.ContainsFunc(d, func(r rune) bool { return unicode.IsSpace(r) || badLineRune(r) }):
		return "", api.Invalid("domain", "%s", m.Get(vDomainSpaces))
	case strings.ContainsAny(d, `/\:*?"<>|`):
		return "", api.Invalid("domain", "%s", m.Get(vDomainChars))
	case strings.HasPrefix(d, ".") || strings.HasSuffix(d, "."):
		return "", api.Invalid("domain", "%s", m.Get(vDomainDot))
	}
	return d, nil
}

// slugSpecial spells the letters that Unicode decomposition leaves whole.
var slugSpecial = map[rune]string{
	'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'ł': "l", 'đ': "d", 'ð': "d", 'þ': "th", 'ı': "i",
}

// slugify makes a file name of a title (DESIGN.md section 6 step 1): accents
// stripped, lowercase, every run of characters other than a-z and 0-9 one
// hyphen, no hyphen at either end, at most 80 characters.
func slugify(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFD.String(title) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		r = unicode.ToLower(r)
		if rep, ok := slugSpecial[r]; ok {
			b.WriteString(rep)
			dash = false
			continue
		}
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if len(out) > maxSlugLen {
		out = strings.TrimRight(out[:maxSlugLen], "-")
	}
	if out == "" {
		return letterSlug(title)
	}
	return out
}

// letterSlug is the slug of a title with no Latin letter or digit (日本語の
// メモ, Заметка): the rule above would leave nothing, so the title's own
// letters and digits are kept, lower-cased, the rest made '-' as above; at
// most maxSlugLen characters and maxSlugBytes bytes, so that a dated name
// built on it stays within a file name's 255 bytes.
func letterSlug(title string) string {
	var b strings.Builder
	dash := false
	n := 0
	for _, r := range norm.NFC.String(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if n >= maxSlugLen || b.Len()+utf8.RuneLen(r) > maxSlugBytes {
				break
			}
			b.WriteRune(unicode.ToLower(r))
			dash = false
			n++
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// maxSlugBytes bounds a letterSlug: with "-YYYY-MM-DD-NN.md" it stays
// under a file name's 255 bytes.
const maxSlugBytes = 200
