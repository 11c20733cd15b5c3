package vaultfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sameBothWays: the checks of the note p, and of a missing note beside it,
// answer the same in one step (fastroot_linux.go) and by the root's way,
// on real names (accents, CJK, spaces, emoji).
func sameBothWays(t *testing.T, v *Vault, p string) {
	t.Helper()
	defer noOpenat2.Store(noOpenat2.Load())
	missing := strings.TrimSuffix(p, ".md") + " (missing).md"
	ask := func() string {
		var b strings.Builder
		data, fi, err := v.ReadNote(p)
		fmt.Fprintf(&b, "%d %d %v %v|", len(data), fi.Size, fi.ModTime, err)
		for _, acc := range []Access{Write, Move} {
			r, err := v.ResolveNew(p, acc)
			fmt.Fprintf(&b, "%s %v|", r, err)
			r, err = v.ResolveNew(missing, acc)
			fmt.Fprintf(&b, "%s %v|", r, err)
		}
		_, _, err = v.ReadNote(missing)
		fmt.Fprintf(&b, "%v", err)
		return b.String()
	}
	noOpenat2.Store(true)
	want := ask()
	noOpenat2.Store(false)
	if got := ask(); got != want {
		t.Errorf("%q: in one step %s, by the root's way %s", p, got, want)
	}
}

// TestCorpus walks real vaults when VAULTMCP_CORPUS names the corpora folder
// (or one vault): every note Walk gives must read back with ReadNote, and
// Walk must give exactly the regular, non-ignored files that
// filepath.WalkDir finds, minus the ones it reports; and the checks of
// each note answer the same both ways (sameBothWays).
func TestCorpus(t *testing.T) {
	corpus := os.Getenv("VAULTMCP_CORPUS")
	if corpus == "" {
		t.Skip("VAULTMCP_CORPUS not set")
	}
	vaults := []string{corpus}
	for _, sub := range []string{"obsidian-hub", "seed-vault", "obsidian-help/en", "obsidian-help/ja", "obsidian-help/zh", "obsidian-help/ru", "obsidian-help/de", "obsidian-help/es", "obsidian-help/pt-br"} {
		if dirExists(filepath.Join(corpus, sub)) {
			if vaults[0] == corpus {
				vaults = nil
			}
			vaults = append(vaults, filepath.Join(corpus, sub))
		}
	}
	for _, dir := range vaults {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			v, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			var got []string
			reported := map[string]bool{}
			notes := 0
			err = v.Walk(t.Context(), func(fi FileInfo) error {
				got = append(got, fi.Path)
				if fi.IsNote {
					notes++
					if _, _, err := v.ReadNote(fi.Path); err != nil {
						t.Errorf("ReadNote(%q): %v", fi.Path, err)
					}
					sameBothWays(t, v, fi.Path)
				}
				return nil
			}, func(rel string, err error) {
				reported[rel] = true
				t.Logf("reported: %v", err)
				if strings.Contains(err.Error(), v.Dir()) {
					t.Errorf("error leaks the vault directory: %v", err)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			err = filepath.WalkDir(v.Dir(), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(v.Dir(), p)
				rel = filepath.ToSlash(rel)
				if rel == "." {
					return nil
				}
				if ignoredSegment(d.Name()) || reported[DisplayPath(rel)] {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if d.Type().IsRegular() {
					want = append(want, rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("Walk gave %d files, WalkDir %d", len(got), len(want))
			}
			t.Logf("%d files, %d notes, %d reported", len(got), notes, len(reported))
		})
	}
}
