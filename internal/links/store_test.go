package links

import (
	"fmt"
	"maps"
	"math/rand"
	"strings"
	"testing"
	"unsafe"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// TestLinkKeyCountsPerLink: the keys of a note's links, counted at once,
// are those foldedKeys gives link by link, each once with the number of
// links depending on it: dotted names whose key is another name's suffixed
// one ("v1.2.md" and "v1.2"), empty targets, folders, few links and many.
func TestLinkKeyCountsPerLink(t *testing.T) {
	names := []string{"", "v1.2", "v1.2.md", "a/v1.2", "img.png", "img.png.md", "topic", "Topic", "topic.md",
		"b/c", "c", "dir/", "x.y.z", "x.y", "notes.markdown", "Café", "café.md"}
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 5, 32, 33, 200} {
		for round := range 20 {
			var links []markdown.Link
			for range n {
				links = append(links, wl(names[r.Intn(len(names))], 1))
			}
			st := storeLinks(links, false)
			want := map[string]int32{}
			for i := range st {
				k1, k2 := foldedKeys(st[i].folded)
				for _, k := range []string{k1, k2} {
					if k != "" {
						want[k]++
					}
				}
			}
			got := map[string]int32{}
			for _, kc := range linkKeyCounts(st) {
				if _, dup := got[kc.key]; dup {
					t.Fatalf("%d links, round %d: key %q given twice", n, round, kc.key)
				}
				got[kc.key] = kc.c
			}
			if !maps.Equal(got, want) {
				t.Fatalf("%d links, round %d: got %v, want %v", n, round, got, want)
			}
		}
	}
}

// TestStoreLinksOneString: links stored with their strings copied read as
// the links given (an alias equal to its target shares it), their strings
// are one allocation for the note, and none is a slice of the note's text.
func TestStoreLinksOneString(t *testing.T) {
	text := "see [[Topic#Intro|the topic]] and [[a/x]] and [[Topic]] and [[b|b]] and [[#Local]]"
	var links []markdown.Link
	for i, l := range []struct{ target, anchor, alias string }{
		{"Topic", "Intro", "the topic"}, {"a/x", "", ""}, {"Topic", "", ""}, {"b", "", "b"}, {"", "Local", ""},
	} {
		// The link's strings are slices of the text, as the parser gives them.
		ml := wl(in(text, l.target), i+1)
		ml.Anchor, ml.Alias, ml.HasAlias = in(text, l.anchor), in(text, l.alias), l.alias != ""
		links = append(links, ml)
	}
	for _, keep := range []bool{false, true} {
		st := storeLinks(links, keep)
		for i := range st {
			if got, want := fmt.Sprint(st[i].link()), fmt.Sprint(links[i]); got != want {
				t.Errorf("keep %v, link %d: stored %s, given %s", keep, i, got, want)
			}
		}
	}
	st := storeLinks(links, false)
	if st[3].alias != st[3].target || unsafeData(st[3].alias) != unsafeData(st[3].target) {
		t.Errorf("alias equal to its target not shared")
	}
	base := unsafeData(st[0].target)
	for i := range st {
		for _, s := range []string{st[i].target, st[i].anchor, st[i].alias} {
			if s == "" {
				continue
			}
			if d := unsafeData(s) - base; d < 0 || d > 64 {
				t.Errorf("link %d: %q not in the note's one string", i, s)
			}
			if d := unsafeData(s) - unsafeData(text); d >= 0 && d < len(text) {
				t.Errorf("link %d: %q is a slice of the note's text", i, s)
			}
		}
	}
}

func unsafeData(s string) int { return int(uintptr(unsafe.Pointer(unsafe.StringData(s)))) }

// in returns the slice of text that reads s ("" for "").
func in(text, s string) string {
	i := strings.Index(text, s)
	if s == "" || i < 0 {
		return ""
	}
	return text[i : i+len(s)]
}
