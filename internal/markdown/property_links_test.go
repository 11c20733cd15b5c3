package markdown

import (
	"slices"
	"testing"
)

// TestPropertyLinks: what is and is not a link in a property.
func TestPropertyLinks(t *testing.T) {
	type got struct {
		Target string
		Quote  byte
		Line   int
	}
	cases := []struct {
		name, src string
		want      []got
	}{
		{"text property", "---\nrelated: \"[[auth-guard]]\"\n---\n", []got{{"auth-guard", '"', 2}}},
		{"CRLF and BOM", "\xEF\xBB\xBF---\r\nrelated: '[[a]]'\r\nx: 1\r\n---\r\nbody [[b]]\r\n", []got{{"a", '\'', 2}, {"b", 0, 5}}},
		{"block list", "---\nlinks:\n  - \"[[a]]\"\n  - \"[[b]]\"\nother: x\n  - \"[[c]]\"\n---\n", []got{{"a", '"', 3}, {"b", '"', 4}}},
		{"flow list", "---\nup: [\"[[a]]\", x, '[[b]]']\n---\n", []got{{"a", '"', 2}, {"b", '\'', 2}}},
		{"a date is not a link", "---\ncreated: 2026-08-20\ndate: \"2026-08-20\"\n---\n", nil},
		{"unquoted is a nested list", "---\nrelated: [[a]]\n---\n", nil},
		{"invalid YAML", "---\nrelated: \"[[a]]\"\nbad: [\n---\n", nil},
		{"not the whole value", "---\nrelated: \"[[a]]\" b\n---\n", nil},
		{"in a block scalar", "---\nnote: |\n  x: \"[[a]]\"\n  - \"[[b]]\"\n---\n", nil},
		{"in a comment", "---\n# related: \"[[a]]\"\nx: 1 # \"[[b]]\"\n---\n", nil},
		{"escaped", "---\nrelated: \"[[a\\u0041]]\"\n---\n", nil},
		{"unclosed frontmatter is body", "---\nrelated: \"[[a]]\"\n", []got{{"a", 0, 2}}},
	}
	for _, c := range cases {
		var links []got
		for _, l := range Parse("x.md", []byte(c.src)).Links {
			links = append(links, got{l.Target, l.Quote, l.Line})
		}
		if !slices.Equal(links, c.want) {
			t.Errorf("%s: links %+v, want %+v", c.name, links, c.want)
		}
	}
}
