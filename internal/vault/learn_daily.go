package vault

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

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
	daily := dailyFolder + "/" + s.today() + ".md"
	if tpl, ok := s.template(t, dailyTemplate); ok {
		vars := templateVars{title: s.today(), path: daily, now: now, lang: p.lang}
		tpl = strings.TrimPrefix(strings.ReplaceAll(tpl, "\r\n", "\n"), "\uFEFF")
		block, rest := markdown.SplitFrontmatter(tpl)
		body, dropped := vars.fill(rest, false, false)
		filled, droppedFM := vars.fill(block, true, false)
		warnDropped(t, dailyTemplate, append(droppedFM, dropped...))
		fm, _ := markdown.ParseFrontmatter(filled)
		switch {
		case block == "":
			head, _ := renderFrontmatter(map[string]any{p.typeKey: "daily", p.createdKey: s.today()})
			return head + body
		case fm == nil:
			return filled + body // the user's own block, kept as it is
		case hasKey(fm, "type"):
			return filled + body
		}
		// Typed daily; the template's other keys as its author wrote them.
		if head, err := mergeFrontmatter(filled, nil, []keyValue{{"type", p.typeKey, "daily"}}, false); err == nil {
			return head + body
		}
		return filled + body
	}
	// Without a template: the shape daily notes usually have (and the
	// example vault's template gives), a title heading with the date, and
	// tags as the vault's daily notes have them (dailyTags).
	fm := map[string]any{p.typeKey: "daily", p.createdKey: s.today()}
	if tags, ok := s.dailyTags(); ok {
		fm["tags"] = tags
	}
	head, _ := renderFrontmatter(fm)
	return head + "\n# " + s.today() + "\n\n## " + p.capturesSection + "\n"
}
