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
// one ("v1.2.md" and "v1.2"), empty targets, folders, few links and many;
// the same with one linkScratch for every note, as a SetNotes worker has
// (a note after one with more links or fewer, after one whose map was
// dropped for its size).
func TestLinkKeyCountsPerLink(t *testing.T) {
	names := []string{"", "v1.2", "v1.2.md", "a/v1.2", "img.png", "img.png.md", "topic", "Topic", "topic.md",
		"b/c", "c", "dir/", "x.y.z", "x.y", "notes.markdown", "Café", "café.md", " Spaced "}
	for i := range 3000 { // names enough to fill a map past bigScratch
		names = append(names, fmt.Sprintf("n%d", i))
	}
	r := rand.New(rand.NewSource(1))
	var sc linkScratch
	for _, n := range []int{0, 1, 5, 32, 33, 200, 33, 5, 3000, 40, 0, 200} {
		for round := range 20 {
			var links []markdown.Link
			for range n {
				// The first names, the few above, most of the time.
				k := r.Intn(18)
				if r.Intn(4) == 0 {
					k = r.Intn(len(names))
				}
				links = append(links, wl(names[k], 1))
			}
			text, st := storeLinks(links)
			if stext, sst := sc.storeLinks(links); stext != text || fmt.Sprint(sst) != fmt.Sprint(st) {
				t.Fatalf("%d links, round %d: stored with a scratch %q %v, without %q %v", n, round, stext, sst, text, st)
			}
			reused := map[string]int32{}
			for _, kc := range sc.linkKeyCounts(text, st) {
				reused[kc.key] = kc.c
			}
			want := map[string]int32{}
			for i := range links {
				k1, k2 := LinkKeys(links[i].Target)
				for _, k := range []string{k1, k2} {
					if k != "" {
						want[k]++
					}
				}
			}
			got := map[string]int32{}
			for _, kc := range linkKeyCounts(text, st) {
				if _, dup := got[kc.key]; dup {
					t.Fatalf("%d links, round %d: key %q given twice", n, round, kc.key)
				}
				got[kc.key] = kc.c
			}
			if !maps.Equal(got, want) {
				t.Fatalf("%d links, round %d: got %v, want %v", n, round, got, want)
			}
			if !maps.Equal(reused, want) {
				t.Fatalf("%d links, round %d, one scratch for all: got %v, want %v", n, round, reused, want)
			}
		}
	}
}

// TestStoreLinksOneText: links stored read as the links given, with their
// folded targets; their strings are copied, each once, into the note's one
// link text (an alias or a folded target equal to the target shares its
// span), none a slice of the note's source.
func TestStoreLinksOneText(t *testing.T) {
	src := "see [[Topic#Intro|the topic]] and [[a/x]] and [[Topic]] and [[b|b]] and [[#Local]] and [[ Café ]] and [[c|C]]"
	var links []markdown.Link
	for i, l := range []struct{ target, anchor, alias string }{
		{"Topic", "Intro", "the topic"}, {"a/x", "", ""}, {"Topic", "", ""}, {"b", "", "b"}, {"", "Local", ""},
		{" Café ", "", ""}, {"c", "", "C"},
	} {
		// The link's strings are slices of the source, as the parser gives them.
		ml := wl(in(src, l.target), i+1)
		ml.Anchor, ml.Alias, ml.HasAlias = in(src, l.anchor), in(src, l.alias), l.alias != ""
		links = append(links, ml)
	}
	text, st := storeLinks(links)
	for i := range st {
		if got, want := fmt.Sprint(st[i].link(text)), fmt.Sprint(links[i]); got != want {
			t.Errorf("link %d: stored %s, given %s", i, got, want)
		}
		if got, want := st[i].folded.of(text), foldTarget(links[i].Target); got != want {
			t.Errorf("link %d: folded %q, want %q", i, got, want)
		}
	}
	if st[3].alias != st[3].target || st[0].folded == st[0].target || st[1].folded != st[1].target {
		t.Errorf("spans not shared where the strings are equal (or shared where not): %+v", st)
	}
	// Each string once, in link order: a target, its anchor, its alias and
	// its folded form where they differ from the target.
	if want := "Topic" + "Intro" + "the topic" + "topic" + "a/x" + "Topic" + "topic" + "b" + "Local" + " Café " + "café" + "c" + "C"; text != want {
		t.Errorf("link text %q, want %q", text, want)
	}
	if d := unsafe.StringData(text); uintptr(unsafe.Pointer(d)) >= uintptr(unsafe.Pointer(unsafe.StringData(src))) &&
		uintptr(unsafe.Pointer(d)) < uintptr(unsafe.Pointer(unsafe.StringData(src)))+uintptr(len(src)) {
		t.Errorf("the link text is a slice of the note's source")
	}
}

// in returns the slice of text that reads s ("" for "").
func in(text, s string) string {
	i := strings.Index(text, s)
	if s == "" || i < 0 {
		return ""
	}
	return text[i : i+len(s)]
}
