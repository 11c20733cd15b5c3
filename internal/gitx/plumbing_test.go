package gitx

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestFastCommitMatchesGitCommit runs the same random sequence of writes in
// two repositories, one committing through the fast path and one through
// `git commit` (a no-op commit hook makes it fall back): every commit has
// the same tree, and the index and the work tree end up the same, the
// user's own staged and unstaged changes included.
//
// It runs with each index version the fast commit updates itself (2; 3,
// which an intent-to-add entry's extended flags make; 4, whose paths are
// prefix-compressed), and with a split index, which it leaves to git
// update-index; the index must also give git write-tree the same tree (a
// cache tree left valid where it is not would not).
func TestFastCommitMatchesGitCommit(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell hook")
	}
	for _, tc := range []struct {
		name    string
		version string // of the index file
		setup   []string
		toGit   bool // the index update is left to update-index
		// noRules: no ignore rule anywhere (no .gitignore): new files are
		// known not to be ignored without asking git.
		noRules bool
	}{
		{name: "index v2", version: "2"},
		{name: "no ignore rules", version: "2", noRules: true},
		// core.fileMode false: the executable bit is not trusted; a
		// tracked file keeps its mode, a new one is 100644.
		{name: "fileMode false", version: "2", setup: []string{"config", "core.fileMode", "false"}},
		{name: "index v3", version: "3", setup: []string{"add", "-N", "keep/ita.md"}},
		{name: "index v4", version: "4", setup: []string{"update-index", "--index-version", "4"}},
		{name: "split index", version: "2", setup: []string{"update-index", "--split-index"}, toGit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written, toGit := indexWritten.Load(), indexToGit.Load()
			fastMatchesGitCommit(t, tc.setup, tc.noRules)
			if got := indexVersion(t, filepath.Join(fastDirOf(t), ".git", "index")); got != tc.version {
				t.Errorf("index version %s, want %s", got, tc.version)
			}
			if tc.toGit && indexWritten.Load() != written {
				t.Error("the index was written here, not by git update-index")
			}
			if !tc.toGit && (indexWritten.Load() == written || indexToGit.Load() != toGit) {
				t.Errorf("index updates: %d here, %d by git; want all here", indexWritten.Load()-written, indexToGit.Load()-toGit)
			}
		})
	}
}

var lastFastDir = map[string]string{}

func fastDirOf(t *testing.T) string { return lastFastDir[t.Name()] }

// indexVersion is the version field of an index file.
func indexVersion(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 8 {
		t.Fatalf("index: %v", err)
	}
	return strconv.Itoa(int(binary.BigEndian.Uint32(b[4:8])))
}

func fastMatchesGitCommit(t *testing.T, setup []string, noRules bool) {
	ctx := context.Background()
	files := map[string]string{"a.md": "a\n", "dir/b.md": "b\n", "dir/sub/c.md": "c\n", "keep/user.md": "user\n", ".gitignore": "ignored/\n"}
	if noRules {
		delete(files, ".gitignore")
	}
	fast, slow := newRepo(t, files), newRepo(t, files)
	hook := filepath.Join(slow, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{fast, slow} {
		// The user's own work in progress, which must stay as it is.
		writeFile(t, dir, "keep/user.md", "user, staged\n")
		git(t, dir, "add", "keep/user.md")
		writeFile(t, dir, "keep/user.md", "user, staged, then edited\n")
		writeFile(t, dir, "keep/ita.md", "intent to add\n")
		if setup != nil {
			git(t, dir, setup...)
		}
	}
	lastFastDir[t.Name()] = fast
	rf, rs := open(t, fast), open(t, slow)
	rng := rand.New(rand.NewSource(7))
	names := []string{"a.md", "dir/b.md", "dir/sub/c.md", "new/n1.md", "new/deep/n2.md", "dir/sub/d.md", "ignored/x.md", "sp ace/ñ.md"}
	before := usedFast.Load()
	blobs, cached, refs := blobsMade.Load(), treesCached.Load(), refsWritten.Load()
	for step := range 40 {
		var touched []string
		for _, n := range names {
			if rng.Intn(3) != 0 {
				continue
			}
			touched = append(touched, n)
			op := rng.Intn(3)
			for _, dir := range []string{fast, slow} {
				p := filepath.Join(dir, filepath.FromSlash(n))
				switch op {
				case 0:
					os.Remove(p)
				case 1:
					writeFile(t, dir, n, fmt.Sprintf("step %d of %s\n", step, n))
				case 2:
					writeFile(t, dir, n, fmt.Sprintf("exec %d\n", step))
					os.Chmod(p, 0o755)
				}
			}
		}
		msg := fmt.Sprintf("step %d", step)
		sf, ef := rf.Commit(ctx, touched, msg)
		ss, es := rs.Commit(ctx, touched, msg)
		if (ef == nil) != (es == nil) {
			t.Fatalf("step %d: fast err %v, git commit err %v", step, ef, es)
		}
		if ef != nil {
			continue
		}
		if tf, ts := gitOut(t, fast, "rev-parse", sf+"^{tree}"), gitOut(t, slow, "rev-parse", ss+"^{tree}"); tf != ts {
			t.Fatalf("step %d: trees differ:\nfast %s\n%s\ngit  %s\n%s", step, tf, gitOut(t, fast, "ls-tree", "-r", sf), ts, gitOut(t, slow, "ls-tree", "-r", ss))
		}
		if mf, ms := gitOut(t, fast, "log", "-1", "--format=%B"), gitOut(t, slow, "log", "-1", "--format=%B"); mf != ms {
			t.Fatalf("step %d: messages differ: %q vs %q", step, mf, ms)
		}
	}
	if usedFast.Load() == before {
		t.Fatal("the fast path was never taken")
	}
	// Blobs, HEAD's trees and the branch move were made here, not by git,
	// on most commits (the first reads HEAD's trees from git).
	if made, fromCache, moved := blobsMade.Load()-blobs, treesCached.Load()-cached, refsWritten.Load()-refs; made == 0 || fromCache == 0 || moved == 0 {
		t.Fatalf("blobs made here %d, trees from the cache %d, branch moves here %d: want all > 0", made, fromCache, moved)
	}
	branch := gitOut(t, fast, "symbolic-ref", "HEAD")
	for _, args := range [][]string{
		{"status", "--porcelain=v1", "--untracked-files=all"}, {"diff", "--cached", "--name-status"}, {"ls-files", "-s"}, {"write-tree", "--missing-ok"},
		// The logs of HEAD and of the branch: the same entries, by the same
		// committer, with the same messages.
		{"reflog", "show", "--format=%gs|%gn|%ge", "HEAD"}, {"reflog", "show", "--format=%gs|%gn|%ge", branch},
	} {
		if f, s := gitOut(t, fast, args...), gitOut(t, slow, args...); f != s {
			t.Fatalf("git %s differs:\nfast:\n%s\ngit commit:\n%s", strings.Join(args, " "), f, s)
		}
	}
}

// TestFastCommitUserCommitsMeanwhile: the user's branch moves between the
// fast commit's commit object and its branch move (a commit made with
// another index: the fast commit holds index.lock by then, as git commit
// does); their commit is kept and ours goes on top of it.
func TestFastCommitUserCommitsMeanwhile(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "a\n", "u.md": "u\n"})
	writeFile(t, dir, "a.md", "ours\n")
	once := false
	testHookBeforeUpdateRef = func() {
		if once {
			return
		}
		once = true
		writeFile(t, dir, "u.md", "the user's commit\n")
		other := filepath.Join(t.TempDir(), "index")
		for _, args := range [][]string{{"read-tree", "HEAD"}, {"add", "u.md"}, {"commit", "-qm", "user: meanwhile"}} {
			cmd := gitCmd(dir, args...)
			cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+other)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	defer func() { testHookBeforeUpdateRef = nil }()
	sha, err := open(t, dir).Commit(ctx, []string{"a.md"}, "ours")
	if err != nil {
		t.Fatal(err)
	}
	if log := gitOut(t, dir, "log", "--format=%s", sha); log != "ours\nuser: meanwhile\nuser: initial" {
		t.Fatalf("history:\n%s", log)
	}
	if got := gitOut(t, dir, "show", "HEAD:u.md"); got != "the user's commit" {
		t.Fatalf("the user's commit was lost: %q", got)
	}
	// Our path is committed and in the index; u.md is as the user's other
	// index left the main one.
	if st := gitOut(t, dir, "status", "--porcelain", "--", "a.md"); st != "" {
		t.Fatalf("status = %q", st)
	}
}

// TestFastCommitSHA256: a repository with SHA-256 object names.
func TestFastCommitSHA256(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := gitCmd(dir, "init", "-q", "--object-format=sha256").Run(); err != nil {
		t.Skip("git without SHA-256 repositories")
	}
	writeFile(t, dir, "d/a.md", "a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "user: initial")
	writeFile(t, dir, "d/a.md", "b\n")
	writeFile(t, dir, "d/e/new.md", "n\n")
	before, written := usedFast.Load(), indexWritten.Load()
	sha, err := open(t, dir).Commit(ctx, []string{"d/a.md", "d/e/new.md"}, "sha256")
	if err != nil {
		t.Fatal(err)
	}
	if len(sha) != 64 || usedFast.Load() == before {
		t.Fatalf("sha %q, fast path %v", sha, usedFast.Load() > before)
	}
	if indexWritten.Load() == written {
		t.Fatal("the SHA-256 index was left to git")
	}
	if got := gitOut(t, dir, "write-tree"); got != gitOut(t, dir, "rev-parse", sha+"^{tree}") {
		t.Fatalf("write-tree %s, committed tree %s", got, gitOut(t, dir, "rev-parse", sha+"^{tree}"))
	}
	cleanAndWhole(t, dir)
}

// TestCommitSetupCached: the configuration, hooks folder and index lock
// path are asked of git once for many commits, and again as soon as a
// configuration file changes: commit signing switched on after the first
// commits takes the commit through `git commit` at once, and so does a
// hook installed meanwhile (looked for at every commit).
func TestCommitSetupCached(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell hook")
	}
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	r := open(t, dir)
	commit := func(i int) {
		t.Helper()
		writeFile(t, dir, "a.md", fmt.Sprintf("step %d\n", i))
		if _, err := r.Commit(ctx, []string{"a.md"}, fmt.Sprintf("step %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	fast := usedFast.Load()
	for i := range 5 {
		commit(i)
	}
	if r.setups.asks != 1 || usedFast.Load()-fast != 5 {
		t.Fatalf("5 commits asked the setup %d times, %d fast", r.setups.asks, usedFast.Load()-fast)
	}
	// An include makes the configuration uncacheable.
	git(t, dir, "config", "include.path", filepath.Join(t.TempDir(), "absent.inc"))
	commit(5)
	commit(6)
	if r.setups.asks != 3 {
		t.Fatalf("with an include the setup was asked %d times, want 3", r.setups.asks)
	}
	git(t, dir, "config", "--unset", "include.path")
	// Signing on: the configuration file changed, so it is read again and
	// the commit is not made by the fast path (git commit then fails for
	// want of a key, which is what the user asked for).
	git(t, dir, "config", "commit.gpgsign", "true")
	git(t, dir, "config", "gpg.program", "false")
	fast = usedFast.Load()
	writeFile(t, dir, "a.md", "signed\n")
	if _, err := r.Commit(ctx, []string{"a.md"}, "signed"); err == nil {
		t.Fatal("a commit with signing on and no signing program succeeded")
	}
	if usedFast.Load() != fast {
		t.Fatal("a commit with signing on went through the fast path")
	}
	git(t, dir, "config", "commit.gpgsign", "false")
	hook := filepath.Join(dir, ".git", "hooks", "post-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho hooked > \"$(git rev-parse --git-dir)/hooked\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit(7)
	if usedFast.Load() != fast {
		t.Fatal("a commit with a post-commit hook went through the fast path")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooked")); err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
}
