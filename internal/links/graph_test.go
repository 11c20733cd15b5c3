package links

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// wl builds a wiki-link on the given line; offsets are derived from the line
// so links stay distinguishable.
func wl(target string, line int) markdown.Link {
	return markdown.Link{Kind: markdown.WikiLink, Target: target, Line: line, Start: line * 100, End: line*100 + len(target) + 4,
		TargetStart: line*100 + 2, TargetEnd: line*100 + 2 + len(target)}
}

func mdl(target string, line int) markdown.Link {
	l := wl(target, line)
	l.Kind = markdown.MarkdownLink
	l.Alias, l.HasAlias = "text", true
	return l
}

func edgeTargets(edges []Edge) []string {
	out := make([]string, len(edges))
	for i, e := range edges {
		out[i] = e.To
	}
	return out
}

func edgeSources(edges []Edge) []string {
	out := make([]string, len(edges))
	for i, e := range edges {
		out[i] = fmt.Sprintf("%s:%d", e.From, e.Link.Line)
	}
	return out
}

func TestGraphOutKeepsLinksAndOrder(t *testing.T) {
	g := NewGraph()
	g.AddFile("img.png")
	g.AddFile("b.md")
	links := []markdown.Link{
		wl("b", 3),
		{Kind: markdown.Embed, Target: "img.png", Anchor: "", Line: 4, Start: 10, End: 23, TargetStart: 13, TargetEnd: 20},
		{Kind: markdown.WikiLink, Target: "b", Anchor: "Setup#Retry", Alias: "see b", HasAlias: true, Line: 5, Start: 30, End: 60, TargetStart: 32, TargetEnd: 33},
		wl("missing", 6),
		{Kind: markdown.WikiLink, Target: "", Anchor: "^blk", Line: 7, Start: 70, End: 80, TargetStart: 72, TargetEnd: 72},
		mdl("b.md", 8),
	}
	g.SetNote("a.md", links)
	out := g.Out("a.md")
	if len(out) != len(links) {
		t.Fatalf("Out returned %d edges, want %d", len(out), len(links))
	}
	wantTo := []string{"b.md", "img.png", "b.md", "", "a.md", "b.md"}
	if got := edgeTargets(out); !slices.Equal(got, wantTo) {
		t.Errorf("Out targets = %q, want %q", got, wantTo)
	}
	for i, e := range out {
		if e.From != "a.md" {
			t.Errorf("edge %d From = %q", i, e.From)
		}
		if !reflect.DeepEqual(e.Link, links[i]) {
			t.Errorf("edge %d Link = %+v, want %+v", i, e.Link, links[i])
		}
		if e.Broken() != (wantTo[i] == "") {
			t.Errorf("edge %d Broken() = %v", i, e.Broken())
		}
	}
	if got := g.Out("unknown.md"); got != nil {
		t.Errorf("Out(unknown) = %v, want nil", got)
	}
	if s := g.Stats(); s != (Stats{Files: 3, Notes: 2, Links: 6, Broken: 1}) {
		t.Errorf("Stats = %+v", s)
	}
}

func TestGraphBacklinksAndNeighbors(t *testing.T) {
	g := NewGraph()
	g.AddFile("pic.png")
	g.AddFile("lonely.md")
	g.SetNote("t.md", []markdown.Link{wl("a", 1), wl("pic.png", 2), wl("", 3), wl("t", 4)})
	g.SetNote("b.md", []markdown.Link{wl("t", 9), wl("T", 2), wl("t", 5)})
	g.SetNote("a.md", []markdown.Link{wl("t", 7), wl("pic.png", 1)})
	g.SetNote("c/x.md", []markdown.Link{mdl("../t.md", 1)})

	bl := g.Backlinks("t.md")
	want := []string{"a.md:7", "b.md:2", "b.md:5", "b.md:9", "c/x.md:1"}
	if got := edgeSources(bl); !slices.Equal(got, want) {
		t.Errorf("Backlinks(t.md) = %q, want %q (sorted by From then Line, self-links excluded)", got, want)
	}
	for _, e := range bl {
		if e.To != "t.md" {
			t.Errorf("backlink edge To = %q", e.To)
		}
	}
	if got, want := g.BacklinkSources("t.md"), []string{"a.md", "b.md", "c/x.md"}; !slices.Equal(got, want) {
		t.Errorf("BacklinkSources(t.md) = %q, want %q", got, want)
	}
	if got, want := edgeSources(g.Backlinks("pic.png")), []string{"a.md:1", "t.md:2"}; !slices.Equal(got, want) {
		t.Errorf("Backlinks(pic.png) = %q, want %q", got, want)
	}
	if got := g.Backlinks("lonely.md"); len(got) != 0 {
		t.Errorf("Backlinks(lonely.md) = %v, want none", got)
	}
	// t links to a (note), pic.png (attachment: not a neighbour) and itself;
	// a, b and c/x link to t.
	if got, want := g.Neighbors("t.md"), []string{"a.md", "b.md", "c/x.md"}; !slices.Equal(got, want) {
		t.Errorf("Neighbors(t.md) = %q, want %q", got, want)
	}
	if got, want := g.Neighbors("pic.png"), []string{"a.md", "t.md"}; !slices.Equal(got, want) {
		t.Errorf("Neighbors(pic.png) = %q, want %q", got, want)
	}
	if got := g.Neighbors("lonely.md"); len(got) != 0 {
		t.Errorf("Neighbors(lonely.md) = %q, want none", got)
	}
	if got, want := g.Notes(), []string{"a.md", "b.md", "c/x.md", "lonely.md", "t.md"}; !slices.Equal(got, want) {
		t.Errorf("Notes() = %q, want %q", got, want)
	}
	if !g.IsNote("lonely.md") || g.IsNote("pic.png") {
		t.Error("IsNote: lonely.md must be a note (added .md file), pic.png must not")
	}
}

func TestGraphIncrementalUpdates(t *testing.T) {
	g := NewGraph()
	g.SetNote("a/x.md", []markdown.Link{wl("topic", 1), wl("b/topic", 2), wl("img.png", 3)})
	if got := edgeTargets(g.Out("a/x.md")); !slices.Equal(got, []string{"", "", ""}) {
		t.Fatalf("all links broken at first, got %q", got)
	}

	g.AddFile("b/topic.md")
	if got, want := edgeTargets(g.Out("a/x.md")), []string{"b/topic.md", "b/topic.md", ""}; !slices.Equal(got, want) {
		t.Fatalf("after adding b/topic.md: %q, want %q", got, want)
	}
	if got := len(g.Backlinks("b/topic.md")); got != 2 {
		t.Errorf("Backlinks(b/topic.md) = %d edges, want 2", got)
	}

	// A same-folder candidate appears: the bare link moves to it, the path link stays.
	g.AddFile("a/topic.md")
	if got, want := edgeTargets(g.Out("a/x.md")), []string{"a/topic.md", "b/topic.md", ""}; !slices.Equal(got, want) {
		t.Fatalf("after adding a/topic.md: %q, want %q", got, want)
	}
	if got, want := edgeSources(g.Backlinks("a/topic.md")), []string{"a/x.md:1"}; !slices.Equal(got, want) {
		t.Errorf("Backlinks(a/topic.md) = %q, want %q", got, want)
	}
	if got, want := edgeSources(g.Backlinks("b/topic.md")), []string{"a/x.md:2"}; !slices.Equal(got, want) {
		t.Errorf("Backlinks(b/topic.md) = %q, want %q", got, want)
	}

	// The attachment appears, then the target note disappears.
	g.AddFile("assets/img.png")
	g.Remove("a/topic.md")
	if got, want := edgeTargets(g.Out("a/x.md")), []string{"b/topic.md", "b/topic.md", "assets/img.png"}; !slices.Equal(got, want) {
		t.Fatalf("after removing a/topic.md: %q, want %q", got, want)
	}
	if got := g.Backlinks("a/topic.md"); len(got) != 0 {
		t.Errorf("Backlinks of a removed file = %v", got)
	}

	// Replacing the note's links drops the old ones from every index.
	g.SetNote("a/x.md", []markdown.Link{wl("img.png", 1)})
	if got := g.Backlinks("b/topic.md"); len(got) != 0 {
		t.Errorf("Backlinks(b/topic.md) after SetNote = %v, want none", got)
	}
	// AddFile on a known note keeps its links.
	g.AddFile("a/x.md")
	if got := g.Out("a/x.md"); len(got) != 1 {
		t.Errorf("AddFile on an existing note dropped its links: %v", got)
	}

	// Removing the linking note drops its backlinks.
	g.Remove("a/x.md")
	if got := g.Backlinks("assets/img.png"); len(got) != 0 {
		t.Errorf("Backlinks after removing the source = %v", got)
	}
	if g.IsNote("a/x.md") || g.Resolver().Has("a/x.md") {
		t.Error("a removed note is still known")
	}
	if len(g.byKey) != 0 {
		t.Errorf("index not empty: %v", g.byKey)
	}
}

func TestGraphRemoveTreeAndHidden(t *testing.T) {
	g := NewGraph()
	g.SetNote("root.md", []markdown.Link{wl("inner", 1), wl("deeper", 2), wl("dirx", 3)})
	g.AddFile("dir/inner.md")
	g.AddFile("dir/sub/deeper.md")
	g.AddFile("dirx.md")
	g.SetNote(".obsidian/hidden.md", []markdown.Link{wl("root", 1)})
	g.AddFile("dir/.git/objects/x")
	if g.IsNote(".obsidian/hidden.md") || len(g.Backlinks("root.md")) != 0 {
		t.Error("a hidden note must be ignored")
	}
	gone := g.RemoveTree("dir/")
	if want := []string{"dir/inner.md", "dir/sub/deeper.md"}; !slices.Equal(gone, want) {
		t.Errorf("RemoveTree(dir/) = %q, want %q", gone, want)
	}
	if got, want := edgeTargets(g.Out("root.md")), []string{"", "", "dirx.md"}; !slices.Equal(got, want) {
		t.Errorf("after RemoveTree: %q, want %q", got, want)
	}
	if got := g.RemoveTree(""); got != nil {
		t.Errorf("RemoveTree(\"\") = %q, want nothing", got)
	}
}

// graphState is everything observable about a graph, for comparisons.
type graphState struct {
	Notes     []string
	Out       map[string][]Edge
	Backlinks map[string][]Edge
	Neighbors map[string][]string
	Stats     Stats
}

func snapshot(g *Graph, probe []string) graphState {
	s := graphState{
		Notes:     g.Notes(),
		Out:       map[string][]Edge{},
		Backlinks: map[string][]Edge{},
		Neighbors: map[string][]string{},
		Stats:     g.Stats(),
	}
	for _, n := range s.Notes {
		s.Out[n] = g.Out(n)
	}
	for _, p := range probe {
		s.Backlinks[p] = g.Backlinks(p)
		s.Neighbors[p] = g.Neighbors(p)
	}
	return s
}

// TestGraphIncrementalEqualsRebuild applies random sequences of adds, removes
// and note updates and checks after each step that the incremental graph is
// exactly the graph rebuilt from scratch from the same files and notes, and
// that every edge agrees with the resolver.
func TestGraphIncrementalEqualsRebuild(t *testing.T) {
	paths := []string{
		"note.md", "Note.md", "a/note.md", "a/b/note.md", "b/note.md", "a/x.md", "b/x.md", "x.md",
		"a/topic.md", "b/topic.md", "c/d/topic.md", "topic.md", "v1.2.md", "v1.2", "img.png", "a/img.png",
		"a/b/c.md", "c.md", "c/c.md", "ab/note.md", "a/sub/note.md", "a/sub/x.md",
	}
	targets := []string{
		"note", "NOTE", "a/note", "b/note", "./note", "../note", "../../note", "/note", "/a/note", "note.md",
		"x", "topic", "d/topic", "./topic", "v1.2", "v1.2.md", "img.png", "img", "c", "c/c", "b/c", "sub/note",
		"", "missing", "a", "Topic.MD",
	}
	notePaths := []string{}
	for _, p := range paths {
		if strings.HasSuffix(p, ".md") {
			notePaths = append(notePaths, p)
		}
	}
	probe := append(slices.Clone(paths), "nothing.md")

	for seed := int64(1); seed <= 16; seed++ {
		rng := rand.New(rand.NewSource(seed))
		g := NewGraph()
		files := map[string]bool{}            // files present
		notes := map[string][]markdown.Link{} // notes with links set
		randomLinks := func() []markdown.Link {
			n := rng.Intn(5)
			if rng.Intn(8) == 0 { // a map of content: its link keys are counted through a map
				n = 33 + rng.Intn(20)
			}
			links := make([]markdown.Link, n)
			for i := range links {
				target := targets[rng.Intn(len(targets))]
				if rng.Intn(3) == 0 {
					links[i] = mdl(target, i+1)
				} else {
					links[i] = wl(target, i+1)
				}
			}
			return links
		}
		somePaths := func() []string {
			out := make([]string, 1+rng.Intn(8))
			for i := range out {
				out[i] = paths[rng.Intn(len(paths))]
			}
			return out
		}
		for step := range 60 {
			var op string
			switch k := rng.Intn(12); {
			case k == 10:
				// RemoveFiles: several at once (a folder, a checkout),
				// repeats included.
				ps := somePaths()
				op = fmt.Sprintf("RemoveFiles %q", ps)
				g.RemoveFiles(ps)
				for _, p := range ps {
					delete(files, p)
					delete(notes, p)
				}
			case k == 11:
				ps := somePaths()
				op = fmt.Sprintf("AddFiles %q", ps)
				g.AddFiles(ps)
				for _, p := range ps {
					files[p] = true
				}
			case k < 3:
				p := paths[rng.Intn(len(paths))]
				op = "AddFile " + p
				g.AddFile(p)
				files[p] = true
			case k == 3:
				// SetNotes: a batch, large enough to go parallel at
				// times, paths repeated (the last wins).
				batch := make([]NoteLinks, 1+rng.Intn(300))
				for i := range batch {
					batch[i] = NoteLinks{Path: notePaths[rng.Intn(len(notePaths))], Links: randomLinks()}
				}
				op = fmt.Sprintf("SetNotes %d notes", len(batch))
				g.SetNotes(batch)
				for _, it := range batch {
					files[it.Path] = true
					notes[it.Path] = it.Links
				}
			case k < 7:
				p := notePaths[rng.Intn(len(notePaths))]
				links := randomLinks()
				op = fmt.Sprintf("SetNote %s %d links", p, len(links))
				g.SetNote(p, links)
				files[p] = true
				notes[p] = links
			default:
				p := paths[rng.Intn(len(paths))]
				op = "Remove " + p
				g.Remove(p)
				delete(files, p)
				delete(notes, p)
			}

			fresh := NewGraph()
			for p := range files {
				fresh.AddFile(p)
			}
			for p, links := range notes {
				fresh.SetNote(p, links)
			}
			got, want := snapshot(g, probe), snapshot(fresh, probe)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d (%s): incremental graph differs from rebuilt graph\n got: %+v\nwant: %+v", seed, step, op, got, want)
			}
			for n, edges := range got.Out {
				for _, e := range edges {
					to, _ := g.Resolver().ResolveLink(n, e.Link)
					if to != e.To {
						t.Fatalf("seed %d step %d: edge %s -> %q resolves to %q now", seed, step, n, e.Link.Target, to)
					}
				}
			}
		}
	}
}

func TestGraphAllEdges(t *testing.T) {
	g := NewGraph()
	g.SetNote("b.md", []markdown.Link{wl("a", 1), wl("zz", 2)})
	g.SetNote("a.md", []markdown.Link{wl("b", 1)})
	g.AddFile("c.md")
	var got []string
	g.AllEdges(func(e Edge) bool {
		got = append(got, e.From+">"+e.To)
		return true
	})
	if want := []string{"a.md>b.md", "b.md>a.md", "b.md>"}; !slices.Equal(got, want) {
		t.Errorf("AllEdges = %q, want %q", got, want)
	}
	n := 0
	g.AllEdges(func(e Edge) bool {
		n++
		return false
	})
	if n != 1 {
		t.Errorf("AllEdges did not stop when fn returned false: %d calls", n)
	}
}

// TestGraphConcurrent exercises readers and writers together; run with -race.
func TestGraphConcurrent(t *testing.T) {
	g := NewGraph()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := fmt.Sprintf("d%d/n%d.md", w, i%10)
				g.SetNote(p, []markdown.Link{wl(fmt.Sprintf("n%d", (i+1)%10), 1), wl("shared", 2)})
				if i%7 == 0 {
					g.Remove(p)
				}
				if i%5 == 0 {
					g.AddFile("shared.md")
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				_ = g.Backlinks("shared.md")
				_ = g.Neighbors("d0/n1.md")
				_, _ = g.Resolver().Resolve("d1/x.md", "n3")
				g.AllEdges(func(e Edge) bool { return e.From != "" })
				_ = g.Stats()
			}
		}()
	}
	wg.Wait()
	// Every edge still agrees with the resolver once writers are done.
	g.AllEdges(func(e Edge) bool {
		if to, _ := g.Resolver().ResolveLink(e.From, e.Link); to != e.To {
			t.Errorf("edge %s -> %q is %q, resolver says %q", e.From, e.Link.Target, e.To, to)
		}
		return true
	})
}

// AddFiles leaves the graph exactly as AddFile for each file does: the
// same notes, edges (links resolved again when a file takes them over),
// link texts and changes of link texts, into an empty graph and into one
// with links waiting for their files.
func TestAddFilesEqualsAddFile(t *testing.T) {
	files := []string{"a.md", "x/a.md", "x/y/b.md", "B.md", "img.png", "x/img.png", ".hidden/c.md", "c.markdown", "a.md"}
	for _, withLinks := range []bool{false, true} {
		state := func(batch bool) string {
			g := NewGraph()
			if withLinks {
				g.SetNote("n.md", []markdown.Link{alias("a", "first", 1), wl("b", 2), mdl("x/img.png", 3), alias("c", "see", 4)})
				g.SetNote("x/m.md", []markdown.Link{wl("a", 1), alias("img.png", "picture", 2)})
				g.TakeTextChanges()
			}
			if batch {
				g.AddFiles(files)
			} else {
				for _, p := range files {
					g.AddFile(p)
				}
			}
			var out strings.Builder
			g.AllEdges(func(e Edge) bool {
				fmt.Fprintf(&out, "%s -> %s (%s)\n", e.From, e.To, e.Link.Target)
				return true
			})
			fmt.Fprintf(&out, "notes %v files %v changes %v\n", g.Notes(), g.Resolver().Files(), g.TakeTextChanges())
			for _, p := range g.Resolver().Files() {
				fmt.Fprintf(&out, "%s texts %v backlinks %v\n", p, g.LinkTexts(p), g.BacklinkSources(p))
			}
			return out.String()
		}
		if one, all := state(false), state(true); one != all {
			t.Errorf("with links %v:\nAddFile each:\n%s\nAddFiles:\n%s", withLinks, one, all)
		}
	}
}

// The notes a file name is linked from are kept by id (see srcSet): a
// removed note's id is given to the next note, which must then stand for
// itself only, in the short lists and in the maps of a busy name alike.
func TestGraphNoteIDsReused(t *testing.T) {
	for _, sources := range []int{2, srcSetListMax + 4} {
		g := NewGraph()
		var want []string
		for i := range sources {
			p := fmt.Sprintf("s%02d.md", i)
			g.SetNote(p, []markdown.Link{wl("x", 1)})
			if i%2 == 1 {
				want = append(want, p+":1")
			}
		}
		for i := 0; i < sources; i += 2 {
			g.Remove(fmt.Sprintf("s%02d.md", i))
		}
		if len(g.recs.free) != sources/2 {
			t.Fatalf("%d sources: %d ids free, want %d", sources, len(g.recs.free), sources/2)
		}
		// New notes take the freed ids: one links to x, one elsewhere.
		g.SetNote("new-x.md", []markdown.Link{wl("x", 1)})
		g.SetNote("new-y.md", []markdown.Link{wl("y", 1)})
		want = append(want, "new-x.md:1")
		if n := max(sources, sources-sources/2+2); len(g.recs.at) != n {
			t.Errorf("%d sources: %d ids in all, want %d (freed ids reused)", sources, len(g.recs.at), n)
		}
		g.AddFile("x.md") // resolves again the links of the sets of x
		got := edgeSources(g.Backlinks("x.md"))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%d sources: backlinks of x.md = %v, want %v", sources, got, want)
		}
		if got := edgeSources(g.Backlinks("y.md")); len(got) != 0 {
			t.Errorf("%d sources: y.md is not a file, backlinks %v", sources, got)
		}
		g.AddFile("y.md")
		if got := edgeSources(g.Backlinks("y.md")); !slices.Equal(got, []string{"new-y.md:1"}) {
			t.Errorf("%d sources: backlinks of y.md = %v", sources, got)
		}
		// The set of a name no longer linked is free, and taken by the
		// next name linked.
		sets := len(g.sets.at)
		g.Remove("new-y.md")
		g.SetNote("new-z.md", []markdown.Link{wl("z", 1)})
		g.AddFile("z.md")
		if got := edgeSources(g.Backlinks("z.md")); !slices.Equal(got, []string{"new-z.md:1"}) {
			t.Errorf("%d sources: backlinks of z.md = %v", sources, got)
		}
		if len(g.sets.at) != sets || len(g.sets.free) != 0 {
			t.Errorf("%d sources: %d sets (%d free), want %d (the freed one reused)", sources, len(g.sets.at), len(g.sets.free), sets)
		}
	}
}

// A link keeps the file it resolves to as the file's id (see storedLink): a
// removed file's id is given to the next file added, and the links that
// resolved to the removed file must by then resolve elsewhere or nowhere,
// never to the newcomer; the texts of the links that left it are marked.
func TestGraphFileIDsReused(t *testing.T) {
	g := NewGraph()
	g.AddFile("x.md")
	g.AddFile("other/x.md")
	g.SetNote("a.md", []markdown.Link{alias("x", "the x", 1), wl("other/x", 2)})
	g.SetNote("b.md", []markdown.Link{wl("x", 1)})
	g.TrackTextChanges(true)
	g.TakeTextChanges()

	g.Remove("x.md") // [[x]] now names other/x.md, the only x left
	if got := g.TakeTextChanges(); !slices.Equal(got, []string{"other/x.md", "x.md"}) {
		t.Errorf("text changes after the removal = %v, want both targets of the aliased link", got)
	}
	g.AddFile("y.png") // takes x.md's id
	g.SetNote("c.md", []markdown.Link{wl("y.png", 1)})
	if got := edgeTargets(g.Out("a.md")); !slices.Equal(got, []string{"other/x.md", "other/x.md"}) {
		t.Errorf("a.md's links resolve to %v", got)
	}
	if got := edgeSources(g.Backlinks("y.png")); !slices.Equal(got, []string{"c.md:1"}) {
		t.Errorf("backlinks of y.png = %v, want only c.md's", got)
	}
	if got := edgeSources(g.Backlinks("other/x.md")); !slices.Equal(got, []string{"a.md:1", "a.md:2", "b.md:1"}) {
		t.Errorf("backlinks of other/x.md = %v", got)
	}
	if g.LinksTo("a.md", "y.png") || !g.LinksTo("a.md", "other/x.md") || g.LinksTo("a.md", "x.md") {
		t.Error("LinksTo follows a reused id")
	}
	if got := g.LinkTexts("other/x.md"); len(got) != 1 || got[0].Text != "the x" {
		t.Errorf("link texts of other/x.md = %+v", got)
	}
	// Every file removed: the links are broken, whatever ids come next.
	g.Remove("other/x.md")
	g.AddFile("z1.md")
	g.AddFile("z2.md")
	if st := g.Stats(); st.Broken != 3 {
		t.Errorf("stats after removing every x: %+v, want 3 broken links", st)
	}
	if got := edgeTargets(g.Out("b.md")); !slices.Equal(got, []string{""}) {
		t.Errorf("b.md's link resolves to %v, want broken", got)
	}
}
