package vault

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// Layout of the numbered vault (DESIGN.md section 2).
const (
	wikiFolder     = "02-wiki"
	knowledgeIndex = "00-index/index-knowledge.md"
	projectsFolder = "03-projects"
	dailyFolder    = "04-daily"
)

// domainOf returns the domain of a note under 02-wiki/<domain>/, or "".
func domainOf(rel string) string {
	rest, ok := strings.CutPrefix(rel, wikiFolder+"/")
	if !ok {
		return ""
	}
	d, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return d
}

func mocPath(domain string) string {
	return wikiFolder + "/" + domain + "/" + domain + "-moc.md"
}

// domains lists the existing domains: folders under 02-wiki holding files.
func (s *Service) domains() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	set := map[string]bool{}
	s.graph.Resolver().EachFolder(wikiFolder, func(dir string, _ []string) {
		if d := domainOf(dir + "/"); d != "" {
			set[d] = true
		}
	})
	return sortedKeys(set)
}

func (s *Service) domainExists(d string) bool {
	return slices.Contains(s.domains(), d)
}

// eolOf is the line ending text uses: CRLF when it has one, else LF.
func eolOf(text string) string {
	if strings.Contains(text, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// lineStarts returns the byte offset of the start of every line of text.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// listLinesTo finds the entry lines of the MOC at moc (content src) for
// target: list items that start with a link resolving to target with r
// ("- [[note]] — summary"; emphasis marks or a task box may come first). A
// list item that only mentions the note in its text ("- See also [[note]]
// below") is the author's prose, not its entry: a move or a delete used to
// remove it with the entry. It returns their line indexes (0-based).
func listLinesTo(src []byte, moc string, r *links.Resolver, target string) []int {
	n := markdown.Parse(path.Base(moc), src)
	text := string(src)
	starts := lineStarts(text)
	seen := map[int]bool{}
	var out []int
	for _, l := range n.Links {
		if l.InProperty() {
			continue // a frontmatter list item is not a MOC line
		}
		idx := l.Line - 1
		if idx < 0 || idx >= len(starts) || seen[idx] {
			continue
		}
		seen[idx] = true // only the first link of a line counts
		if !isEntry(text, starts[idx], l) {
			continue
		}
		if to, ok := r.ResolveLink(moc, l); ok && to == target {
			out = append(out, idx)
		}
	}
	return out
}

// isEntry reports whether l, the first link of the line of text that
// starts at start, is that line's entry: the line is a list item and
// nothing but entryLead's marks comes before the link.
func isEntry(text string, start int, l markdown.Link) bool {
	line := strings.TrimLeft(text[start:], " \t")
	if !(strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ") || strings.HasPrefix(line, "+ ")) {
		return false
	}
	return l.Start >= start && entryLead(strings.TrimLeft(text[start:l.Start], " \t")[1:])
}

// entryLead reports whether lead, the text of a list item before its first
// link (the marker taken off), leaves the link first: blanks, emphasis
// marks, a task box.
func entryLead(lead string) bool {
	lead = strings.TrimLeft(lead, " \t")
	for _, box := range []string{"[ ]", "[x]", "[X]"} {
		lead = strings.TrimPrefix(lead, box)
	}
	return strings.Trim(lead, " \t*_") == ""
}

// linksTo reports whether the note at from, with content src, has a link
// that resolves to target with r.
func linksTo(src []byte, from string, r *links.Resolver, target string) bool {
	n := markdown.Parse(path.Base(from), src)
	for _, l := range n.Links {
		if to, ok := r.ResolveLink(from, l); ok && to == target {
			return true
		}
	}
	return false
}

// removeLines deletes the given 0-based lines and returns the new text and
// the removed lines (without their EOL).
func removeLines(text string, idxs []int) (string, []string) {
	starts := lineStarts(text)
	drop := map[int]bool{}
	for _, i := range idxs {
		drop[i] = true
	}
	var b strings.Builder
	var removed []string
	for i, st := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if drop[i] {
			removed = append(removed, strings.TrimRight(text[st:end], "\r\n"))
			continue
		}
		b.WriteString(text[st:end])
	}
	return b.String(), removed
}

// dropMOCLine removes the line listing rel from its domain's MOC (delete).
func (s *Service) dropMOCLine(t *tx, rel string) error {
	d := domainOf(rel)
	if d == "" {
		return nil
	}
	moc := mocPath(d)
	if moc == rel {
		return nil
	}
	before, err := t.current(moc)
	if err != nil || before == nil {
		return err
	}
	idxs := listLinesTo(before, moc, s.graph.Resolver(), rel)
	if len(idxs) == 0 {
		return nil
	}
	after, _ := removeLines(string(before), idxs)
	return t.writeFile(moc, before, []byte(after), vaultfs.Move)
}

// summaryOf is the first sentence of a note's prose, at most 120 characters.
func summaryOf(text string) string {
	n := markdown.Parse("x.md", []byte(text))
	for _, c := range n.Chunks {
		for _, line := range strings.Split(c.Prose, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "![[") || strings.HasPrefix(line, ">") || strings.HasPrefix(line, "|") {
				continue
			}
			line = strings.TrimLeft(line, "-*+ ")
			return firstSentence(line)
		}
	}
	return ""
}

// firstSentence cuts text at the end of its first sentence, at most 120
// characters, with … when cut. A sentence ends at . ! or ? before a space,
// unless a lower-case letter follows: "e.g. a channel", "i.e. one",
// "p. ex. um canal" go on (a new sentence starts with a capital, a digit
// or a sign).
func firstSentence(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	for i, r := range text {
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		if i+1 == len(text) {
			break
		}
		if text[i+1] != ' ' {
			continue
		}
		if next, _ := utf8.DecodeRuneInString(text[i+2:]); !unicode.IsLower(next) {
			text = text[:i+1]
			break
		}
	}
	if utf8.RuneCountInString(text) > 120 {
		return cutAtWord(text, 119) + "…"
	}
	return text
}

// addMOCLine adds line, listing target, under the notes section of the
// domain MOC, creating the MOC (and the knowledge-index line of a new domain)
// when missing. A MOC that already lists target (resolved with r) is left
// alone.
func (s *Service) addMOCLine(t *tx, domain, line string, r *links.Resolver, target string) error {
	moc := mocPath(domain)
	before, err := t.current(moc)
	if err != nil {
		return err
	}
	p := s.profile()
	if before == nil {
		// A new MOC has its updated date from the start: the later
		// additions bump it (bumpUpdated changes a key that is there).
		fm, err := renderFrontmatter(map[string]any{p.typeKey: "moc", "tags": []any{domain}, p.createdKey: s.today(), p.updatedKey: s.today()})
		if err != nil {
			return err
		}
		text := fm + "# " + s.mocTitle(domain) + "\n\n## " + p.notesSection + "\n\n" + line + "\n"
		if err := t.writeFile(moc, nil, []byte(text), vaultfs.Move); err != nil {
			return err
		}
		// The MOC is written: a failure here is the index's alone.
		if err := s.addIndexLine(t, domain); err != nil {
			t.warn(wIndexList, knowledgeIndex, s.fs.Redact(err.Error()))
		}
		return nil
	}
	if len(listLinesTo(before, moc, r, target)) > 0 {
		return nil // already listed
	}
	text := string(before)
	after := insertUnderSection(text, sectionNames(p, func(p profile) string { return p.notesSection }), line, eolOf(text))
	after = bumpUpdated(after, s.today())
	return t.writeFile(moc, before, []byte(after), vaultfs.Move)
}

// insertUnderSection adds line at the end of the list under the first "## "
// heading named one of names (case-insensitive); the section is appended when
// missing.
func insertUnderSection(text string, names []string, line, eol string) string {
	starts, sec, last := findSection(text, names)
	if sec < 0 {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += eol
		}
		return text + eol + "## " + names[0] + eol + eol + line + eol
	}
	insertAt := len(text)
	if last+1 < len(starts) {
		insertAt = starts[last+1]
	}
	prefix := text[:insertAt]
	if !strings.HasSuffix(prefix, "\n") {
		prefix += eol
	}
	if last == sec {
		prefix += eol // a blank line between the heading and the list
	}
	return prefix + line + eol + text[insertAt:]
}

// fillSection puts block (whole lines, LF line ends) at the end of the first
// "## " section of text named one of names (case-insensitive), a blank line
// before and after it; false when text has no such section.
func fillSection(text string, names []string, block string) (string, bool) {
	starts, sec, last := findSection(text, names)
	if sec < 0 {
		return text, false
	}
	insertAt := len(text)
	if last+1 < len(starts) {
		insertAt = starts[last+1]
	}
	prefix := text[:insertAt]
	if !strings.HasSuffix(prefix, "\n") {
		prefix += "\n"
	}
	out := prefix + "\n" + block
	if rest := strings.TrimLeft(text[insertAt:], "\n"); rest != "" {
		out += "\n" + rest
	}
	return out, true
}

// findSection finds the first "## " heading of text named one of names
// (case-insensitive): its line (0-based, -1 when there is none) and the
// last non-blank line of its section, which ends at the next heading of
// level 1 or 2, or the end; starts are the offsets of text's lines.
func findSection(text string, names []string) (starts []int, sec, last int) {
	starts = lineStarts(text)
	lineAt := func(i int) string {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		return strings.TrimSpace(strings.TrimRight(text[starts[i]:end], "\r\n"))
	}
	sec = -1
	for i := range starts {
		if h, ok := strings.CutPrefix(lineAt(i), "## "); ok {
			for _, n := range names {
				if strings.EqualFold(strings.TrimSpace(h), n) {
					sec = i
					break
				}
			}
			if sec >= 0 {
				break
			}
		}
	}
	if sec < 0 {
		return starts, -1, -1
	}
	last = sec
	for i := sec + 1; i < len(starts); i++ {
		l := lineAt(i)
		if strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "## ") {
			break
		}
		if l != "" {
			last = i
		}
	}
	return starts, sec, last
}

// bumpUpdated sets the updated/atualizado key of a frontmatter block to
// today, when the note has that key.
func bumpUpdated(text, today string) string {
	if !strings.HasPrefix(text, "---") {
		return text
	}
	starts := lineStarts(text)
	for i := 1; i < len(starts); i++ {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		line := text[starts[i]:end]
		trim := strings.TrimRight(line, "\r\n")
		if trim == "---" {
			return text
		}
		for _, key := range []string{"updated", "atualizado"} {
			if strings.HasPrefix(trim, key+":") {
				return text[:starts[i]] + key + ": " + today + line[len(trim):] + text[end:]
			}
		}
	}
	return text
}

// addIndexLine adds the line of a new domain's MOC to the knowledge index.
func (s *Service) addIndexLine(t *tx, domain string) error {
	before, err := t.current(knowledgeIndex)
	if err != nil {
		return err
	}
	r := s.resolverWith(mocPath(domain))
	p := s.profile()
	if before == nil {
		line := s.indexLine(nil, domain, r)
		fm, err := renderFrontmatter(map[string]any{p.typeKey: "moc", "tags": []any{"index"}, p.createdKey: s.today(), p.updatedKey: s.today()})
		if err != nil {
			return err
		}
		text := fm + "# " + p.knowledgeIndexTi + "\n\n" + line + "\n"
		return t.writeFile(knowledgeIndex, nil, []byte(text), vaultfs.Move)
	}
	// A line already there in any form ([[k8s-moc]], or the path form
	// [[../02-wiki/k8s/k8s-moc|k8s]] of an index whose domain folder was
	// removed and now comes back) is not added twice.
	if linksTo(before, knowledgeIndex, r, mocPath(domain)) {
		return nil
	}
	line := s.indexLine(before, domain, r)
	text := string(before)
	eol := eolOf(text)
	names := sectionNames(p, func(p profile) string { return p.domainsSection })
	if hasSection(text, names) {
		text = insertUnderSection(text, names, line, eol)
	} else {
		if !strings.HasSuffix(text, "\n") {
			text += eol
		}
		text += line + eol
	}
	// The index changed: its updated (atualizado) date says so, as a MOC's.
	return t.writeFile(knowledgeIndex, before, []byte(bumpUpdated(text, s.today())), vaultfs.Move)
}

// sectionNames lists a section's name in the profile's language first, then
// in the others (reading accepts every spelling; writing uses the profile's).
func sectionNames(p profile, name func(profile) string) []string {
	names := []string{name(p)}
	for _, lang := range []string{"en", "pt"} {
		if n := name(profiles[lang]); n != names[0] {
			names = append(names, n)
		}
	}
	return names
}

// hasSection reports whether text has a "## " heading named one of names.
func hasSection(text string, names []string) bool {
	for _, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "## "); ok {
			for _, n := range names {
				if strings.EqualFold(strings.TrimSpace(h), n) {
					return true
				}
			}
		}
	}
	return false
}

// resolverAfter returns a copy of the resolver with the move applied.
func (s *Service) resolverAfter(from, to string) *links.Resolver {
	r := s.resolverWith(to)
	r.Remove(from)
	return r
}
