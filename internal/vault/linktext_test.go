package vault

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// linkTextVault: a target note that never says "quokka" itself, named so by
// the links of two other notes, plus daily notes of common words.
func linkTextVault(t *testing.T) string {
	files := map[string]string{
		"02-wiki/props.md":  "# Properties\n\nStructured data about a note.\n\n## Types\n\nText, numbers, dates.\n",
		"02-wiki/a.md":      "# Alpha\n\nSee [[props|quokka fields]] and [[props#Types|Properties]].\n",
		"02-wiki/b.md":      "# Beta\n\nThe [quokka](props.md) section and [[props|100]].\n",
		"02-wiki/other.md":  "# Other\n\nNothing about marsupials.\n",
		"attachments/x.png": "PNG",
	}
	for i := range 40 { // so that idf means something (see index.linkMinIdf)
		files[fmt.Sprintf("04-daily/2026-01-%02d.md", i+1)] = "# Day\n\nnotes and settings\n"
	}
	return writeVault(t, files)
}

// The words other notes use when they link to a note find it, say so in
// the explanation, and follow every edit of the linking notes.
func TestLinkTextSearch(t *testing.T) {
	dir := linkTextVault(t)
	s := openTest(t, dir, false)
	// find returns the target's hit among the results (the linking notes
	// match too: the words are in their prose), "" when it is not one.
	find := func(q string) (string, *api.HitExplanation) {
		t.Helper()
		for _, h := range search(t, s, api.SearchRequest{Query: q, Explain: true}).Results {
			if strings.HasSuffix(h.Path, "props.md") || strings.HasSuffix(h.Path, "properties.md") {
				if h.ViaGraph {
					continue
				}
				return h.Path, h.Explain
			}
		}
		return "", nil
	}
	p, e := find("quokka")
	if p != "02-wiki/props.md" || e == nil || len(e.Terms) != 1 || !slices.Equal(e.Terms[0].Fields, []string{"link_text"}) {
		t.Fatalf("quokka: %s %+v, want props.md matched in its link text", p, e)
	}
	// The texts kept: "quokka fields" and "quokka" (not the title, not "100").
	if got := s.ix.LinkTexts("02-wiki/props.md"); len(got) != 2 {
		t.Fatalf("link texts %v", got)
	}
	// The alias changes: the old words go, the new ones come.
	write := func(rel, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s.Refresh(rel)
	}
	write("02-wiki/a.md", "# Alpha\n\nSee [[props|wallaby fields]].\n")
	if p, _ := find("wallaby"); p != "02-wiki/props.md" {
		t.Fatalf("wallaby after the edit: %s", p)
	}
	if p, _ := find("quokka"); p != "02-wiki/props.md" {
		t.Fatalf("quokka, still used by b.md: %s", p)
	}
	// b.md gone: its "quokka" goes with it.
	if err := os.Remove(filepath.Join(dir, "02-wiki/b.md")); err != nil {
		t.Fatal(err)
	}
	s.Refresh("02-wiki/b.md")
	if p, _ := find("quokka"); p != "" {
		t.Fatalf("quokka after its only link went: %s", p)
	}
	// The target renamed: the links break, their text stops counting; a
	// note taking the old name gets it.
	if err := os.Rename(filepath.Join(dir, "02-wiki/props.md"), filepath.Join(dir, "02-wiki/properties.md")); err != nil {
		t.Fatal(err)
	}
	s.Refresh("02-wiki/props.md")
	s.Refresh("02-wiki/properties.md")
	if p, _ := find("wallaby"); p != "" {
		t.Fatalf("the text of a broken link still counts: %s", p)
	}
	write("03-projects/props.md", "# Something else\n\ncontent\n")
	if p, _ := find("wallaby"); p != "03-projects/props.md" {
		t.Fatalf("the link now resolving to 03-projects/props.md does not bring its text: %s", p)
	}
}

// An index kept up to date through any sequence of edits, creations,
// deletions and renames of notes (their links, aliases and titles changing)
// serves exactly what a fresh start on the same files serves: hits,
// scores, explanations, link texts.
func TestLinkTextsIncrementalMatchesFresh(t *testing.T) {
	names := []string{"koala", "wombat", "dingo", "emu", "numbat", "quoll", "bilby", "echidna"}
	words := []string{"marsupial", "burrow", "pouch", "night", "eucalyptus", "outback", "Koala", "desert fox", "100"}
	folders := []string{"02-wiki", "02-wiki/sub", "03-projects"}
	r := rand.New(rand.NewPCG(5, 6))
	note := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s %s\n\n", strings.ToUpper(names[r.IntN(len(names))][:1]), words[r.IntN(len(words))])
		for range 1 + r.IntN(4) {
			target := names[r.IntN(len(names))]
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "See [[%s]].\n", target)
			case 1:
				fmt.Fprintf(&b, "See [%s](%s.md).\n", words[r.IntN(len(words))], target)
			default:
				fmt.Fprintf(&b, "See [[%s|%s %s]].\n", target, words[r.IntN(len(words))], words[r.IntN(len(words))])
			}
		}
		if r.IntN(3) == 0 {
			b.WriteString("\n## More\n\nthe " + words[r.IntN(len(words))] + " text\n")
		}
		return b.String()
	}
	dir := t.TempDir()
	rel := func() string {
		return folders[r.IntN(len(folders))] + "/" + names[r.IntN(len(names))] + ".md"
	}
	put := func(p, body string) {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 12 {
		put(rel(), note())
	}
	s := openTest(t, dir, false)
	queries := append(slices.Clone(words), names...)
	queries = append(queries, "marsupial burrow", "pouch night outback")
	state := func(s *Service) string {
		var out strings.Builder
		for _, q := range queries {
			res := search(t, s, api.SearchRequest{Query: q, Limit: 20, Explain: true})
			fmt.Fprintf(&out, "%q:", q)
			for _, h := range res.Results {
				fmt.Fprintf(&out, " %s:%d %.6f %v %+v", h.Path, h.Line, h.Score, h.ViaGraph, *h.Explain)
			}
			out.WriteString("\n")
		}
		for _, p := range s.ix.LinkPaths() {
			fmt.Fprintf(&out, "%s %v\n", p, s.ix.LinkTexts(p))
		}
		return out.String()
	}
	checked, sawLinkText := 0, false
	for step := range 60 {
		p := rel()
		switch k := r.IntN(5); {
		case k < 2:
			put(p, note())
			s.Refresh(p)
		case k == 2:
			os.Remove(filepath.Join(dir, p))
			s.Refresh(p)
		case k == 3: // rename
			q := rel()
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil && p != q {
				if _, err := os.Stat(filepath.Join(dir, q)); err != nil {
					if err := os.Rename(filepath.Join(dir, p), filepath.Join(dir, q)); err != nil {
						t.Fatal(err)
					}
					s.Refresh(p)
					s.Refresh(q)
				}
			}
		default: // an attachment that may take a name
			a := folders[r.IntN(len(folders))] + "/" + names[r.IntN(len(names))] + ".png"
			put(a, "PNG")
			s.Refresh(a)
		}
		if step%10 == 9 {
			fresh := openTest(t, dir, false)
			got, want := state(s), state(fresh)
			if got != want {
				t.Fatalf("step %d: incremental state differs from a fresh start\n got:\n%s\nwant:\n%s", step, got, want)
			}
			checked++
			sawLinkText = sawLinkText || strings.Contains(want, "link_text")
			fresh.Close()
		}
	}
	if checked == 0 || !sawLinkText {
		t.Fatalf("checked %d states, link text in them: %v", checked, sawLinkText)
	}
}

// linkTextItems gives the same items, in the same order, sifted on one
// worker and shared out on three.
func TestLinkTextItemsShared(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		body := fmt.Sprintf("# Note %d\n\nSee [[n%d|the %d way]] and [[n%d|Note %d]] and [x](n%d.md).\n", i, (i+1)%40, i, (i+2)%40, (i+2)%40, (i+3)%40)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := openTest(t, dir, false)
	defer func(n, procs int) { linkTextsParallelMin = n; runtime.GOMAXPROCS(procs) }(linkTextsParallelMin, runtime.GOMAXPROCS(3))
	s.mu.RLock()
	defer s.mu.RUnlock()
	linkTextsParallelMin = 1 << 30
	one := s.linkTextItems()
	linkTextsParallelMin = 0
	shared := s.linkTextItems()
	if len(one) < 30 || !reflect.DeepEqual(one, shared) {
		t.Fatalf("on one worker %d items %v\nshared out %v", len(one), one, shared)
	}
}
