package links

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	snap "github.com/vaultmcp/vaultmcp/internal/snapshot"
)

// graphSnapVault writes a vault with the hard cases of resolution to a
// temporary folder and reads it back the way a start does: every file,
// sorted, and the links of every note.
func graphSnapVault(t *testing.T) (files []string, notes []NoteLinks) {
	t.Helper()
	dir := t.TempDir()
	write := func(p, text string) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Home.md", "# Home\n[[Topic]] [[topic|the Topic]] [[TOPIC#Intro|intro]] [[a/topic]] [[b/Topic]]\n"+
		"[[missing note]] [[Missing Note|gone]] ![[img.png]] ![[Diagram.PNG|100]] ![[a/img.png]]\n"+
		"[[#Local heading]] [[Home#Home]] [[ Home ]] [[./a/x]] [[../x]] [[/a/x]] [[/x]]\n"+
		"[md](a/x.md) [md up](../Home.md) [rel](./sub/deep.md) [ext](https://example.com)\n"+
		"[[v1.2]] [[v1.2.md]] [[Café]] [[cafe\u0301]] [[Ünïcode Nöte]] [[a/b/c]] [[b/c]] [[c]]\n"+
		"[[doc.pdf]] [[doc]] [[folder]] [[a]] [[.obsidian/app]] [[Note-With-Dashes|Front-Matter]]\n")
	write("Topic.md", "# Topic\n[[Home]] [[home|back home]] [[topic]] [[a/x|ax]]\n## Intro\n")
	write("a/topic.md", "[[topic]] [[../Topic]] [[./x]] [[x]] [[sub/deep]] [[deep]] [[img.png]] [x](x.md) [t](../Topic.md)\n")
	write("b/Topic.md", "[[Topic]] [[b/topic]] [[c]] [[a/b/c]] ![[img.png]]\n")
	write("a/x.md", "[[Home]] [[topic]] [[x]] [[b/c]]\n")
	write("x.md", "[[x]] [[a/x]] [[Topic#Intro]] [[topic#intro|Intro!]] [[Missing]]\n")
	write("a/sub/deep.md", "[[deep]] [[../x]] [[../../x]] [[../../../x]] [[topic]] [[Home|home page]]\n")
	write("a/b/c.md", "[[c]] [[b/c]] [[../topic]] [[img]]\n")
	write("b/c.md", "[[c]] [[a/b/c|abc]]\n")
	write("c/c.md", "[[c]] [[c/c]] [[/c]]\n")
	write("v1.2.md", "[[v1.2]]\n")
	write("Café.md", "[[café]] [[CAFÉ|Cafe]]\n")
	write("Ünïcode Nöte.md", "[[ünïcode nöte]]\n")
	write("Note-With-Dashes.md", "---\nup: \"[[Home]]\"\n---\n[[note-with-dashes]]\n")
	write("empty.md", "no links here\n")
	write("Projects/Alpha.md", "[[plan]] [[Plan#Goals|the plan]] [plan](Plan.md)\n")
	write("Projects/plan.md", "[[alpha]]\n")
	write("zz/plan.md", "[[plan]]\n")
	write("img.png", "png")
	write("a/img.png", "png")
	write("Diagram.png", "png")
	write("doc.pdf", "pdf")
	write("notes.markdown", "[[Home]] [[Topic|T]]\n")
	write("canvas.canvas", "{}")
	write(".obsidian/app.md", "[[Home]]")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	for _, p := range files {
		if !strings.HasSuffix(p, ".md") && !strings.HasSuffix(p, ".markdown") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		notes = append(notes, NoteLinks{Path: p, Links: markdown.Parse(p, src).Links})
	}
	return files, notes
}

// fillGraph is the graph a start fills from files and notes.
func fillGraph(files []string, notes []NoteLinks) *Graph {
	g := NewGraph()
	g.TrackTextChanges(false)
	g.AddFiles(files)
	g.SetNotes(notes)
	return g
}

// encodeGraph writes g's resolved state and returns a Dec over it.
func encodeGraph(t *testing.T, g *Graph, files []string, notes []NoteLinks) *snap.Dec {
	t.Helper()
	paths := make([]string, len(notes))
	for i, n := range notes {
		paths[i] = n.Path
	}
	path := filepath.Join(t.TempDir(), "g.snap")
	err := snap.Write(path, "k", func(e *snap.Enc) error {
		e.Section(func(e *snap.Enc) { g.EncodeResolved(e, files, paths) })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := snap.Read(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	sd := d.Section()
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	return sd
}

// fullState is every answer the graph gives, for every note and file of
// the vault and a few paths it does not have.
type fullState struct {
	Base        graphState
	Files       []string
	Resolved    map[string]string
	Sources     map[string][]string
	Texts       map[string][]Text
	AllTexts    map[string][]Text
	Pages       map[string]BacklinkPage
	OutTargets  map[string][][2]string
	LinksTo     map[[2]string]bool
	IsNote      map[string]bool
	AllEdges    []Edge
	Keys        map[string]map[string]int32
	Candidates  map[string][]candidate
	NoteDirs    map[string]string
	TextChanges []string
}

// stateOf is fullState for the paths probe; LinksTo is asked for every
// pair of probe and pairs, and every target is resolved from every path of
// pairs.
func stateOf(g *Graph, probe, pairs, targets []string) fullState {
	s := fullState{
		Base:       snapshot(g, probe),
		Files:      g.Resolver().Files(),
		Resolved:   map[string]string{},
		Sources:    map[string][]string{},
		Texts:      map[string][]Text{},
		AllTexts:   map[string][]Text{},
		Pages:      map[string]BacklinkPage{},
		OutTargets: map[string][][2]string{},
		LinksTo:    map[[2]string]bool{},
		IsNote:     map[string]bool{},
		Keys:       map[string]map[string]int32{},
		Candidates: map[string][]candidate{},
		NoteDirs:   map[string]string{},
	}
	for _, p := range probe {
		s.Sources[p] = g.BacklinkSources(p)
		s.Texts[p] = g.LinkTexts(p)
		s.Pages[p] = g.BacklinkPage(p, 3, 2)
		g.EachOutTarget(p, func(to, target string) { s.OutTargets[p] = append(s.OutTargets[p], [2]string{to, target}) })
		s.IsNote[p] = g.IsNote(p)
		for _, q := range pairs {
			s.LinksTo[[2]string{p, q}] = g.LinksTo(p, q)
		}
	}
	for _, p := range pairs {
		for _, t := range targets {
			to, _ := g.Resolver().Resolve(p, t)
			s.Resolved[p+" -> "+t] = to
			to, _ = g.Resolver().ResolveKind(p, t, markdown.MarkdownLink)
			s.Resolved[p+" -md-> "+t] = to
		}
	}
	g.EachLinkTexts(func(p string, texts []Text) { s.AllTexts[p] = texts })
	g.AllEdges(func(e Edge) bool { s.AllEdges = append(s.AllEdges, e); return true })
	// The internals: a restored graph must go on changing as a filled one.
	for k, i := range g.byKey {
		set := &g.sets.at[i]
		m := map[string]int32{}
		if set.big != nil {
			m["(big)"] = 1
		}
		for _, e := range set.list {
			m[g.recs.at[e.id].path] = e.c
		}
		for id, c := range set.big {
			m[g.recs.at[id].path] = c
		}
		s.Keys[k] = m
	}
	for k, list := range g.r.byName {
		s.Candidates[k] = list
	}
	for p, n := range g.notes {
		s.NoteDirs[p] = n.dir
	}
	s.TextChanges = g.TakeTextChanges()
	return s
}

func compareStates(t *testing.T, step string, got, want fullState) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			g, w := fmt.Sprint(gv.Field(i).Interface()), fmt.Sprint(wv.Field(i).Interface())
			t.Errorf("%s: %s differs:\n got %.2000s\nwant %.2000s", step, gv.Type().Field(i).Name, g, w)
		}
	}
}

// A graph restored from its encoding answers every query exactly as the
// graph filled from the same files and links, and stays equal to it
// through the same changes.
func TestRestoreGraphEqualsFilled(t *testing.T) {
	files, notes := graphSnapVault(t)
	filled := fillGraph(files, notes)
	restored, err := RestoreGraph(encodeGraph(t, filled, files, notes), files, notes)
	if err != nil || restored == nil {
		t.Fatalf("RestoreGraph: %v, %v", restored, err)
	}
	probe := append(slices.Clone(files), "missing note.md", "Missing.md", "nowhere/x.md")
	var targets []string
	for _, n := range notes {
		for _, l := range n.Links {
			targets = append(targets, l.Target)
		}
	}
	slices.Sort(targets)
	targets = slices.Compact(targets)
	compare := func(step string) {
		t.Helper()
		compareStates(t, step, stateOf(restored, probe, probe, targets), stateOf(filled, probe, probe, targets))
	}
	compare("restored")
	if st := restored.Stats(); st.Links < 80 || st.Broken == 0 {
		t.Fatalf("the vault is too simple: %+v", st)
	}

	// The same changes to both, with text changes tracked again.
	for _, g := range []*Graph{filled, restored} {
		g.TrackTextChanges(true)
	}
	steps := []struct {
		name string
		fn   func(g *Graph)
	}{
		{"missing note created", func(g *Graph) { g.SetNote("missing note.md", []markdown.Link{alias("Topic", "from missing", 1)}) }},
		{"topic removed", func(g *Graph) { g.Remove("Topic.md") }},
		{"home rewritten", func(g *Graph) { g.SetNote("Home.md", []markdown.Link{wl("a/topic", 1), alias("x", "ex", 2)}) }},
		{"image added", func(g *Graph) { g.AddFile("b/img.png") }},
		{"plan added", func(g *Graph) { g.AddFile("a/plan.md") }},
		{"tree removed", func(g *Graph) { g.RemoveTree("a") }},
		{"notes set", func(g *Graph) {
			g.SetNotes([]NoteLinks{{Path: "x.md"}, {Path: "new/topic.md", Links: []markdown.Link{wl("topic", 1), wl("c", 2)}}})
		}},
	}
	for _, st := range steps {
		st.fn(filled)
		st.fn(restored)
		compare(st.name)
	}
}

// Encoding for other files than the graph's holds no graph; an encoding
// that does not fit the notes given is refused.
func TestRestoreGraphMismatch(t *testing.T) {
	files, notes := graphSnapVault(t)
	g := fillGraph(files, notes)
	if r, err := RestoreGraph(encodeGraph(t, g, files[1:], notes[1:]), files[1:], notes[1:]); r != nil || err != nil {
		t.Errorf("other files: %v, %v; want no graph", r, err)
	}
	less := slices.Clone(notes)
	less[0].Links = less[0].Links[1:]
	if _, err := RestoreGraph(encodeGraph(t, g, files, notes), files, less); err == nil {
		t.Error("links that are not the encoded ones: no error")
	}
	// Every truncation is an error, never a panic.
	paths := make([]string, len(notes))
	for i, n := range notes {
		paths[i] = n.Path
	}
	path := filepath.Join(t.TempDir(), "g.snap")
	err := snap.Write(path, "k", func(e *snap.Enc) error {
		g.EncodeResolved(e, files, paths)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := b[len("VMCPSNAP")+4+2 : len(b)-4] // after the magic, format and key "k"; before the checksum
	if r, err := RestoreGraph(snap.NewDec(body), files, notes); r == nil || err != nil {
		t.Fatalf("whole encoding: %v, %v", r, err)
	}
	for i := range len(body) {
		d := snap.NewDec(body[:i])
		r, err := RestoreGraph(d, files, notes)
		if err == nil {
			err = d.Done()
		}
		if err == nil {
			t.Fatalf("encoding cut at %d of %d bytes: no error (graph %v)", i, len(body), r != nil)
		}
	}
}

// On the real vaults of $VAULTMCP_CORPUS, the restored graph is the filled
// one: every note's answers, every file's backlinks, and a sample of
// targets resolved from a sample of notes.
func TestRestoreGraphRealVaults(t *testing.T) {
	for _, dir := range corpusVaultDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			v := loadMemVault(t, dir)
			var notes []NoteLinks
			for _, p := range slices.Sorted(maps.Keys(v.notes)) {
				notes = append(notes, NoteLinks{Path: p, Links: v.links[p]})
			}
			filled := fillGraph(v.files, notes)
			restored, err := RestoreGraph(encodeGraph(t, filled, v.files, notes), v.files, notes)
			if err != nil || restored == nil {
				t.Fatalf("RestoreGraph: %v, %v", restored, err)
			}
			var pairs, targets []string
			for i, n := range notes {
				if i%97 == 0 {
					pairs = append(pairs, n.Path)
				}
				for j, l := range n.Links {
					if (i+j)%41 == 0 {
						targets = append(targets, l.Target)
					}
				}
			}
			compareStates(t, "restored", stateOf(restored, v.files, pairs, targets), stateOf(filled, v.files, pairs, targets))
			t.Logf("%d files, %d notes, %d pairs, %d targets; %+v", len(v.files), len(notes), len(pairs), len(targets), restored.Stats())
		})
	}
}
