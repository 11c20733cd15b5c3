package gitx

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// eachFormat runs fn in a new repository of each object format (SHA-1,
// SHA-256; one git cannot make is skipped).
func eachFormat(t *testing.T, fn func(t *testing.T, dir, format string)) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			if out, err := gitCmd(dir, "init", "-q", "--object-format="+format).CombinedOutput(); err != nil {
				t.Skipf("git init --object-format=%s: %v %s", format, err, out)
			}
			fn(t, dir, format)
		})
	}
}

// TestTreeObjectsMatchMktree writes random trees both ways — objectStore
// and `git mktree` — in SHA-1 and SHA-256 repositories: the ids are the
// same, and git reads the objects written here (fsck --strict, cat-file).
// The names are chosen to catch git's order: a folder sorts as if its name
// ended in "/" ("a" the folder after "a.md", before "a0"), bytes above
// ASCII, spaces, executables, links and submodules.
func TestTreeObjectsMatchMktree(t *testing.T) {
	eachFormat(t, func(t *testing.T, dir, format string) {
		blob := strings.TrimSpace(gitOutIn(t, dir, "x\n", "hash-object", "-w", "--stdin"))
		sub := strings.TrimSpace(gitOutIn(t, dir, "", "mktree"))
		store := objectStore{dir: filepath.Join(dir, ".git", "objects"), sha256: format == "sha256"}
		names := []string{"a", "a.md", "a0", "a-b", "A", "ñ.md", "sp ace.md", "a/", "z", "b.md", "b", "é", "~x"}
		rng := rand.New(rand.NewSource(3))
		for round := range 30 {
			entries := map[string]treeEntry{}
			for _, n := range names {
				n = strings.TrimSuffix(n, "/")
				if rng.Intn(2) == 0 {
					continue
				}
				switch rng.Intn(5) {
				case 0:
					entries[n] = treeEntry{mode: "040000", typ: "tree", id: sub}
				case 1:
					entries[n] = treeEntry{mode: "100755", typ: "blob", id: blob}
				case 2:
					entries[n] = treeEntry{mode: "120000", typ: "blob", id: blob}
				case 3:
					entries[n] = treeEntry{mode: "160000", typ: "commit", id: strings.Repeat("1", len(blob))}
				default:
					entries[n] = treeEntry{mode: "100644", typ: "blob", id: blob}
				}
			}
			var in strings.Builder
			for n, e := range entries {
				fmt.Fprintf(&in, "%s %s %s\t%s\x00", e.mode, e.typ, e.id, n)
			}
			want := strings.TrimSpace(gitOutIn(t, dir, in.String(), "mktree", "-z", "--missing"))
			tr := newTree(nil, len(blob)/2)
			for n, e := range entries {
				tr.set(n, e)
			}
			body, _, err := tr.body()
			if err != nil {
				t.Fatal(err)
			}
			// The object mktree wrote is removed first, so that the one
			// read back below is ours.
			os.Remove(filepath.Join(store.dir, want[:2], want[2:]))
			got, err := store.write("tree", body)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("round %d: tree %s, mktree %s\n%s", round, got, want, in.String())
			}
			if typ := strings.TrimSpace(gitOut(t, dir, "cat-file", "-t", got)); typ != "tree" {
				t.Fatalf("git reads %s as %q", got, typ)
			}
			fi, err := os.Stat(filepath.Join(store.dir, got[:2], got[2:]))
			if err != nil || fi.Mode().Perm() != 0o444 {
				t.Fatalf("object file: %v %v", fi.Mode(), err)
			}
		}
		// fsck has the last word on every object written (the
		// submodule ids name commits that do not exist: connectivity
		// is not the point here).
		if out, err := gitCmd(dir, "fsck", "--strict", "--no-dangling", "--connectivity-only").CombinedOutput(); err != nil {
			t.Fatalf("fsck: %v\n%s", err, out)
		}
		if out, err := gitCmd(dir, "fsck", "--strict", "--no-dangling", "--unreachable").CombinedOutput(); err != nil && !strings.Contains(string(out), "missing") {
			t.Fatalf("fsck: %v\n%s", err, out)
		}
		if matches, _ := filepath.Glob(filepath.Join(store.dir, "*", "tmp_obj_*")); len(matches) > 0 {
			t.Fatalf("temporary objects left: %v", matches)
		}
	})
}

// TestTreeEdits edits a tree read from git — a few entries set, replaced
// or removed among hundreds, names chosen to fall on either side of git's
// folder rule — and holds the spliced body to what mktree makes of the
// edited listing.
func TestTreeEdits(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	rng := rand.New(rand.NewSource(11))
	stems := []string{"a", "a-b", "a.b", "a0", "b", "é", "sp ace", "Z"}
	for i := range 300 {
		st := stems[i%len(stems)]
		switch i % 5 {
		case 0:
			writeFile(t, dir, fmt.Sprintf("%s%d/inner.md", st, i/40), "x\n") // folders
		default:
			writeFile(t, dir, fmt.Sprintf("%s%d.md", st, i), fmt.Sprintf("%d\n", i))
		}
	}
	writeFile(t, dir, "a/x.md", "x\n")
	writeFile(t, dir, "a.md", "y\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "init")
	raw, err := gitCmd(dir, "cat-file", "tree", "HEAD^{tree}").Output()
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(gitOutIn(t, dir, "new\n", "hash-object", "-w", "--stdin"))
	listing := map[string]treeEntry{}
	for _, line := range strings.Split(gitOut(t, dir, "ls-tree", "HEAD"), "\n") {
		meta, name, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		listing[name] = treeEntry{mode: f[0], typ: f[1], id: f[2]}
	}
	names := make([]string, 0, len(listing))
	for n := range listing {
		names = append(names, n)
	}
	for round := range 40 {
		tr := newTree(raw, len(blob)/2)
		want := maps.Clone(listing)
		for range 1 + rng.Intn(6) {
			switch rng.Intn(3) {
			case 0: // a new note, maybe named like a folder
				n := fmt.Sprintf("%s%d.md", stems[rng.Intn(len(stems))], rng.Intn(400))
				if e, ok := want[n]; ok && e.typ == "tree" {
					continue
				}
				e := treeEntry{mode: "100644", typ: "blob", id: blob}
				tr.set(n, e)
				want[n] = e
			case 1: // an existing entry replaced
				n := names[rng.Intn(len(names))]
				e := want[n]
				e.id = blob
				if e.typ == "tree" {
					e.id = strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD:a"))
				}
				tr.set(n, e)
				want[n] = e
			default:
				n := names[rng.Intn(len(names))]
				tr.remove(n)
				delete(want, n)
			}
		}
		got, empty, err := tr.body()
		if err != nil || empty {
			t.Fatalf("round %d: %v, empty %v", round, err, empty)
		}
		var in strings.Builder
		for n, e := range want {
			fmt.Fprintf(&in, "%s %s %s\t%s\x00", e.mode, e.typ, e.id, n)
		}
		wantID := strings.TrimSpace(gitOutIn(t, dir, in.String(), "mktree", "-z"))
		gotID, err := objectStore{dir: filepath.Join(dir, ".git", "objects")}.write("tree", got)
		if err != nil {
			t.Fatal(err)
		}
		if gotID != wantID {
			t.Fatalf("round %d: spliced tree %s, mktree %s", round, gotID, wantID)
		}
		// The mktree input of the same edits names the same tree.
		mk, err := tr.mktreeInput()
		if err != nil {
			t.Fatal(err)
		}
		if id := strings.TrimSpace(gitOutIn(t, dir, strings.TrimSuffix(mk, "\x00"), "mktree", "-z")); id != wantID {
			t.Fatalf("round %d: mktree input gives %s, want %s", round, id, wantID)
		}
	}
	// Every entry removed: an empty tree.
	tr := newTree(raw, len(blob)/2)
	for n := range listing {
		tr.remove(n)
	}
	if body, empty, err := tr.body(); err != nil || !empty || len(body) != 0 {
		t.Fatalf("all removed: %d bytes, empty %v, %v", len(body), empty, err)
	}
	// A malformed body is an error, not a panic.
	if _, _, err := newTree(raw[:len(raw)-3], len(blob)/2).body(); err == nil {
		t.Fatal("a cut tree body was read")
	}
}

// TestObjectWriteExisting: an object already there is not rewritten, and
// its time is refreshed (a prune must not take it before the commit that
// names it lands).
func TestObjectWriteExisting(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	store := objectStore{dir: filepath.Join(dir, ".git", "objects")}
	id, err := store.write("blob", []byte("same\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(gitOutIn(t, dir, "same\n", "hash-object", "--stdin")); id != want {
		t.Fatalf("blob id %s, git %s", id, want)
	}
	p := filepath.Join(store.dir, id[:2], id[2:])
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if again, err := store.write("blob", []byte("same\n")); err != nil || again != id {
		t.Fatalf("second write: %s %v", again, err)
	}
	if fi, _ := os.Stat(p); time.Since(fi.ModTime()) > time.Hour {
		t.Fatalf("the existing object kept its old time %v", fi.ModTime())
	}
	// A folder where the object's folder should be: a clear error, nothing
	// half-written.
	bad := objectStore{dir: filepath.Join(dir, "file")}
	if err := os.WriteFile(bad.dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bad.write("blob", []byte("x")); err == nil || !strings.Contains(err.Error(), "object folder") {
		t.Fatalf("write into a file: %v", err)
	}
}

// TestFastCommitTreesWithoutMktree: the fast commit writes its trees
// itself, and goes through mktree where git would write them differently
// (a shared repository); both give the same commits, fsck-clean.
func TestFastCommitTreesWithoutMktree(t *testing.T) {
	ctx := context.Background()
	for _, shared := range []bool{false, true} {
		dir := newRepo(t, map[string]string{"d/a.md": "a\n", "d/a/b.md": "b\n", "top.md": "t\n"})
		if shared {
			git(t, dir, "config", "core.sharedRepository", "group")
		}
		r := open(t, dir)
		mk, written := mktreeUsed.Load(), commitsWritten.Load()
		for i := range 4 {
			writeFile(t, dir, fmt.Sprintf("d/a/n%d.md", i), "new\n")
			writeFile(t, dir, "d/a.md", fmt.Sprintf("a %d\n", i))
			if _, err := r.Commit(ctx, []string{"d/a.md", fmt.Sprintf("d/a/n%d.md", i)}, "write"); err != nil {
				t.Fatal(err)
			}
		}
		if used := mktreeUsed.Load() - mk; shared != (used == 4) || !shared && used != 0 {
			t.Fatalf("shared %v: mktree used by %d of 4 commits", shared, used)
		}
		if n := commitsWritten.Load() - written; shared != (n == 0) || !shared && n != 4 {
			t.Fatalf("shared %v: %d of 4 commit objects written without commit-tree", shared, n)
		}
		cleanAndWhole(t, dir)
		if got := gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); got != "d/a.md\nd/a/b.md\nd/a/n0.md\nd/a/n1.md\nd/a/n2.md\nd/a/n3.md\ntop.md" {
			t.Fatalf("shared %v: tree %q", shared, got)
		}
	}
}

func TestFsyncLooseObjects(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "none": false, "loose-object": true, "objects": true, "committed": true, "all": true,
		"all,-loose-object": false, "pack,index": false, "none,objects": true, "objects,none": false, "Added": true,
	} {
		if got := fsyncLooseObjects(v); got != want {
			t.Errorf("core.fsync=%q: %v, want %v", v, got, want)
		}
	}
	// The index: named alone, or by "added" (committed and index) or "all".
	for v, want := range map[string]bool{
		"": false, "committed": false, "objects,reference": false, "index": true, "added": true, "all": true,
		"all,-index": false, "index,none": false,
	} {
		if got := fsyncIndex(v); got != want {
			t.Errorf("core.fsync=%q: index %v, want %v", v, got, want)
		}
	}
	// Refs and their logs: named alone, or by "committed", "added" or "all".
	for v, want := range map[string]bool{
		"": false, "objects": false, "index": false, "reference": true, "committed": true, "added": true, "all": true,
		"all,-reference": false, "committed,none": false,
	} {
		if got := fsyncReferences(v); got != want {
			t.Errorf("core.fsync=%q: references %v, want %v", v, got, want)
		}
	}
}

// TestConfigFsync: loose objects are flushed when core.fsync names them or
// core.fsyncObjectFiles is true (a key with no value is true), whichever
// comes last in the configuration.
func TestConfigFsync(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		lines string
		want  bool
	}{
		{"", false},
		{"\tfsync = loose-object\n", true},
		{"\tfsyncObjectFiles\n\tfsync = none\n", true},
		{"\tfsync = none\n\tfsyncObjectFiles = true\n", true},
		{"\tfsyncObjectFiles = false\n\tfsync = pack\n", false},
	} {
		dir := newRepo(t, map[string]string{"a.md": "a\n"})
		f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("[core]\n" + tc.lines)
		f.Close()
		if got := open(t, dir).config(ctx).fsyncObjects; got != tc.want {
			t.Errorf("%q: fsync %v, want %v", tc.lines, got, tc.want)
		}
	}
}

// gitOutIn runs git with stdin and returns its stdout.
func gitOutIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := gitCmd(dir, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

// TestCommitObjectMatchesCommitTree: the commit object written here is the
// one git commit-tree writes for the same tree, parent, identities, time
// (a zone west of UTC, with minutes) and message.
func TestCommitObjectMatchesCommitTree(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	writeFile(t, dir, "a.md", "a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "init")
	parent := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	tree := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD^{tree}"))
	when := time.Unix(1764600000, 0).In(time.FixedZone("", -(3*3600 + 30*60)))
	msg := withTrailer("docs(vault): update a.md\n\nWhy: ünïcode, tabs\tand spaces  ", CommitOptions{IdempotencyKey: "k1"})
	ids := commitIdents{authorName: "Ada Lovelace", authorEmail: "ada@example.org", committerName: "vaultmcp", committerEmail: "vaultmcp@localhost"}
	got, err := objectStore{dir: filepath.Join(dir, ".git", "objects")}.write("commit", commitBody(tree, parent, ids, when, msg))
	if err != nil {
		t.Fatal(err)
	}
	cmd := gitCmd(dir, "commit-tree", tree, "-p", parent, "-F", "-")
	cmd.Stdin = strings.NewReader(msg)
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.org", "GIT_AUTHOR_DATE=1764600000 -0330",
		"GIT_COMMITTER_NAME=vaultmcp", "GIT_COMMITTER_EMAIL=vaultmcp@localhost", "GIT_COMMITTER_DATE=1764600000 -0330")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("commit %s, commit-tree %s:\n%s", got, want, gitOut(t, dir, "cat-file", "-p", want))
	}
	if zoneOffset(time.Unix(0, 0).In(time.FixedZone("", 5*3600+45*60))) != "+0545" || zoneOffset(time.Unix(0, 0).UTC()) != "+0000" {
		t.Fatal("zone offsets")
	}
}

// TestCommitObjectFallback: where git's identity rules go beyond the
// repository's user.name and user.email, the commit goes through
// commit-tree, and the commit is what those rules give.
func TestCommitObjectFallback(t *testing.T) {
	if _, ok := (repoConfig{}).idents(CommitOptions{}); !ok {
		t.Fatal("no identity configured: the fallback identity is known")
	}
	for _, c := range []repoConfig{
		{hasName: true, name: "Ada.", hasEmail: true, email: "a@x"},
		{hasName: true, name: " Ada", hasEmail: true, email: "a@x"},
		{hasName: true, name: "A<b>", hasEmail: true, email: "a@x"},
		{hasName: true, name: "", hasEmail: true, email: "a@x"},
		{identityRules: true},
	} {
		if _, ok := c.idents(CommitOptions{}); ok {
			t.Errorf("%+v: the identity was taken as known", c)
		}
	}
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	git(t, dir, "config", "user.name", "Ada")
	git(t, dir, "config", "user.email", "ada@example.org")
	git(t, dir, "config", "committer.name", "Committer Config")
	writeFile(t, dir, "a.md", "b\n")
	t.Setenv("GIT_AUTHOR_DATE", "1764600000 +0100")
	sha, err := open(t, dir).Commit(ctx, []string{"a.md"}, "edit")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "log", "-1", "--format=%an <%ae> %at %ai|%cn <%ce>", sha); got != "Ada <ada@example.org> 1764600000 2025-12-01 15:40:00 +0100|Committer Config <ada@example.org>" {
		t.Fatalf("identity = %q", got)
	}
}

// TestFastCommitManyFiles: a commit of more files than ignoreAtOnce (as a
// move makes) asks check-ignore only of the untracked ones, after HEAD's
// trees are read, and looks its entries up by name past scanLookups: the
// same tree, index and status as git commit gives.
func TestFastCommitManyFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell hook")
	}
	ctx := context.Background()
	files := map[string]string{".gitignore": "ignored/\n*.tmp.md\n"}
	for i := range 30 {
		files[fmt.Sprintf("d/n%02d.md", i)] = "old\n"
	}
	fast, slow := newRepo(t, files), newRepo(t, files)
	if err := os.WriteFile(filepath.Join(slow, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 30 {
		paths = append(paths, fmt.Sprintf("d/n%02d.md", i))
	}
	paths = append(paths, "d/new.md", "ignored/x.md", "d/y.tmp.md", "d/gone.md")
	for _, dir := range []string{fast, slow} {
		for i, p := range paths[:30] {
			if i%7 == 3 {
				os.Remove(filepath.Join(dir, filepath.FromSlash(p)))
				continue
			}
			writeFile(t, dir, p, fmt.Sprintf("new %d\n", i))
		}
		writeFile(t, dir, "d/new.md", "n\n")
		writeFile(t, dir, "ignored/x.md", "x\n")
		writeFile(t, dir, "d/y.tmp.md", "y\n")
	}
	before := usedFast.Load()
	sf, err := open(t, fast).Commit(ctx, paths, "many")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := open(t, slow).Commit(ctx, paths, "many")
	if err != nil {
		t.Fatal(err)
	}
	if usedFast.Load() == before {
		t.Fatal("the fast path was not taken")
	}
	if tf, ts := gitOut(t, fast, "rev-parse", sf+"^{tree}"), gitOut(t, slow, "rev-parse", ss+"^{tree}"); tf != ts {
		t.Fatalf("trees differ:\nfast\n%s\ngit\n%s", gitOut(t, fast, "ls-tree", "-r", sf), gitOut(t, slow, "ls-tree", "-r", ss))
	}
	for _, args := range [][]string{{"status", "--porcelain=v1", "--untracked-files=all"}, {"ls-files", "-s"}} {
		if f, s := gitOut(t, fast, args...), gitOut(t, slow, args...); f != s {
			t.Fatalf("git %s differs:\nfast:\n%s\ngit commit:\n%s", strings.Join(args, " "), f, s)
		}
	}
	if got := gitOut(t, fast, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(got, "ignored/") || strings.Contains(got, ".tmp.md") || !strings.Contains(got, "d/new.md") {
		t.Fatalf("committed:\n%s", got)
	}
}
