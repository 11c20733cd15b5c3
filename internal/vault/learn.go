package vault

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

var _ api.Learner = (*Service)(nil)

// Bounds of a learning (DESIGN.md section 6, plus what keeps a note sane).
const (
	maxSlugLen     = 80  // characters of the file name, before ".md"
	maxDomainRunes = 64  // characters of a domain folder name
	maxTitleRunes  = 200 // a title is a heading and a commit subject
	maxLineRunes   = 200 // project, one tag, one link
	maxLearnItems  = 50  // tags, links
	maxLearnText   = 200_000
	// maxDatedNames bounds the search for a free dated name
	// (<slug>-YYYY-MM-DD.md, then -2, -3, ...).
	maxDatedNames = 100
	// learnSearchLimit is how many results the duplicate decision looks at:
	// the runner-up is the best chunk of any note other than the top one,
	// which the default 6 results may not reach.
	learnSearchLimit = api.MaxSearchLimit
)

// Where templates live (read only; never written).
const (
	wikiTemplate  = "_templates/wiki.md"
	dailyTemplate = "_templates/daily.md"
)

// learning is a validated, normalised vault_learn request.
type learning struct {
	title, insight, context string
	domain, project, slug   string
	tags, links             []string
	confirm                 bool
	content                 []byte // the new note, once composed
}

// Learn records an insight without asking where it goes (DESIGN.md section
// 6): it searches for the note the insight belongs to, appends a dated
// section there when one stands out as the same subject, else creates
// 02-wiki/<domain>/<slug>.md; then it lists a new note in the domain's map of
// content (creating the map, and its knowledge-index line, for a new domain)
// and logs the capture in today's daily note. Everything is one commit,
// "docs(vault): <title>", which one git revert (vault_undo) takes back.
//
// No failure of a single file loses the insight: a note with the slug's name
// is appended to; a note that cannot be written, or a create path taken by
// something that is not a note (a FIFO, a symbolic link, a folder, a file
// with other hard links), sends the insight to a free dated name, and a
// warning says where it went.
func (s *Service) Learn(ctx context.Context, req api.LearnRequest) (*api.LearnResult, error) {
	in, err := validateLearn(req)
	if err != nil {
		return nil, err
	}
	if s.opts.ReadOnly {
		return nil, &api.Error{Code: api.CodeReadOnly, Message: "the vault is open read-only"}
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	domain, known := s.matchDomain(in.domain)
	if !known && !in.confirm {
		msg := fmt.Sprintf("%q would be a new domain (no domain exists yet); pass confirm_new_domain: true to create the vault's first one", domain)
		if ds := s.domains(); len(ds) > 0 {
			msg = fmt.Sprintf("%q would be a new domain (existing: %s); file the learning under one of those, or pass confirm_new_domain: true to create it", domain, strings.Join(ds, ", "))
		}
		return nil, &api.Error{Code: api.CodeNeedsConfirm, Field: "confirm_new_domain", Message: msg}
	}
	in.domain = domain
	if err := vaultfs.CheckPolicy(in.primary(), vaultfs.Write); err != nil {
		return nil, fieldErr("domain", err)
	}
	lr := &api.LearnResult{Domain: domain, Propagated: []string{}}
	res, err := s.write(ctx, func(ctx context.Context, t *tx) (*api.WriteResult, string, error) {
		err := s.learn(ctx, t, in, lr)
		return &lr.WriteResult, "docs(vault): " + in.title, err
	})
	if err != nil {
		return nil, err
	}
	if res != &lr.WriteResult {
		lr.WriteResult = *res
	}
	return lr, nil
}

// primary is where a new note of this learning goes.
func (in *learning) primary() string {
	return wikiFolder + "/" + in.domain + "/" + in.slug + ".md"
}

// matchDomain returns the existing domain named d (letter case ignored, so
// that "Go" files under an existing "go" and a case-insensitive file system
// never sees two spellings), or d itself and false.
func (s *Service) matchDomain(d string) (string, bool) {
	var folded string
	for _, x := range s.domains() {
		if x == d {
			return x, true
		}
		if folded == "" && strings.EqualFold(x, d) {
			folded = x
		}
	}
	if folded != "" {
		return folded, true
	}
	return d, false
}

// learn runs inside the write: decide, file the insight, propagate.
func (s *Service) learn(ctx context.Context, t *tx, in *learning, lr *api.LearnResult) error {
	// Another server may have just created the note this learning would
	// create: make sure the index has it before deciding.
	s.Refresh(in.primary())
	found, err := s.Search(ctx, api.SearchRequest{Query: in.title + "\n" + in.insight, Limit: learnSearchLimit})
	if err != nil {
		return err
	}
	v := decide(found.Results, learnSearchLimit, in, s.candidateInfo)
	lr.Decision, lr.Reason, lr.Candidate, lr.Ratio = v.code, v.reason, v.candidate, v.ratio

	target, created, err := s.file(t, in, v)
	if err != nil {
		return err
	}
	lr.Path = target
	lr.Mode = api.LearnAppended
	if created {
		lr.Mode = api.LearnCreated
	}
	lr.Action = lr.Mode
	if cur, err := t.current(target); err == nil && cur != nil {
		lr.SHA256 = sha256Hex(cur)
	}

	r := s.resolverWith(target)
	s.warnBrokenLinks(t, r, target, in.links)
	moc := mocPath(in.domain)
	if created {
		line := "- [[" + linkName(r, moc, target) + "]]"
		if sum := summaryOf(in.insight); sum != "" {
			line += " — " + sum
		}
		if err := s.addMOCLine(t, in.domain, line, r, target); err != nil {
			t.warn("could not list the note in %s: %s", moc, s.fs.Redact(err.Error()))
		}
	}
	_, fresh := t.byPath[target]
	daily, err := s.addDailyLine(t, r, target, in, !fresh)
	if err != nil {
		t.warn("could not log the capture in %s: %s", daily, s.fs.Redact(err.Error()))
	}
	for _, p := range []string{moc, knowledgeIndex, daily} {
		if _, ok := t.byPath[p]; ok && p != target {
			lr.Propagated = append(lr.Propagated, p)
		}
	}
	return nil
}

// verdict is the outcome of the duplicate decision.
type verdict struct {
	code, reason, candidate string
	ratio                   float64
}

// candidateInfo tells the tags (lowercase) of an indexed note and whether it
// is a map of content.
func (s *Service) candidateInfo(p string) (tags []string, moc bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ni := s.notes[p]
	if ni == nil {
		return nil, false
	}
	return ni.tags, ni.typ == "moc" || strings.HasSuffix(path.Base(p), "-moc.md")
}

// decide applies DESIGN.md section 6 steps 2-3 to the ranked results of the
// search for title + insight: the top result is the note the insight belongs
// to when it lies under 02-wiki/, was matched directly (not reached through
// the graph), is not a map of content (a learning is never appended to a
// MOC), scores at least LearnDuplicateRatio times the best chunk of any other
// note (no other note counts as infinitely far), and shares a tag with the
// learning or lies in its domain. The kind tags (gotcha, pattern, decision,
// state) are used across domains, so sharing one is no sign of the same
// subject: they do not count as a shared tag. limit is the number of results asked for:
// when every one of them is a chunk of the top note, the runner-up lies
// beyond the cut and scores at most the last result, which bounds the ratio
// from below.
func decide(hits []api.SearchHit, limit int, in *learning, info func(string) ([]string, bool)) verdict {
	if len(hits) == 0 {
		return verdict{code: api.LearnNoMatch, reason: "no match: no note is like it"}
	}
	top := hits[0]
	v := verdict{candidate: top.Path}
	switch {
	case !strings.HasPrefix(top.Path, wikiFolder+"/"):
		v.code, v.reason = api.LearnOutsideWiki, fmt.Sprintf("top result %s is outside %s", top.Path, wikiFolder)
		return v
	case top.ViaGraph:
		v.code, v.reason = api.LearnViaGraph, fmt.Sprintf("top result %s was found via graph, not matched", top.Path)
		return v
	case top.Fuzzy:
		// A hit through misspelling expansion shares no word with the
		// learning as written: it is not a duplicate.
		v.code, v.reason = api.LearnNoMatch, fmt.Sprintf("no match: top result %s matched only through similar spellings", top.Path)
		return v
	}
	tags, moc := info(top.Path)
	if moc {
		v.code, v.reason = api.LearnStructural, fmt.Sprintf("top result %s is a map of content", top.Path)
		return v
	}
	runnerUp, other := 0.0, ""
	for _, h := range hits[1:] {
		if h.Path != top.Path && !h.ViaGraph {
			// The best chunk of any other note, however it matched.
			runnerUp, other = h.Score, h.Path
			break
		}
	}
	if other == "" && len(hits) >= limit {
		runnerUp = hits[len(hits)-1].Score
	}
	ratio := math.Inf(1)
	if runnerUp > 0 {
		ratio = top.Score / runnerUp
		v.ratio = math.Floor(ratio*100) / 100
	}
	if ratio < api.LearnDuplicateRatio {
		v.code = api.LearnRatioLow
		v.reason = fmt.Sprintf("top result %s does not stand out: ratio %.2f below %.1f over the runner-up %s", top.Path, v.ratio, api.LearnDuplicateRatio, other)
		if other == "" {
			v.reason = fmt.Sprintf("top result %s does not stand out: ratio %.2f below %.1f over the results after it", top.Path, v.ratio, api.LearnDuplicateRatio)
		}
		return v
	}
	shared := ""
	for _, want := range in.tags {
		if kindTag(want) {
			continue
		}
		for _, have := range tags {
			if strings.EqualFold(want, have) && shared == "" {
				shared = want
			}
		}
	}
	inDomain := domainOf(top.Path) == in.domain
	if shared == "" && !inDomain {
		v.code = api.LearnNoOverlap
		v.reason = fmt.Sprintf("top result %s shares no tag and lies outside %s/%s", top.Path, wikiFolder, in.domain)
		return v
	}
	v.code = api.LearnDuplicate
	why := "in the same domain"
	if shared != "" {
		why = "shares the tag " + shared
	}
	if v.ratio > 0 {
		v.reason = fmt.Sprintf("duplicate of %s (ratio %.2f over the runner-up, %s)", top.Path, v.ratio, why)
	} else {
		v.reason = fmt.Sprintf("duplicate of %s (no other note matched, %s)", top.Path, why)
	}
	return v
}

// file writes the insight: appended to the candidate when the decision says
// so, else into a new note, with the escape routes of DESIGN.md section 6
// step 4. It returns the note written and whether it is new.
func (s *Service) file(t *tx, in *learning, v verdict) (string, bool, error) {
	if v.code == api.LearnDuplicate {
		err := s.appendLearning(t, in, v.candidate)
		if err == nil {
			return v.candidate, false, nil
		}
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		t.warn("%s could not be written (%s); the insight went to a new note, %s", v.candidate, s.reasonOf(err), p)
		return p, true, nil
	}
	primary := in.primary()
	if _, err := s.fs.Resolve(primary, vaultfs.Write); err != nil {
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		t.warn("%s is taken by something that is not a note (%s); the insight went to a new note, %s", primary, s.reasonOf(err), p)
		return p, true, nil
	}
	cur, err := t.current(primary)
	switch {
	case err != nil:
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		t.warn("%s could not be read (%s); the insight went to a new note, %s", primary, s.reasonOf(err), p)
		return p, true, nil
	case cur != nil:
		err := s.appendLearning(t, in, primary)
		if err == nil {
			t.warn("a note named %s already exists (%s); the insight was appended to it", in.slug, primary)
			return primary, false, nil
		}
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		t.warn("a note named %s already exists (%s) but could not be written (%s); the insight went to a new note, %s", in.slug, primary, s.reasonOf(err), p)
		return p, true, nil
	}
	content := s.newNote(t, in)
	err = t.writeFile(primary, nil, content, vaultfs.Write)
	if err == nil {
		return primary, true, nil
	}
	p, err2 := s.createDated(t, in)
	if err2 != nil {
		return "", false, err2
	}
	if vaultfs.CodeOf(err) == vaultfs.CodeAlreadyExists {
		t.warn("%s appeared while the note was being written; the insight went to a new note, %s", primary, p)
	} else {
		t.warn("%s could not be written (%s); the insight went to a new note, %s", primary, s.reasonOf(err), p)
	}
	return p, true, nil
}

// reasonOf is the part of a gatekeeper error worth a warning: its reason
// (the path is named by the warning), or the whole redacted message.
func (s *Service) reasonOf(err error) string {
	var ve *vaultfs.Error
	if errors.As(err, &ve) {
		return fmt.Sprintf("%s: %s", ve.Code, s.fs.Redact(ve.Reason))
	}
	return s.fs.Redact(err.Error())
}

// createDated publishes the new note under the first free dated name,
// <slug>-YYYY-MM-DD.md, then <slug>-YYYY-MM-DD-2.md, and so on. A name taken
// by anything (a note, a link, a FIFO, a folder) or that appears while the
// note is written is skipped; any other failure would repeat for every name
// and ends the search.
func (s *Service) createDated(t *tx, in *learning) (string, error) {
	base := wikiFolder + "/" + in.domain + "/" + in.slug + "-" + s.today()
	content := s.newNote(t, in)
	var last error
	for i := 1; i <= maxDatedNames; i++ {
		p := base + ".md"
		if i > 1 {
			p = base + "-" + strconv.Itoa(i) + ".md"
		}
		if _, err := s.fs.Resolve(p, vaultfs.Write); err != nil {
			last = err
			continue
		}
		if cur, err := t.current(p); err != nil || cur != nil {
			if err != nil {
				last = err
			}
			continue
		}
		err := t.writeFile(p, nil, content, vaultfs.Write)
		if err == nil {
			return p, nil
		}
		last = err
		switch vaultfs.CodeOf(err) {
		case vaultfs.CodeAlreadyExists, vaultfs.CodeNotANote:
			continue
		}
		break
	}
	code := api.CodeOf(last)
	if last == nil {
		code = api.CodeInternal
	}
	return "", &api.Error{Code: code, Field: "domain", Err: last, Message: fmt.Sprintf(
		"the insight could not be written under %s/%s (%s); nothing was recorded", wikiFolder, in.domain, s.reasonOf(last))}
}

// appendLearning adds the learning as a dated section at the end of the note
// at p. A note that already holds the insight (a retried call) is left alone.
func (s *Service) appendLearning(t *tx, in *learning, p string) error {
	if _, err := s.fs.Resolve(p, vaultfs.Write); err != nil {
		return err
	}
	before, err := t.current(p)
	if err != nil {
		return err
	}
	if before == nil {
		return fmt.Errorf("%s: %w", p, errVanished)
	}
	if in.recordedIn(before) {
		t.warn("%s already holds this insight; it was not added again", p)
		return nil
	}
	text := string(before)
	eol := eolOf(text)
	// One blank line between the note and the new section.
	switch {
	case text == "", strings.HasSuffix(text, "\n\n"), strings.HasSuffix(text, "\r\n\r\n"):
	case strings.HasSuffix(text, "\n"):
		text += eol
	default:
		text += eol + eol
	}
	after := text + strings.ReplaceAll(in.section(s.profile(), s.today()), "\n", eol)
	after = bumpUpdated(after, s.today())
	return t.writeFile(p, before, []byte(after), vaultfs.Write)
}

// section is the dated section appended to an existing note.
func (in *learning) section(p profile, date string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s — %s\n\n%s\n", date, in.title, in.insight)
	if in.context != "" {
		fmt.Fprintf(&b, "\n**%s:** %s\n", p.contextLabel, in.context)
	}
	if len(in.links) > 0 {
		ls := make([]string, len(in.links))
		for i, l := range in.links {
			ls[i] = "[[" + l + "]]"
		}
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
// {{title}}, {{date}} and {{time}} placeholders filled), with frontmatter
// type wiki, the tags and created today; the insight and its context go
// right after the title heading, and the links in a Links section.
func (s *Service) newNote(t *tx, in *learning) []byte {
	if in.content == nil {
		in.content = s.composeLearning(t, in)
	}
	return in.content
}

func (s *Service) composeLearning(t *tx, in *learning) []byte {
	p := s.profile()
	now := s.opts.Now()
	fm := map[string]any{}
	body := ""
	crlf := false
	if tpl, ok := s.template(t, wikiTemplate); ok {
		crlf = strings.Contains(tpl, "\r\n")
		tpl = strings.ReplaceAll(tpl, "\r\n", "\n")
		block, rest := splitFrontmatter(tpl)
		body = fillTemplate(rest, in.title, now, false)
		if block != "" {
			if m, ok := parseBlock(fillTemplate(block, in.title, now, false)); ok {
				fm = m
			} else if m, ok := parseBlock(fillTemplate(block, in.title, now, true)); ok {
				fm = m
			} else {
				t.warn("the frontmatter of %s is not valid YAML once filled; the new note has its own", wikiTemplate)
			}
		}
	}
	setProfileKey(fm, p.typeKey, "wiki")
	setKey(fm, "tags", mergeTags(fm, in.tags))
	setProfileKey(fm, p.createdKey, s.today())
	head, err := renderFrontmatter(fm)
	if err != nil {
		// Only a template's exotic values can fail to render: start afresh.
		t.warn("the frontmatter of %s could not be kept: %s", wikiTemplate, err.Error())
		head, _ = renderFrontmatter(map[string]any{p.typeKey: "wiki", "tags": mergeTags(nil, in.tags), p.createdKey: s.today()})
	}

	// The title heading: the template's first "# " heading, else one made.
	h1 := 0
	for _, h := range markdown.Parse("x.md", []byte(body)).Headings {
		if h.Level == 1 {
			h1 = h.Line
			break
		}
	}
	if h1 == 0 {
		body = "# " + in.title + "\n\n" + strings.TrimLeft(body, "\n")
		h1 = 1
	}
	lead := in.insight + "\n"
	if in.context != "" {
		lead += "\n**" + p.contextLabel + ":** " + in.context + "\n"
	}
	body = insertAfterLine(body, h1, lead)
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
		t.warn("the template %s could not be read (%s); it was not used", rel, s.reasonOf(err))
	}
	return "", false
}

// splitFrontmatter splits a note into its frontmatter block (with its ---
// lines) and the rest; the block is "" when there is none.
func splitFrontmatter(text string) (block, rest string) {
	n := markdown.Parse("x.md", []byte(text))
	if n.BodyOffset <= 0 || n.BodyOffset > len(text) {
		return "", text
	}
	return text[:n.BodyOffset], text[n.BodyOffset:]
}

// parseBlock decodes a frontmatter block; false when it is not valid YAML.
func parseBlock(block string) (map[string]any, bool) {
	n := markdown.Parse("x.md", []byte(block+"\n"))
	if n.Frontmatter == nil {
		return nil, false
	}
	return n.Frontmatter, true
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

// placeholder matches the placeholders of Obsidian's core Templates plugin:
// {{title}}, {{date}}, {{time}}, the last two with an optional Moment.js
// format ({{date:YYYY-MM-DD}}).
var placeholder = regexp.MustCompile(`(?i)\{\{\s*(title|date|time)\s*(?::([^}]*))?\}\}`)

// fillTemplate fills the placeholders of a template. quoteTitle writes the
// title as a YAML double-quoted string, for a frontmatter whose plain value
// the title would break.
func fillTemplate(text, title string, now time.Time, quoteTitle bool) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		format := strings.TrimSpace(sub[2])
		switch strings.ToLower(sub[1]) {
		case "title":
			if quoteTitle {
				return strconv.Quote(title)
			}
			return title
		case "date":
			if format == "" {
				format = "YYYY-MM-DD"
			}
		default:
			if format == "" {
				format = "HH:mm"
			}
		}
		return momentFormat(now, format)
	})
}

// momentTokens are the Moment.js format tokens understood, longest first.
var momentTokens = []string{"YYYY", "MMMM", "dddd", "MMM", "ddd", "YY", "MM", "DD", "HH", "hh", "mm", "ss", "M", "D", "H", "h", "m", "s", "A", "a"}

// momentFormat formats t with the common tokens of a Moment.js format (as
// Obsidian's date placeholders use); text in [brackets] is literal, other
// characters are copied.
func momentFormat(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); {
		if format[i] == '[' {
			if j := strings.IndexByte(format[i:], ']'); j > 0 {
				b.WriteString(format[i+1 : i+j])
				i += j + 1
				continue
			}
		}
		tok := ""
		for _, cand := range momentTokens {
			if strings.HasPrefix(format[i:], cand) {
				tok = cand
				break
			}
		}
		if tok == "" {
			_, size := utf8.DecodeRuneInString(format[i:])
			b.WriteString(format[i : i+size])
			i += size
			continue
		}
		i += len(tok)
		switch tok {
		case "YYYY":
			b.WriteString(t.Format("2006"))
		case "YY":
			b.WriteString(t.Format("06"))
		case "MMMM":
			b.WriteString(t.Format("January"))
		case "MMM":
			b.WriteString(t.Format("Jan"))
		case "MM":
			b.WriteString(t.Format("01"))
		case "M":
			b.WriteString(strconv.Itoa(int(t.Month())))
		case "DD":
			b.WriteString(t.Format("02"))
		case "D":
			b.WriteString(strconv.Itoa(t.Day()))
		case "dddd":
			b.WriteString(t.Format("Monday"))
		case "ddd":
			b.WriteString(t.Format("Mon"))
		case "HH":
			b.WriteString(t.Format("15"))
		case "H":
			b.WriteString(strconv.Itoa(t.Hour()))
		case "hh":
			b.WriteString(t.Format("03"))
		case "h":
			b.WriteString(t.Format("3"))
		case "mm":
			b.WriteString(t.Format("04"))
		case "m":
			b.WriteString(strconv.Itoa(t.Minute()))
		case "ss":
			b.WriteString(t.Format("05"))
		case "s":
			b.WriteString(strconv.Itoa(t.Second()))
		case "A":
			b.WriteString(t.Format("PM"))
		case "a":
			b.WriteString(t.Format("pm"))
		}
	}
	return b.String()
}

// resolverWith is a copy of the link resolver that knows p (a note this
// write may have just created).
func (s *Service) resolverWith(p string) *links.Resolver {
	s.mu.RLock()
	r := s.graph.Resolver().Clone()
	s.mu.RUnlock()
	r.Add(p)
	return r
}

// linkName is how a note at from links to target: the bare name when it
// resolves there, else the vault path without the extension.
func linkName(r *links.Resolver, from, target string) string {
	name := strings.TrimSuffix(path.Base(target), path.Ext(target))
	if got, ok := r.Resolve(from, name); ok && got == target {
		return name
	}
	return strings.TrimSuffix(target, path.Ext(target))
}

// warnBrokenLinks warns about links of the learning that lead nowhere (yet).
func (s *Service) warnBrokenLinks(t *tx, r *links.Resolver, from string, ls []string) {
	var broken []string
	for _, l := range ls {
		target, _, _ := strings.Cut(l, "|")
		target, _, _ = strings.Cut(target, "#")
		if _, ok := r.Resolve(from, strings.TrimSpace(target)); !ok {
			broken = append(broken, "[["+l+"]]")
		}
	}
	if len(broken) > 0 {
		t.warn("no note exists yet for %s", strings.Join(broken, ", "))
	}
}

// kindTags say what kind of capture a learning is, across domains; they
// say nothing of its subject.
var kindTags = []string{"gotcha", "pattern", "decision", "state"}

func kindTag(tag string) bool {
	return slices.ContainsFunc(kindTags, func(k string) bool { return strings.EqualFold(k, tag) })
}

// kindOf names a capture in the daily note after its tags.
func kindOf(tags []string) string {
	for _, k := range kindTags {
		for _, tag := range tags {
			if strings.EqualFold(tag, k) {
				return k
			}
		}
	}
	return "learning"
}

// addDailyLine logs the capture in today's daily note,
// "- HH:MM [[note]] (kind[, project])" under its captures section, creating
// the note (from _templates/daily.md when it exists) when missing. A line
// already there is not added again; for a retried learning (retry: the note
// already held the insight) the same capture logged at any time today counts.
// It returns the daily note's path.
func (s *Service) addDailyLine(t *tx, r *links.Resolver, target string, in *learning, retry bool) (string, error) {
	p := s.profile()
	now := s.opts.Now()
	daily := dailyFolder + "/" + s.today() + ".md"
	kind := kindOf(in.tags)
	if in.project != "" {
		kind += ", " + in.project
	}
	capture := "[[" + linkName(r, daily, target) + "]] (" + kind + ")"
	line := "- " + now.Format("15:04") + " " + capture
	names := sectionNames(p, func(p profile) string { return p.capturesSection })
	for attempt := 0; attempt < 2; attempt++ {
		before, err := t.current(daily)
		if err != nil {
			return daily, err
		}
		if before == nil {
			text := insertUnderSection(s.newDaily(t, now), names, line, "\n")
			err := t.writeFile(daily, nil, []byte(text), vaultfs.Write)
			if vaultfs.CodeOf(err) == vaultfs.CodeAlreadyExists {
				continue // written meanwhile (Obsidian opens the day's note): add to it
			}
			return daily, err
		}
		if logged(before, capture, line, retry) {
			return daily, nil
		}
		text := string(before)
		after := insertUnderSection(text, names, line, eolOf(text))
		after = bumpUpdated(after, s.today())
		return daily, t.writeFile(daily, before, []byte(after), vaultfs.Write)
	}
	return daily, fmt.Errorf("%s keeps changing", daily)
}

// logged reports whether a daily note has the line, or, with anyTime, the
// capture at any time of the day.
func logged(note []byte, capture, line string, anyTime bool) bool {
	when := regexp.QuoteMeta(strings.TrimPrefix(strings.TrimSuffix(line, capture), "- "))
	if anyTime {
		when = `\d{1,2}:\d{2} `
	}
	re := regexp.MustCompile(`(?m)^[ \t]*[-*+] ` + when + regexp.QuoteMeta(capture) + `[ \t]*\r?$`)
	return re.Match(note)
}

// newDaily is a new daily note: the daily template when there is one (typed
// daily if it says no type), else a frontmatter block of type daily and the
// captures section.
func (s *Service) newDaily(t *tx, now time.Time) string {
	p := s.profile()
	if tpl, ok := s.template(t, dailyTemplate); ok {
		tpl = strings.ReplaceAll(tpl, "\r\n", "\n")
		text := fillTemplate(tpl, s.today(), now, false)
		block, rest := splitFrontmatter(text)
		fm, valid := parseBlock(block)
		switch {
		case block == "":
			fm = map[string]any{p.typeKey: "daily", p.createdKey: s.today()}
		case !valid:
			return text // the user's own block, kept as it is
		case hasKey(fm, "type"):
			return text
		default:
			setKey(fm, p.typeKey, "daily")
		}
		if head, err := renderFrontmatter(fm); err == nil {
			return head + rest
		}
		return text
	}
	head, _ := renderFrontmatter(map[string]any{p.typeKey: "daily", "tags": []any{}, p.createdKey: s.today()})
	return head + "## " + p.capturesSection + "\n"
}

// validateLearn checks a request and normalises it.
func validateLearn(req api.LearnRequest) (*learning, error) {
	in := &learning{confirm: req.ConfirmNewDomain}
	var err error
	if in.title, err = oneLine("title", req.Title, maxTitleRunes); err != nil {
		return nil, err
	}
	if in.title == "" {
		return nil, api.Invalid("title", "must not be empty")
	}
	if in.slug = slugify(in.title); in.slug == "" {
		return nil, api.Invalid("title", "must contain a letter or digit (a-z, 0-9 once accents are stripped) to name the note")
	}
	if in.insight, err = multiLine("insight", req.Insight); err != nil {
		return nil, err
	}
	if in.insight == "" {
		return nil, api.Invalid("insight", "must not be empty")
	}
	if in.context, err = multiLine("context", req.Context); err != nil {
		return nil, err
	}
	if in.domain, err = validateDomain(req.Domain); err != nil {
		return nil, err
	}
	if in.project, err = oneLine("project", req.Project, maxLineRunes); err != nil {
		return nil, err
	}
	if len(req.Tags) > maxLearnItems {
		return nil, api.Invalid("tags", "at most %d tags", maxLearnItems)
	}
	seen := map[string]bool{}
	for _, tag := range req.Tags {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "#")
		switch {
		case tag == "":
			return nil, api.Invalid("tags", "must not contain an empty tag")
		case strings.ContainsFunc(tag, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",#[]{}\"'|", r) }):
			return nil, api.Invalid("tags", "%q: a tag is one word, without spaces, commas, # or brackets", tag)
		}
		if _, err := oneLine("tags", tag, maxLineRunes); err != nil {
			return nil, err
		}
		if !seen[strings.ToLower(tag)] {
			seen[strings.ToLower(tag)] = true
			in.tags = append(in.tags, tag)
		}
	}
	if len(req.Links) > maxLearnItems {
		return nil, api.Invalid("links", "at most %d links", maxLearnItems)
	}
	for _, l := range req.Links {
		l, err := oneLine("links", l, maxLineRunes)
		if err != nil {
			return nil, err
		}
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "[["), "]]"))
		switch {
		case l == "":
			return nil, api.Invalid("links", "must not contain an empty link")
		case strings.Contains(l, "[[") || strings.Contains(l, "]]"):
			return nil, api.Invalid("links", "%q: give each link as a note name, e.g. retry-backoff", l)
		}
		if !seen["\x00"+l] {
			seen["\x00"+l] = true
			in.links = append(in.links, l)
		}
	}
	return in, nil
}

// oneLine normalises a one-line field: valid UTF-8, runs of white space
// (line breaks included) become one space, no control or bidirectional
// formatting character, at most max characters.
func oneLine(field, s string, max int) (string, error) {
	if !utf8.ValidString(s) {
		return "", api.Invalid(field, "must be valid UTF-8")
	}
	s = strings.Join(strings.Fields(s), " ")
	if strings.ContainsFunc(s, badLineRune) {
		return "", api.Invalid(field, "must not contain control or invisible formatting characters")
	}
	if utf8.RuneCountInString(s) > max {
		return "", api.Invalid(field, "must be at most %d characters", max)
	}
	return s, nil
}

// multiLine normalises a multi-line field: valid UTF-8, LF line ends, trimmed, no
// control character but tab and line feed, bounded.
func multiLine(field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", api.Invalid(field, "must be valid UTF-8")
	}
	s = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"))
	if strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }) {
		return "", api.Invalid(field, "must not contain control characters")
	}
	if utf8.RuneCountInString(s) > maxLearnText {
		return "", api.Invalid(field, "must be at most %d characters", maxLearnText)
	}
	return s, nil
}

func badLineRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u200b' || r == '\ufeff' || r == '\u2028' || r == '\u2029'
}

// validateDomain checks a domain name (DESIGN.md section 6 step 1): one
// folder name, no spaces, none of / \ : * ? " < > |, not starting with ".",
// at most 64 characters.
func validateDomain(d string) (string, error) {
	if !utf8.ValidString(d) {
		return "", api.Invalid("domain", "must be valid UTF-8")
	}
	d = strings.TrimSpace(d)
	switch {
	case d == "":
		return "", api.Invalid("domain", "must not be empty")
	case utf8.RuneCountInString(d) > maxDomainRunes:
		return "", api.Invalid("domain", "must be at most %d characters", maxDomainRunes)
	case strings.ContainsFunc(d, func(r rune) bool { return unicode.IsSpace(r) || badLineRune(r) }):
		return "", api.Invalid("domain", "must be one folder name without spaces, e.g. go or devops")
	case strings.ContainsAny(d, `/\:*?"<>|`):
		return "", api.Invalid("domain", `must be one folder name, without / \ : * ? " < > |`)
	case strings.HasPrefix(d, "."):
		return "", api.Invalid("domain", "must not start with a dot")
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
	return out
}
