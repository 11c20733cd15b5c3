package vaultfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genVault writes n notes of about 2 KB in folders of 50, three levels deep.
func genVault(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	body := strings.Repeat("Some words of a note, a [[link]] and #tag.\n", 48)
	for i := range n {
		name := filepath.Join(dir, "02-wiki", fmt.Sprintf("d%02d", i/50), "notes", fmt.Sprintf("note-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func openBench(b *testing.B, dir string) *Vault {
	b.Helper()
	v, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { v.Close() })
	return v
}

func BenchmarkClean(b *testing.B) {
	for _, in := range []string{"02-wiki/go/errors-wrapping.md", `x/../02-wiki\go//./errors-wrapping.md`, "会议/记录 2024 🗂️.md"} {
		b.Run(fmt.Sprintf("len%d", len(in)), func(b *testing.B) {
			for b.Loop() {
				if _, err := Clean(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// bothWays runs fn on Linux with openat2 (see fastroot_linux.go) and the
// root's way beside it (each folder opened in turn); elsewhere both are the
// root's way.
func bothWays(b *testing.B, fn func(b *testing.B)) {
	defer noOpenat2.Store(noOpenat2.Load())
	for _, rootWay := range []bool{false, true} {
		b.Run(map[bool]string{false: "fast", true: "root"}[rootWay], func(b *testing.B) {
			noOpenat2.Store(rootWay)
			fn(b)
		})
	}
}

// The checks of a note three folders deep.
func BenchmarkResolve(b *testing.B) {
	v := openBench(b, genVault(b, 100))
	bothWays(b, func(b *testing.B) {
		for b.Loop() {
			if _, err := v.Resolve("02-wiki/d01/notes/note-00077.md", Read); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStat(b *testing.B) {
	v := openBench(b, genVault(b, 100))
	bothWays(b, func(b *testing.B) {
		for b.Loop() {
			if _, err := v.Stat("02-wiki/d01/notes/note-00077.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkReadNote(b *testing.B) {
	v := openBench(b, genVault(b, 100))
	bothWays(b, func(b *testing.B) {
		b.SetBytes(2016)
		for b.Loop() {
			if _, _, err := v.ReadNote("02-wiki/d01/notes/note-00077.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadWalked reads walked notes of a generated vault (three
// folders deep) by path, as a search quotes its hits: on Linux with openat2
// beneath the vault's folder, and the root's way beside it (each folder
// opened in turn, an *os.File).
func BenchmarkReadWalked(b *testing.B) {
	v := openBench(b, genVault(b, 500))
	var files []FileInfo
	if err := v.Walk(b.Context(), func(fi FileInfo) error {
		files = append(files, fi)
		return nil
	}, nil); err != nil || len(files) != 500 {
		b.Fatal(err, len(files))
	}
	bothWays(b, func(b *testing.B) {
		b.SetBytes(2016)
		for i := 0; b.Loop(); i += 97 {
			if _, _, err := v.ReadWalked(files[i%len(files)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWalk walks a generated vault of 1,000 notes (also unstatted,
// as a first build walks: WalkHooks.Unstatted); with
// VAULTMCP_CORPUS set (the corpora folder, or one vault folder) it walks
// obsidian-hub too and reads every note, as a first index would.
func BenchmarkWalk(b *testing.B) {
	walk := func(b *testing.B, dir string, read bool, hooks WalkHooks) {
		v := openBench(b, dir)
		files := 0
		for b.Loop() {
			files = 0
			err := v.WalkWith(b.Context(), func(fi FileInfo) error {
				files++
				if read && fi.IsNote {
					if _, _, err := v.ReadNote(fi.Path); err != nil && CodeOf(err) != CodeTooLarge {
						b.Fatal(err)
					}
				}
				return nil
			}, nil, hooks)
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(files), "files")
		b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
	}
	gen := genVault(b, 1000)
	b.Run("gen1k", func(b *testing.B) { walk(b, gen, false, WalkHooks{}) })
	b.Run("gen1k-unstatted", func(b *testing.B) { walk(b, gen, false, WalkHooks{Unstatted: true}) })
	b.Run("gen1k-read", func(b *testing.B) { walk(b, gen, true, WalkHooks{}) })
	corpus := os.Getenv("VAULTMCP_CORPUS")
	if corpus == "" {
		return
	}
	if hub := filepath.Join(corpus, "obsidian-hub"); dirExists(hub) {
		corpus = hub
	}
	b.Run("corpus", func(b *testing.B) { walk(b, corpus, false, WalkHooks{}) })
	b.Run("corpus-unstatted", func(b *testing.B) { walk(b, corpus, false, WalkHooks{Unstatted: true}) })
	b.Run("corpus-read", func(b *testing.B) { walk(b, corpus, true, WalkHooks{}) })
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// BenchmarkWriteFile replaces a 2 KB note: temporary file, two fsyncs
// (file and folder), rename. The fsyncs dominate on a real disk.
func BenchmarkWriteFile(b *testing.B) {
	v := openBench(b, genVault(b, 100))
	data := []byte(strings.Repeat("Some words of a note, a [[link]] and #tag.\n", 48))
	for b.Loop() {
		if _, err := v.WriteFile("02-wiki/d01/notes/note-00077.md", data, Write); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateRemove creates a new note exclusively (temporary file,
// link) and removes it again.
func BenchmarkCreateRemove(b *testing.B) {
	v := openBench(b, genVault(b, 100))
	data := []byte("# New\n")
	for b.Loop() {
		if _, err := v.CreateFile("02-wiki/d01/notes/new.md", data, Write); err != nil {
			b.Fatal(err)
		}
		if err := v.Remove("02-wiki/d01/notes/new.md"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRename moves a note into 99-archive and back (two moves).
func BenchmarkRename(b *testing.B) {
	v := openBench(b, genVault(b, 100))
	from, to := "02-wiki/d01/notes/note-00077.md", "99-archive/02-wiki/d01/note-00077.md"
	for b.Loop() {
		if err := v.Rename(from, to); err != nil {
			b.Fatal(err)
		}
		if err := v.Rename(to, from); err != nil {
			b.Fatal(err)
		}
	}
}
