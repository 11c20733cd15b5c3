package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/snapshot"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// The index snapshot (Options.CacheDir): after a build that had to analyze
// notes, the service writes what it knows of every indexed note (size and
// modification time as read, title, type, status, tags, chunk spans and
// links) followed by the whole index to one file outside the vault (see
// package snapshot). The next start walks the vault as always, then takes
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

// snapNote is a note as the snapshot recorded it.
type snapNote struct {
	size  int64
	mtime int64 // Unix nanoseconds
	info  *noteInfo
	links []markdown.Link
}

// loaded is a snapshot read back.
type loaded struct {
	ix    *index.Index
	notes map[string]*snapNote
	// files is the filesDigest of the vault's files when it was written:
	// with the same files and notes, its link texts are still right.
	files string
}

// filesDigest is a digest of the paths of a vault's files (notes and
// attachments: every file the link resolution knows).
func filesDigest(paths []string) string {
	paths = slices.Clone(paths)
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
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
	return snapshot.PathFor(s.opts.CacheDir, s.fs.Dir())
}

func (s *Service) snapshotKey() string {
	return snapshot.Key(s.ix.Settings())
}

// readSnapshot reads the vault's snapshot; nil (logged) when there is none
// that can be used.
func (s *Service) readSnapshot() *loaded {
	if s.opts.CacheDir == "" {
		return nil
	}
	start := time.Now()
	d, err := snapshot.Read(s.snapshotPath(), s.snapshotKey())
	if err == nil {
		var l *loaded
		if l, err = s.decodeSnapshot(d); err == nil {
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

func (s *Service) decodeSnapshot(d *snapshot.Dec) (*loaded, error) {
	files := d.String()
	n := d.Len(8)
	l := &loaded{notes: make(map[string]*snapNote, n), files: files}
	for range n {
		p := d.String()
		sn := &snapNote{size: d.Varint(), mtime: d.Varint(), info: &noteInfo{}}
		ni := sn.info
		ni.title, ni.typ, ni.status = d.String(), d.String(), d.String()
		ni.tags = d.Strings()
		ni.chunks = make([]chunkSpan, d.Len(3))
		for i := range ni.chunks {
			c := &ni.chunks[i]
			c.headings = d.Strings()
			c.start, c.end = d.Int(1<<31-1), d.Int(1<<31-1)
		}
		if k := d.Len(10); k > 0 {
			sn.links = make([]markdown.Link, k)
			for i := range sn.links {
				lk := &sn.links[i]
				lk.Kind = markdown.LinkKind(d.Int(255))
				lk.Target, lk.Anchor, lk.Alias = d.String(), d.String(), d.String()
				lk.HasAlias = d.Bool()
				lk.Start, lk.End = d.Int(1<<31-1), d.Int(1<<31-1)
				lk.TargetStart, lk.TargetEnd = d.Int(1<<31-1), d.Int(1<<31-1)
				lk.Line = d.Int(1<<31 - 1)
			}
		}
		if d.Err() != nil {
			return nil, d.Err()
		}
		if _, dup := l.notes[p]; dup || p == "" {
			return nil, fmt.Errorf("%w: note %q listed twice", snapshot.ErrInvalid, p)
		}
		l.notes[p] = sn
	}
	ix, err := index.Decode(d, s.opts.Index)
	if err != nil {
		return nil, err
	}
	if err := d.Done(); err != nil {
		return nil, err
	}
	// The two halves must describe the same notes.
	if ix.Len() != len(l.notes) {
		return nil, fmt.Errorf("%w: notes and index disagree", snapshot.ErrInvalid)
	}
	for p, sn := range l.notes {
		if c, ok := ix.Chunks(p); !ok || c != len(sn.info.chunks) {
			return nil, fmt.Errorf("%w: notes and index disagree", snapshot.ErrInvalid)
		}
	}
	l.ix = ix
	return l, nil
}

// useSnapshot takes from l every walked note that has not changed since the
// snapshot, and returns the notes still to be read. Caller holds s.mu, the
// build has not indexed anything yet.
func (s *Service) useSnapshot(l *loaded, notes []vaultfs.FileInfo) (stale []vaultfs.FileInfo, changed bool) {
	fresh := make(map[string]bool, len(notes))
	nl := make([]links.NoteLinks, 0, len(notes))
	for _, fi := range notes {
		sn := l.notes[fi.Path]
		if sn == nil || sn.size != fi.Size || sn.mtime != fi.ModTime.UnixNano() {
			stale = append(stale, fi)
			continue
		}
		fresh[fi.Path] = true
		sn.info.file = fi
		s.notes[fi.Path] = sn.info
		nl = append(nl, links.NoteLinks{Path: fi.Path, Links: sn.links})
	}
	// The snapshot's strings are immutable and stay alive with the index.
	s.graph.SetNotes(nl, true)
	var gone []index.Item
	for p := range l.notes {
		if !fresh[p] {
			gone = append(gone, index.Item{Path: p})
		}
	}
	l.ix.AddBatch(gone) // nil notes: removals
	s.ix = l.ix
	return stale, len(stale) > 0 || len(gone) > 0
}

// writeSnapshot writes the snapshot of the current state; ctx cancels it.
func (s *Service) writeSnapshot(ctx context.Context) {
	start := time.Now()
	path := s.snapshotPath()
	snapshot.CleanTemps(filepath.Dir(path), time.Hour)
	s.mu.RLock()
	defer s.mu.RUnlock()
	errCanceled := errors.New("canceled")
	err := snapshot.Write(path, s.snapshotKey(), func(e *snapshot.Enc) error {
		e.String(filesDigest(s.graph.Resolver().Files()))
		e.Int(len(s.notes))
		var out []markdown.Link // one note's links, the buffer reused
		k := 0
		for p, ni := range s.notes {
			if k++; k%1024 == 0 && ctx.Err() != nil {
				return errCanceled
			}
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
		s.ix.Encode(e)
		return nil
	})
	switch {
	case errors.Is(err, errCanceled):
	case err != nil:
		s.log.Warn("index snapshot not written", "err", s.fs.Redact(err.Error()))
	default:
		s.log.Info("index snapshot written", "notes", len(s.notes), "took", time.Since(start).Round(time.Millisecond))
	}
}
