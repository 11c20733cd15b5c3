package gitx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyDir copies a folder (a repository) file by file.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// twoCommits makes a repository whose branch is at a first commit, and a
// second commit on top of it that no ref names yet.
func twoCommits(t *testing.T) (dir, old, next string) {
	dir = newRepo(t, map[string]string{"a.md": "a\n"})
	old = gitOut(t, dir, "rev-parse", "HEAD")
	next = gitOut(t, dir, "commit-tree", old+"^{tree}", "-p", old, "-m", "next")
	return dir, old, next
}

func readOr(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestUpdateHeadRefMatchesGit: the branch move made here leaves the branch
// and the logs of HEAD and of the branch byte for byte as git update-ref
// leaves them in a copy of the same repository, with the same committer,
// time and message: logs created by default, not created with
// core.logAllRefUpdates false (but added to when they exist), messages
// with runs of blanks, time zones either side of UTC.
func TestUpdateHeadRefMatchesGit(t *testing.T) {
	for _, tc := range []struct {
		name, logAll, msg string
		dropLogs          bool
		zone              int // seconds east of UTC
	}{
		{name: "default", msg: "commit: a note", zone: 90 * 60},
		{name: "blanks in the message", msg: "  commit:\tmany   blanks\t here  ", zone: -8 * 3600},
		{name: "no logs, logAllRefUpdates false", logAll: "false", msg: "commit: x", dropLogs: true},
		{name: "logs kept, logAllRefUpdates false", logAll: "false", msg: "commit: y"},
		{name: "no logs, default", msg: "commit: z", dropLogs: true},
		{name: "no logs, always", logAll: "always", msg: "commit: w", dropLogs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, old, next := twoCommits(t)
			if tc.logAll != "" {
				git(t, ours, "config", "core.logAllRefUpdates", tc.logAll)
			}
			if tc.dropLogs {
				os.RemoveAll(filepath.Join(ours, ".git", "logs"))
			}
			theirs := filepath.Join(t.TempDir(), "twin")
			copyDir(t, ours, theirs)
			when := time.Unix(1_700_000_000, 0).In(time.FixedZone("", tc.zone))
			gd := filepath.Join(ours, ".git")
			branch := gitOut(t, ours, "symbolic-ref", "HEAD")
			err := updateHeadRef(refUpdate{gitDir: gd, commonDir: gd, branch: branch, old: old, new: next,
				committer: "t <t@example.com>", when: when, message: tc.msg, logAll: strings.ToLower(tc.logAll)})
			if err != nil {
				t.Fatal(err)
			}
			cmd := gitCmd(theirs, "update-ref", "-m", tc.msg, "HEAD", next, old)
			cmd.Env = append(cmd.Env, fmt.Sprintf("GIT_COMMITTER_DATE=@%d %s", when.Unix(), zoneOffset(when)))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git update-ref: %v\n%s", err, out)
			}
			for _, f := range []string{branch, "logs/HEAD", "logs/" + branch, "HEAD", branch + ".lock", "HEAD.lock"} {
				o, g := readOr(filepath.Join(ours, ".git", f)), readOr(filepath.Join(theirs, ".git", f))
				o = strings.ReplaceAll(o, ours, "<repo>")
				g = strings.ReplaceAll(g, theirs, "<repo>")
				if o != g {
					t.Errorf("%s differs:\nhere: %q\ngit:  %q", f, o, g)
				}
			}
		})
	}
}

// TestUpdateHeadRefRefuses: a lock another program holds, a branch that
// moved, a detached HEAD or a branch only in packed-refs change nothing and
// say so (errRefFallback hands the move to git, errHeadMoved builds the
// commit again).
func TestUpdateHeadRefRefuses(t *testing.T) {
	dir, old, next := twoCommits(t)
	gd := filepath.Join(dir, ".git")
	branch := gitOut(t, dir, "symbolic-ref", "HEAD")
	u := refUpdate{gitDir: gd, commonDir: gd, branch: branch, old: old, new: next, committer: "t <t@example.com>", when: time.Now(), message: "m"}
	logBefore := readOr(filepath.Join(gd, "logs", "HEAD"))
	unchanged := func(what string) {
		t.Helper()
		if got := gitOut(t, dir, "rev-parse", "HEAD"); got != old {
			t.Fatalf("%s: HEAD moved to %s", what, got)
		}
		if got := readOr(filepath.Join(gd, "logs", "HEAD")); got != logBefore {
			t.Fatalf("%s: HEAD's log changed", what)
		}
	}
	for _, lock := range []string{branch + ".lock", "HEAD.lock"} {
		p := filepath.Join(gd, filepath.FromSlash(lock))
		writeFile(t, gd, lock, "held\n")
		if err := updateHeadRef(u); !errors.Is(err, errRefFallback) {
			t.Fatalf("%s held: %v, want errRefFallback", lock, err)
		}
		if got := readOr(p); got != "held\n" {
			t.Fatalf("%s held: the other program's lock was touched: %q", lock, got)
		}
		os.Remove(p)
		unchanged(lock + " held")
	}
	moved := u
	moved.old = next
	if err := updateHeadRef(moved); !errors.Is(err, errHeadMoved) {
		t.Fatalf("branch not at old: %v, want errHeadMoved", err)
	}
	unchanged("branch moved")
	for _, lock := range []string{branch + ".lock", "HEAD.lock"} {
		if _, err := os.Lstat(filepath.Join(gd, filepath.FromSlash(lock))); err == nil {
			t.Fatalf("%s left behind", lock)
		}
	}
	if _, ok := readHead(gd, gd, 20); !ok {
		t.Fatal("a plain HEAD was not read")
	}
	git(t, dir, "pack-refs", "--all")
	if _, ok := readHead(gd, gd, 20); ok {
		t.Fatal("a branch only in packed-refs was read from the files")
	}
	git(t, dir, "checkout", "-q", "--detach")
	if _, ok := readHead(gd, gd, 20); ok {
		t.Fatal("a detached HEAD was read as a branch")
	}
	if err := updateHeadRef(u); !errors.Is(err, errRefFallback) {
		t.Fatalf("detached HEAD: %v, want errRefFallback", err)
	}
}

// TestFastCommitReferenceTransactionHook: with a reference-transaction hook
// installed, the branch is moved by git, which runs it.
func TestFastCommitReferenceTransactionHook(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	hook := filepath.Join(dir, ".git", "hooks", "reference-transaction")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"$1\" >> \"$(git rev-parse --git-dir)/ref-hook\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	before, refs := usedFast.Load(), refsWritten.Load()
	writeFile(t, dir, "a.md", "b\n")
	commitOne(t, r, "a.md")
	if usedFast.Load() == before || refsWritten.Load() != refs {
		t.Fatalf("fast %d, branch moves here %d: want the fast commit, the branch moved by git", usedFast.Load()-before, refsWritten.Load()-refs)
	}
	if got := readOr(filepath.Join(dir, ".git", "ref-hook")); !strings.Contains(got, "committed") {
		t.Fatalf("the hook did not run: %q", got)
	}
}

// TestTreeCacheBudget: past its budget, the cache keeps only the trees the
// last commit used.
func TestTreeCacheBudget(t *testing.T) {
	c := &treeCache{limit: 100}
	c.put("old", make([]byte, 80))
	c.endCommit()
	c.put("new", make([]byte, 80))
	c.endCommit()
	if _, ok := c.bodies["old"]; ok {
		t.Fatal("a tree unused by the last commit was kept past the budget")
	}
	if _, ok := c.bodies["new"]; !ok || c.size != 80 {
		t.Fatalf("the last commit's tree was dropped (size %d)", c.size)
	}
	for i := range treeCacheCommits + 2 {
		c.putRoot(fmt.Sprint("commit", i), "new")
	}
	if len(c.roots) != treeCacheCommits || c.roots["commit0"] != "" {
		t.Fatalf("%d commits kept, want the last %d", len(c.roots), treeCacheCommits)
	}
}

// TestFastCommitLinkedWorktree: in a linked work tree (its own HEAD, index
// and logs in .git/worktrees/<name>, the branches and objects shared) the
// fast commit moves the work tree's branch alone, logs it where git does,
// reads HEAD's trees from its cache on the second commit, and honours the
// shared info/exclude.
func TestFastCommitLinkedWorktree(t *testing.T) {
	main := newRepo(t, map[string]string{"a.md": "a\n"})
	linked := filepath.Join(t.TempDir(), "linked")
	git(t, main, "worktree", "add", "-q", "-b", "side", linked)
	writeFile(t, main, ".git/info/exclude", "*.tmp.md\n")
	mainHead := gitOut(t, main, "rev-parse", "HEAD")
	r := open(t, linked)
	refs, cached := refsWritten.Load(), treesCached.Load()
	for i := range 2 {
		writeFile(t, linked, "a.md", fmt.Sprintf("side %d\n", i))
		commitOne(t, r, "a.md")
	}
	if refsWritten.Load()-refs != 2 || treesCached.Load() == cached {
		t.Fatalf("branch moves here %d (want 2), trees from the cache %d", refsWritten.Load()-refs, treesCached.Load()-cached)
	}
	if got := gitOut(t, main, "rev-parse", "HEAD"); got != mainHead {
		t.Fatal("the main work tree's branch moved")
	}
	if got := gitOut(t, main, "show", "side:a.md"); got != "side 1" {
		t.Fatalf("side:a.md = %q", got)
	}
	if got := gitOut(t, linked, "reflog", "show", "--format=%gs", "HEAD"); !strings.HasPrefix(got, "commit: vault: edit\ncommit: vault: edit\n") {
		t.Fatalf("the linked work tree's HEAD log:\n%s", got)
	}
	if got := gitOut(t, linked, "reflog", "show", "--format=%gs", "side"); !strings.HasPrefix(got, "commit: vault: edit\ncommit: vault: edit\n") {
		t.Fatalf("the branch's log:\n%s", got)
	}
	writeFile(t, linked, "x.tmp.md", "scratch\n")
	if _, err := r.Commit(t.Context(), []string{"x.tmp.md"}, "scratch"); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("a file the shared info/exclude ignores: %v, want ErrNothingToCommit", err)
	}
	cleanAndWhole(t, linked)
}

// TestFastCommitRacesUserCommits: the user commits (git commit, which
// takes index.lock, HEAD.lock and the branch's lock as the fast commit
// does) while the fast commit commits too, both again and again. Either
// side may be refused a lock for a moment, as two gits would be, but no
// commit that was made is ever lost: every one either side was told of is
// in the history, and the repository is whole.
func TestFastCommitRacesUserCommits(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.md": "a\n"})
	r := open(t, dir)
	r.lockRetries, r.lockWait = 20, 5*time.Millisecond
	var theirs []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 15 {
			cmd := gitCmd(dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("user %d", i))
			if cmd.Run() == nil {
				if out, err := gitCmd(dir, "log", "-1", "--format=%H", "--grep", fmt.Sprintf("^user %d$", i)).Output(); err == nil {
					theirs = append(theirs, strings.TrimSpace(string(out)))
				}
			}
			time.Sleep(3 * time.Millisecond)
		}
	}()
	var ours []string
	for i := range 15 {
		writeFile(t, dir, "a.md", fmt.Sprintf("ours %d\n", i))
		if sha, err := r.Commit(t.Context(), []string{"a.md"}, fmt.Sprintf("ours %d", i)); err == nil {
			ours = append(ours, sha)
		}
	}
	<-done
	t.Logf("%d commits of ours, %d of the user's", len(ours), len(theirs))
	if len(ours) == 0 || len(theirs) == 0 {
		t.Fatalf("%d commits of ours and %d of the user's were made: want some of each", len(ours), len(theirs))
	}
	history := gitOut(t, dir, "rev-list", "HEAD")
	for _, sha := range append(ours, theirs...) {
		if sha == "" || !strings.Contains(history, sha) {
			t.Fatalf("commit %q was lost; history:\n%s", sha, history)
		}
	}
	whole(t, dir)
}
