package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// TestMoveReadOnlyNote: a read-only note is not moved, and nothing is left
// behind (the copy under the new name used to stay, read-only too, when the
// old name could not be removed).
func TestMoveReadOnlyNote(t *testing.T) {
	dir, s := gitVault(t)
	head := headCommit(t, dir)
	src := filepath.Join(dir, "02-wiki/go/context-cancel.md")
	if err := os.Chmod(src, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(src, 0o644) })
	_, err := s.Move(context.Background(), api.MoveRequest{From: "02-wiki/go/context-cancel.md", To: "02-wiki/db/context-cancel.md"})
	if api.CodeOf(err) != "PERMISSION_DENIED" || !strings.Contains(err.Error(), "from: ") || !strings.Contains(err.Error(), "read-only (mode 0444)") {
		t.Fatalf("move of a read-only note: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "02-wiki/db/context-cancel.md")); !os.IsNotExist(err) {
		t.Errorf("a copy was left at the new name: %v", err)
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" || headCommit(t, dir) != head {
		t.Errorf("the vault changed:\n%s", st)
	}
}

// TestWriteThroughFolderLink: a write or move naming a path through a
// symbolic link to a folder inside the vault lands at the path the link
// leads to, and names that path throughout: the commit holds the file (git
// refuses a path beyond a link, so it used to miss it), the answer says
// where it went, and undo leaves the tree as it was.
func TestWriteThroughFolderLink(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	if err := os.Symlink("02-wiki/db", filepath.Join(dir, "dblink")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", "dblink")
	gitRun(t, dir, "commit", "-q", "-m", "link")
	head := headCommit(t, dir)

	res, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/context-cancel.md", To: "dblink/context-cancel.md"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != "02-wiki/db/context-cancel.md" || !res.Committed || !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "dblink/context-cancel.md goes through a symbolic link") && strings.Contains(w, "02-wiki/db/context-cancel.md")
	}) {
		t.Fatalf("move: %+v", res)
	}
	files := lastCommitFiles(t, dir)
	if !slices.Contains(files, "02-wiki/db/context-cancel.md") || !slices.Contains(files, "02-wiki/go/context-cancel.md") {
		t.Errorf("the commit holds %v", files)
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("left out of the commit:\n%s", st)
	}
	// The link that named the note follows it.
	if got := read(t, dir, "02-wiki/go/retry-backoff.md"); !strings.Contains(got, "[[context-cancel]]") {
		t.Errorf("retry-backoff:\n%s", got)
	}
	if _, err := s.Undo(ctx, api.UndoRequest{Version: res.Version}); err != nil {
		t.Fatal(err)
	}
	if diff := gitRun(t, dir, "diff", "--stat", head, "HEAD"); diff != "" {
		t.Errorf("undo left changes:\n%s", diff)
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("undo left files:\n%s", st)
	}

	// A new note and an edit through the link.
	w, err := s.WriteNote(ctx, api.WriteRequest{Path: "dblink/linked-note.md", Content: "# Linked\n\nzanzibar\n"})
	if err != nil || w.Path != "02-wiki/db/linked-note.md" || !w.Committed {
		t.Fatalf("write: %+v %v", w, err)
	}
	e, err := s.EditNote(ctx, api.EditRequest{Path: "dblink/pool.md", OldText: "number of cores", NewText: "number of cores, plus one"})
	if err != nil || e.Path != "02-wiki/db/pool.md" || !e.Committed || !slices.Equal(lastCommitFiles(t, dir), []string{"02-wiki/db/pool.md"}) {
		t.Fatalf("edit: %+v %v (commit %v)", e, err, lastCommitFiles(t, dir))
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("left out of the commits:\n%s", st)
	}
}

// TestSummaryCutAtWord: a MOC line's summary longer than 120 characters
// ends at a word, with "…".
func TestSummaryCutAtWord(t *testing.T) {
	long := strings.Repeat("wallaby ", 20) + "quokka"
	got := summaryOf(long)
	if n := len([]rune(got)); n > 120 || !strings.HasSuffix(got, "wallaby…") {
		t.Errorf("summary %q (%d characters)", got, n)
	}
	if got := summaryOf("Short one. And more."); got != "Short one." {
		t.Errorf("summary %q", got)
	}
	// An abbreviation inside the sentence does not end it.
	for in, want := range map[string]string{
		"Use bounded queues, e.g. a buffered channel, so producers block. More.": "Use bounded queues, e.g. a buffered channel, so producers block.",
		"Use filas limitadas, p. ex. um canal. Mais.":                            "Use filas limitadas, p. ex. um canal.",
		"Retry? 3 times at most.":                                                "Retry?",
	} {
		if got := summaryOf(in); got != want {
			t.Errorf("summaryOf(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cutAtWord("abc def", 10); got != "abc def" {
		t.Errorf("cutAtWord of a short text = %q", got)
	}
}

// TestFolderFilterUnknown: a folder filter under which no note lies is
// refused with the folders it may have meant (a misspelling used to answer
// "no results"); a folder with notes filters as before.
func TestFolderFilterUnknown(t *testing.T) {
	_, s := gitVault(t)
	ctx := context.Background()
	_, err := s.Search(ctx, api.SearchRequest{Query: "retry", Folder: "02-wiki/Go"})
	if api.CodeOf(err) != api.CodeInvalidArgument || !strings.Contains(err.Error(), `folder: no note lies under "02-wiki/Go" (did you mean 02-wiki/go?)`) {
		t.Errorf("search: %v", err)
	}
	if _, err := s.List(ctx, api.ListRequest{Folder: "wiki"}); api.CodeOf(err) != api.CodeInvalidArgument || !strings.Contains(err.Error(), "did you mean 02-wiki") {
		t.Errorf("list: %v", err)
	}
	if _, err := s.Graph(ctx, api.GraphRequest{Folder: "nowhere/at/all"}); api.CodeOf(err) != api.CodeInvalidArgument || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("graph: %v", err)
	}
	res, err := s.Search(ctx, api.SearchRequest{Query: "retry", Folder: "02-wiki/go"})
	if err != nil || len(res.Results) == 0 {
		t.Errorf("a folder with notes: %+v %v", res, err)
	}
}

// TestMoveRefusalCodeOnce: a move refused while its links are planned (a
// target differing from an existing note only in letter case) names its code
// once; the message used to repeat it ("ALREADY_EXISTS: to: ALREADY_EXISTS:
// …").
func TestMoveRefusalCodeOnce(t *testing.T) {
	_, s := gitVault(t)
	_, err := s.Move(context.Background(), api.MoveRequest{From: "02-wiki/db/pool.md", To: "02-wiki/go/Retry-Backoff.md"})
	if api.CodeOf(err) != api.CodeAlreadyExists {
		t.Fatalf("move onto a case twin: %v", err)
	}
	if n := strings.Count(err.Error(), api.CodeAlreadyExists); n != 1 {
		t.Errorf("the code is named %d times: %v", n, err)
	}
	if !strings.Contains(err.Error(), "02-wiki/go/retry-backoff.md") {
		t.Errorf("the message does not name the existing note: %v", err)
	}
}

// TestMoveSeesNotesChangedOutside: a note written on disk after the index
// was built, and not yet seen by a watcher (none runs here; with one, the
// last moments before the move are its debounce), that links to the moved
// note gets its link rewritten too. It used to be left out, its link
// broken by the move.
func TestMoveSeesNotesChangedOutside(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "02-wiki/db/fresh.md", []byte("# Fresh\n\nSee [[context-cancel]].\n"))
	if _, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/context-cancel.md", To: "02-wiki/go/ctx-cancel.md"}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "02-wiki/db/fresh.md"); got != "# Fresh\n\nSee [[ctx-cancel]].\n" {
		t.Errorf("the note written outside the server:\n%s", got)
	}
}

// TestUndoMoveGivesBackUncommitted: undoing a move gives back every byte
// the vault held before it, also in files whose content was not committed:
// the moved note with edits of its own, a linking note with edits, a
// linking note never committed, and an untracked note moved on its own.
// Undo used to revert to HEAD's versions: the edits were lost, and the
// untracked notes deleted.
func TestUndoMoveGivesBackUncommitted(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	appendTo(t, dir, "02-wiki/go/context-cancel.md", "A local edit of the moved note.\n")
	appendTo(t, dir, "02-wiki/go/retry-backoff.md", "A local edit of a linking note.\n")
	writeFile(t, dir, "02-wiki/db/fresh.md", []byte("# Fresh\n\nSee [[context-cancel]].\n"))
	writeFile(t, dir, "03-projects/draft.md", []byte("# Draft\n\nNever committed.\n"))
	before := map[string]string{}
	for _, p := range []string{"02-wiki/go/context-cancel.md", "02-wiki/go/retry-backoff.md", "02-wiki/db/fresh.md", "03-projects/draft.md", "02-wiki/go/go-moc.md"} {
		before[p] = read(t, dir, p)
	}
	for _, mv := range []api.MoveRequest{
		{From: "02-wiki/go/context-cancel.md", To: "02-wiki/db/ctx-cancel.md"},
		{From: "03-projects/draft.md", To: "03-projects/plan.md"},
	} {
		res, err := s.Move(ctx, mv)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "not committed") }) {
			t.Errorf("%s: no warning that local changes were committed first: %q", mv.From, res.Warnings)
		}
		if _, err := s.Undo(ctx, api.UndoRequest{Version: res.Version}); err != nil {
			t.Fatalf("undo of the move of %s: %v", mv.From, err)
		}
		if exists(dir, mv.To) {
			t.Errorf("%s still exists after the undo", mv.To)
		}
	}
	for p, want := range before {
		if !exists(dir, p) {
			t.Errorf("%s is gone after the undo", p)
			continue
		}
		if got := read(t, dir, p); got != want {
			t.Errorf("%s after the undo:\n got %q\nwant %q", p, got, want)
		}
	}
	gitClean(t, dir)
}

// TestMOCKeepsProseMentions: a move to another domain, and a delete, take
// the note's entry out of its MOC ("- [[note]] — summary", in any link
// form) but keep a list item of the author's that only mentions the note
// (its link rewritten by the move). Both used to remove that item too.
func TestMOCKeepsProseMentions(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	moc := "---\ntype: moc\n---\n# Go\n\n## Notes\n\n- [[02-wiki/go/retry-backoff|Retries]] — retries\n- See also [[retry-backoff]] under Budget.\n- [[context-cancel]] — cancellation\n- **[[pool-notes]]** — pools\n- The [[context-cancel]] checklist applies.\n"
	writeFile(t, dir, "02-wiki/go/go-moc.md", []byte(moc))
	writeFile(t, dir, "02-wiki/go/pool-notes.md", []byte("# Pool notes\n"))
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "moc")
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/retry-backoff.md", To: "02-wiki/db/retry-backoff.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/pool-notes.md", Confirm: true}); err != nil {
		t.Fatal(err)
	}
	want := "---\ntype: moc\n---\n# Go\n\n## Notes\n\n- See also [[retry-backoff]] under Budget.\n- [[context-cancel]] — cancellation\n- The [[context-cancel]] checklist applies.\n"
	if got := read(t, dir, "02-wiki/go/go-moc.md"); got != want {
		t.Errorf("the old MOC:\n got %q\nwant %q", got, want)
	}
	if got := read(t, dir, "02-wiki/db/db-moc.md"); !strings.Contains(got, "- [[retry-backoff]] — retries\n") {
		t.Errorf("the new MOC lacks the entry:\n%s", got)
	}
}

// TestDeleteNoteListedOnlyInMOC: deleting a note that only its MOC entry
// links to needs no confirmation and warns of no broken link (the delete
// takes the entry out); a MOC that also mentions the note in prose still
// counts, since that link would break.
func TestDeleteNoteListedOnlyInMOC(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	writeFile(t, dir, "02-wiki/go/solo.md", []byte("# Solo\n\nAlone.\n"))
	writeFile(t, dir, "02-wiki/go/pair.md", []byte("# Pair\n\nMentioned.\n"))
	moc := read(t, dir, "02-wiki/go/go-moc.md")
	writeFile(t, dir, "02-wiki/go/go-moc.md", []byte(moc+"- [[solo]] — alone\n- [[pair]] — mentioned\n- Compare [[pair]] with the others.\n"))
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "two notes")
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	// Told at once rather than through the watcher, whose debounce a
	// loaded machine can stretch past the delete.
	for _, p := range []string{"02-wiki/go/solo.md", "02-wiki/go/pair.md", "02-wiki/go/go-moc.md"} {
		s.Refresh(p)
	}
	res, err := s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/solo.md"})
	if err != nil {
		t.Fatalf("delete of a note only its MOC lists: %v", err)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %q", res.Warnings)
	}
	if got := read(t, dir, "02-wiki/go/go-moc.md"); strings.Contains(got, "solo") {
		t.Errorf("the MOC still lists the note:\n%s", got)
	}
	if _, err := s.Delete(ctx, api.DeleteRequest{Path: "02-wiki/go/pair.md"}); api.CodeOf(err) != api.CodeNeedsConfirm {
		t.Fatalf("delete of a note the MOC also mentions: %v, want %s", err, api.CodeNeedsConfirm)
	}
}

// TestMoveFolderRefused: a folder as from is refused as not a note, saying
// it is a folder (it used to be INVALID_EXTENSION "no extension", which
// does not tell the agent that vault_move moves notes only); a missing
// path without an extension is still refused for its extension, and
// nothing changes.
func TestMoveFolderRefused(t *testing.T) {
	dir, s := gitVault(t)
	head := headCommit(t, dir)
	ctx := context.Background()
	for _, from := range []string{"02-wiki/go", "02-wiki/go/", "./02-wiki/db"} {
		_, err := s.Move(ctx, api.MoveRequest{From: from, To: "02-wiki/golang"})
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Code != string(vaultfs.CodeNotANote) || ae.Field != "from" {
			t.Errorf("move of folder %q: %v", from, err)
		}
	}
	_, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/nothing", To: "02-wiki/golang"})
	if api.CodeOf(err) != string(vaultfs.CodeInvalidExtension) {
		t.Errorf("move of a missing path without extension: %v", err)
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" || headCommit(t, dir) != head {
		t.Errorf("the vault changed:\n%s", st)
	}
}
