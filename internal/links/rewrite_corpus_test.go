package links

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// corpusVaultDirs returns the vaults named by $VAULTMCP_CORPUS: the folder
// of several corpora (its obsidian-help/en, obsidian-hub and seed-vault),
// or one vault.
func corpusVaultDirs(tb testing.TB) []string {
	tb.Helper()
	root := os.Getenv("VAULTMCP_CORPUS")
	if root == "" {
		tb.Skip("VAULTMCP_CORPUS is not set")
	}
	var dirs []string
	for _, sub := range []string{"obsidian-help/en", "obsidian-hub", "seed-vault"} {
		if st, err := os.Stat(filepath.Join(root, sub)); err == nil && st.IsDir() {
			dirs = append(dirs, filepath.Join(root, sub))
		}
	}
	if len(dirs) == 0 {
		dirs = []string{root}
	}
	return dirs
}

// loadMemVault reads the vault at dir into memory: every regular file
// outside dot folders, notes (.md, .markdown) parsed.
func loadMemVault(tb testing.TB, dir string) *memVault {
	tb.Helper()
	v := &memVault{notes: make(map[string][]byte), links: make(map[string][]markdown.Link)}
	var walk func(rel string)
	walk = func(rel string) {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			tb.Fatalf("reading %s: %v", dir, err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := pathJoin(rel, e.Name())
			switch {
			case e.IsDir():
				walk(p)
			case e.Type().IsRegular():
				v.files = append(v.files, p)
				if vaultfs.IsNoteName(p) {
					src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
					if err != nil {
						tb.Fatalf("reading %s: %v", p, err)
					}
					v.setNote(p, src)
				}
			}
		}
	}
	walk("")
	slices.Sort(v.files)
	return v
}

// pickCorpusMoves chooses about 30 notes to move: the most linked, names
// with spaces, names with emoji or other symbols, and base names found in
// several folders; each gets a destination of a different kind.
func pickCorpusMoves(v *memVault, g *Graph) (moves [][2]string, mostLinked string) {
	notes := slices.Sorted(func(yield func(string) bool) {
		for p := range v.notes {
			if !yield(p) {
				return
			}
		}
	})
	inLinks := make(map[string]int, len(notes))
	for _, p := range notes {
		inLinks[p] = len(g.BacklinkSources(p))
	}
	slices.SortStableFunc(notes, func(a, b string) int { return cmp.Compare(inLinks[b], inLinks[a]) })
	if len(notes) > 0 {
		mostLinked = notes[0]
	}
	keys := map[string]int{}
	for _, f := range v.files {
		keys[FileKey(f)]++
	}
	chosen := map[string]bool{}
	pick := func(n int, ok func(p string) bool) {
		for _, p := range notes {
			if n == 0 {
				return
			}
			if !chosen[p] && ok(p) {
				chosen[p] = true
				n--
			}
		}
	}
	pick(10, func(string) bool { return true })
	pick(7, func(p string) bool { return strings.Contains(baseName(p), " ") })
	pick(6, func(p string) bool {
		return strings.ContainsFunc(baseName(p), func(r rune) bool { return unicode.Is(unicode.So, r) })
	})
	pick(7, func(p string) bool { return keys[FileKey(p)] > 1 })

	r := v.resolver()
	free := func(p, from string) bool {
		if r.Has(p) {
			return false
		}
		for _, c := range r.byName[FileKey(p)] {
			if c.lower == fold(p) && c.path != from {
				return false
			}
		}
		return true
	}
	i := 0
	for _, from := range notes {
		if !chosen[from] {
			continue
		}
		dir, base := parentDir(from), baseName(from)
		stem := stripMd(base)
		var to string
		switch i % 6 {
		case 0: // another folder and another name (the most linked note is first)
			to = "zz-moved/sub/" + stem + " (v2).md"
		case 1: // renamed in place
			to = pathJoin(dir, stem+" renamed.md")
		case 2: // archived
			to = "99-archive/" + from
		case 3: // another folder, same name
			to = "zz-moved/" + base
		case 4: // case only
			to = pathJoin(dir, swapCase(stem)+base[len(stem):])
		case 5: // to the root, where a bare name finds it first
			to = base
		}
		for to == from || !free(to, from) {
			to = pathJoin(parentDir(to), stripMd(baseName(to))+" 2.md")
		}
		moves = append(moves, [2]string{from, to})
		i++
	}
	return moves, mostLinked
}

// TestPlanMoveRealVaults moves about 30 notes of each real vault in memory,
// one at a time from the same starting state, applies the plan, parses the
// rewritten notes again and checks with a fresh resolver over the files
// after the move that no link changed its target.
func TestPlanMoveRealVaults(t *testing.T) {
	for _, dir := range corpusVaultDirs(t) {
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
			checkCorpusMoves(t, loadMemVault(t, dir))
		})
	}
}

// checkCorpusMoves makes the moves pickCorpusMoves chooses on v, one at a
// time from the same starting state, and checks each (see
// TestPlanMoveRealVaults).
func checkCorpusMoves(t *testing.T, v *memVault) {
	r, g := v.resolver(), v.graph()
	moves, mostLinked := pickCorpusMoves(v, g)
	st := g.Stats()
	t.Logf("%d files, %d notes, %d links (%d broken); %d moves", st.Files, st.Notes, st.Links, st.Broken, len(moves))
	var rewritten, touched, failures, healed, checked int
	var total time.Duration
	for _, m := range moves {
		from, to := m[0], m[1]
		start := time.Now()
		plan, err := PlanMove(r, g, from, to, v.read)
		took := time.Since(start)
		total += took
		if err != nil {
			failures++
			t.Errorf("PlanMove(%s -> %s): %v", from, to, err)
			continue
		}
		n := 0
		for _, fe := range plan {
			n += len(fe.Edits)
		}
		w, err := v.applyMove(from, to, plan)
		if err != nil {
			failures++
			t.Errorf("applying the plan of %s -> %s: %v", from, to, err)
			continue
		}
		c := checkMove(v, w, from, to)
		for _, f := range c.failures[:min(len(c.failures), 5)] {
			t.Errorf("%s -> %s: %s", from, to, f)
		}
		failures += len(c.failures)
		rewritten += n
		touched += len(plan)
		healed += c.healed
		checked += c.links
		note := ""
		if from == mostLinked {
			note = " (most linked)"
		}
		t.Logf("%-60q -> %-60q %4d links in %3d notes, planned in %v%s", from, to, n, len(plan), took.Round(time.Microsecond), note)
	}
	t.Logf("total: %d links rewritten in %d notes, %d failures, %d broken links healed, %d link resolutions compared, planning %v",
		rewritten, touched, failures, healed, checked, total.Round(time.Millisecond))
}

// BenchmarkPlanMoveMostLinked plans moving the most linked note of the
// corpus to another folder under another name.
func BenchmarkPlanMoveMostLinked(b *testing.B) {
	dirs := corpusVaultDirs(b)
	dir := dirs[0]
	for _, d := range dirs {
		if filepath.Base(d) == "obsidian-hub" {
			dir = d
		}
	}
	v := loadMemVault(b, dir)
	r, g := v.resolver(), v.graph()
	_, from := pickCorpusMoves(v, g)
	to := "zz-moved/sub/" + stripMd(baseName(from)) + " (v2).md"
	var plan []FileEdits
	for b.Loop() {
		var err error
		if plan, err = PlanMove(r, g, from, to, v.read); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	for _, fe := range plan {
		n += len(fe.Edits)
	}
	b.ReportMetric(float64(n), "links")
	b.ReportMetric(float64(len(plan)), "notes")
}
