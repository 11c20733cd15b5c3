package markdown

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestThrowawayCorpus(t *testing.T) {
	root := os.Getenv("CORPUS")
	var files, wiki, embed, md, fm, diags, tags, chunks, heads, ids, bytes int
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		src, _ := os.ReadFile(p)
		bytes += len(src)
		n := Parse(filepath.Base(p), src)
		checkInvariants(t, src, n)
		files++
		for _, l := range n.Links {
			switch l.Kind {
			case WikiLink:
				wiki++
			case Embed:
				embed++
			default:
				md++
			}
		}
		if n.Frontmatter != nil {
			fm++
		}
		diags += len(n.Diagnostics)
		tags += len(n.Tags)
		chunks += len(n.Chunks)
		heads += len(n.Headings)
		ids += len(n.BlockIDs)
		return nil
	})
	t.Logf("%-22s notes=%d MB=%.1f wiki=%d embed=%d mdlinks=%d frontmatter=%d diagnostics=%d tags=%d chunks=%d headings=%d blockids=%d",
		strings.TrimPrefix(root, "/work/shared/corpora/"), files, float64(bytes)/1e6, wiki, embed, md, fm, diags, tags, chunks, heads, ids)
}
