package gitx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitManyBlobsAsPack: a commit of packMin new files or more writes
// their blobs as one pack and index, not as loose objects, and git reads
// them as its own: fsck --strict finds the repository whole, verify-pack
// accepts the pack, and each committed blob is what git hash-object makes
// of its file (sizes from 0 bytes to past 2^11, so the entry header's size
// takes one to three bytes), in a SHA-1 and a SHA-256 repository. A second
// such commit of the same bytes (an undo taking a move back, say) makes no
// second pack of the same name fail. A commit of more bytes than
// packMaxBytes, or one whose pack cannot be written (its folder is a file),
// writes its blobs loose as before and lands.
func TestCommitManyBlobsAsPack(t *testing.T) {
	eachFormat(t, func(t *testing.T, dir, _ string) {
		writeFile(t, dir, "a.md", "a\n")
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", "user: initial")
		r := open(t, dir)
		var paths []string
		for i := range packMin + 20 {
			p := fmt.Sprintf("notes/n%03d.md", i)
			writeFile(t, dir, p, strings.Repeat(fmt.Sprintf("note %d, line\n", i), i*i/4))
			paths = append(paths, p)
		}
		loose := looseObjects(t, dir)
		packs := packsWritten.Load()
		sha := commitOne(t, r, paths...)
		if packsWritten.Load() != packs+1 {
			t.Fatalf("packs written: %d, want 1", packsWritten.Load()-packs)
		}
		if n := looseObjects(t, dir) - loose; n > 5 { // the trees and the commit
			t.Fatalf("%d new loose objects, want the blobs in the pack", n)
		}
		idx, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/pack-*.idx"))
		if len(idx) != 1 {
			t.Fatalf("pack indexes: %v", idx)
		}
		git(t, dir, "verify-pack", idx[0])
		whole(t, dir)
		for _, p := range paths {
			if got, want := gitOut(t, dir, "rev-parse", sha+":"+p), gitOut(t, dir, "hash-object", p); got != want {
				t.Fatalf("%s: committed %s, git hash-object %s", p, got, want)
			}
		}
		cleanAndWhole(t, dir)

		// The same bytes again (after a change of each): the same
		// pack, kept.
		for _, p := range paths {
			writeFile(t, dir, p, "changed\n")
		}
		commitOne(t, r, paths...)
		for i, p := range paths {
			writeFile(t, dir, p, strings.Repeat(fmt.Sprintf("note %d, line\n", i), i*i/4))
		}
		commitOne(t, r, paths...)
		cleanAndWhole(t, dir)

		// More bytes than a pack is made of in memory: loose, without a
		// warning (the files are not read for a pack first).
		func() {
			old := packMaxBytes
			packMaxBytes = 1 << 10
			defer func() { packMaxBytes = old }()
			for _, p := range paths {
				writeFile(t, dir, p, "big "+p+"\n")
			}
			packs := packsWritten.Load()
			sha := commitOne(t, r, paths...)
			if packsWritten.Load() != packs {
				t.Fatal("a pack was written past packMaxBytes")
			}
			if got := gitOut(t, dir, "show", sha+":"+paths[3]); got != "big "+paths[3] {
				t.Fatalf("committed %q", got)
			}
		}()

		// No pack folder to write in: loose, committed all the same.
		packDir := filepath.Join(dir, ".git/objects/pack")
		if err := os.Rename(packDir, packDir+".away"); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, packDir[len(dir)+1:], "not a folder")
		for _, p := range paths {
			writeFile(t, dir, p, "loose "+p+"\n")
		}
		packs = packsWritten.Load()
		sha = commitOne(t, r, paths...)
		if packsWritten.Load() != packs {
			t.Fatal("a pack was written without its folder")
		}
		if got := gitOut(t, dir, "show", sha+":"+paths[7]); got != "loose "+paths[7] {
			t.Fatalf("committed %q", got)
		}
		os.Remove(packDir)
		if err := os.Rename(packDir+".away", packDir); err != nil {
			t.Fatal(err)
		}
		cleanAndWhole(t, dir)
	})
}

// looseObjects counts the loose objects of the repository dir.
func looseObjects(t *testing.T, dir string) int {
	t.Helper()
	for l := range strings.SplitSeq(gitOut(t, dir, "count-objects", "-v"), "\n") {
		if n, ok := strings.CutPrefix(l, "count: "); ok {
			var c int
			fmt.Sscan(n, &c)
			return c
		}
	}
	t.Fatal("count-objects: no count")
	return 0
}

// TestFsyncPacks: packs are flushed as git flushes them: by default, and
// by core.fsync unless it leaves them out.
func TestFsyncPacks(t *testing.T) {
	for v, want := range map[string]bool{
		"": true, "none": false, "loose-object": true, "-pack": false, "none,pack": true, "objects": true,
		"all,-pack": false, "-objects": false, "none,committed": true, "pack,-pack": false, "-pack,pack": true, "index": true, "none,index": false,
	} {
		if got := fsyncPacks(v); got != want {
			t.Errorf("core.fsync=%q: packs flushed %v, want %v", v, got, want)
		}
	}
}

// TestSeesBlobs: the check made before a commit names a pack's blobs tells
// a pack git reads from one it does not (removed, or a size that is not
// the blob's), so that the commit falls back to loose objects. The same
// blobs written again make no file (the pack is there), so a commit that
// then gives its pack up removes nothing an earlier commit's objects are in.
func TestSeesBlobs(t *testing.T) {
	eachFormat(t, func(t *testing.T, dir, format string) {
		r := open(t, dir)
		store := objectStore{dir: filepath.Join(dir, ".git", "objects"), sha256: format == "sha256"}
		var es []packEntry
		for _, body := range []string{"one\n", "two\n", ""} {
			e, err := store.packBlob([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, e)
		}
		made, err := store.writePack(es)
		if err != nil {
			t.Fatal(err)
		}
		if len(made) != 2 {
			t.Fatalf("files made: %v, want the pack and its index", made)
		}
		if err := r.seesBlobs(t.Context(), es); err != nil {
			t.Fatalf("a pack git reads: %v", err)
		}
		wrong := append([]packEntry(nil), es...)
		wrong[1].size++
		if err := r.seesBlobs(t.Context(), wrong); !errors.Is(err, errPackUnseen) {
			t.Fatalf("a wrong size: %v", err)
		}
		again, err := store.writePack(es)
		if err != nil || len(again) != 0 {
			t.Fatalf("the same pack written again: made %v, %v", again, err)
		}
		removePack(again)
		if err := r.seesBlobs(t.Context(), es); err != nil {
			t.Fatalf("the pack written before, after a second writing gave up: %v", err)
		}
		removePack(made)
		if err := r.seesBlobs(t.Context(), es); !errors.Is(err, errPackUnseen) {
			t.Fatalf("a removed pack: %v", err)
		}
	})
}
