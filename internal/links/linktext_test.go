package links

import (
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// alias is a wiki-link [[target|text]] on a line.
func alias(target, text string, line int) markdown.Link {
	l := wl(target, line)
	l.Alias, l.HasAlias = text, true
	return l
}

// A note's link texts are the aliases and markdown link texts of the links
// of other notes resolving to it, grouped by folded form, each source note
// counted once; links without a text, with a text without letters (an
// image size) and links of the note to itself do not count.
func TestLinkTexts(t *testing.T) {
	g := NewGraph()
	g.AddFile("props.md")
	g.SetNote("props.md", []markdown.Link{alias("props", "myself", 1)})
	g.SetNote("a.md", []markdown.Link{alias("props", "Front Matter", 1), alias("props", "front-matter", 2), wl("props", 3), alias("props", "100", 4)})
	g.SetNote("b.md", []markdown.Link{alias("props", "front matter", 1), mdl("props.md", 2)})
	embed := alias("props", "metadata", 1)
	embed.Kind = markdown.Embed
	g.SetNote("c.md", []markdown.Link{embed, alias("elsewhere", "front matter", 2)})
	want := []Text{{"Front Matter", 2}, {"metadata", 1}, {"text", 1}}
	if got := g.LinkTexts("props.md"); !reflect.DeepEqual(got, want) {
		t.Fatalf("LinkTexts = %v, want %v", got, want)
	}
	all := map[string][]Text{}
	g.EachLinkTexts(func(p string, texts []Text) { all[p] = texts })
	if !reflect.DeepEqual(all, map[string][]Text{"props.md": want}) {
		t.Fatalf("EachLinkTexts = %v", all)
	}
	if !g.LinksTo("a.md", "props.md") || g.LinksTo("props.md", "a.md") || g.LinksTo("nobody.md", "a.md") {
		t.Error("LinksTo")
	}
	for in, want := range map[string]string{"  Front_Matter-x ": "front matter x", "ÉTÉ": "été", "a\t\nb": "a b", "--": "", "A - B": "a b", "x\u00a0y": "x y"} {
		if got := FoldText(in); got != want {
			t.Errorf("FoldText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TakeTextChanges names every note whose link texts changed, whatever the
// sequence of note, file and folder changes (a rename is a removal and an
// addition; a new file can steal the resolution of links elsewhere), and
// EachLinkTexts always agrees with LinkTexts.
func TestTextChangesAreComplete(t *testing.T) {
	defer func(n, procs int) { eachTextsParallelMin = n; runtime.GOMAXPROCS(procs) }(eachTextsParallelMin, runtime.GOMAXPROCS(3))
	paths := []string{"note.md", "a/note.md", "b/note.md", "x.md", "a/x.md", "topic.md", "c/topic.md", "img.png"}
	targets := []string{"note", "a/note", "x", "topic", "c/topic", "img.png", "missing"}
	texts := []string{"alpha", "Alpha", "beta", "gamma delta", "42", ""}
	for seed := int64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewSource(seed))
		g := NewGraph()
		prev := map[string][]Text{}
		randomLinks := func() []markdown.Link {
			var out []markdown.Link
			for i := range rng.Intn(5) {
				tg, tx := targets[rng.Intn(len(targets))], texts[rng.Intn(len(texts))]
				if tx == "" {
					out = append(out, wl(tg, i+1))
				} else {
					out = append(out, alias(tg, tx, i+1))
				}
			}
			return out
		}
		for step := range 80 {
			p := paths[rng.Intn(len(paths))]
			var op string
			switch k := rng.Intn(10); {
			case k < 5 && strings.HasSuffix(p, ".md"):
				op = "SetNote " + p
				g.SetNote(p, randomLinks())
			case k < 6:
				op = "AddFile " + p
				g.AddFile(p)
			case k < 7:
				var batch []NoteLinks
				for range 1 + rng.Intn(4) {
					if q := paths[rng.Intn(len(paths))]; strings.HasSuffix(q, ".md") {
						batch = append(batch, NoteLinks{Path: q, Links: randomLinks()})
					}
				}
				op = fmt.Sprintf("SetNotes %d", len(batch))
				g.SetNotes(batch)
			case k < 9:
				op = "Remove " + p
				g.Remove(p)
			default:
				op = "RemoveTree a"
				g.RemoveTree("a")
			}
			changed := g.TakeTextChanges()
			now := map[string][]Text{}
			for _, n := range g.Notes() {
				if tx := g.LinkTexts(n); tx != nil {
					now[n] = tx
				}
			}
			for _, n := range append(g.Notes(), "gone.md") {
				if !reflect.DeepEqual(now[n], prev[n]) && !slices.Contains(changed, n) {
					t.Fatalf("seed %d step %d (%s): texts of %s changed %v -> %v, not reported (%v)", seed, step, op, n, prev[n], now[n], changed)
				}
			}
			for n := range prev {
				if _, ok := now[n]; !ok && !slices.Contains(changed, n) {
					t.Fatalf("seed %d step %d (%s): texts of %s vanished, not reported", seed, step, op, n)
				}
			}
			// On one worker and shared out on three (by target): the same
			// texts, in path order.
			for _, min := range []int{1 << 30, 0} {
				eachTextsParallelMin = min
				each, order := map[string][]Text{}, []string{}
				g.EachLinkTexts(func(p string, tx []Text) { each[p], order = tx, append(order, p) })
				if !reflect.DeepEqual(each, now) || !slices.IsSorted(order) || len(order) != len(each) {
					t.Fatalf("seed %d step %d (%s), parallel from %d: EachLinkTexts %v in order %v, LinkTexts %v", seed, step, op, min, each, order, now)
				}
			}
			prev = now
		}
	}
}

func TestFoldedFastPath(t *testing.T) {
	for _, s := range []string{"", "a", "front matter", "a  b", " a", "a ", "A", "a-b", "a_b", "é", "a\tb", "x9 y"} {
		if got, want := folded(s), FoldText(s) == s; got && !want {
			t.Errorf("folded(%q) = true, but FoldText gives %q", s, FoldText(s))
		}
	}
	if !folded("front matter") || folded("Front") {
		t.Error("fast path not taken / taken wrongly")
	}
}

// TrackTextChanges(false) empties the record of changed texts and keeps it
// empty whatever changes; back on, changes are recorded again.
func TestTrackTextChanges(t *testing.T) {
	g := NewGraph()
	g.AddFile("props.md")
	g.SetNote("a.md", []markdown.Link{alias("props", "front matter", 1)})
	g.TrackTextChanges(false)
	g.SetNote("b.md", []markdown.Link{alias("props", "metadata", 1)})
	g.SetNotes([]NoteLinks{{Path: "c.md", Links: []markdown.Link{alias("props", "fields", 1)}}})
	g.AddFile("other/props.md")
	g.Remove("a.md")
	if got := g.TakeTextChanges(); got != nil {
		t.Fatalf("untracked: TakeTextChanges = %v", got)
	}
	if got := g.LinkTexts("props.md"); len(got) != 2 {
		t.Fatalf("untracked changes still change the texts: %v", got)
	}
	g.TrackTextChanges(true)
	g.SetNote("d.md", []markdown.Link{alias("props", "settings", 1)})
	if got := g.TakeTextChanges(); !slices.Equal(got, []string{"props.md"}) {
		t.Fatalf("tracked again: TakeTextChanges = %v", got)
	}
}
