package vault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/earlyheap"
	"github.com/vaultmcp/vaultmcp/internal/gcpause"
	"github.com/vaultmcp/vaultmcp/internal/hugeheap"
	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/snapshot"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// openCached opens dir with snapshots in cache, waits for the index and
// closes the service (which waits for the snapshot write); it returns the
// state the service served and its log.
func openCached(t *testing.T, dir, cache, lang string) (state string, log string) {
	t.Helper()
	return openCachedPausing(t, dir, cache, lang, 0)
}

// openCachedPausing is openCached with Options.PauseGC.
func openCachedPausing(t *testing.T, dir, cache, lang string, pauseGC int64) (state string, log string) {
	t.Helper()
	var buf logBuffer
	s, err := Open(context.Background(), Options{Dir: dir, Lang: lang, CacheDir: cache, PauseGC: pauseGC,
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	state = serviceState(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return state, buf.String()
}

// serviceState renders what the read tools answer: searches for every
// title and a few phrases (hits, lines, scores, snippets), the note list,
// the graph with broken links and every note's backlinks.
func serviceState(t *testing.T, s *Service) string {
	t.Helper()
	ctx := context.Background()
	var out strings.Builder
	put := func(label string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		b, _ := json.Marshal(v)
		out.WriteString(label + " " + string(b) + "\n")
	}
	list, err := s.List(ctx, api.ListRequest{})
	put("list", list, err)
	queries := []string{"retry backoff jitter", "configuração", "plugin settings", "zzzz", "migrations database", "quokkafication", "wombatisation", "checkout project", "quokka programme", "leaked goroutines"}
	for _, n := range list.Notes {
		queries = append(queries, n.Title)
		bl, err := s.Backlinks(ctx, api.BacklinksRequest{Path: n.Path})
		put("backlinks "+n.Path, bl, err)
	}
	for _, q := range queries {
		res, err := s.Search(ctx, api.SearchRequest{Query: q, Limit: 20, IncludeRaw: true, Explain: true})
		put("search "+q, res, err)
	}
	g, err := s.Graph(ctx, api.GraphRequest{IncludeBroken: true, IncludeRaw: true})
	put("graph", g, err)
	return out.String()
}

func exampleCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	copyTree(t, filepath.Join("..", "..", "examples", "vault"), dir)
	return dir
}

// A start from the snapshot serves exactly what a full build serves, and
// notes changed, added or deleted while no server ran are picked up.
func TestSnapshotStart(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	fresh := func() string {
		st, _ := openCached(t, dir, "", "en")
		return st
	}

	first, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "no index snapshot yet") || !strings.Contains(log, "index snapshot written") {
		t.Fatalf("first start: no snapshot written:\n%s", log)
	}
	if want := fresh(); first != want {
		t.Fatal("first start differs from a build without snapshot")
	}
	second, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "index snapshot loaded") || strings.Contains(log, "index snapshot written") {
		t.Fatalf("second start: snapshot not used, or rewritten with nothing changed:\n%s", log)
	}
	if second != first {
		t.Fatal("start from the snapshot serves something else than the build that wrote it")
	}

	// Offline changes: one note edited (same name, new words), one
	// deleted, one added, one edited keeping its size.
	notes := listNotes(t, dir)
	edit, gone, same := notes[0], notes[1], notes[2]
	appendFile(t, filepath.Join(dir, edit), "\n\nquokkafication of the snapshot\n")
	if err := os.Remove(filepath.Join(dir, gone)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "02-wiki", "fresh-note.md"), []byte("# Fresh note\n\nwombatisation links to [["+strings.TrimSuffix(filepath.Base(edit), ".md")+"]]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, same))
	if err != nil {
		t.Fatal(err)
	}
	copy(data, bytes.ToUpper(data[:min(len(data), 2)]))
	if err := os.WriteFile(filepath.Join(dir, same), data, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(dir, same), later, later); err != nil {
		t.Fatal(err)
	}
	third, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "index snapshot loaded") || !strings.Contains(log, "read=3") {
		t.Fatalf("third start: want the snapshot used and 3 notes read:\n%s", log)
	}
	if want := fresh(); third != want {
		t.Fatalf("after offline changes the snapshot start differs from a full build")
	}
	// The snippets quote the new text (the query alone is in the labels).
	for _, w := range []string{"quokkafication of the snapshot", "wombatisation links to"} {
		if !strings.Contains(third, w) {
			t.Fatalf("%q not found after the restart", w)
		}
	}
	// ...and the snapshot rewritten then is used as is the next time.
	fourth, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "read=0") || fourth != third {
		t.Fatalf("fourth start: want every note from the snapshot:\n%s", log)
	}
}

// A snapshot that cannot be used is ignored and the vault indexed in full:
// damaged, truncated, or written with other settings.
func TestSnapshotIgnored(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	want, _ := openCached(t, dir, cache, "en")
	good, err := os.ReadFile(snapshotFile(t, cache, dir, "en"))
	if err != nil {
		t.Fatalf("no snapshot at the expected path: %v", err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		lang string
	}{
		{"damaged", flip(good, len(good)/2), "en"},
		{"truncated", good[:len(good)-100], "en"},
		{"other settings", good, "pt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// "other settings": the file where the pt settings look
			// holds a snapshot of the en ones.
			if err := os.WriteFile(snapshotFile(t, cache, dir, tc.lang), tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, log := openCached(t, dir, cache, tc.lang)
			if !strings.Contains(log, "index snapshot not used") || !strings.Contains(log, "index snapshot written") {
				t.Fatalf("want the snapshot refused and rewritten:\n%s", log)
			}
			if tc.lang == "en" && got != want {
				t.Fatal("a refused snapshot changed what is served")
			}
		})
	}
}

// A snapshot write that cannot complete (the cache folder is a file) is a
// warning; the service works.
func TestSnapshotUnwritable(t *testing.T) {
	dir := exampleCopy(t)
	cache := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(cache, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want, _ := openCached(t, dir, "", "en")
	got, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "index snapshot not written") {
		t.Fatalf("want a warning:\n%s", log)
	}
	if got != want {
		t.Fatal("an unwritable cache changed what is served")
	}
}

func listNotes(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && !strings.Contains(p, "/.") && !strings.Contains(p, "_templates") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if len(out) < 3 {
		t.Fatal("too few notes")
	}
	return out
}

func appendFile(t *testing.T, p, text string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x10
	return c
}

func mustAbs(t *testing.T, dir string) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err = filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A write cut short by a killed process leaves a temporary file beside the
// snapshot: the old snapshot is intact, and the next write removes the
// temporary once it is an hour old (a fresh one may be another server's
// write in progress).
func TestSnapshotKilledWriteLeftovers(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	openCached(t, dir, cache, "en")
	path := snapshotFile(t, cache, dir, "en")
	old := filepath.Join(cache, ".snap-111")
	fresh := filepath.Join(cache, ".snap-222")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("VMCPSNAP half a snapsh"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	// The killed write never renamed: the snapshot is the old one and used.
	appendFile(t, filepath.Join(dir, listNotes(t, dir)[0]), "\nchanged\n")
	_, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "index snapshot loaded") || !strings.Contains(log, "index snapshot written") {
		t.Fatalf("want the old snapshot used, then rewritten:\n%s", log)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("an hour-old temporary file was kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a fresh temporary file was removed: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// Link texts come back from the snapshot as a full build gives them: with
// nothing changed (they are kept), after an attachment appeared (they are
// computed again), after a linking note changed its text.
func TestSnapshotLinkTexts(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	fresh := func() string {
		st, _ := openCached(t, dir, "", "en")
		return st
	}
	first, _ := openCached(t, dir, cache, "en")
	second, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "read=0") || second != first || !strings.Contains(second, "link_text") {
		t.Fatalf("second start: want every note from the snapshot, link texts kept:\n%s", log)
	}
	if err := os.WriteFile(filepath.Join(dir, "attachments", "pool-sizing.png"), []byte("PNG"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "read=0") || third != fresh() {
		t.Fatalf("after an attachment appeared, the snapshot start differs from a full build:\n%s", log)
	}
	note := filepath.Join(dir, "02-wiki", "go", "retry-backoff.md")
	data, err := os.ReadFile(note)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("[[checkout-v2|checkout project]]"), []byte("[[checkout-v2|quokka programme]]"), 1)
	if err := os.WriteFile(note, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fourth, _ := openCached(t, dir, cache, "en")
	if want := fresh(); fourth != want {
		t.Fatal("after a link text changed offline, the snapshot start differs from a full build")
	}
	if !strings.Contains(fourth, "quokka") {
		t.Fatal("the new link text is not served")
	}
}

// The link graph a start fills from the snapshot (while the index is
// decoded) is taken only when the walk finds the snapshot's files (notes
// may have changed: they are read again), and serves what a full build
// serves; any other start fills the graph from the walk, as a full build
// does. Notes link to attachments (files the graph knows that the snapshot
// has no note for).
func TestSnapshotGraph(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "01-raw", "diagram.pdf"), []byte("%PDF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "02-wiki", "linker.md"), []byte("# Linker\n\nSee [[diagram.pdf]], ![[retry-timeline.png]], [[huge-dump]] and [[retry-backoff|the retries]].\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := func() string {
		st, _ := openCached(t, dir, "", "en")
		return st
	}
	const taken = `link graph taken from the snapshot" restored=true` // restored from its resolved form, not filled
	first, log := openCached(t, dir, cache, "en")
	if strings.Contains(log, taken) {
		t.Fatalf("first start: no snapshot to take a graph from:\n%s", log)
	}
	if !strings.Contains(first, `"to":"huge-dump","broken":true`) {
		t.Fatal("the state does not show the broken link")
	}
	second, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, taken) || !strings.Contains(log, "read=0") {
		t.Fatalf("second start: want the graph taken from the snapshot:\n%s", log)
	}
	if second != first || second != fresh() {
		t.Fatal("the graph taken from the snapshot serves something else than a full build")
	}
	linker := filepath.Join(dir, "02-wiki", "linker.md")
	for _, tc := range []struct {
		name   string
		taken  bool
		change func()
	}{
		{"attachment added", false, func() { // [[huge-dump]] resolves to it
			if err := os.WriteFile(filepath.Join(dir, "attachments", "huge-dump"), []byte("?"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"attachment removed", false, func() {
			if err := os.Remove(filepath.Join(dir, "attachments", "retry-timeline.png")); err != nil {
				t.Fatal(err)
			}
		}},
		{"note added", false, func() {
			if err := os.WriteFile(filepath.Join(dir, "03-projects", "huge-dump.md"), []byte("# Huge dump\n\n[[linker]]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"links edited", true, func() { appendFile(t, linker, "\nAnd [[checkout-v2]], [[Retry-Backoff]].\n") }},
		{"links removed", true, func() {
			if err := os.WriteFile(linker, []byte("# Linker\n\nno links now\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"note too large to index", true, func() {
			if err := os.WriteFile(linker, append([]byte("[[checkout-v2]]\n"), bytes.Repeat([]byte("word "), vaultfs.MaxNoteSize/5+1)...), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"links back", true, func() {
			if err := os.WriteFile(linker, []byte("# Linker\n\n[[checkout-v2]] [[diagram.pdf]]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"note removed", false, func() {
			if err := os.Remove(linker); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			got, log := openCached(t, dir, cache, "en")
			if strings.Contains(log, taken) != tc.taken || !strings.Contains(log, "index snapshot loaded") {
				t.Fatalf("want the snapshot used and the graph taken from it %v:\n%s", tc.taken, log)
			}
			if got != fresh() {
				t.Fatal("after the change the snapshot start differs from a full build")
			}
			// The snapshot written after the change gives the graph again
			// (but with a note it cannot hold, which is read at every start).
			again, log := openCached(t, dir, cache, "en")
			if !strings.Contains(log, taken) || again != got {
				t.Fatalf("the next start: want the graph taken from the new snapshot, serving the same:\n%s", log)
			}
		})
	}
}

func TestMergeSorted(t *testing.T) {
	for _, tc := range []struct {
		a, b, want []string
		ok         bool
	}{
		{nil, nil, []string{}, true},
		{[]string{"a", "c"}, []string{"b", "d", "e"}, []string{"a", "b", "c", "d", "e"}, true},
		{[]string{"b"}, nil, []string{"b"}, true},
		{[]string{"a", "b"}, []string{"b"}, nil, false},
		{[]string{"b", "a"}, nil, nil, false},
		{nil, []string{"a", "a"}, nil, false},
	} {
		got, ok := mergeSorted(tc.a, tc.b)
		if ok != tc.ok || ok && !slices.Equal(got, tc.want) {
			t.Errorf("mergeSorted(%q, %q) = %q, %v; want %q, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}

// A crashed write's temporary files are removed at start, after the first
// build (not beside it), and before any write: a write waits for the
// removal, and Close for its end.
func TestStartRemovesTempsAfterBuild(t *testing.T) {
	dir := exampleCopy(t)
	leftovers := []string{
		filepath.Join(dir, ".vaultmcp-0123456789abcdef.tmp"),
		filepath.Join(dir, "02-wiki", "go", ".vaultmcp-fedcba9876543210.tmp"),
	}
	for _, p := range leftovers {
		if err := os.WriteFile(p, []byte("half a note"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: dir, Lang: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/after-start.md", Content: "# After start\n\nwritten once the temporary files were gone\n"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range leftovers {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: still there after the first write (%v)", p, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// A snapshot whose notes or files are not in the order of their paths, or
// listed twice, is refused (the graph filled from it relies on the order).
func TestSnapshotOrderChecked(t *testing.T) {
	note := func(e *snapshot.Enc, p string) {
		e.String(p)
		e.Varint(1)
		e.Varint(2)
		e.String("T")
		e.String("")
		e.String("")
		e.Strings(nil)
		e.Int(0) // chunks
		e.Int(0) // links
	}
	for _, tc := range []struct {
		name   string
		others []string
		notes  []string
	}{
		{"notes out of order", nil, []string{"b.md", "a.md"}},
		{"note twice", nil, []string{"a.md", "a.md"}},
		{"files out of order", []string{"z.png", "c.png"}, []string{"a.md"}},
		{"a file that is a note", []string{"a.md"}, []string{"a.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.snap")
			if err := snapshot.Write(path, "k", func(e *snapshot.Enc) error {
				e.Strings(tc.others)
				e.Int(len(tc.notes))
				for _, p := range tc.notes {
					note(e, p)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			d, err := snapshot.Read(path, "k")
			if err != nil {
				t.Fatal(err)
			}
			s := &Service{}
			if _, err := s.decodeSnapshot(d); !errors.Is(err, snapshot.ErrInvalid) || !strings.Contains(err.Error(), "order") {
				t.Fatalf("want refused for its order, got %v", err)
			}
		})
	}
}

// TestFirstBuildReadiesHeap: a first build whose notes will take more than
// hugeheap.MinReady of heap readies it in huge pages beside the walk (on a
// kernel that gives them on request), also beside a snapshot it cannot
// use; a start from the snapshot, whose notes are not read, a small vault
// and a service that does not pause the collector (a team server's) do
// not.
func TestFirstBuildReadiesHeap(t *testing.T) {
	if !hugeheap.Usable() {
		t.Skip("this kernel gives no transparent huge pages on request")
	}
	const readied = "heap readied in huge pages"
	openCached := func(t *testing.T, dir, cache, lang string) (string, string) {
		return openCachedPausing(t, dir, cache, lang, gcpause.DefaultLimit)
	}
	write := func(dir string, notes, size int) { writeSizedNotes(t, dir, notes, size) }
	// The first build's walk does not stat the notes: it takes each for
	// unstattedNoteBytes.
	big := t.TempDir()
	write(big, 1000, 2<<10) // 2 MB of notes: about 20 MB of heap to build
	cache := t.TempDir()
	before := hugeheap.Readied()
	if _, log := openCached(t, big, cache, "en"); !strings.Contains(log, readied) {
		t.Errorf("the first build of 2 MB of notes readied no heap; log:\n%s", log)
	}
	if got := hugeheap.Readied() - before; got < buildHeapMax {
		t.Errorf("Readied grew by %d, want at least %d", got, buildHeapMax)
	}
	if _, log := openCached(t, big, cache, "en"); strings.Contains(log, readied) {
		t.Errorf("a start from the snapshot readied the build's heap; log:\n%s", log)
	}
	// A snapshot that cannot be used (here: not one at all; after an
	// upgrade: another executable's) is no reason not to ready the heap.
	snaps, _ := filepath.Glob(filepath.Join(cache, "index-*.snap"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots in the cache: %q, want one", snaps)
	}
	if err := os.WriteFile(snaps[0], []byte("not a snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, log := openCached(t, big, cache, "en"); !strings.Contains(log, readied) {
		t.Errorf("the first build beside an unusable snapshot readied no heap; log:\n%s", log)
	}
	small := t.TempDir()
	write(small, 10, 16<<10) // 10 notes: taken for 20 kB
	if _, log := openCached(t, small, t.TempDir(), "en"); strings.Contains(log, readied) {
		t.Errorf("the first build of 160 kB of notes readied the heap; log:\n%s", log)
	}
	if _, log := openCachedPausing(t, big, t.TempDir(), "en", 0); strings.Contains(log, readied) {
		t.Errorf("a service that does not pause the collector readied the heap; log:\n%s", log)
	}
}

// TestBuildTakesEarlyHeap: a heap readied while the process started
// (hugeheap.StartEarly, as package earlyheap does for `vaultmcp serve`) is
// taken by the service that opens next, which readies no other: the first
// build of a large vault waits for it where it would have readied its own,
// a small one does not use it, a start from the snapshot decodes into it;
// each ends it.
func TestBuildTakesEarlyHeap(t *testing.T) {
	if !hugeheap.Usable() {
		t.Skip("this kernel gives no transparent huge pages on request")
	}
	if earlyheap.Bytes != buildHeapMax {
		t.Fatalf("earlyheap readies %d bytes, the build %d", earlyheap.Bytes, buildHeapMax)
	}
	write := func(dir string, notes, size int) { writeSizedNotes(t, dir, notes, size) }
	ended := func(what string) {
		t.Helper()
		for range 200 { // ended on a goroutine of its own once ready
			if hugeheap.On() == 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Errorf("%s: %d bursts still on", what, hugeheap.On())
	}
	open := func(what, dir, cache string) string {
		t.Helper()
		hugeheap.StartEarly(earlyheap.Bytes)
		before := hugeheap.Readied()
		_, log := openCachedPausing(t, dir, cache, "en", gcpause.DefaultLimit)
		if hugeheap.TakeEarly() != nil {
			t.Errorf("%s: the early heap was not taken", what)
		}
		if got := hugeheap.Readied() - before; got > earlyheap.Bytes+8<<20 {
			t.Errorf("%s: %d bytes readied, more than the early heap", what, got)
		}
		ended(what)
		return log
	}
	big, cache := t.TempDir(), t.TempDir()
	write(big, 1000, 2<<10)
	if log := open("first build", big, cache); !strings.Contains(log, "heap readied in huge pages") || !strings.Contains(log, "while_starting=true") {
		t.Errorf("the first build of 2 MB of notes did not use the early heap; log:\n%s", log)
	}
	if log := open("start from the snapshot", big, cache); strings.Contains(log, "heap readied in huge pages") || !strings.Contains(log, "index snapshot loaded") {
		t.Errorf("a start from the snapshot: log:\n%s", log)
	}
	small := t.TempDir()
	write(small, 10, 16<<10)
	if log := open("small vault", small, t.TempDir()); strings.Contains(log, "heap readied in huge pages") {
		t.Errorf("the first build of 160 kB of notes waited for the early heap; log:\n%s", log)
	}
}

// writeSizedNotes writes notes notes of about size bytes each into dir.
func writeSizedNotes(t *testing.T, dir string, notes, size int) {
	t.Helper()
	para := strings.Repeat("retry backoff jitter deadline context cancel goroutine pool ", 16) + "\n\n"
	for i := range notes {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for b.Len() < size {
			b.WriteString(para)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%04d.md", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A note that cannot be indexed (here over the size limit) does not make
// every start rewrite the snapshot: it is read again and fails again, which
// changes nothing the snapshot holds. Once it can be indexed, it is, and
// the snapshot is rewritten with it.
func TestSnapshotKeptWithUnindexableNote(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	huge := filepath.Join(dir, "02-wiki", "huge-export.md")
	body := append([]byte("# Huge export\n\nplatypusword\n"), bytes.Repeat([]byte("x"), vaultfs.MaxNoteSize)...)
	if err := os.WriteFile(huge, body, 0o644); err != nil {
		t.Fatal(err)
	}
	first, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "index snapshot written") {
		t.Fatalf("first start: no snapshot written:\n%s", log)
	}
	for i := range 2 {
		again, log := openCached(t, dir, cache, "en")
		if !strings.Contains(log, "index snapshot loaded") || strings.Contains(log, "index snapshot written") {
			t.Fatalf("start %d: snapshot not used, or rewritten with nothing changed:\n%s", i+2, log)
		}
		if again != first {
			t.Fatalf("start %d from the snapshot serves something else than the build that wrote it", i+2)
		}
	}
	// Cut under the limit, the note is indexed and the snapshot rewritten.
	if err := os.WriteFile(huge, body[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	fixed, log := openCached(t, dir, cache, "en")
	if !strings.Contains(log, "read=1") || !strings.Contains(log, "index snapshot written") {
		t.Fatalf("after the note shrank: want it read and the snapshot rewritten:\n%s", log)
	}
	if !strings.Contains(fixed, "platypusword") {
		t.Fatal("the note cut under the limit is not found")
	}
	if st, log := openCached(t, dir, cache, "en"); st != fixed || !strings.Contains(log, "read=0") {
		t.Fatalf("the rewritten snapshot is not used as is:\n%s", log)
	}
}

// snapshotFile is the snapshot file of the vault dir in cache under the
// settings of lang.
func snapshotFile(t *testing.T, cache, dir, lang string) string {
	t.Helper()
	return snapshot.PathFor(cache, mustAbs(t, dir), index.New(index.Options{Lang: lang}).Settings())
}

// Two programs on one vault with different settings (a server with
// VAULT_LANG=pt, a search from a shell without it) each keep their
// snapshot: neither start refuses and replaces the other's.
func TestSnapshotPerSettings(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	// The file an earlier build named by the vault's path alone is
	// removed once a snapshot is written under the new name.
	sum := sha256.Sum256([]byte(mustAbs(t, dir)))
	unkeyed := filepath.Join(cache, "index-"+hex.EncodeToString(sum[:12])+".snap")
	if err := os.WriteFile(unkeyed, []byte("VMCPSNAP of an earlier build"), 0o600); err != nil {
		t.Fatal(err)
	}
	pt, _ := openCached(t, dir, cache, "pt")
	if _, err := os.Stat(unkeyed); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the snapshot named by the vault path alone is still there: %v", err)
	}
	en, _ := openCached(t, dir, cache, "en")
	for i, tc := range []struct {
		lang, want string
	}{{"pt", pt}, {"en", en}, {"pt", pt}} {
		got, log := openCached(t, dir, cache, tc.lang)
		if !strings.Contains(log, "index snapshot loaded") || strings.Contains(log, "index snapshot written") {
			t.Fatalf("start %d (%s): the snapshot of these settings not used, or rewritten:\n%s", i+3, tc.lang, log)
		}
		if got != tc.want {
			t.Fatalf("start %d (%s) from the snapshot serves something else than the build that wrote it", i+3, tc.lang)
		}
	}
}

// A snapshot read is marked used; the next snapshot written removes the
// ones unused for snapshot.UnusedAfter (a vault moved away), and keeps the
// others and files that are not snapshots.
func TestSnapshotUnusedRemoved(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	openCached(t, dir, cache, "en")
	path := snapshotFile(t, cache, dir, "en")
	long := time.Now().Add(-snapshot.UnusedAfter - time.Hour)
	if err := os.Chtimes(path, long, long); err != nil {
		t.Fatal(err)
	}
	_, log := openCached(t, dir, cache, "en") // nothing changed: read, not written
	if !strings.Contains(log, "index snapshot loaded") || strings.Contains(log, "index snapshot written") {
		t.Fatalf("want the snapshot used and not rewritten:\n%s", log)
	}
	if fi, err := os.Stat(path); err != nil || time.Since(fi.ModTime()) > time.Hour {
		t.Fatalf("the snapshot read was not marked used: %v %v", fi.ModTime(), err)
	}

	gone := filepath.Join(cache, "index-0123456789abcdef01234567.snap") // a vault moved away
	recent := filepath.Join(cache, "index-89abcdef0123456789abcdef.snap")
	other := filepath.Join(cache, "notes.txt")
	for _, p := range []string{gone, recent, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{gone, other} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	recentTime := time.Now().Add(-snapshot.UnusedAfter + time.Hour)
	if err := os.Chtimes(recent, recentTime, recentTime); err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(dir, listNotes(t, dir)[0]), "\nchanged\n")
	_, log = openCached(t, dir, cache, "en")
	if !strings.Contains(log, "index snapshot written") || !strings.Contains(log, "unused for 30 days removed") {
		t.Fatalf("want the snapshot rewritten and the unused one removed:\n%s", log)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the snapshot unused for 30 days was kept: %v", err)
	}
	for _, p := range []string{recent, other, path} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}

// A service running for days on a vault that does not change marks its
// snapshot used again at a search once a day (its clock), so that it is
// never taken for a moved vault's.
func TestSnapshotMarkedUsedWhileRunning(t *testing.T) {
	dir := exampleCopy(t)
	cache := t.TempDir()
	openCached(t, dir, cache, "en")
	path := snapshotFile(t, cache, dir, "en")
	clk := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clk }
	advance := func(d time.Duration) { mu.Lock(); clk = clk.Add(d); mu.Unlock() }
	s, err := Open(context.Background(), Options{Dir: dir, Lang: "en", CacheDir: cache, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long := time.Now().Add(-snapshot.UnusedAfter - time.Hour)
	age := func() time.Duration {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(fi.ModTime())
	}
	search(t, s, api.SearchRequest{Query: "retry"}) // the first: the start marked it
	if err := os.Chtimes(path, long, long); err != nil {
		t.Fatal(err)
	}
	advance(23 * time.Hour)
	search(t, s, api.SearchRequest{Query: "retry"})
	if age() < snapshot.UnusedAfter {
		t.Fatal("marked again within a day")
	}
	advance(2 * time.Hour)
	search(t, s, api.SearchRequest{Query: "retry"})
	if age() > time.Hour {
		t.Fatal("not marked used a day after the start")
	}
}
