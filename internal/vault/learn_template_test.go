package vault

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestLearnCreatesFromTemplate checks a new note byte for byte (template
// filled, frontmatter merged, insight after the title, links in the
// template's Links section), its MOC line, and the new daily note.
func TestLearnCreatesFromTemplate(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	res := learn(t, s, api.LearnRequest{
		Title: "Xylophone quintessence", Insight: "Flibbertigibbet gobbledygook. A second sentence.", Context: "found while testing",
		Domain: "go", Project: "billing", Tags: []string{"#Pattern", "draft"}, Links: []string{"[[retry-backoff]]", "context-cancel#Loops", "missing-note"},
	})
	want := "---\ntype: wiki\ntags: [draft, go, Pattern]\nstatus: draft\ncreated: 2026-11-29\n---\n# Xylophone quintessence\n\n" +
		"Flibbertigibbet gobbledygook. A second sentence.\n\n**Context:** found while testing\n\n## Details\n\n## Links\n\n" +
		"- [[retry-backoff]]\n- [[context-cancel#Loops]]\n- [[missing-note]]\n"
	if got := read(t, dir, res.Path); got != want {
		t.Fatalf("note:\n%s\nwant:\n%s", got, want)
	}
	if res.SHA256 != sha256Hex([]byte(want)) {
		t.Errorf("sha256 %s", res.SHA256)
	}
	moc := read(t, dir, "02-wiki/go/go-moc.md")
	wantMOC := strings.Replace(strings.Replace(learnVault["02-wiki/go/go-moc.md"], "updated: 2026-01-01", "updated: 2026-11-29", 1),
		"- [[context-cancel]] — cancellation\n", "- [[context-cancel]] — cancellation\n- [[xylophone-quintessence]] — Flibbertigibbet gobbledygook.\n", 1)
	if moc != wantMOC {
		t.Errorf("MOC:\n%s\nwant:\n%s", moc, wantMOC)
	}
	daily := "---\ntype: daily\ntags: []\ncreated: 2026-11-29\n---\n\n# 2026-11-29\n\n## Captures\n\n- 10:30 [[xylophone-quintessence]] (pattern, billing)\n"
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != daily {
		t.Errorf("daily:\n%s\nwant:\n%s", got, daily)
	}
	if !slices.Equal(res.Propagated, []string{"02-wiki/go/go-moc.md", "04-daily/2026-11-29.md"}) {
		t.Errorf("propagated %v", res.Propagated)
	}
	if !hasWarning(res, "[[missing-note]]") || hasWarning(res, "retry-backoff") || hasWarning(res, "context-cancel") {
		t.Errorf("warnings %v", res.Warnings)
	}
	if read(t, dir, "00-index/index-knowledge.md") != learnVault["00-index/index-knowledge.md"] {
		t.Error("the knowledge index changed for an existing domain")
	}
	// The new note is searchable at once, and its MOC line resolves to it.
	if r := search(t, s, api.SearchRequest{Query: "flibbertigibbet"}); len(r.Results) == 0 || r.Results[0].Path != res.Path {
		t.Errorf("not searchable: %v", paths(r))
	}
	if bl, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: res.Path}); err != nil || len(bl.Backlinks) != 2 {
		t.Errorf("backlinks of the new note: %+v %v", bl, err)
	}
	for _, diffPart := range []string{"+++ b/02-wiki/go/xylophone-quintessence.md", "+- [[xylophone-quintessence]]", "+++ b/04-daily/2026-11-29.md"} {
		if !strings.Contains(res.Diff, diffPart) {
			t.Errorf("diff lacks %q", diffPart)
		}
	}
}

// fillNow is the clock of the template tests: Saturday 7 March 2026, 09:05:04 UTC.
var fillNow = time.Date(2026, 3, 7, 9, 5, 4, 0, time.UTC)

// TestFillTemplate: the core Templates plugin's placeholders.
func TestFillTemplate(t *testing.T) {
	v := templateVars{title: "T: x", path: "02-wiki/go/t-x.md", now: fillNow, lang: "en"}
	cases := map[string]string{
		"# {{title}} / {{Title}} / {{ title }}": "# T: x / T: x / T: x",
		"{{date}} {{time}}":                     "2026-03-07 09:05",
		"{{date:YYYY/MM/DD}} {{DATE:D.M.YY}}":   "2026/03/07 7.3.26",
		"{{date:dddd, MMMM D [at] HH:mm:ss}}":   "Saturday, March 7 at 09:05:04",
		"{{time:h:mm A}} {{date:ddd MMM}}":      "9:05 AM Sat Mar",
		"{{time:YYYY-MM-DD}}":                   "2026-03-07",
		"{{unknown}} {{date:[YYYY]}} {{":        "{{unknown}} YYYY {{",
	}
	for in, want := range cases {
		if got, dropped := v.fill(in, false, false); got != want || len(dropped) != 0 {
			t.Errorf("fill(%q) = %q %q, want %q", in, got, dropped, want)
		}
	}
	if got, _ := v.fill("title: {{title}}", true, true); got != `title: "T: x"` {
		t.Errorf("quoted title: %s", got)
	}
	// An unknown placeholder is kept in the body (as Obsidian keeps it) but
	// never in the frontmatter or a heading.
	if got, dropped := v.fill("a: {{foo}}\n", true, false); got != "a: \n" || !slices.Equal(dropped, []string{"{{foo}}"}) {
		t.Errorf("frontmatter: %q %q", got, dropped)
	}
	if got, dropped := v.fill("# {{foo}} {{title}}\ntext {{foo}}\n", false, false); got != "#  T: x\ntext {{foo}}\n" || len(dropped) != 1 {
		t.Errorf("heading: %q %q", got, dropped)
	}
}

// TestFillTemplater: the Templater commands that name the note or the
// clock, their whitespace controls, and what cannot be evaluated.
func TestFillTemplater(t *testing.T) {
	v := templateVars{title: "Retry: backoff", path: "02-wiki/go/retry-backoff.md", now: fillNow, lang: "en"}
	cases := map[string]string{
		"<% tp.file.title %>":                                            "Retry: backoff",
		"<%tp.file.title%>":                                              "Retry: backoff",
		`<% tp.date.now() %>`:                                            "2026-03-07",
		`<% tp.date.now("YYYY-MM-DD") %>`:                                "2026-03-07",
		`<% tp.date.now('Do MMMM YYYY') %>`:                              "7th March 2026",
		`<% tp.date.now("YYYY-MM-DD", -7) %>`:                            "2026-02-28",
		`<% tp.date.now("YYYY-MM-DD", 7) %>`:                             "2026-03-14",
		`<% tp.date.now("YYYY-MM-DD", "P-1M") %>`:                        "2026-02-07",
		`<% tp.date.now("YYYY-MM-DD", "P1Y") %>`:                         "2027-03-07",
		`<% tp.date.now("YYYY-MM-DD HH:mm", "PT12H") %>`:                 "2026-03-07 21:05",
		`<% tp.date.now("YYYY-MM-DD", "-P1W") %>`:                        "2026-02-28",
		`<% tp.date.now("YYYY-MM-DD", 1, "2026-12-31", "YYYY-MM-DD") %>`: "2027-01-01",
		`<% tp.date.now("dddd", 0, "01/02/2026", "DD/MM/YYYY") %>`:       "Sunday",
		`<% tp.date.tomorrow() %> <% tp.date.yesterday("D MMM") %>`:      "2026-03-08 6 Mar",
		`<% tp.date.weekday("YYYY-MM-DD", 1) %>`:                         "2026-03-02",
		`<% tp.date.weekday("YYYY-MM-DD", 7) %>`:                         "2026-03-08",
		`<% tp.file.creation_date() %>`:                                  "2026-03-07 09:05",
		`<% tp.file.creation_date("dddd Do MMMM YYYY HH:mm:ss") %>`:      "Saturday 7th March 2026 09:05:04",
		`<% tp.file.last_modified_date("YYYY") %>`:                       "2026",
		`<% tp.file.folder() %> <% tp.file.folder(true) %>`:              "go 02-wiki/go",
		`<% tp.file.path(true) %>`:                                       "02-wiki/go/retry-backoff.md",
		`a<% tp.file.cursor() %>b<% tp.file.cursor(1) %>`:                "ab",
		`<% moment().format("YYYY-[W]WW") %>`:                            "2026-W10",
		`<%+ tp.file.title %>`:                                           "Retry: backoff",
		"a\n<%- tp.file.title -%>\nb":                                    "aRetry: backoffb",
		"a  \n\n<%_ tp.file.title _%>  \n\nb":                            "aRetry: backoffb",
		"<%* tR += 'x' %>\nline":                                         "\nline",
		"<%*- tR = '' -%>\nline":                                         "line",
	}
	for in, want := range cases {
		got, _ := v.fill(in, false, false)
		if got != want {
			t.Errorf("fill(%q) = %q, want %q", in, got, want)
		}
	}
	// What cannot be evaluated is removed and reported, wherever it is.
	for _, expr := range []string{
		`<% tp.web.daily_quote() %>`, `<%* const x = await tp.system.prompt("x") %>`, `<% tp.file.path() %>`,
		`<% tp.date.now("YYYY", "soon") %>`, `<% tp.date.now("YYYY", 0, "31/02/2026", "DD/MM/YYYY") %>`,
		`<% tp.file.title + "x" %>`, `<% tp.date.now(` + "`${x}`" + `) %>`, `<% unclosed`, `<% tp.frontmatter.alias %>`,
	} {
		got, dropped := v.fill("# A "+expr+"\n", false, false)
		if got != "# A \n" || len(dropped) != 1 {
			t.Errorf("fill(%q) = %q, dropped %q", expr, got, dropped)
		}
	}
	// The title quoted for YAML, in a frontmatter block.
	if got, _ := v.fill("aliases: [<% tp.file.title %>]", true, true); got != `aliases: ["Retry: backoff"]` {
		t.Errorf("quoted: %s", got)
	}
	if got := droppedList([]string{"<% a %>", "<%\n  b\n%>", strings.Repeat("x", 80), "4", "5", "6", "7"}); got != "<% a %>, <% b %>, "+strings.Repeat("x", 59)+"…, 4, 5 and 2 more" {
		t.Errorf("droppedList: %s", got)
	}
}

// TestMomentFormat checks the Moment.js tokens, in English and Portuguese.
func TestMomentFormat(t *testing.T) {
	at := time.Date(2027, 1, 1, 0, 7, 9, 123_000_000, time.FixedZone("", -3*3600)) // a Friday
	cases := []struct{ format, lang, want string }{
		{"YYYY YY Y Q M MM MMM MMMM D DD Do DDD DDDD", "en", "2027 27 2027 1 1 01 Jan January 1 01 1st 1 001"},
		{"d dd ddd dddd E e", "en", "5 Fr Fri Friday 5 5"},
		{"H HH h hh k kk m mm s ss S SS SSS A a", "en", "0 00 12 12 24 24 7 07 9 09 1 12 123 AM am"},
		{"W WW GGGG w ww gggg", "en", "53 53 2026 1 01 2027"},
		{"Z ZZ X x", "en", "-03:00 -0300 1798772829 1798772829123"},
		{"L LL LLL LLLL LT LTS", "en", "01/01/2027 January 1, 2027 January 1, 2027 12:07 AM Friday, January 1, 2027 12:07 AM 12:07 AM 12:07:09 AM"},
		{"l ll lll llll", "en", "1/1/2027 Jan 1, 2027 Jan 1, 2027 12:07 AM Fri, Jan 1, 2027 12:07 AM"},
		{"dddd, D [de] MMMM; ddd MMM dd Do", "pt", "sexta-feira, 1 de janeiro; sex jan 6ª 1º"},
		{"L LL LLLL LT", "pt", "01/01/2027 1 de janeiro de 2027 sexta-feira, 1 de janeiro de 2027 às 00:07 00:07"},
		{"[YYYY] [ YYYY", "en", "YYYY [ 2027"},
		{"Do", "en", "1st"},
	}
	for _, c := range cases {
		if got := momentFormat(at, c.format, c.lang); got != c.want {
			t.Errorf("momentFormat(%q, %s) = %q, want %q", c.format, c.lang, got, c.want)
		}
	}
	for day, want := range map[int]string{2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 23: "23rd", 31: "31st"} {
		if got := ordinal(day, "en"); got != want {
			t.Errorf("ordinal(%d) = %s", day, got)
		}
	}
	// Locale weeks: Sunday 27 Dec 2026 starts the week of 1 Jan 2027.
	if y, w := localeWeek(time.Date(2026, 12, 27, 0, 0, 0, 0, time.UTC)); y != 2027 || w != 1 {
		t.Errorf("localeWeek(2026-12-27) = %d-%d", y, w)
	}
	if y, w := localeWeek(time.Date(2026, 12, 26, 0, 0, 0, 0, time.UTC)); y != 2026 || w != 52 {
		t.Errorf("localeWeek(2026-12-26) = %d-%d", y, w)
	}
}

// TestLearnTemplateEdgeCases: a title that breaks the template's YAML when
// filled in plain, and a template without a title heading or frontmatter.
func TestLearnTemplateEdgeCases(t *testing.T) {
	files := with(learnVault, map[string]string{"_templates/wiki.md": "---\ntitle: {{title}}\naliases: []\n---\n# {{title}}\n"})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Xylophonic: quibbles", Insight: "Flibbertigibbet.", Domain: "go"})
	want := "---\ntitle: \"Xylophonic: quibbles\"\naliases: []\ntype: wiki\ntags: [go]\ncreated: 2026-11-29\n---\n# Xylophonic: quibbles\n\nFlibbertigibbet.\n"
	if got := read(t, dir, res.Path); got != want || res.Path != "02-wiki/go/xylophonic-quibbles.md" || len(res.Warnings) != 0 {
		t.Fatalf("%s %v:\n%s", res.Path, res.Warnings, got)
	}

	files = with(learnVault, map[string]string{"_templates/wiki.md": "Intro line {{date:YYYY}}\n\n## Notes\n"})
	dir, s = openLearn(t, files, learnOpts{})
	res = learn(t, s, api.LearnRequest{Title: "Gobbledygook", Insight: "Flibbertigibbet.", Context: "ctx", Domain: "go", Links: []string{"gc"}})
	want = "---\ntype: wiki\ntags: [go]\ncreated: 2026-11-29\n---\n# Gobbledygook\n\nFlibbertigibbet.\n\n**Context:** ctx\n\nIntro line 2026\n\n## Notes\n\n## Links\n\n- [[gc]]\n"
	if got := read(t, dir, res.Path); got != want {
		t.Fatalf("no heading in the template:\n%s\nwant:\n%s", got, want)
	}
}

// TestLearnTemplateSections: a template with sections for the context and
// for what was learned gets them filled (its other sections left as they
// are, prompts kept); without them, both go after the title heading.
func TestLearnTemplateSections(t *testing.T) {
	for _, tc := range []struct{ name, tpl, want string }{
		{"the example vault's template",
			"---\ntype: wiki\ntags: []\n---\n\n# {{title}}\n\n## Context\n\n## What we learned\n\n## Example\n\n## Links\n",
			"# Gobbledygook\n\n## Context\n\nincident review\n\n## What we learned\n\nFlibbertigibbet.\n\n## Example\n\n## Links\n\n- [[gc]]\n"},
		{"prompts kept, names in another case, a level-3 heading inside",
			"# {{title}}\n\n## CONTEXT\nWhere did this come up?\n\n## Insight\n\n### Details\n\n## Links\n",
			"# Gobbledygook\n\n## CONTEXT\nWhere did this come up?\n\nincident review\n\n## Insight\n\n### Details\n\nFlibbertigibbet.\n\n## Links\n\n- [[gc]]\n"},
		{"a section for the insight only: the context below it",
			"# {{title}}\n\n## Solution\n\n## Links\n",
			"# Gobbledygook\n\n## Solution\n\nFlibbertigibbet.\n\n**Context:** incident review\n\n## Links\n\n- [[gc]]\n"},
		{"a section for the context only: the insight after the title",
			"# {{title}}\n\n## Context\n",
			"# Gobbledygook\n\nFlibbertigibbet.\n\n## Context\n\nincident review\n\n## Links\n\n- [[gc]]\n"},
		{"neither",
			"# {{title}}\n\n## Example\n",
			"# Gobbledygook\n\nFlibbertigibbet.\n\n**Context:** incident review\n\n## Example\n\n## Links\n\n- [[gc]]\n"},
	} {
		dir, s := openLearn(t, with(learnVault, map[string]string{"_templates/wiki.md": tc.tpl}), learnOpts{})
		res := learn(t, s, api.LearnRequest{Title: "Gobbledygook", Insight: "Flibbertigibbet.", Context: "incident review", Domain: "go", Links: []string{"gc"}})
		got := read(t, dir, res.Path)
		if _, body, _ := strings.Cut(got, "---\n#"); !strings.HasPrefix(got, "---\n") || "#"+body != tc.want {
			if _, body, _ = strings.Cut(got, "---\n\n#"); "#"+body != tc.want {
				t.Errorf("%s:\n%s\nwant the body:\n%s", tc.name, got, tc.want)
			}
		}
		// A retry finds the insight recorded (the note is not written twice).
		again := learn(t, s, api.LearnRequest{Title: "Gobbledygook", Insight: "Flibbertigibbet.", Context: "incident review", Domain: "go", Links: []string{"gc"}})
		if after := read(t, dir, res.Path); after != got || again.Path != res.Path {
			t.Errorf("%s: the same learning again changed the note (%s):\n%s", tc.name, again.Path, after)
		}
	}
}

// TestLearnTemplaterTemplate: a vault whose templates use Templater (as the
// seed vault's do) gets them filled; what cannot be filled is left out with
// a warning, so no template syntax reaches the new note's title or
// frontmatter, and its title in vault_list is the learning's.
func TestLearnTemplaterTemplate(t *testing.T) {
	files := with(learnVault, map[string]string{
		"_templates/wiki.md": "---\ntipo: wiki\ntags: \ncriado: <% tp.date.now(\"YYYY-MM-DD\") %>\nrevisar: <% tp.date.now(\"YYYY-MM-DD\", \"P1M\") %>\n" +
			"capa: <% tp.web.random_picture(\"200x200\") %>\n---\n\n# <% tp.file.title %>\n\n<%* if (tp.file.title) { %>\n## Contexto\n<%* } %>\n\n## Solução\n",
		"_templates/daily.md": "---\ntipo: daily\n---\n# <% tp.date.now(\"dddd, D [de] MMMM [de] YYYY\") %>\n\n<% tp.web.daily_quote() %>\n\n## Capturas\n",
	})
	dir, s := openLearn(t, files, learnOpts{lang: "pt"})
	res := learn(t, s, api.LearnRequest{Title: "Guarda de autenticação", Insight: "Valide o JWT no guard global.", Domain: "go", Tags: []string{"auth"}})
	// The insight goes under the template's Solução; Templater, too, keeps
	// the line ends around a command.
	want := "---\ntipo: wiki\ntags: [go, auth]\ncriado: 2026-11-29\nrevisar: 2026-12-29\ncapa:\n---\n\n# Guarda de autenticação\n\n\n" +
		"## Contexto\n\n\n## Solução\n\nValide o JWT no guard global.\n"
	if got := read(t, dir, res.Path); got != want {
		t.Errorf("note:\n%s\nwant:\n%s", got, want)
	}
	if !hasWarning(res, "_templates/wiki.md", "tp.web.random_picture", "<%* if (tp.file.title) { %>", "<%* } %>") {
		t.Errorf("warnings %q", res.Warnings)
	}
	daily := read(t, dir, "04-daily/2026-11-29.md")
	if daily != "---\ntipo: daily\n---\n# domingo, 29 de novembro de 2026\n\n\n\n## Capturas\n\n- 10:30 [[guarda-de-autenticacao]] (learning)\n" {
		t.Errorf("daily note:\n%s", daily)
	}
	if !hasWarning(res, "_templates/daily.md", "tp.web.daily_quote") {
		t.Errorf("warnings %q", res.Warnings)
	}
	list, err := s.List(context.Background(), api.ListRequest{Folder: "02-wiki/go"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Notes {
		if n.Path == res.Path && n.Title != "Guarda de autenticação" {
			t.Errorf("listed with the title %q", n.Title)
		}
	}
	for _, p := range []string{res.Path, "04-daily/2026-11-29.md"} {
		if text := read(t, dir, p); strings.Contains(text, "<%") || strings.Contains(text, "%>") {
			t.Errorf("%s keeps template syntax:\n%s", p, text)
		}
	}
}

// TestLearnTemplateEmptyTitle: a title heading made only of an expression
// that cannot be filled gets the learning's title.
func TestLearnTemplateEmptyTitle(t *testing.T) {
	files := with(learnVault, map[string]string{"_templates/wiki.md": "# <% tp.user.title() %>\n\nBody {{unknown}}\n"})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Quokka wrangling", Insight: "Flibbertigibbet.", Domain: "go"})
	want := "---\ntype: wiki\ntags: [go]\ncreated: 2026-11-29\n---\n# Quokka wrangling\n\nFlibbertigibbet.\n\nBody {{unknown}}\n"
	if got := read(t, dir, res.Path); got != want || !hasWarning(res, "tp.user.title") {
		t.Errorf("note %v:\n%s\nwant:\n%s", res.Warnings, got, want)
	}
}

// TestLearnTemplateFrontmatterKept: the keys of the template's frontmatter
// that a learning does not set stay as the template's author wrote them:
// order, comments, an empty value, and values YAML would read as other
// numbers (0012 is octal 10, 1.10 is 1.1).
func TestLearnTemplateFrontmatterKept(t *testing.T) {
	files := with(learnVault, map[string]string{"_templates/wiki.md": "---\n# fill the source\ntags:\n  - wiki\naliases: []\ncreated: {{date:YYYY-MM-DD}}\nsource:\nversion: 1.10\nrating: 0012\n---\n# {{title}}\n"})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Zebra note", Insight: "Zebras are striped.", Domain: "go", Tags: []string{"animals"}})
	want := "---\n# fill the source\ntags: [wiki, go, animals]\naliases: []\ncreated: 2026-11-29\nsource:\nversion: 1.10\nrating: 0012\ntype: wiki\n---\n# Zebra note\n\nZebras are striped.\n"
	if got := read(t, dir, res.Path); got != want {
		t.Errorf("note:\n%s\nwant:\n%s", got, want)
	}
}
