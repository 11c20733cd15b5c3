package markdown

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the parser's output")

// goldenLink shows, next to each link, the source text its offsets select.
type goldenLink struct {
	Link
	Kind       string
	Text       string `json:"_src[Start:End]"`
	TargetText string `json:"_src[TargetStart:TargetEnd]"`
}

type goldenNote struct {
	*Note
	Links []goldenLink
}

var kindNames = map[LinkKind]string{WikiLink: "wiki", Embed: "embed", MarkdownLink: "markdown"}

func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/*.md inputs")
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			n := Parse(filepath.Base(in), src)
			checkInvariants(t, src, n)

			g := goldenNote{Note: n}
			for _, l := range n.Links {
				g.Links = append(g.Links, goldenLink{
					Link:       l,
					Kind:       kindNames[l.Kind],
					Text:       string(src[l.Start:l.End]),
					TargetText: string(src[l.TargetStart:l.TargetEnd]),
				})
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(in, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run go test -update and review the diff):\n%s", golden, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(identical lines)"
}

// checkInvariants asserts what must hold for any input.
func checkInvariants(t testing.TB, src []byte, n *Note) {
	t.Helper()
	if n == nil {
		t.Fatal("Parse returned nil")
	}
	lines := 1 + bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] == '\n' {
		lines--
	}
	lastLine := max(lines, n.BodyLine)
	var newlines []int // offsets of '\n'
	for i, c := range src {
		if c == '\n' {
			newlines = append(newlines, i)
		}
	}
	lineOf := func(off int) int { // 1-based line of the byte at off
		i, _ := slices.BinarySearch(newlines, off)
		return i + 1
	}

	if n.BodyLine < 1 || n.BodyOffset < 0 || n.BodyOffset > len(src) {
		t.Fatalf("body at line %d offset %d, len %d", n.BodyLine, n.BodyOffset, len(src))
	}
	if n.BodyOffset > 0 && n.BodyOffset < len(src) && n.BodyLine != lineOf(n.BodyOffset) {
		t.Errorf("BodyLine %d but BodyOffset %d is on line %d", n.BodyLine, n.BodyOffset, lineOf(n.BodyOffset))
	}
	if n.Title == "" {
		t.Errorf("empty title")
	}
	prevStart := -1
	for i, l := range n.Links {
		if l.InProperty() == (l.Start >= n.BodyOffset) || l.InProperty() && l.Quote != '"' && l.Quote != '\'' {
			t.Errorf("link %d: quote %q at %d, body at %d", i, l.Quote, l.Start, n.BodyOffset)
		}
		if l.Start < 0 || l.Start > l.TargetStart || l.TargetStart > l.TargetEnd || l.TargetEnd > l.End || l.End > len(src) {
			t.Fatalf("link %d offsets out of order or bounds: %+v (len %d, body %d)", i, l, len(src), n.BodyOffset)
		}
		if l.Start <= prevStart {
			t.Errorf("link %d starts at %d, not after the previous link at %d", i, l.Start, prevStart)
		}
		prevStart = l.Start
		if got := lineOf(l.Start); got != l.Line || lineOf(l.End-1) != l.Line {
			t.Errorf("link %d %+v: Line %d, but it is on lines %d..%d", i, l, l.Line, got, lineOf(l.End-1))
		}
		text := string(src[l.Start:l.End])
		switch l.Kind {
		case WikiLink, Embed:
			prefix := "[["
			if l.Kind == Embed {
				prefix = "![["
			}
			if !strings.HasPrefix(text, prefix) || !strings.HasSuffix(text, "]]") {
				t.Errorf("link %d kind %d has text %q", i, l.Kind, text)
			}
			got := string(src[l.TargetStart:l.TargetEnd])
			if l.Quote == '\'' {
				got = strings.ReplaceAll(got, "''", "'")
			}
			if got != l.Target {
				t.Errorf("link %d target %q but source has %q", i, l.Target, got)
			}
		case MarkdownLink:
			if !strings.HasPrefix(text, "[") && !strings.HasPrefix(text, "![") || !strings.HasSuffix(text, ")") {
				t.Errorf("markdown link %d has text %q", i, text)
			}
		default:
			t.Errorf("link %d has unknown kind %d", i, l.Kind)
		}
		if l.Target == "" && l.Anchor == "" {
			t.Errorf("link %d has neither target nor anchor: %+v", i, l)
		}
		if !l.HasAlias && l.Alias != "" {
			t.Errorf("link %d has alias %q without HasAlias", i, l.Alias)
		}
	}
	prevLine := 0
	for _, h := range n.Headings {
		if h.Level < 1 || h.Level > 6 || h.Line <= prevLine || h.Line < n.BodyLine || h.Line > lastLine {
			t.Errorf("heading %+v out of order or range (body line %d, last %d)", h, n.BodyLine, lastLine)
		}
		prevLine = h.Line
	}
	if len(n.Chunks) == 0 {
		t.Fatalf("no chunk")
	}
	prevEnd := n.BodyLine - 1
	for i, c := range n.Chunks {
		if c.StartLine <= prevEnd || c.EndLine < c.StartLine || c.EndLine > lastLine {
			t.Errorf("chunk %d lines %d..%d (previous end %d, last line %d)", i, c.StartLine, c.EndLine, prevEnd, lastLine)
		}
		prevEnd = c.EndLine
		if len(c.Headings) > 2 || i > 0 && len(c.Headings) == 0 {
			t.Errorf("chunk %d trail %q", i, c.Headings)
		}
		checkTags(t, c.Tags)
	}
	checkTags(t, n.Tags)
	for _, id := range n.BlockIDs {
		if id == "" || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
			t.Errorf("bad block id %q", id)
		}
	}
	for _, d := range n.Diagnostics {
		if d == "" || strings.ContainsAny(d, "\r\n") {
			t.Errorf("diagnostic not one line: %q", d)
		}
	}
}

func checkTags(t testing.TB, tags []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, tag := range tags {
		if tag == "" || strings.HasPrefix(tag, "#") || strings.ToLower(tag) != tag || seen[tag] {
			t.Errorf("bad or repeated tag %q in %q", tag, tags)
		}
		seen[tag] = true
	}
}

type wantLink struct {
	kind     LinkKind
	target   string
	anchor   string
	alias    string
	hasAlias bool
	text     string // src[Start:End]
	tgtText  string // src[TargetStart:TargetEnd]
	line     int
}

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []wantLink
	}{
		{"wiki plain", "a [[Target]] b", []wantLink{{WikiLink, "Target", "", "", false, "[[Target]]", "Target", 1}}},
		{"wiki alias", "[[T|Shown]]", []wantLink{{WikiLink, "T", "", "Shown", true, "[[T|Shown]]", "T", 1}}},
		{"wiki empty alias", "[[T|]]", []wantLink{{WikiLink, "T", "", "", true, "[[T|]]", "T", 1}}},
		{"wiki heading", "[[T#Head ing]]", []wantLink{{WikiLink, "T", "Head ing", "", false, "[[T#Head ing]]", "T", 1}}},
		{"wiki nested heading", "[[T#A#B|x]]", []wantLink{{WikiLink, "T", "A#B", "x", true, "[[T#A#B|x]]", "T", 1}}},
		{"wiki block", "[[T#^abc-1]]", []wantLink{{WikiLink, "T", "^abc-1", "", false, "[[T#^abc-1]]", "T", 1}}},
		{"wiki same note heading", "x [[#Local]]", []wantLink{{WikiLink, "", "Local", "", false, "[[#Local]]", "", 1}}},
		{"wiki same note block", "[[#^b1|see]]", []wantLink{{WikiLink, "", "^b1", "see", true, "[[#^b1|see]]", "", 1}}},
		{"wiki spaces trimmed", "[[  Spaced Name  | al ]]", []wantLink{{WikiLink, "Spaced Name", "", "al", true, "[[  Spaced Name  | al ]]", "Spaced Name", 1}}},
		{"wiki path", "[[dir/sub/N.md]]", []wantLink{{WikiLink, "dir/sub/N.md", "", "", false, "[[dir/sub/N.md]]", "dir/sub/N.md", 1}}},
		{"wiki unicode", "→ [[Café 日本]]", []wantLink{{WikiLink, "Café 日本", "", "", false, "[[Café 日本]]", "Café 日本", 1}}},
		{"wiki table escaped pipe", "| [[t\\|alias]] |", []wantLink{{WikiLink, "t", "", "alias", true, "[[t\\|alias]]", "t", 1}}},
		{"wiki table escaped pipe with heading", "| [[t#h\\|alias]] |", []wantLink{{WikiLink, "t", "h", "alias", true, "[[t#h\\|alias]]", "t", 1}}},
		{"embed", "![[e]]", []wantLink{{Embed, "e", "", "", false, "![[e]]", "e", 1}}},
		{"embed size", "![[img.png|100]]", []wantLink{{Embed, "img.png", "", "100", true, "![[img.png|100]]", "img.png", 1}}},
		{"embed table size", "|![[img.png\\|100x20]]|", []wantLink{{Embed, "img.png", "", "100x20", true, "![[img.png\\|100x20]]", "img.png", 1}}},
		{"embed heading", "![[N#Part]]", []wantLink{{Embed, "N", "Part", "", false, "![[N#Part]]", "N", 1}}},
		{"inner wiki wins", "[[a [[b]]", []wantLink{{WikiLink, "b", "", "", false, "[[b]]", "b", 1}}},
		{"triple close", "[[a]]]", []wantLink{{WikiLink, "a", "", "", false, "[[a]]", "a", 1}}},
		{"two on a line", "[[a]][[b]]", []wantLink{
			{WikiLink, "a", "", "", false, "[[a]]", "a", 1},
			{WikiLink, "b", "", "", false, "[[b]]", "b", 1},
		}},
		{"line numbers", "x\n\n[[a]]\r\ny [[b]]", []wantLink{
			{WikiLink, "a", "", "", false, "[[a]]", "a", 3},
			{WikiLink, "b", "", "", false, "[[b]]", "b", 4},
		}},
		{"md plain", "[x](path.md)", []wantLink{{MarkdownLink, "path.md", "", "x", true, "[x](path.md)", "path.md", 1}}},
		{"md angle", "[x](<path with spaces.md>)", []wantLink{{MarkdownLink, "path with spaces.md", "", "x", true, "[x](<path with spaces.md>)", "path with spaces.md", 1}}},
		{"md angle anchor", "[x](<a b.md#c d>)", []wantLink{{MarkdownLink, "a b.md", "c d", "x", true, "[x](<a b.md#c d>)", "a b.md", 1}}},
		{"md percent", "[x](path%20name.md#My%20heading)", []wantLink{{MarkdownLink, "path name.md", "My heading", "x", true, "[x](path%20name.md#My%20heading)", "path%20name.md", 1}}},
		{"md invalid percent kept", "[x](a%zz%2.md)", []wantLink{{MarkdownLink, "a%zz%2.md", "", "x", true, "[x](a%zz%2.md)", "a%zz%2.md", 1}}},
		{"md percent utf8", "[x](caf%C3%A9.md)", []wantLink{{MarkdownLink, "café.md", "", "x", true, "[x](caf%C3%A9.md)", "caf%C3%A9.md", 1}}},
		{"md encoded hash is literal", "[x](C%23%20notes.md)", []wantLink{{MarkdownLink, "C# notes.md", "", "x", true, "[x](C%23%20notes.md)", "C%23%20notes.md", 1}}},
		{"md backslash escape", "[x](a\\_b.md)", []wantLink{{MarkdownLink, "a_b.md", "", "x", true, "[x](a\\_b.md)", "a\\_b.md", 1}}},
		{"md image", "![alt](a.png)", []wantLink{{MarkdownLink, "a.png", "", "alt", true, "![alt](a.png)", "a.png", 1}}},
		{"md empty text", "[](a.md)", []wantLink{{MarkdownLink, "a.md", "", "", false, "[](a.md)", "a.md", 1}}},
		{"md same note", "[x](#heading)", []wantLink{{MarkdownLink, "", "heading", "x", true, "[x](#heading)", "", 1}}},
		{"md title", `[x](a.md "T i t l e")`, []wantLink{{MarkdownLink, "a.md", "", "x", true, `[x](a.md "T i t l e")`, "a.md", 1}}},
		{"md title single", `[x](a.md 'T')`, []wantLink{{MarkdownLink, "a.md", "", "x", true, `[x](a.md 'T')`, "a.md", 1}}},
		{"md title parens", `[x](a.md (T))`, []wantLink{{MarkdownLink, "a.md", "", "x", true, `[x](a.md (T))`, "a.md", 1}}},
		{"md balanced parens", "[x](a(1).md)", []wantLink{{MarkdownLink, "a(1).md", "", "x", true, "[x](a(1).md)", "a(1).md", 1}}},
		{"md nested brackets in text", "[a [b] c](d.md)", []wantLink{{MarkdownLink, "d.md", "", "a [b] c", true, "[a [b] c](d.md)", "d.md", 1}}},
		{"md image inside link", "[![b](b.png)](t.md)", []wantLink{
			{MarkdownLink, "t.md", "", "![b](b.png)", true, "[![b](b.png)](t.md)", "t.md", 1},
			{MarkdownLink, "b.png", "", "b", true, "![b](b.png)", "b.png", 1},
		}},
		{"md link inside link: only inner", "[a [b](b.md) c](a.md)", []wantLink{{MarkdownLink, "b.md", "", "b", true, "[b](b.md)", "b.md", 1}}},
		{"md relative", "[x](../up/N.md)", []wantLink{{MarkdownLink, "../up/N.md", "", "x", true, "[x](../up/N.md)", "../up/N.md", 1}}},
		{"md root relative", "[x](/root/N.md)", []wantLink{{MarkdownLink, "/root/N.md", "", "x", true, "[x](/root/N.md)", "/root/N.md", 1}}},
		{"wiki and md mixed", "[[w]] [m](m.md) ![[e]]", []wantLink{
			{WikiLink, "w", "", "", false, "[[w]]", "w", 1},
			{MarkdownLink, "m.md", "", "m", true, "[m](m.md)", "m.md", 1},
			{Embed, "e", "", "", false, "![[e]]", "e", 1},
		}},
		{"links in heading", "## See [[H]] and [m](m.md)", []wantLink{
			{WikiLink, "H", "", "", false, "[[H]]", "H", 1},
			{MarkdownLink, "m.md", "", "m", true, "[m](m.md)", "m.md", 1},
		}},
		{"code span then link", "`x` [[a]] ``y`` [[b]]", []wantLink{
			{WikiLink, "a", "", "", false, "[[a]]", "a", 1},
			{WikiLink, "b", "", "", false, "[[b]]", "b", 1},
		}},
		{"unmatched backtick is literal", "`x [[a]]", []wantLink{{WikiLink, "a", "", "", false, "[[a]]", "a", 1}}},
		{"different run lengths do not match", "``x` [[a]]", []wantLink{{WikiLink, "a", "", "", false, "[[a]]", "a", 1}}},
		{"escaped backtick does not open a span", "\\`x [[a]] `", []wantLink{{WikiLink, "a", "", "", false, "[[a]]", "a", 1}}},
		{"escaped bang is not an embed", "\\![[b]]", []wantLink{{WikiLink, "b", "", "", false, "[[b]]", "b", 1}}},

		{"url schemes", "[a](http://x.md) [b](https://x.md) [c](mailto:a@b) [d](obsidian://open) [e](Zotero+x-1.2:item) [f](file:///x.md)", nil},
		{"empty destinations", "[a]() [b](<>) [c](#) [d]( )", nil},
		{"inline code", "`[[a]]` ``[[b]] ` [[c]]`` `[d](d.md)` ```![[e]]```", nil},
		{"escaped open", "\\[[a]] [\\[b]]", nil},
		{"unclosed on line", "[[a\n]]", nil},
		{"empty wiki", "[[]] [[ ]] [[|x]] [[#]] [[ # ]] ![[]]", nil},
		{"md not closed", "[a](b.md", nil},
		{"md space in destination", "[a](b c.md)", nil},
		{"md unbalanced parens", "[a](b(c.md)", nil},
		{"md reference style", "[a][ref] [b]\n\n[ref]: r.md", nil},
		{"md text on next line", "[a\nb](c.md)", nil},
		{"inside fence", "```\n[[a]] [b](b.md)\n```", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			n := Parse("t.md", src)
			checkInvariants(t, src, n)
			var got []wantLink
			for _, l := range n.Links {
				got = append(got, wantLink{l.Kind, l.Target, l.Anchor, l.Alias, l.HasAlias, tt.src[l.Start:l.End], tt.src[l.TargetStart:l.TargetEnd], l.Line})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("links of %q:\n got  %+v\n want %+v", tt.src, got, tt.want)
			}
		})
	}
}

func TestSameNoteTargetOffsets(t *testing.T) {
	src := "ab [[#H]] [x](#y)"
	n := Parse("t.md", []byte(src))
	if len(n.Links) != 2 {
		t.Fatalf("links %+v", n.Links)
	}
	if w := n.Links[0]; w.TargetStart != 5 || w.TargetEnd != 5 {
		t.Errorf("wiki same-note target offsets %d,%d, want just after [[ (5)", w.TargetStart, w.TargetEnd)
	}
	if m := n.Links[1]; m.TargetStart != 14 || m.TargetEnd != 14 {
		t.Errorf("markdown same-note target offsets %d,%d, want the destination start (14)", m.TargetStart, m.TargetEnd)
	}
}

func TestTags(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"line start", "#tag", []string{"tag"}},
		{"after space", "a #tag b", []string{"tag"}},
		{"lowercased and deduplicated", "#Tag #TAG #tag", []string{"tag"}},
		{"nested", "#a/b-c_d", []string{"a/b-c_d"}},
		{"trailing slash trimmed", "#a/b/ x", []string{"a/b"}},
		{"digits only is not a tag", "#123 #2024/", nil},
		{"digits with a letter", "#y2024 #1st #1-2", []string{"y2024", "1st", "1-2"}},
		{"punctuation before", "(#a) [#b] {#c} x,#d x;#e \"#f\" '#g' *#h* ~#i~ >#j |#k !#l ?#m :#n", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"}},
		{"punctuation after ends the tag", "#a, #b. #c! #d? #e) #f:x", []string{"a", "b", "c", "d", "e", "f"}},
		{"unicode", "#ünïcödé #日本語 #Ελληνικά", []string{"ünïcödé", "日本語", "ελληνικά"}},
		{"unicode punctuation before", "、#jp （#wide", []string{"jp", "wide"}},
		{"inside words", "C# a#b 3#c é#d", nil},
		{"url fragments", "http://x/#anchor https://e.com/p#frag https://e.com/?a=#b x/#c", nil},
		{"html entity", "&#x27; &#39;", nil},
		{"double hash", "##double", nil},
		{"escaped", "\\#escaped", nil},
		{"code span", "`#code` ``#x``", nil},
		{"heading", "# Title #not\n## H #no", nil},
		{"heading needs space so #x is a tag", "#x", []string{"x"}},
		{"markdown link destination", "[t](#anchor) [u](n.md#frag)", nil},
		{"wiki link anchor", "[[#heading]] [[n#h]] ![[n#h]]", nil},
		{"fence", "```\n#fenced\n```\n~~~\n#tilde\n~~~", nil},
		{"quote and list", "> #q\n- #l\n1. #n", []string{"q", "l", "n"}},
		{"empty hash", "# \n#\n# #", nil},
		{"emoji is not a tag char", "#✨ #a✨b", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			n := Parse("t.md", src)
			checkInvariants(t, src, n)
			if !slices.Equal(n.Tags, tt.want) {
				t.Errorf("tags of %q = %q, want %q", tt.src, n.Tags, tt.want)
			}
		})
	}
}

func TestTitleAndHeadings(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		src      string
		title    string
		headings []Heading
	}{
		{"first h1", "n.md", "intro\n# First\n# Second", "First", []Heading{{1, "First", 2}, {1, "Second", 3}}},
		{"fallback md", "dir/My Note.md", "no heading", "My Note", nil},
		{"fallback markdown", "x/y/Other.MARKDOWN", "", "Other", nil},
		{"fallback keeps other dots", "v1.2 notes.md", "text", "v1.2 notes", nil},
		{"h1 in fence ignored", "n.md", "```\n# Not\n```\n# Real", "Real", []Heading{{1, "Real", 4}}},
		{"closing hashes", "n.md", "# Title ##\n## Sub #", "Title", []Heading{{1, "Title", 1}, {2, "Sub", 2}}},
		{"hash without space kept", "n.md", "# C#\n## F#", "C#", []Heading{{1, "C#", 1}, {2, "F#", 2}}},
		{"escaped closing hash kept", "n.md", "# A \\#", "A \\#", []Heading{{1, "A \\#", 1}}},
		{"only hashes", "n.md", "# ###\n# Real", "Real", []Heading{{1, "", 1}, {1, "Real", 2}}},
		{"empty h1 skipped for title", "n.md", "#\n# T", "T", []Heading{{1, "", 1}, {1, "T", 2}}},
		{"levels", "n.md", "###### six\n####### seven\n#\ttab", "tab", []Heading{{6, "six", 1}, {1, "tab", 3}}},
		{"indent", "n.md", "   ## three\n    ## four", "n", []Heading{{2, "three", 1}}},
		{"not a heading", "n.md", "#tag\n#5\n>## quoted", "n", nil},
		{"setext not supported", "n.md", "Title\n=====\nSub\n---", "n", nil},
		{"trim", "n.md", "#    spaced out    ", "spaced out", []Heading{{1, "spaced out", 1}}},
		{"crlf", "n.md", "# T\r\n## U\r\n", "T", []Heading{{1, "T", 1}, {2, "U", 2}}},
		{"after frontmatter", "n.md", "---\na: 1\n---\n# T", "T", []Heading{{1, "T", 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			n := Parse(tt.file, src)
			checkInvariants(t, src, n)
			if n.Title != tt.title {
				t.Errorf("title %q, want %q", n.Title, tt.title)
			}
			if !slices.Equal(n.Headings, tt.headings) {
				t.Errorf("headings %+v, want %+v", n.Headings, tt.headings)
			}
		})
	}
}

func TestFences(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		links []string // targets found outside code
		code  string   // code of the only chunk
	}{
		{"backticks", "```\n[[a]]\n```\n[[b]]", []string{"b"}, "[[a]]"},
		{"tildes", "~~~\n[[a]]\n~~~\n[[b]]", []string{"b"}, "[[a]]"},
		{"info string", "```go title=\"x\"\ncode\n```", nil, "code"},
		{"closing must be same char", "```\n~~~\n[[a]]\n```", nil, "~~~\n[[a]]"},
		{"closing at least as long", "````\n```\n[[a]]\n````\n[[b]]", []string{"b"}, "```\n[[a]]"},
		{"longer close is fine", "```\n[[a]]\n`````\n[[b]]", []string{"b"}, "[[a]]"},
		{"close with trailing spaces", "```\nx\n```  \n[[b]]", []string{"b"}, "x"},
		{"close with text is content", "```\nx\n``` no\n[[a]]", nil, "x\n``` no\n[[a]]"},
		{"two characters is not a fence", "``\n[[a]]\n``", []string{"a"}, ""},
		{"backtick in backtick info", "``` a`b\n[[a]]", []string{"a"}, ""},
		{"backtick in tilde info", "~~~ a`b\n[[a]]\n~~~", nil, "[[a]]"},
		{"three spaces indent", "   ```\n[[a]]\n   ```\n[[b]]", []string{"b"}, "[[a]]"},
		{"four spaces is not a fence", "    ```\n[[a]]\n    ```", []string{"a"}, "    ```"}, // indented code, then a paragraph
		{"closing indented four is content", "```\n[[a]]\n    ```\n[[b]]", nil, "[[a]]\n    ```\n[[b]]"},
		{"unclosed runs to end", "[[a]]\n```\n[[b]]\n## no split", []string{"a"}, "[[b]]\n## no split"},
		{"crlf", "```\r\n[[a]]\r\nx\r\n```\r\n[[b]]\r\n", []string{"b"}, "[[a]]\nx"},
		{"quoted fence", "> ```\n> [[a]]\n> ```\n> [[b]]", []string{"b"}, "[[a]]"},
		{"quoted fence ends with quote", "> ```\n> [[a]]\n[[b]]", []string{"b"}, "[[a]]"},
		{"nested quote fence", "> > ```\n> > [[a]]\n> [[b]]", []string{"b"}, "[[a]]"},
		{"quote inside top fence is content", "```\n> [[a]]\n```", nil, "> [[a]]"},
		{"two fences", "```\na\n```\nx\n~~~\nb\n~~~", nil, "a\nb"},
		// Fences in list items stand at the item's text, indented.
		{"tab-indented fence in a numbered item", "1. Step\n\t```\n\tSee [[a]] here\n\t```\n[[b]]", []string{"b"}, "\tSee [[a]] here"},
		{"four spaces in a nested item", "- item\n  - sub\n\n    ```\n    [[a]]\n    ```\n[[b]]", []string{"b"}, "    [[a]]"},
		{"fence on the marker line", "- ```\n  code [[a]]\n  ```\n[[b]] and ![[c#^x]]", []string{"b", "c"}, "  code [[a]]"},
		{"fence on a numbered marker line", "1. ```js\n   [[a]]\n   ```\n[[b]]", []string{"b"}, "   [[a]]"},
		{"closed at the margin", "- item\n    ```\n    [[a]]\n```\n[[b]]", []string{"b"}, "    [[a]]"},
		{"indented after the list ended is not a fence", "- item\n\ntext\n    ```\n    [[a]]\n    ```", []string{"a"}, ""},
		{"a dash without a blank is no marker", "-```\n[[a]]\n```", []string{"a"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			n := Parse("t.md", src)
			checkInvariants(t, src, n)
			var targets []string
			for _, l := range n.Links {
				targets = append(targets, l.Target)
			}
			if !slices.Equal(targets, tt.links) {
				t.Errorf("links %q, want %q", targets, tt.links)
			}
			if len(n.Chunks) != 1 {
				t.Fatalf("chunks %+v", n.Chunks)
			}
			if n.Chunks[0].Code != tt.code {
				t.Errorf("code %q, want %q", n.Chunks[0].Code, tt.code)
			}
		})
	}
}

func TestChunks(t *testing.T) {
	type chunk struct {
		trail      string
		start, end int
		prose      string
		code       string
		tags       string
	}
	tests := []struct {
		name string
		src  string
		want []chunk
	}{
		{"single", "a\nb", []chunk{{"", 1, 2, "a\nb", "", ""}}},
		{"single trailing newline", "a\nb\n", []chunk{{"", 1, 2, "a\nb", "", ""}}},
		{"empty file", "", []chunk{{"", 1, 1, "", "", ""}}},
		{"blank file is one chunk", "\n\n", []chunk{{"", 1, 2, "", "", ""}}},
		{"frontmatter only", "---\na: 1\n---\n", []chunk{{"", 4, 4, "", "", ""}}},
		{"blank pre-chunk dropped", "\n\n## A\nx", []chunk{{"A", 3, 4, "x", "", ""}}},
		{"heading on first line", "## A\nx", []chunk{{"A", 1, 2, "x", "", ""}}},
		{"title line is pre-chunk content", "# T\n## A\nx", []chunk{{"", 1, 1, "# T", "", ""}, {"A", 2, 3, "x", "", ""}}},
		{"trail", "## A\n### B\n### C\n## D\n### E", []chunk{
			{"A", 1, 1, "", "", ""}, {"A > B", 2, 2, "", "", ""}, {"A > C", 3, 3, "", "", ""},
			{"D", 4, 4, "", "", ""}, {"D > E", 5, 5, "", "", ""},
		}},
		{"h3 without h2", "### B\nx\n## A\n### C", []chunk{{"B", 1, 2, "x", "", ""}, {"A", 3, 3, "", "", ""}, {"A > C", 4, 4, "", "", ""}}},
		{"h4 and h1 do not split", "## A\n#### deep\n# one\ntext", []chunk{{"A", 1, 4, "#### deep\n# one\ntext", "", ""}}},
		{"heading in fence does not split", "## A\n```\n## not\n```\nx", []chunk{{"A", 1, 5, "x", "## not", ""}}},
		{"prose around code", "## A\nbefore\n```\ncode\n```\nafter", []chunk{{"A", 1, 6, "before\nafter", "code", ""}}},
		{"chunk tags", "#pre\n## A\n#a #b #a\n## B\n#c", []chunk{{"", 1, 1, "#pre", "", "pre"}, {"A", 2, 3, "#a #b #a", "", "a,b"}, {"B", 4, 5, "#c", "", "c"}}},
		{"frontmatter lines counted", "---\nx: 1\n---\nintro\n## A\ny", []chunk{{"", 4, 4, "intro", "", ""}, {"A", 5, 6, "y", "", ""}}},
		{"crlf prose", "## A\r\nx\r\ny\r\n", []chunk{{"A", 1, 3, "x\ny", "", ""}}},
		{"quoted heading does not split", "> ## Q\nx", []chunk{{"", 1, 2, "> ## Q\nx", "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			n := Parse("t.md", src)
			checkInvariants(t, src, n)
			var got []chunk
			for _, c := range n.Chunks {
				got = append(got, chunk{strings.Join(c.Headings, " > "), c.StartLine, c.EndLine, c.Prose, c.Code, strings.Join(c.Tags, ",")})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("chunks of %q:\n got  %+v\n want %+v", tt.src, got, tt.want)
			}
		})
	}
}

func TestBlockIDs(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"text ^abc", []string{"abc"}},
		{"text ^abc  \t", []string{"abc"}},
		{"^alone", []string{"alone"}},
		{"> quote ^q-1\n- item ^i2", []string{"q-1", "i2"}},
		{"dup ^a\nagain ^a", []string{"a"}},
		{"x^no", nil},
		{"^bad_id", nil},
		{"^", nil},
		{"^a b", nil},
		{"text ^a\r\n", []string{"a"}},
		{"```\ncode ^f\n```", nil},
		{"## Heading ^h", []string{"h"}},
	}
	for _, tt := range tests {
		src := []byte(tt.src)
		n := Parse("t.md", src)
		checkInvariants(t, src, n)
		if !slices.Equal(n.BlockIDs, tt.want) {
			t.Errorf("block ids of %q = %q, want %q", tt.src, n.BlockIDs, tt.want)
		}
	}
}

func TestFrontmatter(t *testing.T) {
	big := "---\nk: \"" + strings.Repeat("x", MaxFrontmatter) + "\"\n---\n# Big\n[[link]]"
	tests := []struct {
		name      string
		src       string
		fm        map[string]any // nil: Frontmatter must be nil
		typ       string
		status    string
		created   string
		updated   string
		tags      []string
		aliases   []string
		diag      string // prefix of the only diagnostic, "" for none
		bodyLine  int
		bodyTitle string
	}{
		{name: "none", src: "# T", bodyLine: 1, bodyTitle: "T"},
		{name: "rule later is not frontmatter", src: "x\n---\na: 1\n---", bodyLine: 1, bodyTitle: "t"},
		{name: "unclosed is body", src: "---\na: 1\n", bodyLine: 1, bodyTitle: "t"},
		{name: "indented opening is not frontmatter", src: " ---\na: 1\n---\n", bodyLine: 1, bodyTitle: "t"},
		{name: "empty", src: "---\n---\n# T", fm: map[string]any{}, bodyLine: 3, bodyTitle: "T"},
		{name: "comments only", src: "---\n# c\n---\n", fm: map[string]any{}, bodyLine: 4, bodyTitle: "t"},
		{name: "dots close", src: "---\na: 1\n...\n# T", fm: map[string]any{"a": 1}, bodyLine: 4, bodyTitle: "T"},
		{name: "trailing spaces on delimiters", src: "--- \na: 1\n---\t\n# T", fm: map[string]any{"a": 1}, bodyLine: 4, bodyTitle: "T"},
		{name: "crlf", src: "---\r\ntype: Wiki\r\n---\r\n# T\r\n", fm: map[string]any{"type": "Wiki"}, typ: "wiki", bodyLine: 4, bodyTitle: "T"},
		{name: "bom", src: "\xef\xbb\xbf---\nstatus: Done\n---\n# T", fm: map[string]any{"status": "Done"}, status: "done", bodyLine: 4, bodyTitle: "T"},
		{
			name: "english keys",
			src:  "---\ntype: MOC\nstatus: draft\ncreated: 2026-01-02\nupdated: 2026-01-03 10:00\ntags: [A, '#b', c d]\naliases: [X, ' Y ']\n---\n",
			fm: map[string]any{"type": "MOC", "status": "draft", "created": "2026-01-02", "updated": "2026-01-03 10:00",
				"tags": []any{"A", "#b", "c d"}, "aliases": []any{"X", " Y "}},
			typ: "moc", status: "draft", created: "2026-01-02", updated: "2026-01-03 10:00",
			tags: []string{"a", "b", "c", "d"}, aliases: []string{"X", "Y"}, bodyLine: 9, bodyTitle: "t",
		},
		{
			name: "portuguese keys",
			src:  "---\ntipo: projeto\ncriado: 2026-02-01\natualizado: 2026-02-02\ntags: 'x, #Y z'\nalias: um, dois\n---\n",
			fm:   map[string]any{"tipo": "projeto", "criado": "2026-02-01", "atualizado": "2026-02-02", "tags": "x, #Y z", "alias": "um, dois"},
			typ:  "project", created: "2026-02-01", updated: "2026-02-02", tags: []string{"x", "y", "z"}, aliases: []string{"um", "dois"},
			bodyLine: 8, bodyTitle: "t",
		},
		{name: "nota", src: "---\ntipo: Nota\n---\n", fm: map[string]any{"tipo": "Nota"}, typ: "note", bodyLine: 4, bodyTitle: "t"},
		{name: "other type lowercased", src: "---\ntype: Daily\n---\n", fm: map[string]any{"type": "Daily"}, typ: "daily", bodyLine: 4, bodyTitle: "t"},
		{name: "english wins over portuguese", src: "---\ntipo: nota\ntype: wiki\n---\n", fm: map[string]any{"tipo": "nota", "type": "wiki"}, typ: "wiki", bodyLine: 5, bodyTitle: "t"},
		{name: "key case ignored", src: "---\nTags: [A]\nType: Wiki\n---\n", fm: map[string]any{"Tags": []any{"A"}, "Type": "Wiki"}, typ: "wiki", tags: []string{"a"}, bodyLine: 5, bodyTitle: "t"},
		{name: "null and empty values", src: "---\ntags:\naliases: []\ntype: ~\n---\n", fm: map[string]any{"tags": nil, "aliases": []any{}, "type": nil}, bodyLine: 6, bodyTitle: "t"},
		{name: "tags list with empty items", src: "---\ntags:\n  - \n  - '#'\n  - ok\n---\n", fm: map[string]any{"tags": []any{nil, "#", "ok"}}, tags: []string{"ok"}, bodyLine: 7, bodyTitle: "t"},
		{name: "scalars typed", src: "---\nn: 3\nf: 1.5\nb: true\ns: '3'\nd: 2026-01-02\nx: .nan\n---\n", fm: map[string]any{"n": 3, "f": 1.5, "b": true, "s": "3", "d": "2026-01-02", "x": ".nan"}, bodyLine: 9, bodyTitle: "t"},
		{name: "duplicate key", src: "---\na: 1\na: 2\n---\n", fm: map[string]any{"a": 2}, diag: `duplicate frontmatter key "a" (last value kept)`, bodyLine: 5, bodyTitle: "t"},
		{name: "invalid yaml", src: "---\ntype: wiki\ntags: [a\n---\n# Body\n[[l]]", diag: "invalid YAML frontmatter: line ", bodyLine: 5, bodyTitle: "Body"},
		{name: "tab indentation", src: "---\ntags:\n\t- a\n---\n# Body", diag: "invalid YAML frontmatter: line 3: found character that cannot start any token", bodyLine: 5, bodyTitle: "Body"},
		{name: "not a mapping", src: "---\n- a\n---\n# Body", diag: diagFrontmatterNotMap, bodyLine: 4, bodyTitle: "Body"},
		{name: "scalar document", src: "---\njust text\n---\n# Body", diag: diagFrontmatterNotMap, bodyLine: 4, bodyTitle: "Body"},
		{name: "alias", src: "---\na: &x 1\nb: *x\n---\n# Body", diag: diagFrontmatterAliases, bodyLine: 5, bodyTitle: "Body"},
		{name: "merge alias", src: "---\nbase: &b {type: wiki}\nnote:\n  <<: *b\n---\n# Body", diag: diagFrontmatterAliases, bodyLine: 6, bodyTitle: "Body"},
		{name: "anchor without alias is fine", src: "---\na: &x 1\n---\n", fm: map[string]any{"a": 1}, bodyLine: 4, bodyTitle: "t"},
		{name: "over 64 KiB", src: big, diag: diagFrontmatterTooLarge, bodyLine: 4, bodyTitle: "Big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			n := Parse("t.md", src)
			checkInvariants(t, src, n)
			if tt.fm == nil {
				if n.Frontmatter != nil {
					t.Errorf("frontmatter %v, want nil", n.Frontmatter)
				}
			} else if got, want := jsonText(t, n.Frontmatter), jsonText(t, tt.fm); got != want {
				t.Errorf("frontmatter %s, want %s", got, want)
			}
			if n.Type != tt.typ || n.Status != tt.status || n.Created != tt.created || n.Updated != tt.updated {
				t.Errorf("type/status/created/updated = %q/%q/%q/%q, want %q/%q/%q/%q",
					n.Type, n.Status, n.Created, n.Updated, tt.typ, tt.status, tt.created, tt.updated)
			}
			if !slices.Equal(n.Tags, tt.tags) || !slices.Equal(n.Aliases, tt.aliases) {
				t.Errorf("tags %q aliases %q, want %q %q", n.Tags, n.Aliases, tt.tags, tt.aliases)
			}
			switch {
			case tt.diag == "" && len(n.Diagnostics) > 0:
				t.Errorf("unexpected diagnostics %q", n.Diagnostics)
			case tt.diag != "" && (len(n.Diagnostics) != 1 || !strings.HasPrefix(n.Diagnostics[0], tt.diag)):
				t.Errorf("diagnostics %q, want one starting with %q", n.Diagnostics, tt.diag)
			}
			if n.BodyLine != tt.bodyLine || n.Title != tt.bodyTitle {
				t.Errorf("body line %d title %q, want %d %q", n.BodyLine, n.Title, tt.bodyLine, tt.bodyTitle)
			}
		})
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("frontmatter must be JSON-encodable: %v", err)
	}
	return string(b)
}

// TestFrontmatterBodyStillParsed checks that a refused or broken frontmatter
// leaves the body fully indexed.
func TestFrontmatterBodyStillParsed(t *testing.T) {
	for _, name := range []string{"frontmatter-alias-bomb.md", "frontmatter-invalid.md"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		n := Parse(name, src)
		if n.Frontmatter != nil || len(n.Diagnostics) != 1 {
			t.Errorf("%s: frontmatter %v diagnostics %q", name, n.Frontmatter, n.Diagnostics)
		}
		if len(n.Links) != 1 || n.Title == strings.TrimSuffix(name, ".md") || n.BodyLine < 3 {
			t.Errorf("%s: body not parsed: title %q links %+v body line %d", name, n.Title, n.Links, n.BodyLine)
		}
	}
}

// TestPathologicalLines parses lines built to defeat naive scanners; they
// must finish (the scanner is linear or close to it) and keep the invariants.
func TestPathologicalLines(t *testing.T) {
	const n = 100_000
	inputs := map[string]string{
		"open brackets":          strings.Repeat("[", n),
		"open wiki":              strings.Repeat("[[a", n),
		"close brackets":         strings.Repeat("]", n),
		"link openers":           strings.Repeat("[x](", n),
		"link openers no spaces": strings.Repeat("[x](a", n),
		"nested parens":          "[x](" + strings.Repeat("(", n),
		"backtick runs":          strings.Repeat("`", n) + strings.Repeat(" `` ``` ", n/8),
		"growing backtick runs":  growingRuns(450),
		"hashes":                 strings.Repeat("#a", n),
		"images":                 strings.Repeat("![", n),
		"angle destinations":     strings.Repeat("[x](<a", n),
		"titles":                 strings.Repeat("[x](a \"", n),
		"many fences":            strings.Repeat("```\n", n),
		"many headings":          strings.Repeat("## h\n", n),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			src := []byte(in)
			checkInvariants(t, src, Parse("p.md", src))
		})
	}
}

func growingRuns(k int) string {
	var b strings.Builder
	for i := 1; i <= k; i++ {
		b.WriteString(strings.Repeat("`", i))
		b.WriteByte('x')
	}
	return b.String()
}

func TestParseDoesNotRetainInput(t *testing.T) {
	src := []byte("# Title\n[[Link]] #tag")
	n := Parse("t.md", src)
	for i := range src {
		src[i] = 'X'
	}
	if n.Title != "Title" || n.Links[0].Target != "Link" || n.Tags[0] != "tag" {
		t.Errorf("result changed with the caller's buffer: %q %q %q", n.Title, n.Links[0].Target, n.Tags)
	}
}

// TestScalarsMatchYAMLDecoder checks that the fast conversion of plain
// scalars gives exactly what the YAML library's decoder gives.
func TestScalarsMatchYAMLDecoder(t *testing.T) {
	for _, s := range []string{
		"0", "7", "-5", "+12", "012", "00", "0x1F", "0o17", "1_000", "9223372036854775807", "99999999999999999999",
		"1.5", "-0.25", "1e3", "1.", ".5", "1_0.5", ".inf", "-.Inf", ".nan",
		"true", "True", "TRUE", "false", "False", "FALSE", "yes", "on", "y",
		"2026-01-02", "text", "'3'", "!!str 3", "!!int '3'", "!!bool true", "!!float 1",
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("k: "+s), &doc); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		v := doc.Content[0].Content[1]
		var want any
		if err := v.Decode(&want); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if f, ok := want.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			want = v.Value // kept as written: JSON cannot carry it
		}
		if tag := v.ShortTag(); tag == "!!timestamp" {
			want = v.Value // dates stay strings as written
		}
		if got := nodeValue(v); got != want {
			t.Errorf("%s: got %#v, the decoder gives %#v", s, got, want)
		}
	}
}

// TestParseOwned: ParseOwned gives the very note Parse gives, for every
// golden input and for an empty file, and its strings share the source.
func TestParseOwned(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no testdata/*.md inputs: %v", err)
	}
	for _, in := range append(inputs, "") {
		var src []byte
		if in != "" {
			if src, err = os.ReadFile(in); err != nil {
				t.Fatal(err)
			}
		}
		want, got := Parse(filepath.Base(in), src), ParseOwned(filepath.Base(in), slices.Clone(src))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ParseOwned differs from Parse", in)
		}
	}
	src := []byte("# Title\n\nsome prose\n")
	n := ParseOwned("a.md", src)
	src[2] = 'X' // the caller broke the contract: the note shows it, sharing the bytes
	if n.Title != "Xitle" {
		t.Errorf("title %q: ParseOwned copied the source", n.Title)
	}
}

// TestTitleAsShown: a title heading's links show as Obsidian shows them.
func TestTitleAsShown(t *testing.T) {
	for src, want := range map[string]string{
		"# An Introduction to [[dataview|Dataview]]\n": "An Introduction to Dataview",
		"# [[Obsidian Publish|Publish]] sites\n":       "Publish sites",
		"# About [[Note]] and [[Note#Part]]\n":         "About Note and Note > Part",
		"# See [[#Local]] and ![[pic.png]]\n":          "See Local and pic.png",
		"# Read [the notes](notes.md) first\n":         "Read the notes first",
		"# The `[[x|y]]` syntax\n":                     "The `[[x|y]]` syntax",
		"# Plain [brackets] stay\n":                    "Plain [brackets] stay",
		"# Unclosed [[link\n":                          "Unclosed [[link",
	} {
		if got := Parse("t.md", []byte(src)).Title; got != want {
			t.Errorf("%q: title %q, want %q", src, got, want)
		}
	}
}
