//go:build unix

package vault

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// leakWord appears only in the file outside the vault.
const leakWord = "quokkaleakword"

// leakyVault is the test vault with leak.md, a hard link to a file outside
// it; base holds the vault and that outside folder.
func leakyVault(t *testing.T) (base, dir string) {
	t.Helper()
	base = t.TempDir()
	dir = filepath.Join(base, "vault")
	outside := filepath.Join(base, "outside")
	for p, body := range testVault {
		writeFile(t, dir, p, []byte(body))
	}
	writeFile(t, outside, "secret.md", []byte("# Secret\n\nThe "+leakWord+" lives outside the vault.\n"))
	if err := os.Link(filepath.Join(outside, "secret.md"), filepath.Join(dir, "leak.md")); err != nil {
		t.Fatal(err)
	}
	return base, dir
}

func openOptions(t *testing.T, o Options) *Service {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkNotRead asserts that a read-only service neither serves leak.md nor
// reads it, and names it in the search footer.
func checkNotRead(t *testing.T, s *Service, name string) {
	t.Helper()
	ctx := context.Background()
	if res := search(t, s, api.SearchRequest{Query: leakWord}); len(res.Results) != 0 {
		t.Errorf("read-only search found the outside file: %v", paths(res))
	}
	res := search(t, s, api.SearchRequest{Query: "retry backoff"})
	if len(res.Results) == 0 || !slices.Contains(res.Unindexed, name) {
		t.Errorf("search footer %q does not name %s", res.Unindexed, name)
	}
	_, err := s.GetNote(ctx, api.NoteRequest{Path: name})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != string(vaultfs.CodeNotANote) || ae.Field != "path" || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("GetNote(%s) = %v; want NOT_A_NOTE on path about hard links", name, err)
	} else if strings.Contains(err.Error(), leakWord) || strings.Contains(err.Error(), s.FS().Dir()) {
		t.Errorf("error leaks: %v", err)
	}
	if _, err := s.Backlinks(ctx, api.BacklinksRequest{Path: name}); api.CodeOf(err) != string(vaultfs.CodeNotANote) {
		t.Errorf("Backlinks(%s) = %v; want NOT_A_NOTE", name, err)
	}
	texts, err := s.NoteTexts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for p, text := range texts {
		if strings.Contains(text, leakWord) {
			t.Errorf("NoteTexts gave the outside file as %s", p)
		}
	}
}

// TestReadOnlyHardLinkedNote is item 7 of issue 9 through the service: in
// read-write mode a hard-linked note is read as before; in read-only mode it
// is not read or indexed, even when an index snapshot written in read-write
// mode holds it, and it is named in the search footer.
func TestReadOnlyHardLinkedNote(t *testing.T) {
	_, dir := leakyVault(t)
	cache := t.TempDir()
	ctx := context.Background()

	rw, err := Open(ctx, Options{Dir: dir, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if res := search(t, rw, api.SearchRequest{Query: leakWord}); len(res.Results) == 0 || res.Results[0].Path != "leak.md" {
		t.Fatalf("read-write search: %v", paths(res))
	}
	if n, err := rw.GetNote(ctx, api.NoteRequest{Path: "leak.md"}); err != nil || !strings.Contains(n.Content, leakWord) {
		t.Fatalf("read-write GetNote: %v", err)
	}
	if err := rw.Close(); err != nil { // waits for the snapshot, which holds leak.md
		t.Fatal(err)
	}

	var log logBuffer
	ro := openOptions(t, Options{Dir: dir, ReadOnly: true, CacheDir: cache, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if !strings.Contains(log.String(), "index snapshot loaded") {
		t.Fatalf("the snapshot was not used:\n%s", log.String())
	}
	checkNotRead(t, ro, "leak.md")
	if !ro.FS().IsReadOnly() {
		t.Error("the gatekeeper of a read-only service is not read-only")
	}
}

// TestReadOnlyHardLinkAppears links a file in while a read-only service
// watches the vault: the watcher's refresh does not read it either.
func TestReadOnlyHardLinkAppears(t *testing.T) {
	base, dir := leakyVault(t)
	ro := openOptions(t, Options{Dir: dir, ReadOnly: true, Watch: true, Debounce: 20 * time.Millisecond})
	if err := os.Link(filepath.Join(base, "outside", "secret.md"), filepath.Join(dir, "late.md")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := search(t, ro, api.SearchRequest{Query: "retry backoff"})
		if slices.Contains(res.Unindexed, "late.md") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("late.md never reported; footer %q", res.Unindexed)
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkNotRead(t, ro, "late.md")
}
