package markdown

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syntheticNote builds a realistic note: frontmatter, a title, sections with
// prose, wiki-links, embeds, markdown links, tags, a code fence, a table, a
// callout and block ids.
func syntheticNote() []byte {
	var b strings.Builder
	b.WriteString("---\ntype: wiki\nstatus: active\ntags: [go, search, \"#mcp\"]\ncreated: 2026-01-02\nupdated: 2026-03-04\naliases:\n  - Retry policy\n  - Backoff\n---\n")
	b.WriteString("# Retry with exponential backoff\n\n")
	b.WriteString("Notes on retrying failed calls in [[Go]] services. See [[02-wiki/patterns/cache-wrapper|the cache wrapper]] and #resilience.\n\n")
	for i := range 8 {
		fmt.Fprintf(&b, "## Section %d\n\n", i)
		b.WriteString("A retry loop must be bounded by a time budget, not by a count alone; the caller's context decides. ")
		b.WriteString("Jitter spreads the load so that clients do not retry in lockstep after an outage. ")
		fmt.Fprintf(&b, "Compare with [[Circuit breaker#Half-open state]] and [the RFC notes](docs/rfc%%20notes.md#section-%d). ^blk-%d\n\n", i, i)
		b.WriteString("- item one with `inline [[code]]` span\n- item two links [[Idempotency keys|keys]] #http/retries\n- item three, see https://example.com/#anchor\n\n")
		fmt.Fprintf(&b, "### Detail %d\n\n", i)
		b.WriteString("```go\nfor attempt := 0; ; attempt++ {\n\tif err := call(ctx); err == nil {\n\t\treturn nil\n\t}\n\t// [[not a link]] #not-a-tag\n\tsleep(backoff(attempt))\n}\n```\n\n")
		b.WriteString("| Setting | Value |\n| --- | --- |\n| base | [[Timeouts\\|100 ms]] |\n| max | 30 s |\n\n")
		b.WriteString("> [!note] Callout\n> Embedded diagram: ![[retry-diagram.png|400]]\n\n")
	}
	return []byte(b.String())
}

// typicalFrontmatter is a frontmatter block of the shape most notes have.
const typicalFrontmatter = "---\ntype: wiki\nstatus: active\ntags: [go, search, \"#mcp\"]\ncreated: 2026-01-02\nupdated: 2026-03-04\n" +
	"aliases:\n  - Retry policy\n  - Backoff\nsource: https://example.com/retry # where it came from\n---\n"

func BenchmarkParse(b *testing.B) {
	b.Run("synthetic", func(b *testing.B) {
		src := syntheticNote()
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			Parse("Retry with backoff.md", src)
		}
	})
	b.Run("typical-frontmatter", func(b *testing.B) {
		// A short note whose frontmatter is the common shape (scalars, a
		// date, a flow list, a block list): the frontmatter decoding
		// dominates.
		src := []byte(typicalFrontmatter + "# Retry policy\n\nBounded retries with jitter; see [[Backoff]] and #resilience.\n")
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			Parse("Retry policy.md", src)
		}
	})
	b.Run("alias-bomb", func(b *testing.B) {
		// A 10-level "billion laughs" frontmatter: refused without expansion.
		src, err := os.ReadFile(filepath.Join("testdata", "frontmatter-alias-bomb.md"))
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			Parse("bomb.md", src)
		}
	})
	b.Run("corpus", func(b *testing.B) {
		root := os.Getenv("VAULTMCP_CORPUS")
		if root == "" {
			b.Skip("VAULTMCP_CORPUS is not set (a vault folder to parse)")
		}
		type file struct {
			name string
			src  []byte
		}
		var files []file
		var size int64
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".md") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files = append(files, file{d.Name(), src})
			size += int64(len(src))
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		b.ReportMetric(float64(len(files)), "notes")
		for b.Loop() {
			for _, f := range files {
				Parse(f.name, f.src)
			}
		}
	})
}
