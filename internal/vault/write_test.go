package vault

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/writelock"
	"golang.org/x/text/unicode/norm"
)

func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitInit makes dir a git repository, with an identity, holding one commit
// of everything in it.
func gitInit(t testing.TB, dir string) {
	t.Helper()
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "config", "user.name", "u")
	gitRun(t, dir, "config", "user.email", "u@x")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "initial")
}

// gitVault is the test vault in a git repository with one commit.
func gitVault(t *testing.T) (string, *Service) {
	t.Helper()
	dir := writeVault(t, testVault)
	gitInit(t, dir)
	s, err := Open(context.Background(), Options{Dir: dir, Now: func() time.Time { return time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return dir, s
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lastCommitFiles lists the paths of HEAD's commit.
func lastCommitFiles(t *testing.T, dir string) []string {
	out := strings.TrimSpace(gitRun(t, dir, "show", "--no-renames", "--name-only", "--format=", "HEAD"))
	return strings.Split(out, "\n")
}

func TestWriteNoteCreateAndReplace(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	res, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/new-note.md", Content: "# New note\n\nzanzibar quokka\n", Frontmatter: map[string]any{"tags": []any{"go"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, dir, "02-wiki/go/new-note.md")
	want := "---\ntype: note\ntags: [go]\ncreated: 2026-11-29\n---\n# New note\n\nzanzibar quokka\n"
	if got != want {
		t.Fatalf("content:\n%s\nwant:\n%s", got, want)
	}
	if res.Pushed != nil { // no push attempted without VAULT_AUTO_PUSH
		t.Fatalf("push reported: %v", *res.Pushed)
	}
	if res.Action != api.ActionCreated || !res.Committed || len(res.Version) != 40 || res.SHA256 != sha256Hex([]byte(want)) || !strings.Contains(res.Diff, "+zanzibar quokka") {
		t.Fatalf("result %+v", res)
	}
	if f := lastCommitFiles(t, dir); len(f) != 1 || f[0] != "02-wiki/go/new-note.md" {
		t.Fatalf("commit files %v", f)
	}
	// The index reflects the write at once.
	if r := search(t, s, api.SearchRequest{Query: "zanzibar quokka"}); len(r.Results) == 0 || r.Results[0].Path != "02-wiki/go/new-note.md" {
		t.Fatalf("not searchable: %v", paths(r))
	}
	// Replacing needs the current hash.
	_, err = s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/new-note.md", Content: "x"})
	if api.CodeOf(err) != api.CodeConflict || !strings.Contains(err.Error(), res.SHA256) {
		t.Fatalf("no hash: %v", err)
	}
	_, err = s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/new-note.md", Content: "x", ExpectedSHA256: strings.Repeat("0", 64)})
	if api.CodeOf(err) != api.CodeConflict || !strings.Contains(err.Error(), res.SHA256) {
		t.Fatalf("stale hash: %v", err)
	}
	if read(t, dir, "02-wiki/go/new-note.md") != want {
		t.Fatal("a refused replace changed the note")
	}
	res2, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/new-note.md", Content: "# Replaced\n", ExpectedSHA256: res.SHA256})
	if err != nil || res2.Action != api.ActionReplaced || read(t, dir, "02-wiki/go/new-note.md") != "# Replaced\n" {
		t.Fatalf("replace: %+v %v", res2, err)
	}
	for _, tc := range []struct {
		path, code string
	}{
		{"../x.md", "PATH_ESCAPE"},
		{"_templates/x.md", "PROTECTED_PATH"},
		{"99-archive/x.md", "PROTECTED_PATH"},
		{".obsidian/x.md", "HIDDEN_SEGMENT"},
		{"x.txt", "INVALID_EXTENSION"},
	} {
		if _, err := s.WriteNote(ctx, api.WriteRequest{Path: tc.path, Content: "x"}); api.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.path, err, tc.code)
		}
	}
}

// TestWriteNoteRefusesSecondName: creating a note whose name differs from
// an existing note's only in letter case or Unicode normalisation is
// refused, as a move to it is: on macOS and Windows the two are one file,
// and [[context-cancel]] would reach both.
func TestWriteNoteRefusesSecondName(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	nfd := "02-wiki/go/Cafe\u0301.md" // "Café" with a combining accent
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(nfd)), []byte("# Café\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "café")
	s.Refresh(nfd)
	head := gitRun(t, dir, "rev-parse", "HEAD")
	for _, tc := range []struct{ path, existing string }{
		{"02-wiki/go/Context-Cancel.md", "02-wiki/go/context-cancel.md"},
		{"02-wiki/go/context-cancel.MD", "02-wiki/go/context-cancel.md"},
		{"02-wiki/go/Caf\u00e9.md", nfd},
	} {
		_, err := s.WriteNote(ctx, api.WriteRequest{Path: tc.path, Content: "# Twin\n"})
		if api.CodeOf(err) != api.CodeAlreadyExists || !strings.Contains(err.Error(), tc.existing) {
			t.Errorf("%s: %v, want ALREADY_EXISTS naming %s", tc.path, err, tc.existing)
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(tc.path))); !os.IsNotExist(err) {
			t.Errorf("%s: written (%v)", tc.path, err)
		}
	}
	if got := gitRun(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("a refused create committed")
	}
	// The note itself is still replaced by its own name.
	cur := read(t, dir, "02-wiki/go/context-cancel.md")
	if _, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/context-cancel.md", Content: "# Context cancellation\n", ExpectedSHA256: sha256Hex([]byte(cur))}); err != nil {
		t.Fatal(err)
	}
}

// TestMoveRefusalSaysCodeOnce: a move refused by the link planner (here a
// target differing from a note only in case) names its code once, as every
// other refusal does, not "ALREADY_EXISTS: to: ALREADY_EXISTS: ...".
func TestMoveRefusalSaysCodeOnce(t *testing.T) {
	_, s := gitVault(t)
	_, err := s.Move(context.Background(), api.MoveRequest{From: "02-wiki/go/retry-backoff.md", To: "02-wiki/go/Context-Cancel.md"})
	if api.CodeOf(err) != api.CodeAlreadyExists {
		t.Fatalf("err = %v, want ALREADY_EXISTS", err)
	}
	want := "ALREADY_EXISTS: to: 02-wiki/go/Context-Cancel.md: the vault already has 02-wiki/go/context-cancel.md"
	if err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
}

// TestDeleteUndoHintIsShellSafe: the undo command a delete answers with is
// pasted into a shell: run there, it restores the note and only it, and a
// name holding "$(...)", quotes or glob characters runs nothing.
func TestDeleteUndoHintIsShellSafe(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir, s := gitVault(t)
	ctx := context.Background()
	for _, name := range []string{"02-wiki/go/$(touch pwned) it's `touch pwned2` [a].md", "02-wiki/go/plain note.md"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte("# N\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A note the glob "[a].md" would match, changed since its commit.
	if err := os.WriteFile(filepath.Join(dir, "02-wiki/go/$(touch pwned) it's `touch pwned2` a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "names")
	if err := os.WriteFile(filepath.Join(dir, "02-wiki/go/$(touch pwned) it's `touch pwned2` a.md"), []byte("# A edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"02-wiki/go/$(touch pwned) it's `touch pwned2` [a].md", "02-wiki/go/plain note.md"} {
		res, err := s.Delete(ctx, api.DeleteRequest{Path: name})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, "-c", res.UndoHint)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		for _, f := range []string{"pwned", "pwned2"} {
			if _, err := os.Lstat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("%s ran a command (%s exists)", res.UndoHint, f)
			}
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", res.UndoHint, err, out)
		}
		if read(t, dir, name) != "# N\n" {
			t.Fatalf("%s did not restore %s", res.UndoHint, name)
		}
	}
	if got := read(t, dir, "02-wiki/go/$(touch pwned) it's `touch pwned2` a.md"); got != "# A edited\n" {
		t.Errorf("the undo hint also restored a note its name matches as a glob: %q", got)
	}
}

// TestHistoryFollowsMoves: a short note whose move rewrote its own
// relative link (too changed for git's rename detection) keeps the history
// it had under its old names, and not that of a later note at an old name.
func TestHistoryFollowsMoves(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	old := "02-wiki/db/tiny.md"
	if err := os.WriteFile(filepath.Join(dir, "02-wiki/db/tiny.md"), []byte("# T\n[p](pool.md)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "user: tiny")
	s.Refresh(old)
	mid := "02-wiki/go/a/b/tiny.md"
	if _, err := s.Move(ctx, api.MoveRequest{From: old, To: mid}); err != nil {
		t.Fatal(err)
	}
	to := "03-projects/x/y/z/tiny-renamed.md"
	if _, err := s.Move(ctx, api.MoveRequest{From: mid, To: to}); err != nil {
		t.Fatal(err)
	}
	// A new note at the first name: not part of the moved note's past.
	if _, err := s.WriteNote(ctx, api.WriteRequest{Path: old, Content: "# Another\n"}); err != nil {
		t.Fatal(err)
	}
	h, err := s.History(ctx, api.HistoryRequest{Path: to})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range h.Versions {
		got = append(got, v.Message)
	}
	want := []string{"refactor(vault): move " + mid + " -> " + to, "refactor(vault): move " + old + " -> " + mid, "user: tiny"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Fatalf("history %q, want %q", got, want)
	}
	if h, err := s.History(ctx, api.HistoryRequest{Path: to, Limit: 2}); err != nil || len(h.Versions) != 2 {
		t.Fatalf("limit 2: %+v %v", h, err)
	}
}

// TestWriteNoteWithHashOfGoneNote: a replace (expected_sha256 given) of a
// note deleted since it was read is a CONFLICT, not a new note.
func TestWriteNoteWithHashOfGoneNote(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	p := "02-wiki/go/context-cancel.md"
	sum := sha256Hex([]byte(read(t, dir, p)))
	gitRun(t, dir, "rm", "-q", p)
	gitRun(t, dir, "commit", "-q", "-m", "user: delete")
	head := gitRun(t, dir, "rev-parse", "HEAD")
	_, err := s.WriteNote(ctx, api.WriteRequest{Path: p, Content: "# Context cancellation\n", ExpectedSHA256: sum})
	if api.CodeOf(err) != api.CodeConflict {
		t.Fatalf("err = %v, want CONFLICT", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); !os.IsNotExist(err) || gitRun(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("the deleted note was written again")
	}
	if _, err := s.WriteNote(ctx, api.WriteRequest{Path: p, Content: "# Context cancellation\n"}); err != nil {
		t.Fatalf("create without a hash: %v", err)
	}
}

func TestWriteKeepsCRLF(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	crlf := "# Win\r\n\r\nline one\r\nline two\r\n"
	os.WriteFile(filepath.Join(dir, "win.md"), []byte(crlf), 0o600)
	gitRun(t, dir, "add", "win.md")
	gitRun(t, dir, "commit", "-q", "-m", "win")
	s.Refresh("win.md")
	res, err := s.EditNote(ctx, api.EditRequest{Path: "win.md", OldText: "line one\nline two", NewText: "first\nsecond"})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "win.md"); got != "# Win\r\n\r\nfirst\r\nsecond\r\n" {
		t.Fatalf("CRLF lost: %q", got)
	}
	fi, _ := os.Stat(filepath.Join(dir, "win.md"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	_, err = s.WriteNote(ctx, api.WriteRequest{Path: "win.md", Content: "# W\nbody\n", ExpectedSHA256: res.SHA256})
	if err != nil || read(t, dir, "win.md") != "# W\r\nbody\r\n" {
		t.Fatalf("replace CRLF: %v %q", err, read(t, dir, "win.md"))
	}
}

func TestEditNote(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	os.WriteFile(filepath.Join(dir, "e.md"), []byte("aaa bb bb\n"), 0o644)
	s.Refresh("e.md")
	for _, tc := range []struct {
		old, code string
	}{
		{"aa", api.CodeNotUnique}, // overlapping occurrences count
		{"bb", api.CodeNotUnique},
		{"zz", api.CodeNoMatch},
		{"", api.CodeInvalidArgument},
	} {
		_, err := s.EditNote(ctx, api.EditRequest{Path: "e.md", OldText: tc.old, NewText: "x"})
		if api.CodeOf(err) != tc.code {
			t.Errorf("old %q: %v, want %s", tc.old, err, tc.code)
		}
	}
	_, err := s.EditNote(ctx, api.EditRequest{Path: "e.md", OldText: "aa", NewText: "x"})
	if err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Fatalf("count missing: %v", err)
	}
	res, err := s.EditNote(ctx, api.EditRequest{Path: "e.md", OldText: "aaa", NewText: "c"})
	if err != nil || read(t, dir, "e.md") != "c bb bb\n" || !strings.Contains(res.Diff, "-aaa bb bb") {
		t.Fatalf("edit: %+v %v", res, err)
	}
}

func TestNotAGitRepository(t *testing.T) {
	dir := writeVault(t, testVault)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	s := openTest(t, dir, false)
	res, err := s.WriteNote(context.Background(), api.WriteRequest{Path: "n.md", Content: "# N\n"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not a git repository") {
		t.Fatalf("result %+v", res)
	}
	_, err = s.Delete(context.Background(), api.DeleteRequest{Path: "n.md"})
	if api.CodeOf(err) != api.CodeRefused {
		t.Fatalf("delete without git: %v", err)
	}
}

func TestGitMissing(t *testing.T) {
	dir, withGit := gitVault(t)
	t.Setenv("PATH", t.TempDir())
	s := openTest(t, dir, false)
	// A server that cannot run git still takes the repository's write lock
	// (two servers on the vault exclude each other whatever their PATH): it
	// once took another, and the first server's start, cleaning the
	// temporary files of crashed writes, removed this one's staged note.
	if s.lockPath != withGit.lockPath || !strings.HasPrefix(s.lockPath, filepath.Join(dir, ".git")) {
		t.Fatalf("lock %s without git, %s with git", s.lockPath, withGit.lockPath)
	}
	res, err := s.WriteNote(context.Background(), api.WriteRequest{Path: "n.md", Content: "# N\n"})
	if err != nil || res.Committed || len(res.Warnings) == 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if read(t, dir, "n.md") == "" {
		t.Fatal("note not written")
	}
}

func TestDeleteAndUndo(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	for _, tc := range []struct {
		path, code string
	}{
		{"02-wiki/go/go-moc.md", api.CodeRefused},
		{"00-index/index-knowledge.md", api.CodeRefused},
		{"02-wiki/go/context-cancel.md", api.CodeNeedsConfirm}, // has backlinks
		{"99-archive/old-retry.md", "PROTECTED_PATH"},
		{"nope.md", "NOT_FOUND"},
	} {
		if _, err := s.Delete(ctx, api.DeleteRequest{Path: tc.path}); api.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.path, err, tc.code)
		}
	}
	// Uncommitted changes are refused.
	os.WriteFile(filepath.Join(dir, "02-wiki/db/pool.md"), []byte("# changed\n"), 0o644)
	if _, err := s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/db/pool.md"}); api.CodeOf(err) != api.CodeRefused {
		t.Fatalf("uncommitted: %v", err)
	}
	gitRun(t, dir, "checkout", "--", "02-wiki/db/pool.md")

	res, err := s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/context-cancel.md", Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "02-wiki/go/context-cancel.md")); !os.IsNotExist(err) {
		t.Fatal("note still there")
	}
	if strings.Contains(read(t, dir, "02-wiki/go/go-moc.md"), "[[context-cancel]]") {
		t.Fatal("MOC line not removed")
	}
	if !res.Committed || !strings.Contains(res.UndoHint, "git checkout "+res.Version+"^") || len(res.Files) != 2 {
		t.Fatalf("result %+v", res)
	}
	// Undo brings both files back, in one commit of its own.
	u, err := s.Undo(ctx, api.UndoRequest{Version: res.Version[:10]})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Committed || read(t, dir, "02-wiki/go/context-cancel.md") != testVault["02-wiki/go/context-cancel.md"] || read(t, dir, "02-wiki/go/go-moc.md") != testVault["02-wiki/go/go-moc.md"] {
		t.Fatalf("undo %+v", u)
	}
	if r := search(t, s, api.SearchRequest{Query: "check ctx.Done in loops"}); len(r.Results) == 0 || r.Results[0].Path != "02-wiki/go/context-cancel.md" {
		t.Fatalf("restored note not searchable: %v", paths(r))
	}
	// A commit the server did not make is refused.
	first := strings.TrimSpace(gitRun(t, dir, "rev-list", "--max-parents=0", "HEAD"))
	if _, err := s.Undo(ctx, api.UndoRequest{Version: first}); api.CodeOf(err) != api.CodeRefused {
		t.Fatalf("foreign commit: %v", err)
	}
}

func TestMoveKeepsLinks(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	// Promote: rename into another domain; the MOC line moves with its summary.
	res, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/context-cancel.md", To: "02-wiki/db/context-cancellation.md"})
	if err != nil {
		t.Fatal(err)
	}
	rb := read(t, dir, "02-wiki/go/retry-backoff.md")
	if !strings.Contains(rb, "[[context-cancellation]]") || !strings.Contains(rb, "[[context-cancellation|cancel]]") {
		t.Fatalf("links not rewritten:\n%s", rb)
	}
	if strings.Contains(read(t, dir, "02-wiki/go/go-moc.md"), "context-cancel") {
		t.Fatal("old MOC still lists the note")
	}
	if !strings.Contains(read(t, dir, "02-wiki/db/db-moc.md"), "- [[context-cancellation]] — cancellation") {
		t.Fatalf("new MOC:\n%s", read(t, dir, "02-wiki/db/db-moc.md"))
	}
	if res.LinksRewritten < 3 || !res.Committed || res.From != "02-wiki/go/context-cancel.md" {
		t.Fatalf("result %+v", res)
	}
	files := lastCommitFiles(t, dir)
	if len(files) != len(res.Files) {
		t.Fatalf("commit %v vs result %v", files, res.Files)
	}
	bl, err := s.Backlinks(ctx, api.BacklinksRequest{Path: "02-wiki/db/context-cancellation.md"})
	if err != nil || len(bl.Backlinks) != 2 {
		t.Fatalf("backlinks after move: %+v %v", bl, err)
	}
	// Archive, then unarchive.
	if _, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/db/pool.md", To: "99-archive/pool.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, api.MoveRequest{From: "99-archive/pool.md", To: "02-wiki/db/pool.md"}); err != nil {
		t.Fatal(err)
	}
	// Refusals.
	for _, tc := range []struct {
		req  api.MoveRequest
		code string
	}{
		{api.MoveRequest{From: "02-wiki/db/pool.md", To: "02-wiki/go/retry-backoff.md"}, api.CodeAlreadyExists},
		{api.MoveRequest{From: "02-wiki/db/pool.md", To: "02-wiki/newdomain/pool.md"}, api.CodeNeedsConfirm},
		{api.MoveRequest{From: "02-wiki/db/pool.md", To: "_templates/pool.md"}, "PROTECTED_PATH"},
		{api.MoveRequest{From: "nope.md", To: "x.md"}, "NOT_FOUND"},
		{api.MoveRequest{From: "02-wiki/db/pool.md", To: "../pool.md"}, "PATH_ESCAPE"},
	} {
		if _, err := s.Move(ctx, tc.req); api.CodeOf(err) != tc.code {
			t.Errorf("%+v: %v, want %s", tc.req, err, tc.code)
		}
	}
	// A new domain with confirmation: MOC and knowledge-index line created.
	if _, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/db/pool.md", To: "02-wiki/ops/pool.md", ConfirmNewDomain: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, dir, "02-wiki/ops/ops-moc.md"), "- [[pool]]") || !strings.Contains(read(t, dir, "00-index/index-knowledge.md"), "[[ops-moc]]") {
		t.Fatalf("new domain:\n%s\n%s", read(t, dir, "02-wiki/ops/ops-moc.md"), read(t, dir, "00-index/index-knowledge.md"))
	}
}

func TestAutoPush(t *testing.T) {
	dir, _ := gitVault(t)
	remote := t.TempDir()
	gitRun(t, remote, "init", "-q", "--bare")
	gitRun(t, dir, "remote", "add", "origin", remote)
	branch := strings.TrimSpace(gitRun(t, dir, "rev-parse", "--abbrev-ref", "HEAD"))
	ctx := context.Background()
	open := func() *Service {
		s, err := Open(ctx, Options{Dir: dir, AutoPush: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	// No upstream yet: the commit stands, the push fails with a warning saying why.
	s := open()
	res, err := s.WriteNote(ctx, api.WriteRequest{Path: "p1.md", Content: "# P1\n"})
	if err != nil || !res.Committed || res.Pushed == nil || *res.Pushed || !strings.Contains(strings.Join(res.Warnings, "\n"), "upstream") {
		t.Fatalf("no upstream: %+v %v", res, err)
	}
	gitRun(t, dir, "push", "-q", "-u", "origin", branch)
	res, err = s.WriteNote(ctx, api.WriteRequest{Path: "p2.md", Content: "# P2\n"})
	if err != nil || res.Pushed == nil || !*res.Pushed {
		t.Fatalf("push: %+v %v", res, err)
	}
	if got := strings.TrimSpace(gitRun(t, remote, "log", "-1", "--format=%H", branch)); got != res.Version {
		t.Fatalf("remote at %s, want %s", got, res.Version)
	}
}

// TestWriteWhileLockHeld: another process (here another lock handle on the
// same file) holds the write lock; a write that cannot get it in time is
// refused as BUSY and changes nothing.
func TestWriteWhileLockHeld(t *testing.T) {
	dir, s := gitVault(t)
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	gd := strings.TrimSpace(gitRun(t, dir, "rev-parse", "--absolute-git-dir"))
	other := writelock.New(filepath.Join(gd, "vaultmcp.lock"), time.Minute)
	release, _, err := other.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = s.WriteNote(ctx, api.WriteRequest{Path: "blocked.md", Content: "# B\n"})
	if api.CodeOf(err) != api.CodeBusy || strings.Contains(err.Error(), "may or may not") || api.IsUncertain(err) {
		t.Fatalf("err = %v, want BUSY", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "blocked.md")); !os.IsNotExist(err) {
		t.Fatal("a write without the lock happened")
	}
	release()
	if _, err := s.WriteNote(context.Background(), api.WriteRequest{Path: "blocked.md", Content: "# B\n"}); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// TestCloseBeforeStartLockSaysNothing: a service closed while its start
// still waits for the write lock (another process holds it; the service's
// client hung up at once, or its server could not listen) logs no warning
// that it could not take the lock: nothing went wrong.
func TestCloseBeforeStartLockSaysNothing(t *testing.T) {
	dir := writeVault(t, testVault)
	gitInit(t, dir)
	gd := strings.TrimSpace(gitRun(t, dir, "rev-parse", "--absolute-git-dir"))
	other := writelock.New(filepath.Join(gd, "vaultmcp.lock"), time.Minute)
	release, _, err := other.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var log logBuffer
	s, err := Open(context.Background(), Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "could not take the write lock") {
		t.Errorf("a service closed during its start warns of the lock:\n%s", log.String())
	}
}

// TestWriteNoteKeepsOwnFrontmatter: a new note's own frontmatter gets the
// missing keys and the caller's, and keeps everything else as written: a
// value YAML would read as another number (0012 is octal 10, 1.10 is 1.1),
// its comments, its quotes and the order of its keys.
func TestWriteNoteKeepsOwnFrontmatter(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	content := "---\n# kept comment\ntitle: \"Quoted: yes\"\nzip: 0012\nversion: 1.10\nstatus: draft\n---\n# Own\n"
	_, err := s.WriteNote(ctx, api.WriteRequest{Path: "03-projects/own.md", Content: content, Frontmatter: map[string]any{"status": "done"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "---\n# kept comment\ntitle: \"Quoted: yes\"\nzip: 0012\nversion: 1.10\nstatus: done\ntype: note\ntags: []\ncreated: 2026-11-29\n---\n# Own\n"
	if got := read(t, dir, "03-projects/own.md"); got != want {
		t.Fatalf("content:\n%s\nwant:\n%s", got, want)
	}
}

// TestWriteUnchangedSaysSo: an edit whose new_text is its old_text, or a
// replacement by the same bytes, writes and commits nothing, and a warning
// says why (else "Commit: no" reads as a failure).
func TestWriteUnchangedSaysSo(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	res, err := s.WriteNote(ctx, api.WriteRequest{Path: "03-projects/same.md", Content: "# Same\n\nkeep this\n"})
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
	want := s.msg.Get(wUnchanged, "03-projects/same.md")
	edit, err := s.EditNote(ctx, api.EditRequest{Path: "03-projects/same.md", OldText: "keep this", NewText: "keep this"})
	if err != nil || edit.Committed || len(edit.Files) != 0 || !slices.Contains(edit.Warnings, want) {
		t.Fatalf("edit: %+v %v", edit, err)
	}
	again, err := s.WriteNote(ctx, api.WriteRequest{Path: "03-projects/same.md", Content: read(t, dir, "03-projects/same.md"), ExpectedSHA256: res.SHA256})
	if err != nil || again.Committed || len(again.Files) != 0 || !slices.Contains(again.Warnings, want) {
		t.Fatalf("replace: %+v %v", again, err)
	}
	if got := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD")); got != head {
		t.Fatalf("HEAD moved: %s, was %s", got, head)
	}
}

// TestDeleteMOCLineIsNoBacklink: the MOC line goes with the note, so a note
// that only its map of content lists is deleted without confirm, and the
// broken-link warning counts only the notes whose links do break.
func TestDeleteMOCLineIsNoBacklink(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	res, err := s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/retry-backoff.md"})
	if err != nil {
		t.Fatalf("listed only in its MOC: %v", err)
	}
	if strings.Contains(read(t, dir, "02-wiki/go/go-moc.md"), "retry-backoff") || len(res.Warnings) != 0 {
		t.Fatalf("MOC:\n%s\nwarnings %q", read(t, dir, "02-wiki/go/go-moc.md"), res.Warnings)
	}
	if _, err := s.Undo(ctx, api.UndoRequest{Version: res.Version}); err != nil {
		t.Fatal(err)
	}
	// context-cancel: its MOC and retry-backoff link to it; one link breaks.
	_, err = s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/context-cancel.md"})
	if api.CodeOf(err) != api.CodeNeedsConfirm || !strings.Contains(err.Error(), "1 note(s) link to") || strings.Contains(err.Error(), "go-moc") {
		t.Fatalf("refusal: %v", err)
	}
	res, err = s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/context-cancel.md", Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := s.msg.Get(wBrokenLinks, 1, "02-wiki/go/context-cancel.md"); !slices.Contains(res.Warnings, want) {
		t.Fatalf("warnings %q, want %q", res.Warnings, want)
	}
}

// TestWriteNewNoteKeepsCRLF: a new note written with CRLF line ends gets
// its added frontmatter in CRLF too, not a file of mixed line ends.
func TestWriteNewNoteKeepsCRLF(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	for p, content := range map[string]string{
		"03-projects/win.md":  "# Win\r\n\r\nline\r\n",
		"03-projects/win2.md": "---\r\na: 1\r\n---\r\n# Win\r\n",
	} {
		if _, err := s.WriteNote(ctx, api.WriteRequest{Path: p, Content: content}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, dir, p); strings.Count(got, "\n") != strings.Count(got, "\r\n") || !strings.HasPrefix(got, "---\r\n") {
			t.Errorf("%s: mixed line ends: %q", p, got)
		}
	}
}

// TestWriteNoteExpectedButGone: a replacement of a note that was moved or
// deleted since the caller read it is refused, not a re-creation of it.
func TestWriteNoteExpectedButGone(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	_, err := s.WriteNote(ctx, api.WriteRequest{Path: "03-projects/gone.md", Content: "# Gone\n", ExpectedSHA256: strings.Repeat("a", 64)})
	var ae *api.Error
	if api.CodeOf(err) != api.CodeConflict || !errors.As(err, &ae) || ae.Field != "expected_sha256" {
		t.Fatalf("err = %v", err)
	}
	if exists(dir, "03-projects/gone.md") {
		t.Fatal("the note was created")
	}
}

// TestUndoOfUndoSubject: the undo of an undo is worded as git revert words
// it, the quotes of the subject it reverts left as they are.
func TestUndoOfUndoSubject(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	w, err := s.WriteNote(ctx, api.WriteRequest{Path: "03-projects/q.md", Content: "# Q\n"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Undo(ctx, api.UndoRequest{Version: w.Version})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Undo(ctx, api.UndoRequest{Version: u.Version}); err != nil {
		t.Fatal(err)
	}
	want := `Revert "Revert "docs(vault): create 03-projects/q.md""`
	if got := strings.TrimSpace(gitRun(t, dir, "log", "-1", "--format=%s")); got != want {
		t.Errorf("subject %s, want %s", got, want)
	}
}

// TestWriteRefusesNUL: a NUL character would make a note a binary file for
// git (its history shown as "Binary files differ"); a write or an edit
// bringing one is refused, naming the field.
func TestWriteRefusesNUL(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	_, err := s.WriteNote(ctx, api.WriteRequest{Path: "03-projects/nul.md", Content: "a\x00b\n"})
	var ae *api.Error
	if api.CodeOf(err) != api.CodeInvalidArgument || !errors.As(err, &ae) || ae.Field != "content" || exists(dir, "03-projects/nul.md") {
		t.Fatalf("write: %v", err)
	}
	_, err = s.EditNote(ctx, api.EditRequest{Path: "02-wiki/go/context-cancel.md", OldText: "Pass ctx first", NewText: "Pass\x00ctx"})
	if api.CodeOf(err) != api.CodeInvalidArgument || !errors.As(err, &ae) || ae.Field != "new_text" {
		t.Fatalf("edit: %v", err)
	}
	if read(t, dir, "02-wiki/go/context-cancel.md") != testVault["02-wiki/go/context-cancel.md"] {
		t.Fatal("the edit changed the note")
	}
}

// TestEditIgnoresNormalisation: old_text that is the note's text in another
// Unicode normalisation form (composed, NFC, against decomposed, NFD, or the
// reverse; with CRLF line ends too) matches when nothing matches exactly.
// The bytes in the note are replaced, new_text takes their form, and every
// other byte of the note keeps its own. It used to be NO_MATCH: the texts
// look identical. A text that is there only as part of a letter (the "e"
// of a composed "é", the "ẹ" of a decomposed "ẹ́") still does not match,
// and two occurrences once normalised are NOT_UNIQUE.
func TestEditIgnoresNormalisation(t *testing.T) {
	nfd := func(s string) string { return norm.NFD.String(s) }
	nfc := func(s string) string { return norm.NFC.String(s) }
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"note NFD, old NFC", nfd("# Configuração\n\nA conexão não é reusada.\nAté já.\n"), nfc("conexão não é"), nfc("ligação já é"),
			nfd("# Configuração\n\nA ligação já é reusada.\nAté já.\n")},
		{"note NFC, old NFD", nfc("# Café\n\nO café é forte.\nPão também.\n"), nfd("café é forte"), nfd("chá é fraco"),
			nfc("# Café\n\nO chá é fraco.\nPão também.\n")},
		{"note NFD with CRLF, old NFC with LF", nfd("# Ação\r\n\r\nprimeira ação\r\nsegunda ação\r\n"), nfc("primeira ação\nsegunda"), nfc("única\nsó"),
			nfd("# Ação\r\n\r\núnica\r\nsó ação\r\n")},
		// A mixed note: the NFD "é" before, the NFC "é" in the match.
		{"note mixed, old NFD", nfd("É ") + nfc("o café de sempre\n"), nfd("café de"), "chá de",
			nfd("É ") + nfc("o chá de sempre\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, s := gitVault(t)
			if err := os.WriteFile(filepath.Join(dir, "n.md"), []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			gitRun(t, dir, "add", "n.md")
			gitRun(t, dir, "commit", "-q", "-m", "n")
			s.Refresh("n.md")
			if strings.Contains(tc.file, tc.old) {
				t.Fatal("the case matches exactly")
			}
			res, err := s.EditNote(context.Background(), api.EditRequest{Path: "n.md", OldText: tc.old, NewText: tc.new})
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, dir, "n.md"); got != tc.want {
				t.Errorf("note\n%q\nwant\n%q", got, tc.want)
			}
			if !res.Committed || gitRun(t, dir, "status", "--porcelain") != "" {
				t.Errorf("not committed: %+v", res)
			}
		})
	}
	dir, s := gitVault(t)
	ctx := context.Background()
	body := nfc("Um café, outro café.\nfé\n") + nfd("\u1eb9\u0301\n")
	if err := os.WriteFile(filepath.Join(dir, "m.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Refresh("m.md")
	for _, tc := range []struct{ old, code string }{
		{nfd("café"), api.CodeNotUnique},
		{"fe", api.CodeNoMatch},                  // only inside the composed "fé"
		{nfd("fe\u0301\u0301"), api.CodeNoMatch}, // an accent more
		{"\u1eb9", api.CodeNoMatch},              // "ẹ" without the acute accent that follows it
	} {
		_, err := s.EditNote(ctx, api.EditRequest{Path: "m.md", OldText: tc.old, NewText: "x"})
		if api.CodeOf(err) != tc.code {
			t.Errorf("old %q: %v, want %s", tc.old, err, tc.code)
		}
	}
	if read(t, dir, "m.md") != body {
		t.Error("a refused edit changed the note")
	}
}

// TestNewNamesPortable: a note created by vault_write_note, the target of
// vault_move and a learning's domain folder need portable names: a leading
// or trailing space in any segment, a trailing '.', or a character Windows
// refuses is INVALID_PATH (INVALID_ARGUMENT for a domain) on the field that
// named it, and nothing is written. A note that already has such a name
// stays readable, replaceable, editable, and can be moved to a good name.
func TestNewNamesPortable(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(dir, " legacy.md"), []byte("# Legacy\n\nold text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "legacy")
	s.Refresh(" legacy.md")
	head := headCommit(t, dir)
	for _, p := range []string{" d/U.md", " x.md", "x .md", "d /x.md", "a./x.md", "what?.md", "a*b.md", "<x>.md", `"q".md`, "a|b.md"} {
		var ae *api.Error
		_, err := s.WriteNote(ctx, api.WriteRequest{Path: p, Content: "# X\n"})
		if !errors.As(err, &ae) || ae.Code != "INVALID_PATH" || ae.Field != "path" {
			t.Errorf("write %q: %v, want INVALID_PATH on path", p, err)
		}
		_, err = s.Move(ctx, api.MoveRequest{From: "02-wiki/go/context-cancel.md", To: p})
		if !errors.As(err, &ae) || ae.Code != "INVALID_PATH" || ae.Field != "to" {
			t.Errorf("move to %q: %v, want INVALID_PATH on to", p, err)
		}
	}
	_, err := s.Learn(ctx, api.LearnRequest{Title: "T", Insight: "I", Domain: "go.", ConfirmNewDomain: true})
	if api.CodeOf(err) != api.CodeInvalidArgument {
		t.Errorf("learn in domain \"go.\": %v", err)
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" || headCommit(t, dir) != head {
		t.Fatalf("a refused write changed the vault:\n%s", st)
	}
	for _, p := range []string{" d", " x.md", "a.", "what?.md"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%q was created: %v", p, err)
		}
	}
	note, err := s.GetNote(ctx, api.NoteRequest{Path: " legacy.md"})
	if err != nil {
		t.Fatalf("read the existing note: %v", err)
	}
	res, err := s.WriteNote(ctx, api.WriteRequest{Path: " legacy.md", Content: "# Legacy\n\nnew text\n", ExpectedSHA256: note.SHA256})
	if err != nil {
		t.Fatalf("replace the existing note: %v", err)
	}
	if _, err := s.EditNote(ctx, api.EditRequest{Path: " legacy.md", OldText: "new text", NewText: "edited"}); err != nil {
		t.Fatalf("edit the existing note: %v (%+v)", err, res)
	}
	if _, err := s.Move(ctx, api.MoveRequest{From: " legacy.md", To: "legacy.md"}); err != nil {
		t.Fatalf("move the existing note to a good name: %v", err)
	}
	if !strings.Contains(read(t, dir, "legacy.md"), "edited") {
		t.Error("the moved note lost its edit")
	}
}
