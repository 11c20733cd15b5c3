package vault

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
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
