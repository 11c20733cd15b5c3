package links

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// TestPlanMovePropertyLinksRealVaults extends the move invariant to links in
// properties on the real vaults, which hardly use them: each note that has
// wiki-links gets up to three of them copied, as written, into its
// frontmatter (two items of a list, double-quoted, and one single-quoted
// text property), then the moves of TestPlanMoveRealVaults are made and
// checked, property links included.
func TestPlanMovePropertyLinksRealVaults(t *testing.T) {
	for _, dir := range corpusVaultDirs(t) {
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
			v := loadMemVault(t, dir)
			added := withPropertyLinks(v)
			props := 0
			for _, ls := range v.links {
				for _, l := range ls {
					if l.InProperty() {
						props++
					}
				}
			}
			if added > 0 && props < added {
				t.Fatalf("%d links copied into properties, %d parsed back as property links", added, props)
			}
			t.Logf("%d links copied into properties of %d notes", added, len(v.notes))
			checkCorpusMoves(t, v)
		})
	}
}

// withPropertyLinks copies up to three wiki-links of each note of v into its
// frontmatter (created when missing; a note whose frontmatter does not
// decode is left alone) and returns how many were copied.
func withPropertyLinks(v *memVault) int {
	added := 0
	for p, src := range v.notes {
		text := string(src)
		block, body := markdown.SplitFrontmatter(text)
		if block != "" {
			if fm, _ := markdown.ParseFrontmatter(block); fm == nil {
				continue
			}
		}
		eol := "\n"
		if strings.Contains(text, "\r\n") {
			eol = "\r\n"
		}
		var texts []string
		for _, l := range v.links[p] {
			if l.Kind == markdown.MarkdownLink || l.InProperty() || len(texts) == 3 {
				continue
			}
			lt := text[l.Start:l.End]
			if strings.ContainsAny(lt, "\"\\'\r\n") {
				continue
			}
			texts = append(texts, lt)
		}
		if len(texts) == 0 {
			continue
		}
		var props strings.Builder
		props.WriteString("vaultmcp-test-links:" + eol)
		for i, lt := range texts {
			if i == 2 {
				props.WriteString("vaultmcp-test-up: '" + lt + "'" + eol)
				continue
			}
			props.WriteString(`  - "` + lt + `"` + eol)
		}
		var out string
		if block == "" {
			out = "---" + eol + props.String() + "---" + eol + text
		} else {
			first := strings.Index(block, "\n") + 1 // after the opening delimiter line
			out = block[:first] + props.String() + block[first:] + body
		}
		v.setNote(p, []byte(out))
		added += len(texts)
	}
	return added
}
