package vault

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// TestInfoOfCopies: what a note's info keeps (title, type, status, tags,
// each chunk's headings) reads as the parsed note, is copied out of the
// note's text (which the info must never keep alive) into one string, and
// a chunk's headings cannot be appended to over the next chunk's.
func TestInfoOfCopies(t *testing.T) {
	src := []byte("---\ntype: Project\nstatus: active\ntags: [go, db]\n---\n# Title\n\nintro #inline\n\n## One\n\ntext\n\n### Deep\n\nmore\n\n## Two\n\nend\n")
	n := markdown.ParseOwned("p/note.md", src)
	ni := infoOf(n, vaultfs.FileInfo{Path: "p/note.md"})
	if ni.title != n.Title || ni.typ != n.Type || ni.status != n.Status || !slices.Equal(ni.tags, n.Tags) {
		t.Fatalf("info %q %q %q %q, note %q %q %q %q", ni.title, ni.typ, ni.status, ni.tags, n.Title, n.Type, n.Status, n.Tags)
	}
	if len(ni.chunks) != len(n.Chunks) || len(n.Chunks) < 3 {
		t.Fatalf("%d chunks, note %d", len(ni.chunks), len(n.Chunks))
	}
	var kept []string
	for i, c := range n.Chunks {
		got := ni.chunks[i]
		if !slices.Equal(got.headings, c.Headings) || got.start != c.StartLine || got.end != c.EndLine {
			t.Errorf("chunk %d: %q %d-%d, note %q %d-%d", i, got.headings, got.start, got.end, c.Headings, c.StartLine, c.EndLine)
		}
		kept = append(kept, got.headings...)
	}
	kept = append(kept, ni.title, ni.typ, ni.status)
	kept = append(kept, ni.tags...)
	srcLo := uintptr(unsafe.Pointer(&src[0]))
	var lo, hi uintptr
	for _, s := range kept {
		if s == "" {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if p >= srcLo && p < srcLo+uintptr(len(src)) {
			t.Errorf("%q is a slice of the note's text", s)
		}
		if lo == 0 || p < lo {
			lo = p
		}
		hi = max(hi, p+uintptr(len(s)))
	}
	if hi-lo > 64 {
		t.Errorf("the info's strings span %d bytes: not one string", hi-lo)
	}
	for i := range ni.chunks[:len(ni.chunks)-1] {
		h := ni.chunks[i].headings
		if len(h) > 0 && cap(h) != len(h) {
			t.Errorf("chunk %d: headings have room to grow over the next chunk's", i)
		}
	}
}
