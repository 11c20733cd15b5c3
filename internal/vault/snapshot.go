package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/gcpause"
	"github.com/vaultmcp/vaultmcp/internal/hugeheap"
	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/snapshot"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// The index snapshot (Options.CacheDir): after a build that had to analyze
// notes, the service writes what it knows of every indexed note (size and
// modification time as read, title, type, status, tags, chunk spans and
// links), the link graph resolved from those files and links (see
// links.RestoreGraph) and the whole index to one file outside the vault
// (see package snapshot). The next start walks the vault as always, then takes
// from the snapshot every note whose size and modification time are those
// the snapshot recorded, and reads, parses and indexes only the others; the
// notes the snapshot has but the walk did not find (or found changed) are
// removed from the loaded index first. What a search serves is therefore
// what a fresh build would serve, with one assumption, the usual one of
// build tools: a note rewritten with the same size within the same
// modification time tick is taken as unchanged. Snippets are always read
// from the file itself (see readHit), so even then no stale text is quoted.
//
// Every path comes from the walk: a snapshot cannot add a note that is not
// in the vault. A snapshot that is missing, damaged, written by another
// executable or with other settings, or inconsistent is ignored (logged) and
// the notes are indexed from scratch.
//
// The snapshot is read while the vault is walked (only the walk's end
// needs it); the link graph is restored from it while its index is decoded
// (the snapshot stores the graph resolved: see links.RestoreGraph), as the
// build would fill it if the walk finds the snapshot's files and every note
// unchanged. useSnapshot takes that graph when the files are the
// snapshot's (the notes changed since lose their links there, and get them
// back when read, as in a new graph), and fills a new graph otherwise.

// snapNote is a note as the snapshot recorded it.
type snapNote struct {
	size  int64
	mtime int64 // Unix nanoseconds
	info  *noteInfo
	links []markdown.Link
	fresh bool // found unchanged by the walk (useSnapshot)
}

// loaded is a snapshot read back.
type loaded struct {
	ix    *index.Index
	notes map[string]*snapNote
	// files are the paths of every file the link graph knew when the
	// snapshot was written (notes, attachments, notes that could not be
	// indexed), sorted: with the same files and notes, its link texts are
	// still right.
	files []string
	// graph was restored as if given files and then the links of every
	// note in the order of files, with its text changes untracked: what the build
	// gives the graph when its walk finds those files in that order and
	// every note unchanged. (A link resolves by the files alone, so one
	// note's links do not depend on another's.)
	graph *links.Graph
	// restored: graph was restored from the snapshot's resolved graph, not
	// filled from its files and links
	restored bool
}

// pathsOf returns the paths of walked files.
func pathsOf(files []vaultfs.FileInfo) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

func (s *Service) snapshotPath() string {
	return snapshot.PathFor(s.opts.CacheDir, s.fs.Dir(), s.ix.Settings())
}

// snapshotPeek is what the first bytes of the vault's snapshot file say
// (snapshot.Peek), read once a start: the build needs it during its walk
// (will the notes come from a snapshot?), the snapshot's reader before
// reading (its size, or why it is not to be read whole).
type snapshotPeek struct {
	size int64
	err  error
}

// usable reports whether the notes will likely come from the snapshot: its
// file is there with this executable's format and settings (a damaged one
// is found out only by reading it whole).
func (p snapshotPeek) usable() bool { return p.err == nil }

// peekSnapshot peeks at the vault's snapshot (fs.ErrNotExist without a
// cache folder).
func (s *Service) peekSnapshot() snapshotPeek {
	if s.opts.CacheDir == "" {
		return snapshotPeek{err: fs.ErrNotExist}
	}
	size, err := snapshot.Peek(s.snapshotPath(), s.snapshotKey())
	return snapshotPeek{size, err}
}

func (s *Service) snapshotKey() string {
	return snapshot.Key(s.ix.Settings())
}

// snapshotHeap is the Go heap a decoded snapshot takes, in bytes of the
// file (whose bytes it keeps: its strings share them): 2.7-2.8 at 100k
// notes (254 MiB decoded into 690-710 MiB), rounded up.
const snapshotHeap = 3

// readSnapshot reads the vault's snapshot; nil (logged) when there is none
// that can be used. The collector's pause of the first build (pause) is
// told the heap the decoding takes, so that it does not collect at every
// step while a large snapshot is decoded (see gcpause.Reserve).
// early, if not nil, is the heap readied while the process started (see
// package earlyheap): used instead of readying one when large enough (not
// waited for otherwise; its caller ends it).
func (s *Service) readSnapshot(pause *gcpause.Pause, peek snapshotPeek, early *hugeheap.Early) *loaded {
	if s.opts.CacheDir == "" {
		return nil
	}
	start := time.Now()
	// A file that its first bytes say is not to be used (another
	// executable's, after an upgrade) is not read whole: at 100k notes
	// that was 0.5-0.7 s of reading and checking 254 MB beside the walk.
	// One that is, and what it decodes into, are readied in huge pages
	// first (see hugeheap) when the build is a burst of its own
	// (PauseGC).
	err := peek.err
	path := s.snapshotPath()
	var d *snapshot.Dec
	if err == nil {
		if need := (snapshotHeap + 1) * peek.size; s.opts.PauseGC > 0 && (early == nil || early.Asked() < need || early.Wait().Bytes() < need) {
			defer hugeheap.Ready(need).End()
		}
		d, err = snapshot.Read(path, s.snapshotKey())
	}
	if err == nil {
		pause.Reserve(snapshotHeap * int64(d.Remaining()))
		var l *loaded
		if l, err = s.decodeSnapshot(d); err == nil {
			snapshot.Used(path)
			s.log.Info("index snapshot loaded", "notes", len(l.notes), "took", time.Since(start).Round(time.Millisecond))
			return l
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.log.Info("no index snapshot yet; indexing every note")
	case errors.Is(err, snapshot.ErrInvalid):
		s.log.Info("index snapshot not used; indexing every note", "reason", err.Error())
	default:
		s.log.Warn("index snapshot unreadable; indexing every note", "err", err.Error())
	}
	return nil
}

// snapshotMarkEvery is how often a running service marks its snapshot
// used again (snapshot.Used): a server that runs for weeks on a vault that
// does not change, and so never rewrites its snapshot, keeps it from being
// taken for a moved vault's (snapshot.UnusedAfter).
const snapshotMarkEvery = 24 * time.Hour

// markSnapshotUsed marks the snapshot used when a day has passed since the
// last time (the first call, the start, only notes the time: the start
// from the snapshot marked it). Searches call it: one atomic load each.
func (s *Service) markSnapshotUsed() {
	if s.opts.CacheDir == "" {
		return
	}
	now := s.opts.Now().UnixNano()
	last := s.snapMarked.Load()
	if last != 0 && now-last < int64(snapshotMarkEvery) {
		return
	}
	if !s.snapMarked.CompareAndSwap(last, now) || last == 0 {
		return // another search marks it; or the first search, just after the start
	}
	s.mu.RLock()
	path := s.snapshotPath()
	s.mu.RUnlock()
	snapshot.Used(path)
}

// decodeSnapshot reads what writeSnapshot wrote: the files the graph knew
// that are not indexed notes, the notes, both in the order of paths, and
// the index.
func (s *Service) decodeSnapshot(d *snapshot.Dec) (*loaded, error) {
	others := d.Strings()
	n := d.Len(8)
	l := &loaded{notes: make(map[string]*snapNote, n)}
	// What the notes hold is allocated in a few blocks rather than in a
	// few objects a note.
	paths := make([]string, n)
	sns := make([]snapNote, n)
	infos := make([]noteInfo, n)
	var chunkSlab snapshot.Slab[chunkSpan]
	var linkSlab snapshot.Slab[markdown.Link]
	var strSlab snapshot.Slab[string]
	strs := func() []string {
		out := strSlab.Take(d.Len(1))
		for i := range out {
			out[i] = d.String()
		}
		return out
	}
	for k := range n {
		p := d.String()
		sn, ni := &sns[k], &infos[k]
		sn.size, sn.mtime, sn.info = d.Varint(), d.Varint(), ni
		ni.title, ni.typ, ni.status = d.String(), d.String(), d.String()
		ni.tags = strs()
		ni.chunks = chunkSlab.Take(d.Len(3))
		for i := range ni.chunks {
			c := &ni.chunks[i]
			c.headings = strs()
			c.start, c.end = d.Int(1<<31-1), d.Int(1<<31-1)
		}
		sn.links = linkSlab.Take(d.Len(10))
		for i := range sn.links {
			lk := &sn.links[i]
			lk.Kind = markdown.LinkKind(d.Int(255))
			lk.Target, lk.Anchor, lk.Alias = d.String(), d.String(), d.String()
			lk.HasAlias = d.Bool()
			lk.Start, lk.End = d.Int(1<<31-1), d.Int(1<<31-1)
			lk.TargetStart, lk.TargetEnd = d.Int(1<<31-1), d.Int(1<<31-1)
			lk.Line = d.Int(1<<31 - 1)
		}
		if d.Err() != nil {
			return nil, d.Err()
		}
		if p == "" || k > 0 && p <= paths[k-1] {
			return nil, fmt.Errorf("%w: note %q out of order or listed twice", snapshot.ErrInvalid, p)
		}
		paths[k] = p
		l.notes[p] = sn
	}
	if d.Err() != nil {
		return nil, d.Err()
	}
	var ok bool
	if l.files, ok = mergeSorted(others, paths); !ok {
		return nil, fmt.Errorf("%w: files out of order or listed twice", snapshot.ErrInvalid)
	}
	// The link graph is restored (or, when the snapshot holds none, filled)
	// while the index is decoded.
	gd := d.Section()
	type graphErr struct {
		g        *links.Graph
		restored bool
		err      error
	}
	graphc := make(chan graphErr, 1)
	go func() {
		nl := make([]links.NoteLinks, n)
		for k, p := range paths {
			nl[k] = links.NoteLinks{Path: p, Links: sns[k].links}
		}
		g, err := links.RestoreGraph(gd, l.files, nl)
		if err == nil {
			err = gd.Done()
		}
		restored := g != nil
		if g == nil && err == nil {
			g = links.NewGraph()
			fillGraph(g, l.files, nl)
		}
		graphc <- graphErr{g, restored, err}
	}()
	ix, err := index.Decode(d, s.opts.Index)
	if err == nil {
		err = d.Done()
	}
	ge := <-graphc
	if err == nil {
		err = ge.err
	}
	if err != nil {
		return nil, err
	}
	l.graph, l.restored = ge.g, ge.restored
	// The two halves must describe the same notes.
	if ix.Len() != len(l.notes) {
		return nil, fmt.Errorf("%w: notes and index disagree", snapshot.ErrInvalid)
	}
	for k, p := range paths {
		if c, ok := ix.Chunks(p); !ok || c != len(sns[k].info.chunks) {
			return nil, fmt.Errorf("%w: notes and index disagree", snapshot.ErrInvalid)
		}
	}
	l.ix = ix
	return l, nil
}

// fillGraph gives g, at the start of a build, every file (all known before
// any link is resolved, so that each link is resolved once) and the links
// of the notes taken from a snapshot (nl; the graph copies their strings);
// the changes on the way need no record, as
// every note's link texts are taken once the graph is filled.
func fillGraph(g *links.Graph, files []string, nl []links.NoteLinks) {
	g.TrackTextChanges(false)
	g.AddFiles(files)
	if len(nl) > 0 {
		g.SetNotes(nl)
	}
}

// mergeSorted merges two strictly increasing lists; ok is false when one is
// not strictly increasing or they share a string.
func mergeSorted(a, b []string) (out []string, ok bool) {
	out = make([]string, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var x string
		if len(b) == 0 || len(a) > 0 && a[0] < b[0] {
			x, a = a[0], a[1:]
		} else {
			x, b = b[0], b[1:]
		}
		if len(out) > 0 && x <= out[len(out)-1] {
			return nil, false
		}
		out = append(out, x)
	}
	return out, true
}

// useSnapshot takes from l every walked note that has not changed since the
// snapshot, and returns the notes still to be read; the link graph is
// given every walked file (files, of which notes are the notes) and the
// links of the notes taken, or is to be given them by fill when not nil.
// changed says a note changed, appeared or vanished; textsKept that the
// snapshot's link texts still hold (nothing changed, and the vault has the
// files it had); kept that the vault has the files the snapshot knew and
// every note it holds is unchanged, so that the snapshot is still right
// unless one of the notes still to be read gets indexed (see the build:
// a note that could not be indexed when the snapshot was written, over
// the size limit or unreadable, is read again at every start, and failing
// again it changes nothing). Caller holds s.mu, the build has not indexed
// anything yet.
func (s *Service) useSnapshot(l *loaded, files, notes []vaultfs.FileInfo) (stale []vaultfs.FileInfo, changed, textsKept, kept bool, fill func()) {
	nl := make([]links.NoteLinks, 0, len(notes))
	fresh := 0
	for _, fi := range notes {
		sn := l.notes[fi.Path]
		if sn == nil || sn.size != fi.Size || sn.mtime != fi.ModTime.UnixNano() {
			stale = append(stale, fi)
			continue
		}
		fresh++
		sn.fresh = true
		sn.info.file = fi
		s.notes[fi.Path] = sn.info
		nl = append(nl, links.NoteLinks{Path: fi.Path, Links: sn.links})
	}
	var gone []index.Item
	if fresh < len(l.notes) {
		for p, sn := range l.notes {
			if !sn.fresh {
				gone = append(gone, index.Item{Path: p})
			}
		}
	}
	changed = len(stale) > 0 || len(gone) > 0
	inOrder := len(files) == len(l.files)
	for i := 0; inOrder && i < len(files); i++ {
		inOrder = files[i].Path == l.files[i]
	}
	if inOrder && l.graph != nil {
		// The walk found the snapshot's files in its order: l.graph is the
		// graph the lines below would fill, but for the notes changed since
		// (still to be read), which have no links until they are read.
		s.graph = l.graph
		var drop []links.NoteLinks
		for _, fi := range stale {
			if l.notes[fi.Path] != nil {
				drop = append(drop, links.NoteLinks{Path: fi.Path})
			}
		}
		s.graph.SetNotes(drop)
		s.log.Debug("link graph taken from the snapshot", "restored", l.restored, "notes_changed", len(drop))
	} else {
		g, paths := s.graph, pathsOf(files)
		fill = func() { fillGraph(g, paths, nl) }
	}
	sameFiles := inOrder || slices.Equal(slices.Sorted(slices.Values(pathsOf(files))), l.files)
	textsKept = !changed && sameFiles
	kept = len(gone) == 0 && sameFiles
	l.ix.AddBatch(gone) // nil notes: removals
	s.ix = l.ix
	return stale, changed, textsKept, kept, fill
}

// testHookSnapshotWrite, when set, runs as a snapshot write starts.
var testHookSnapshotWrite func()

// writeSnapshot writes the snapshot of the current state; ctx cancels it.
func (s *Service) writeSnapshot(ctx context.Context) {
	if testHookSnapshotWrite != nil {
		testHookSnapshotWrite()
	}
	start := time.Now()
	path := s.snapshotPath()
	if n := snapshot.Tidy(filepath.Dir(path), path); n > 0 {
		s.log.Info("index snapshots unused for 30 days removed from the cache folder", "count", n)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	errCanceled := errors.New("canceled")
	err := snapshot.Write(path, s.snapshotKey(), func(e *snapshot.Enc) error {
		// The files the graph knows that are not indexed notes, then the
		// notes, each in the order of paths.
		paths := sortedKeys(s.notes)
		var others []string
		for _, p := range s.graph.Resolver().Files() {
			if s.notes[p] == nil {
				others = append(others, p)
			}
		}
		e.Strings(others)
		e.Int(len(paths))
		var out []markdown.Link // one note's links, the buffer reused
		for k, p := range paths {
			if k%1024 == 1023 && ctx.Err() != nil {
				return errCanceled
			}
			ni := s.notes[p]
			e.String(p)
			e.Varint(ni.file.Size)
			e.Varint(ni.file.ModTime.UnixNano())
			e.String(ni.title)
			e.String(ni.typ)
			e.String(ni.status)
			e.Strings(ni.tags)
			e.Int(len(ni.chunks))
			for _, c := range ni.chunks {
				e.Strings(c.headings)
				e.Int(c.start)
				e.Int(c.end)
			}
			out = out[:0]
			s.graph.EachOut(p, func(l markdown.Link) { out = append(out, l) })
			e.Int(len(out))
			for i := range out {
				lk := &out[i]
				e.Int(int(lk.Kind))
				e.String(lk.Target)
				e.String(lk.Anchor)
				e.String(lk.Alias)
				e.Bool(lk.HasAlias)
				e.Int(max(lk.Start, 0))
				e.Int(max(lk.End, 0))
				e.Int(max(lk.TargetStart, 0))
				e.Int(max(lk.TargetEnd, 0))
				e.Int(max(lk.Line, 0))
			}
		}
		// The graph resolved from those files and links (see
		// links.RestoreGraph).
		files, ok := mergeSorted(others, paths)
		e.Section(func(e *snapshot.Enc) {
			if !ok {
				e.Bool(false)
				return
			}
			s.graph.EncodeResolved(e, files, paths)
		})
		s.ix.Encode(e)
		return nil
	})
	switch {
	case errors.Is(err, errCanceled):
	case err != nil:
		s.log.Warn("index snapshot not written", "err", s.fs.Redact(err.Error()))
	default:
		snapshot.RemoveUnkeyed(s.opts.CacheDir, s.fs.Dir())
		s.log.Info("index snapshot written", "notes", len(s.notes), "took", time.Since(start).Round(time.Millisecond))
	}
}
