package vault

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestSnapshotWrittenOnClose: with CacheWriteOnClose the snapshot is not
// written in the background after the build but by Close, and only when
// the build changed what it holds; the next open starts from it.
func TestSnapshotWrittenOnClose(t *testing.T) {
	dir := writeVault(t, map[string]string{"a.md": "# Alpha\n\nzebra crossing\n", "b.md": "# Beta\n\nyak shaving\n"})
	cache := t.TempDir()
	open := func() (*Service, *logBuffer) {
		var buf logBuffer
		s, err := Open(context.Background(), Options{Dir: dir, CacheDir: cache, CacheWriteOnClose: true,
			Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Ready(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s, &buf
	}
	snap := func() (os.FileInfo, bool) {
		m, _ := filepath.Glob(filepath.Join(cache, "index-*.snap"))
		if len(m) != 1 {
			return nil, false
		}
		fi, err := os.Stat(m[0])
		return fi, err == nil
	}

	s, _ := open()
	if _, ok := snap(); ok {
		t.Fatal("snapshot written before Close")
	}
	s.Close()
	first, ok := snap()
	if !ok {
		t.Fatal("Close wrote no snapshot")
	}

	s, log := open()
	if got := search(t, s, api.SearchRequest{Query: "zebra"}); len(got.Results) != 1 {
		t.Fatalf("search from the snapshot: %v", paths(got))
	}
	s.Close()
	if !strings.Contains(log.String(), "index snapshot loaded") || !strings.Contains(log.String(), "read=0") {
		t.Errorf("second open did not start from the snapshot:\n%s", log.String())
	}
	// A rewrite renames a new file into place; a read only marks the
	// snapshot used (its modification time).
	if again, _ := snap(); !os.SameFile(again, first) {
		t.Error("an unchanged vault rewrote the snapshot")
	}

	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("# Beta\n\nquokka herding\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "b.md"), later, later)
	s, log = open()
	s.Close()
	if !strings.Contains(log.String(), "read=1") {
		t.Errorf("changed note not re-read:\n%s", log.String())
	}
	if again, _ := snap(); os.SameFile(again, first) {
		t.Error("a changed vault did not rewrite the snapshot")
	}
	s, _ = open()
	defer s.Close()
	if got := search(t, s, api.SearchRequest{Query: "quokka"}); len(got.Results) != 1 {
		t.Errorf("the rewritten snapshot lacks the change: %v", paths(got))
	}
}
