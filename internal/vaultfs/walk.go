package vaultfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// maxWalkDepth is the deepest folder Walk enters: a file in a folder of
// MaxPathSegments segments would be one segment too deep for Clean.
const maxWalkDepth = MaxPathSegments - 1

// Walk calls fn for every regular file of the vault that is not ignored
// (IsIgnored: hidden, node_modules, _templates), notes and attachments alike
// (IsNote tells), in lexical order of the whole path. Every path it gives
// satisfies Clean(path) == path, so ReadNote and Stat accept it.
//
// It works through the root: each folder is opened relative to its parent
// and checked to be the folder that was listed, so a folder swapped for a
// symbolic link while walking is not entered. It never enters a symbolically
// linked folder (no loops, no double counting). A symbolic link to a file is
// judged as Resolve judges it: one that stays inside the vault and reaches an
// allowed regular file is given under the link's own path; one that leaves
// the vault, dangles, loops or reaches a refused path is reported.
//
// Problems do not stop the walk: an unreadable folder, a name Clean refuses
// (for example one containing ':'), a FIFO or device, or a bad link is
// reported through onErr (which may be nil) with the path escaped as
// DisplayPath does and an *Error. Walk stops when ctx is done (returning
// ctx.Err()) or when fn returns an error (returning it; fs.SkipAll stops the
// walk and Walk returns nil).
func (v *Vault) Walk(ctx context.Context, fn func(FileInfo) error, onErr func(rel string, err error)) error {
	return v.walkUnder(ctx, "", &walkFns{fn: fn}, onErr)
}

// WalkHooks are what WalkWith does besides what Walk does; the zero value
// is Walk.
type WalkHooks struct {
	// Temp is called with the path of every temporary file of an
	// interrupted write (the names RemoveTemps removes) in the folders the
	// walk lists, which are every folder a write can reach: a start finds
	// a crash's leftovers in the walk it makes anyway, instead of listing
	// every folder again (on a file system that does not give entry
	// types, that second listing stats every file: as much as the walk
	// itself).
	Temp func(rel string)
	// Folder is called with every folder the walk enters ("" for the
	// vault's own), before the walk lists it: a file watcher can watch a
	// folder there, so that nothing changed in it after its listing is
	// missed, without listing every folder a second time.
	Folder func(rel string)
	// Unstatted gives each note the listing says is a regular file
	// without a stat of it, where the system lists entries with their
	// types (Linux): its Size and ModTime are zero, and only its identity
	// (the listing's inode) is known. For a caller that reads every note
	// it is given with ReadWalked or a DirReader, whose fstat makes the
	// checks the stat would have made (a regular file, the one listed,
	// within MaxNoteSize, and in a read-only vault with no other hard
	// link), and falls back to ReadNote's full checks when one fails (a
	// file system whose listing gives other inodes than its stat, such as
	// some overlays, so costs a slower read, never a wrong one). Measured
	// on the Obsidian hub: the walk of a first start 47-57 ms before,
	// 28-35 ms after (BenchmarkWalk 28.9 -> 8.6 ms).
	Unstatted bool
}

// WalkWith is Walk that also calls the hooks.
func (v *Vault) WalkWith(ctx context.Context, fn func(FileInfo) error, onErr func(rel string, err error), hooks WalkHooks) error {
	return v.walkUnder(ctx, "", &walkFns{fn: fn, temp: hooks.Temp, folder: hooks.Folder, unstatted: hooks.Unstatted}, onErr)
}

// walkFns are what a walk calls: fn for each file, report for each
// problem, temp (if set) for each temporary file of a write, folder (if
// set) for each folder before it is listed; unstatted is
// WalkHooks.Unstatted.
type walkFns struct {
	fn        func(FileInfo) error
	report    func(string, error)
	temp      func(string)
	folder    func(string)
	unstatted bool
}

// WalkUnder is Walk restricted to the folder dir (a clean path, "" for the
// whole vault): fn gets the files under dir/, with the same checks. A dir
// that is missing, ignored, not a folder or a symbolic link (never entered
// by Walk either) holds nothing to walk: WalkUnder returns nil.
func (v *Vault) WalkUnder(ctx context.Context, dir string, fn func(FileInfo) error, onErr func(rel string, err error)) error {
	return v.walkUnder(ctx, dir, &walkFns{fn: fn}, onErr)
}

func (v *Vault) walkUnder(ctx context.Context, dir string, w *walkFns, onErr func(rel string, err error)) error {
	var segs []string
	if dir != "" {
		if c, err := Clean(dir); err != nil || c != dir || IsIgnored(dir) {
			return nil
		}
		if segs = strings.Split(dir, "/"); len(segs) > maxWalkDepth {
			return nil
		}
	}
	// Each folder on the way is entered as walkSub enters one: a real
	// folder (not a link), the one Lstat saw.
	r := v.rs().root
	for _, seg := range segs {
		fi, err := r.Lstat(seg)
		if err != nil || !fi.IsDir() {
			return nil
		}
		sub, err := r.OpenRoot(seg)
		if err != nil {
			return nil
		}
		defer sub.Close()
		if st, err := sub.Stat("."); err != nil || !os.SameFile(st, fi) {
			return nil // replaced by a link since: not entered
		}
		r = sub
	}
	w.report = func(rel string, err error) {
		if onErr != nil {
			onErr(DisplayPath(rel), v.fail(err))
		}
	}
	err := v.walkDir(ctx, r, dir, len(segs), w)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

func (v *Vault) walkDir(ctx context.Context, r *os.Root, dir string, depth int, w *walkFns) error {
	fn, report := w.fn, w.report
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.folder != nil {
		w.folder(dir)
	}
	f, err := r.Open(".")
	if err != nil {
		report(dir, fromOS(dir, err))
		return nil
	}
	var entries []fs.DirEntry
	var dev uint64
	listed := false
	if w.unstatted {
		entries, dev, listed, err = listDir(f, r)
	}
	if !listed {
		entries, err = f.ReadDir(-1)
	}
	f.Close()
	if err != nil {
		// Keep what was listed; say the rest could not be.
		report(dir, fromOS(dir, err))
	}
	// Sorting folders by name+"/" gives the lexical order of whole paths.
	key := func(e fs.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })

	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		rel := name
		if dir != "" {
			rel = dir + "/" + name
		}
		if ignoredSegment(name) {
			if w.temp != nil && isTempName(name) {
				w.temp(rel)
			}
			continue
		}
		if c, err := Clean(rel); err != nil || c != rel {
			if err == nil {
				err = newErr(CodeInvalidPath, rel, "this name cannot be given back exactly through the gatekeeper (it would read as %s)", QuotePath(c))
			}
			report(rel, err)
			continue
		}
		if w.unstatted && IsNoteName(rel) {
			if id, ok := listedFile(e, dev); ok {
				if err := fn(FileInfo{Path: rel, IsNote: true, walked: id}); err != nil {
					return err
				}
				continue
			}
		}
		fi, err := entryInfo(r, e)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // gone since listed: nothing to report
				report(rel, fromOS(rel, err))
			}
			continue
		}
		mode := fi.Mode()
		switch {
		case mode.IsDir():
			if depth+1 > maxWalkDepth {
				report(rel, newErr(CodeInvalidPath, rel, "not walked: a note inside would be deeper than %d segments, the limit of a path", MaxPathSegments))
				continue
			}
			if len(rel)+len("/x.md") > MaxPathBytes {
				report(rel, newErr(CodeInvalidPath, rel, "not walked: a note inside would be longer than %d bytes, the limit of a path", MaxPathBytes))
				continue
			}
			if err := v.walkSub(ctx, r, name, rel, fi, depth+1, w); err != nil {
				return err
			}
		case mode&fs.ModeSymlink != 0:
			t, err := v.walkPath(rel, walkOpts{acc: Read, requireNote: IsNoteName(rel), allowDir: true})
			if err != nil {
				report(rel, err)
				continue
			}
			if t.info.IsDir() {
				continue // a linked folder is never entered
			}
			if err := fn(FileInfo{Path: rel, Size: t.info.Size(), ModTime: t.info.ModTime(), IsNote: IsNoteName(rel)}); err != nil {
				return err
			}
		case mode.IsRegular():
			if v.readOnly && IsNoteName(rel) {
				if err := v.checkSingleLink(rel, rel, fi); err != nil {
					report(rel, err)
					continue
				}
			}
			if err := fn(regularInfo(rel, fi, IsNoteName(rel))); err != nil {
				return err
			}
		default:
			report(rel, newErr(CodeNotANote, rel, "is %s, not a regular file", describeMode(mode)))
		}
	}
	return nil
}

// walkSub opens the folder name of r as a root of its own, makes sure it is
// the folder that Lstat saw (not a symbolic link swapped in since), and walks it.
func (v *Vault) walkSub(ctx context.Context, r *os.Root, name, rel string, seen fs.FileInfo, depth int, w *walkFns) error {
	report := w.report
	sub, err := r.OpenRoot(name)
	if err != nil {
		report(rel, fromOS(rel, err))
		return nil
	}
	defer sub.Close()
	st, err := sub.Stat(".")
	if err != nil {
		report(rel, fromOS(rel, err))
		return nil
	}
	if !os.SameFile(st, seen) {
		report(rel, newErr(CodeSymlinkEscape, rel, "the folder was replaced while it was being walked; not entered"))
		return nil
	}
	return v.walkDir(ctx, sub, rel, depth, w)
}
