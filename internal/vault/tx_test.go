package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
)

// linkedVault is a git vault where n notes link to 02-wiki/go/target.md,
// each with a few lines of its own.
func linkedVault(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{
		"02-wiki/go/target.md": "# Target\n\nThe note everyone links to. See [[other]].\n",
		"02-wiki/go/other.md":  "# Other\n\nA second note.\n",
		"02-wiki/go/go-moc.md": "---\ntype: moc\n---\n# Go\n\n## Notes\n- [[target]] — the note everyone links to\n- [[other]] — a second note\n",
	}
	for i := range n {
		files[fmt.Sprintf("notes/n%03d.md", i)] = fmt.Sprintf("# Note %d\n\nFirst line of %d.\nIt links to [[target]] here.\nLast line of %d.\n", i, i, i)
	}
	dir := writeVault(t, files)
	gitInit(t, dir)
	return dir
}

func openAt(t *testing.T, dir string) *Service {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, Now: func() time.Time { return time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// withTxHook sets testHookTx for the test.
func withTxHook(t *testing.T, f func(step string)) {
	t.Helper()
	testHookTx = f
	t.Cleanup(func() { testHookTx = nil })
}

func appendTo(t *testing.T, dir, rel, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, rel), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func gitClean(t *testing.T, dir string) {
	t.Helper()
	if st := gitRun(t, dir, "status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(st) != "" {
		t.Fatalf("the work tree has uncommitted changes:\n%s", st)
	}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d != nil && strings.HasPrefix(d.Name(), ".vaultmcp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestMoveKeepsEditsMadeMeanwhile: while a move is between planning and
// publishing, someone appends a line to every linking note and rewrites
// the very line holding the link in one of them. No line is lost, every
// link is rewritten, and the commit holds the merged files.
func TestMoveKeepsEditsMadeMeanwhile(t *testing.T) {
	const n = 40
	dir := linkedVault(t, n)
	s := openAt(t, dir)
	var once atomic.Bool
	withTxHook(t, func(step string) {
		if step != "synced" || !once.CompareAndSwap(false, true) {
			return
		}
		for i := range n {
			appendTo(t, dir, fmt.Sprintf("notes/n%03d.md", i), fmt.Sprintf("Added meanwhile to %d.\n", i))
		}
		// The same line as the link: cannot be merged, so the move is
		// planned again from this content.
		p := filepath.Join(dir, "notes/n007.md")
		data, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(data), "It links to [[target]] here.", "It now links to [[target]] differently.", 1)), 0o644)
	})
	res, err := s.Move(context.Background(), api.MoveRequest{From: "02-wiki/go/target.md", To: "02-wiki/go/renamed.md"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.NotesRewritten != n+1 {
		t.Fatalf("committed=%v notes rewritten=%d, want %d: %+v", res.Committed, res.NotesRewritten, n+1, res.Warnings)
	}
	for i := range n {
		got := read(t, dir, fmt.Sprintf("notes/n%03d.md", i))
		if !strings.Contains(got, fmt.Sprintf("Added meanwhile to %d.", i)) {
			t.Errorf("n%03d lost the line added meanwhile:\n%s", i, got)
		}
		if !strings.Contains(got, "[[renamed]]") || strings.Contains(got, "[[target]]") {
			t.Errorf("n%03d link not rewritten:\n%s", i, got)
		}
	}
	if got := read(t, dir, "notes/n007.md"); !strings.Contains(got, "It now links to [[renamed]] differently.") {
		t.Errorf("the rewritten line lost its new text:\n%s", got)
	}
	gitClean(t, dir)
	noTemps(t, dir)
	// The lines added meanwhile were not committed when the move published
	// its files: they are committed first, as they were, so that undoing
	// the move gives them back (commitLocal); the move's commit holds its
	// link rewrites only.
	if log := gitRun(t, dir, "log", "--oneline"); strings.Count(log, "\n") != 3 {
		t.Errorf("want the initial commit, the local changes and one move commit:\n%s", log)
	}
	if local := gitRun(t, dir, "show", "HEAD~1:notes/n003.md"); !strings.Contains(local, "Added meanwhile to 3.") || !strings.Contains(local, "[[target]]") {
		t.Errorf("the commit before the move does not hold the line added meanwhile:\n%s", local)
	}
}

// TestEditKeepsEditMadeMeanwhile: an edit merges with a line appended by
// an editor between its read and its rename.
func TestEditKeepsEditMadeMeanwhile(t *testing.T) {
	dir := linkedVault(t, 1)
	s := openAt(t, dir)
	withTxHook(t, func(step string) {
		if step == "synced" {
			appendTo(t, dir, "notes/n000.md", "Typed in Obsidian.\n")
			testHookTx = nil
		}
	})
	if _, err := s.EditNote(context.Background(), api.EditRequest{Path: "notes/n000.md", OldText: "First line", NewText: "Opening line"}); err != nil {
		t.Fatal(err)
	}
	got := read(t, dir, "notes/n000.md")
	if !strings.Contains(got, "Opening line of 0.") || !strings.Contains(got, "Typed in Obsidian.") {
		t.Fatalf("an edit was lost:\n%s", got)
	}
	gitClean(t, dir)
}

// TestReplaceNeverMerges: a replacement made against a hash is refused
// with CONFLICT when the note changes under it, and the editor's text stays.
func TestReplaceNeverMerges(t *testing.T) {
	dir := linkedVault(t, 1)
	s := openAt(t, dir)
	before := read(t, dir, "notes/n000.md")
	withTxHook(t, func(step string) {
		if step == "synced" {
			appendTo(t, dir, "notes/n000.md", "Typed in Obsidian.\n")
			testHookTx = nil
		}
	})
	_, err := s.WriteNote(context.Background(), api.WriteRequest{Path: "notes/n000.md", Content: "# Replaced\n", ExpectedSHA256: sha256Hex([]byte(before))})
	if api.CodeOf(err) != api.CodeConflict {
		t.Fatalf("err = %v, want CONFLICT", err)
	}
	if got := read(t, dir, "notes/n000.md"); got != before+"Typed in Obsidian.\n" {
		t.Fatalf("note = %q", got)
	}
	noTemps(t, dir)
}

// TestCancelBeforeRecordChangesNothing: a cancellation that arrives before
// the commit record leaves the vault exactly as it was.
func TestCancelBeforeRecordChangesNothing(t *testing.T) {
	dir := linkedVault(t, 5)
	s := openAt(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	withTxHook(t, func(step string) {
		if step == "synced" {
			cancel()
		}
	})
	_, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/target.md", To: "02-wiki/go/renamed.md"})
	if api.CodeOf(err) != api.CodeCancelled || api.IsUncertain(err) {
		t.Fatalf("err = %v, want CANCELLED", err)
	}
	gitClean(t, dir)
	noTemps(t, dir)
	if !exists(dir, "02-wiki/go/target.md") || exists(dir, "02-wiki/go/renamed.md") {
		t.Fatal("the move happened")
	}
}

// TestCancelAfterRecordFinishes: once the commit record is written, a
// cancelled caller still gets the whole write, committed.
func TestCancelAfterRecordFinishes(t *testing.T) {
	dir := linkedVault(t, 5)
	s := openAt(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	withTxHook(t, func(step string) {
		if step == "recorded" {
			cancel()
		}
	})
	res, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/target.md", To: "02-wiki/go/renamed.md"})
	if err != nil || !res.Committed {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	gitClean(t, dir)
	if exists(dir, "02-wiki/go/target.md") || !strings.Contains(read(t, dir, "notes/n004.md"), "[[renamed]]") {
		t.Fatal("the move did not finish")
	}
}

// TestCloseWaitsForWrites: closing the service while a write is past its
// commit record waits for it to commit.
func TestCloseWaitsForWrites(t *testing.T) {
	dir := linkedVault(t, 2)
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	reached, resume := make(chan struct{}), make(chan struct{})
	withTxHook(t, func(step string) {
		if step == "recorded" {
			close(reached)
			<-resume
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := s.EditNote(context.Background(), api.EditRequest{Path: "notes/n000.md", OldText: "First line", NewText: "Opening line"})
		done <- err
	}()
	<-reached
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a write was in flight")
	case <-time.After(200 * time.Millisecond):
	}
	close(resume)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-closed
	gitClean(t, dir)
	if _, err := s.EditNote(context.Background(), api.EditRequest{Path: "notes/n001.md", OldText: "First", NewText: "x"}); err == nil {
		t.Fatal("a write after Close succeeded")
	}
	gitClean(t, dir)
}

// TestUndoMergesLaterEdits: undoing a write keeps later edits of other
// lines, and refuses (changing nothing) when a later edit touched the same
// lines.
func TestUndoMergesLaterEdits(t *testing.T) {
	dir := linkedVault(t, 1)
	s := openAt(t, dir)
	res, err := s.EditNote(context.Background(), api.EditRequest{Path: "notes/n000.md", OldText: "First line of 0.", NewText: "Changed line."})
	if err != nil {
		t.Fatal(err)
	}
	appendTo(t, dir, "notes/n000.md", "Later line.\n")
	gitRun(t, dir, "commit", "-qam", "a later edit by the user")
	u, err := s.Undo(context.Background(), api.UndoRequest{Version: res.Version})
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, dir, "notes/n000.md")
	if !strings.Contains(got, "First line of 0.") || !strings.Contains(got, "Later line.") || strings.Contains(got, "Changed line.") {
		t.Fatalf("after undo:\n%s", got)
	}
	if msg := gitRun(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "This reverts commit "+res.Version) || !strings.Contains(msg, "Vaultmcp-Commit: yes") {
		t.Fatalf("undo commit message:\n%s", msg)
	}
	// Undoing the undo brings the edit back; then a same-line edit blocks
	// the next undo.
	if _, err := s.Undo(context.Background(), api.UndoRequest{Version: u.Version}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "notes/n000.md")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "Changed line.", "Changed again.", 1)), 0o644)
	gitRun(t, dir, "commit", "-qam", "same line")
	head := gitRun(t, dir, "rev-parse", "HEAD")
	if _, err := s.Undo(context.Background(), api.UndoRequest{Version: res.Version}); api.CodeOf(err) != api.CodeConflict {
		t.Fatalf("err = %v, want CONFLICT", err)
	}
	if gitRun(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("a refused undo committed")
	}
	gitClean(t, dir)
}

// TestLockDecidedAtOpen: when the git directory cannot be located, Open
// fails loudly instead of moving the write lock somewhere else.
func TestLockDecidedAtOpen(t *testing.T) {
	dir := linkedVault(t, 1)
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --absolute-git-dir ] && { echo 'fatal: broken' >&2; exit 128; }; done\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	s, err := Open(context.Background(), Options{Dir: dir})
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded without a place for the write lock")
	}
	if !strings.Contains(err.Error(), "write lock") {
		t.Fatalf("err = %v", err)
	}
}

// crashSteps are the moments a child process kills itself in
// TestCrashAtAnyStep: before the commit record, just after it, after k
// files were published, and after all were published (before the commit).
var crashSteps = []string{"staged", "synced", "recorded", "published-1", "published-17", "published"}

// TestCrashAtAnyStep kills a real process (SIGKILL) at each step of a
// large move; the next start leaves the vault entirely before or entirely
// after the move, committed, with no broken link that was not broken before.
func TestCrashAtAnyStep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, step := range crashSteps {
		t.Run(step, func(t *testing.T) {
			const n = 30
			dir := linkedVault(t, n)
			broken := brokenLinks(t, dir)
			runChild(t, dir, step)
			s := openAt(t, dir) // recovery runs at start
			s.Close()
			gitClean(t, dir)
			noTemps(t, dir)
			before := exists(dir, "02-wiki/go/target.md") && !exists(dir, "02-wiki/go/renamed.md")
			after := !exists(dir, "02-wiki/go/target.md") && exists(dir, "02-wiki/go/renamed.md")
			if !before && !after {
				t.Fatal("the note is under both names or neither")
			}
			want := "[[target]]"
			if after {
				want = "[[renamed]]"
			}
			for i := range n {
				if got := read(t, dir, fmt.Sprintf("notes/n%03d.md", i)); !strings.Contains(got, want) {
					t.Fatalf("state is half-way: n%03d lacks %s:\n%s", i, want, got)
				}
			}
			if got := brokenLinks(t, dir); got != broken {
				t.Fatalf("broken links %d, were %d", got, broken)
			}
			wantAfter := step != "staged" && step != "synced"
			if after != wantAfter {
				t.Fatalf("after=%v, want %v for a crash at %s", after, wantAfter, step)
			}
		})
	}
}

// A vault in no git repository keeps its write journal in
// Options.StateDir: a move killed after its commit record is finished at
// the next start even when the temporary folder was emptied meanwhile (a
// reboot); a record an earlier vaultmcp left in the temporary folder is
// finished too.
func TestCrashNoGitJournalOutlivesReboot(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const n = 12
	for _, tc := range []struct {
		name       string
		childState bool // the killed process kept its journal in the state folder
	}{{"state folder", true}, {"left in the temporary folder", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := linkedVault(t, n)
			if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			state := t.TempDir()
			sum := sha256.Sum256([]byte(dir))
			base := "vaultmcp-" + hex.EncodeToString(sum[:8])
			tmpJournal := filepath.Join(os.TempDir(), base+"-journal")
			t.Cleanup(func() { os.RemoveAll(tmpJournal) })
			childState := ""
			if tc.childState {
				childState = state
			}
			runChildIn(t, dir, "recorded", childState)
			recs, _ := filepath.Glob(filepath.Join(state, base+"-journal", "*"))
			if tc.childState {
				if len(recs) != 1 {
					t.Fatalf("%d records in the state folder, want the move's", len(recs))
				}
				os.RemoveAll(tmpJournal) // the reboot empties the temporary folder
			} else if len(recs) != 0 {
				t.Fatalf("records in the state folder from a process that kept none there: %v", recs)
			}
			s, err := Open(context.Background(), Options{Dir: dir, StateDir: state})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Ready(context.Background()); err != nil {
				t.Fatal(err)
			}
			s.Close()
			noTemps(t, dir)
			if exists(dir, "02-wiki/go/target.md") || !exists(dir, "02-wiki/go/renamed.md") {
				t.Fatal("the move recorded before the crash was not finished")
			}
			for i := range n {
				if got := read(t, dir, fmt.Sprintf("notes/n%03d.md", i)); !strings.Contains(got, "[[renamed]]") {
					t.Fatalf("n%03d lacks [[renamed]]:\n%s", i, got)
				}
			}
			for _, j := range []string{filepath.Join(state, base+"-journal"), tmpJournal} {
				if left, _ := filepath.Glob(filepath.Join(j, "*")); len(left) != 0 {
					t.Errorf("records left after the recovery: %v", left)
				}
			}
		})
	}
}

// runChild runs TestCrashChild in a new process that kills itself with
// SIGKILL at step of a move in dir.
func runChild(t *testing.T, dir, step string) {
	t.Helper()
	runChildIn(t, dir, step, "")
}

// runChildIn is runChild with the child's Options.StateDir.
func runChildIn(t *testing.T, dir, step, state string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VAULTMCP_CRASH_DIR="+dir, "VAULTMCP_CRASH_STEP="+step, "VAULTMCP_CRASH_STATE="+state)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err == nil || !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed (err %v):\n%s", err, out)
	}
}

// TestCrashChild is the child process of TestCrashAtAnyStep.
func TestCrashChild(t *testing.T) {
	dir, step := os.Getenv("VAULTMCP_CRASH_DIR"), os.Getenv("VAULTMCP_CRASH_STEP")
	if dir == "" {
		t.Skip("run by TestCrashAtAnyStep")
	}
	s, err := Open(context.Background(), Options{Dir: dir, StateDir: os.Getenv("VAULTMCP_CRASH_STATE")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill() // SIGKILL
		}
		select {}
	}
	var published atomic.Int64
	want := int64(-1)
	if k, ok := strings.CutPrefix(step, "published-"); ok {
		n, _ := strconv.Atoi(k)
		want = int64(n)
	}
	testHookTx = func(got string) {
		switch {
		case got == "published-one":
			if published.Add(1) == want {
				kill()
			}
		case got == step:
			kill()
		}
	}
	if step == "staged" {
		testHookStaged = func(n int) {
			if n == 10 {
				kill()
			}
		}
	}
	_, err = s.Move(context.Background(), api.MoveRequest{From: "02-wiki/go/target.md", To: "02-wiki/go/renamed.md"})
	t.Fatalf("the move returned without being killed: %v", err)
}

func brokenLinks(t *testing.T, dir string) int {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := s.Graph(context.Background(), api.GraphRequest{IncludeBroken: true, MaxNodes: 5000})
	if err != nil {
		t.Fatal(err)
	}
	return g.BrokenCount
}

// TestLocalChangesCommitNotTheWrite: the commit that keeps a note's
// uncommitted changes before a write is not taken for the write: it
// carries neither the write's idempotency key (which says the write was
// applied) nor its changes; the write's commit carries both.
func TestLocalChangesCommitNotTheWrite(t *testing.T) {
	dir, s := gitVault(t)
	ctx := api.WithWriteMeta(context.Background(), api.WriteMeta{IdempotencyKey: "key-17", Author: "alice", Email: "alice@example.com"})
	appendTo(t, dir, "02-wiki/db/pool.md", "Local line.\n")
	res, err := s.EditNote(ctx, api.EditRequest{Path: "02-wiki/db/pool.md", OldText: "Size the pool", NewText: "Size each pool"})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitRun(t, dir, "log", "-1", "--format=%B", res.Version+"^"); strings.Contains(got, gitx.IdempotencyTrailer) {
		t.Errorf("the local changes' commit carries the idempotency key:\n%s", got)
	}
	if got := gitRun(t, dir, "log", "-1", "--format=%B", res.Version); !strings.Contains(got, gitx.IdempotencyTrailer+": key-17") {
		t.Errorf("the write's commit lacks its idempotency key:\n%s", got)
	}
	if got := gitRun(t, dir, "show", res.Version+"^:02-wiki/db/pool.md"); !strings.Contains(got, "Local line.") || strings.Contains(got, "Size each pool") {
		t.Errorf("the local changes' commit holds:\n%s", got)
	}
	// The writer (a team server's key holder) made the write, not the
	// local changes: those are signed by the repository's identity.
	if got := gitRun(t, dir, "log", "-1", "--format=%an", res.Version); strings.TrimSpace(got) != "alice" {
		t.Errorf("the write's author is %q, want alice", got)
	}
	if got := gitRun(t, dir, "log", "-1", "--format=%an", res.Version+"^"); strings.TrimSpace(got) == "alice" {
		t.Errorf("the local changes' commit is authored by the writer")
	}
}

// TestReadDuringRecovery: a note asked for while a start finishes the write
// a crash interrupted (here a move, rolled forward) is looked for where
// that write leaves it, not where the crash left it.
func TestReadDuringRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := linkedVault(t, 5)
	runChild(t, dir, "recorded") // after the commit record: rolled forward
	release := make(chan struct{})
	testHookBuildStart = func() { <-release }
	defer func() { testHookBuildStart = nil }()
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if exists(dir, "02-wiki/go/renamed.md") || !exists(dir, "02-wiki/go/target.md") {
		t.Fatal("the crash did not leave the note under its old name")
	}
	waiting := func() (context.Context, chan struct{}) {
		c := make(chan struct{})
		var once sync.Once
		return api.WithProgress(context.Background(), func(int, int, string) { once.Do(func() { close(c) }) }), c
	}
	blCtx, blWaiting := waiting()
	blc := make(chan error, 1)
	var bl *api.BacklinksResult
	go func() {
		var err error
		bl, err = s.Backlinks(blCtx, api.BacklinksRequest{Path: "02-wiki/go/renamed.md"})
		blc <- err
	}()
	getCtx, getWaiting := waiting()
	getc := make(chan error, 1)
	go func() {
		_, err := s.GetNote(getCtx, api.NoteRequest{Path: "02-wiki/go/renamed.md"})
		getc <- err
	}()
	<-blWaiting // both looked at the path and wait for the build
	<-getWaiting
	close(release)
	if err := <-blc; err != nil {
		t.Fatalf("backlinks of the note the interrupted move created: %v", err)
	}
	if bl.Total != 6 {
		t.Fatalf("backlinks: %d notes, want 6", bl.Total)
	}
	if err := <-getc; err != nil {
		t.Fatalf("get of the note the interrupted move created: %v", err)
	}
	if _, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: "02-wiki/go/target.md"}); err == nil {
		t.Fatal("the moved note is still found under its old name")
	}
}
