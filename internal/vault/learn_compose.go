package vault

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// section is the dated section appended to the existing note at note (a
// link to that note itself is left out).
func (in *learning) section(p profile, date, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s — %s\n\n%s\n", date, in.title, in.insight)
	if in.context != "" {
		fmt.Fprintf(&b, "\n**%s:** %s\n", p.contextLabel, in.context)
	}
	self := strings.TrimSuffix(note, path.Ext(note))
	var ls []string
	for _, l := range in.links {
		if strings.EqualFold(l, self) || strings.EqualFold(l, path.Base(self)) {
			continue
		}
		ls = append(ls, "[["+l+"]]")
	}
	if len(ls) > 0 {
		fmt.Fprintf(&b, "\n**%s:** %s\n", p.linksSection, strings.Join(ls, ", "))
	}
	return b.String()
}

// recordedIn reports whether note already holds this insight (and its
// context), whitespace aside: a retried call must not add it twice.
func (in *learning) recordedIn(note []byte) bool {
	text := squash(string(note))
	if !strings.Contains(text, squash(in.insight)) {
		return false
	}
	return in.context == "" || strings.Contains(text, squash(in.context))
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// newNote composes a new note: from _templates/wiki.md when it exists (its
// expressions filled, see learn_template.go), with frontmatter type wiki,
// the tags and created today; the insight goes under the template's section
// for it (insightSections) and the context under its Context section, when
// it has them, else both right after the title heading; the links go in a
// Links section.
func (s *Service) newNote(t *tx, in *learning) []byte {
	if in.content == nil {
		in.content = s.composeLearning(t, in)
	}
	return in.content
}

// insightSections are the names of a template's section for what was
// learned, in either profile's language (the first "## " heading of the
// template with one of them takes the insight).
var insightSections = []string{
	"What we learned", "What I learned", "Learned", "Learning", "Learnings", "Lesson", "Lessons", "Lessons learned",
	"Insight", "Insights", "Solution", "TIL",
	"O que aprendemos", "O que aprendi", "Aprendizado", "Aprendizados", "Lição", "Lições", "Lições aprendidas", "Solução",
}

func (s *Service) composeLearning(t *tx, in *learning) []byte {
	p := s.profile()
	fm := map[string]any{}
	body, block := "", ""
	crlf := false
	if tpl, ok := s.template(t, wikiTemplate); ok {
		crlf = strings.Contains(tpl, "\r\n")
		vars := templateVars{title: in.title, path: in.primary(), now: s.opts.Now(), lang: p.lang}
		var dropped []string
		fm, block, body, dropped = fillNoteTemplate(t, wikiTemplate, tpl, vars)
		if fm == nil {
			fm = map[string]any{}
		}
		warnDropped(t, wikiTemplate, dropped)
	}
	tags := in.tags
	if s.domainTagged(in.domain) {
		tags = append([]string{in.domain}, tags...)
	}
	set := map[string]any{p.typeKey: "wiki", "tags": mergeTags(fm, tags), p.createdKey: s.today()}
	var head string
	var err error
	if block != "" {
		// The template's other keys stay as its author wrote them: their
		// order, comments, an empty value, 0012 and 1.10 (which a decoded
		// and rendered block would write null, 10 and 1.1).
		head, err = mergeFrontmatter(block, set, nil, true)
	} else {
		for k, v := range set {
			setProfileKey(fm, k, v)
		}
		head, err = renderFrontmatter(fm)
	}
	if err != nil {
		// Only a template's exotic values can fail to render: start afresh.
		t.warn(wFMNotKept, wikiTemplate, err.Error())
		head, _ = renderFrontmatter(map[string]any{p.typeKey: "wiki", "tags": mergeTags(nil, tags), p.createdKey: s.today()})
	}

	// The title heading: the template's first "# " heading (given the
	// title when the template left it empty), else one made.
	h1 := 0
	for _, h := range markdown.Parse(in.primary(), []byte(body)).Headings {
		if h.Level == 1 {
			h1 = h.Line
			if h.Text == "" {
				body = replaceLine(body, h1, "# "+in.title)
			}
			break
		}
	}
	if h1 == 0 {
		body = "# " + in.title + "\n\n" + strings.TrimLeft(body, "\n")
		h1 = 1
	}
	// The template's own sections for the context and the insight, when
	// it has them (an empty "## Context" under a bold context line read as
	// a note half written); else both right after the title heading.
	ctxLine := ""
	if in.context != "" {
		var ok bool
		if body, ok = fillSection(body, sectionNames(p, func(p profile) string { return p.contextLabel }), in.context+"\n"); !ok {
			ctxLine = "**" + p.contextLabel + ":** " + in.context + "\n"
		}
	}
	lead := in.insight + "\n"
	if ctxLine != "" {
		lead += "\n" + ctxLine
	}
	if filled, ok := fillSection(body, insightSections, lead); ok {
		body = filled
	} else {
		body = insertAfterLine(body, h1, lead)
	}
	if len(in.links) > 0 {
		names := sectionNames(p, func(p profile) string { return p.linksSection })
		for _, l := range in.links {
			body = insertUnderSection(body, names, "- [["+l+"]]", "\n")
		}
	}
	text := head + body
	if crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	return []byte(text)
}

// fillNoteTemplate fills a template (LF line ends from here on) and splits
// it: its frontmatter decoded (nil when it has none; a block that is not
// valid YAML once filled is dropped with a warning), the filled block
// ("" then) and its body. It returns the expressions it removed.
func fillNoteTemplate(t *tx, name, tpl string, vars templateVars) (map[string]any, string, string, []string) {
	tpl = strings.TrimPrefix(strings.ReplaceAll(tpl, "\r\n", "\n"), "\uFEFF")
	block, rest := markdown.SplitFrontmatter(tpl)
	body, dropped := vars.fill(rest, false, false)
	if block == "" {
		return nil, "", body, dropped
	}
	filled, droppedFM := vars.fill(block, true, false)
	fm, _ := markdown.ParseFrontmatter(filled)
	if fm == nil {
		// A title such as "a: b" breaks a plain YAML value: quote it.
		filled, droppedFM = vars.fill(block, true, true)
		fm, _ = markdown.ParseFrontmatter(filled)
	}
	if fm == nil {
		t.warn(wFMInvalid, name)
		filled = ""
	}
	return fm, filled, body, append(droppedFM, dropped...)
}

// warnDropped warns about the expressions of a template that were removed.
func warnDropped(t *tx, name string, dropped []string) {
	if len(dropped) > 0 {
		t.warn(wTemplateDropped, name, droppedList(dropped))
	}
}

// replaceLine replaces the given 1-based line of text (its line end kept).
func replaceLine(text string, line int, with string) string {
	starts := lineStarts(text)
	if line < 1 || line > len(starts) {
		return text
	}
	end := len(text)
	if line < len(starts) {
		end = starts[line] - 1 // the line feed
		if end > starts[line-1] && text[end-1] == '\r' {
			end--
		}
	}
	return text[:starts[line-1]] + with + text[end:]
}

// setProfileKey sets key in the profile's spelling, replacing the other
// profile's (a template written with type: gets tipo: in a Portuguese vault).
func setProfileKey(fm map[string]any, key string, v any) {
	for k := range fm {
		if strings.EqualFold(k, key) || slices.ContainsFunc(keySynonyms[key], func(syn string) bool { return strings.EqualFold(k, syn) }) {
			delete(fm, k)
		}
	}
	fm[key] = v
}

// template reads a template note; a missing one is no template, an unreadable
// one too, with a warning.
func (s *Service) template(t *tx, rel string) (string, bool) {
	data, _, err := s.fs.ReadNote(rel)
	switch {
	case err == nil:
		return string(data), true
	case vaultfs.CodeOf(err) != vaultfs.CodeNotFound:
		t.warn(wTemplateUnread, rel, s.reasonOf(err))
	}
	return "", false
}

// mergeTags is the template's tags (a list or a comma string) followed by
// the learning's, each once (letter case ignored).
func mergeTags(fm map[string]any, extra []string) []any {
	var all []string
	for k, v := range fm {
		if !strings.EqualFold(k, "tags") {
			continue
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if str, ok := e.(string); ok {
					all = append(all, str)
				}
			}
		case string:
			all = append(all, strings.Split(x, ",")...)
		}
	}
	all = append(all, extra...)
	out := []any{}
	seen := map[string]bool{}
	for _, tag := range all {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "#")
		if tag == "" || seen[strings.ToLower(tag)] {
			continue
		}
		seen[strings.ToLower(tag)] = true
		out = append(out, tag)
	}
	return out
}

// insertAfterLine puts block (ending in a line feed) after the given 1-based
// line of text, with one blank line before it and one after it.
func insertAfterLine(text string, line int, block string) string {
	starts := lineStarts(text)
	at := len(text)
	if line < len(starts) {
		at = starts[line]
	}
	head := text[:at]
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	rest := strings.TrimLeft(text[at:], "\n")
	out := head + "\n" + block
	if rest != "" {
		out += "\n" + rest
	}
	return out
}
