package markdown

import (
	"reflect"
	"strings"
	"testing"
)

// TestSplitFrontmatter: the block is what Parse takes as frontmatter, and
// block + body is always the whole note.
func TestSplitFrontmatter(t *testing.T) {
	cases := []struct{ src, block string }{
		{"---\ntype: wiki\n---\n# T\n", "---\ntype: wiki\n---\n"},
		{"---\r\ntype: wiki\r\n---\r\nbody", "---\r\ntype: wiki\r\n---\r\n"},
		{"\xEF\xBB\xBF---\na: 1\n---\nx", "\xEF\xBB\xBF---\na: 1\n---\n"},
		{"---\na: 1\n...\nx", "---\na: 1\n...\n"},
		{"---\na: 1\n---", "---\na: 1\n---"},
		{"---\na: 1\nno end\n", ""},
		{"\xEF\xBB\xBF# no frontmatter\n", ""},
		{"# T\n---\na: 1\n---\n", ""},
		{"", ""},
	}
	for _, c := range cases {
		block, body := SplitFrontmatter(c.src)
		if block != c.block || block+body != c.src {
			t.Errorf("SplitFrontmatter(%q) = %q, %q; want block %q", c.src, block, body, c.block)
		}
		if n := Parse("x.md", []byte(c.src)); block != "" && n.BodyOffset != len(block) {
			t.Errorf("%q: block ends at %d, Parse's body at %d", c.src, len(block), n.BodyOffset)
		}
		// The YAML is the block without its delimiter lines, from the
		// block or the whole note alike.
		for _, from := range []string{c.src, block} {
			content, ok := FrontmatterContent(from)
			if ok != (block != "") || ok && !strings.Contains(block, content) || strings.Contains(content, "---") || strings.Contains(content, "\n...") {
				t.Errorf("FrontmatterContent(%q) = %q, %v", from, content, ok)
			}
		}
	}
	if got, _ := FrontmatterContent("---\r\na: 1\r\nb: 2\r\n---\r\nx"); got != "a: 1\r\nb: 2\r\n" {
		t.Errorf("FrontmatterContent of a CRLF note = %q", got)
	}
	if got, ok := FrontmatterContent("---\n---\nx"); got != "" || !ok {
		t.Errorf("FrontmatterContent of an empty block = %q, %v", got, ok)
	}
}

// TestParseFrontmatter decodes as Parse does, from a whole note or a block.
func TestParseFrontmatter(t *testing.T) {
	for _, src := range []string{
		"---\ntype: wiki\ntags: [a, b]\n---\n# T\n",
		"---\ntype: wiki\ntags: [a, b]\n---",
		"---\nkey: 'quoted: value'\nlist:\n  - x\n  - y\n---\n",
		"---\na: [unclosed\n---\nbody",
		"---\na: &x 1\nb: *x\n---\n",
		"---\na: 1\na: 2\n---\n",
		"no frontmatter",
	} {
		fm, diags := ParseFrontmatter(src)
		n := Parse("x.md", []byte(src))
		if !reflect.DeepEqual(fm, n.Frontmatter) || !reflect.DeepEqual(diags, n.Diagnostics) {
			t.Errorf("ParseFrontmatter(%q) = %v, %q; Parse gives %v, %q", src, fm, diags, n.Frontmatter, n.Diagnostics)
		}
	}
	if fm, _ := ParseFrontmatter("---\na: [unclosed\n---\n"); fm != nil {
		t.Errorf("invalid YAML decoded as %v", fm)
	}
}

// TestNormalizeType: one spelling of each type, for the parser and the index.
func TestNormalizeType(t *testing.T) {
	cases := map[string]string{
		"projeto": "project", " Nota ": "note", "Diário": "daily", "diario": "daily",
		"MOC": "moc", "wiki": "wiki", "daily": "daily", "": "", "custom type": "custom type",
	}
	for in, want := range cases {
		if got := NormalizeType(in); got != want {
			t.Errorf("NormalizeType(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Parse("x.md", []byte("---\ntipo: diário\n---\n")).Type; got != "daily" {
		t.Errorf("tipo: diário parsed as type %q, want daily", got)
	}
}

func TestUnclosedFence(t *testing.T) {
	for src, want := range map[string]string{
		"# T\n\ntext\n":                           "",
		"```go\nx\n```\n":                         "",
		"```go\nfunc main() {}\n":                 "```",
		"text\n\n~~~~\ncode\n~~~\n":               "~~~~",
		"> quoted\n> ```\n> code\n":               "> ```",
		"- item\n\n  ````\n  code\n":              "  ````",
		"---\ntype: wiki\n---\n```\nno close yet": "```",
	} {
		if got := UnclosedFence(src); got != want {
			t.Errorf("UnclosedFence(%q) = %q, want %q", src, got, want)
		}
	}
}
