package markdown

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic and that the result keeps
// its invariants: offsets within bounds and ordered, lines in range, chunks
// covering increasing, non-overlapping line ranges (see checkInvariants).
func FuzzParse(f *testing.F) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range inputs {
		src, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add(syntheticNote())
	for _, s := range []string{
		"", "---", "---\n", "---\n---", "\xef\xbb\xbf", "\r\n", "[[", "]]", "![[x|", "[x](", "[x](<", "`", "```", "> ```\n>",
		"#", "# #", "^", "a ^b", "[[a\\|b]]", "[a](b \"c\")", "---\na: &x [*x]\n---\n", "---\n\t\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		n := Parse("fuzz.md", src)
		checkInvariants(t, src, n)
	})
}
