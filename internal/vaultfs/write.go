package vaultfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
)

// Temporary files of a write are named tempPrefix + 16 lowercase hex digits +
// tempSuffix, in the folder of the note they will become. The leading '.'
// makes them hidden: never walked, indexed, searched or accepted by Clean,
// even when a crash leaves one behind (the next start removes those:
// RemoveTemps).
const (
	tempPrefix = ".vaultmcp-"
	tempSuffix = ".tmp"
	tempHexLen = 16
)

// newFileMode is the mode of a note created from nothing: exactly this, set
// with fchmod, whatever the umask.
const newFileMode fs.FileMode = 0o644

// newDirMode is the mode of a folder created for a note (the umask applies,
// as it does for mkdir -p).
const newDirMode fs.FileMode = 0o755

// testHookBeforePublish, when set by a test, runs between the fsync of the
// temporary file and its rename (WriteFile) or link (CreateFile) over the
// target, with the vault-relative path of the temporary file. An error it
// returns fails the write there; it may also change the vault, or kill the
// process to simulate a crash.
var testHookBeforePublish func(tmp string) error

// testHookWrite, when set by a test, replaces the write of the content into
// the temporary (or, for the fallback of CreateFile, the target) file, so a
// test can write part of it and fail as a full disk does (ENOSPC).
var testHookWrite func(f *os.File, data []byte) (int, error)

// linkFile makes a hard link inside one folder. A test replaces it to
// simulate a file system without hard links.
var linkFile = func(dir *os.Root, oldname, newname string) error {
	return dir.Link(oldname, newname)
}

// WriteFile atomically creates or replaces the note at p (a client path,
// resolved with acc, which must be Write or Move) with data, byte for byte.
//
// The content goes first to a temporary file created exclusively in the
// note's folder under a hidden name (".vaultmcp-<random>.tmp"); it is
// written, given the mode of the note it replaces (0644 for a new note,
// whatever the umask), fsynced, renamed over the target, and then the folder
// is fsynced. A reader sees the old note or the new one, never a mix; a
// crash leaves the old note intact and at most a hidden temporary file,
// which the next start removes (RemoveTemps). Missing parent folders are
// created (0755) one by one through the root, each checked to be a real
// folder as it is entered.
//
// Refused: anything Resolve(p, acc) refuses (a symbolic link, a file with
// other hard links, a FIFO, device, socket or folder at the target is
// NOT_A_NOTE; _templates, hidden and node_modules paths; 99-archive for
// Write), content over MaxNoteSize (TOO_LARGE: it could not be read back),
// and a note without the owner's write permission (PERMISSION_DENIED: a
// read-only note is the user saying "do not change this"). The target is
// checked again just before the rename, so a link or FIFO swapped in since
// the check is refused too; the rename itself replaces the name and never
// writes through what it finds there. On any failure the old note is
// untouched, the temporary file removed, and folders created for the write
// that stayed empty are removed again.
//
// It returns the info of the written file, with Path the clean path.
func (v *Vault) WriteFile(p string, data []byte, acc Access) (FileInfo, error) {
	fi, err := v.writeOne(p, data, acc, false)
	if err != nil {
		return FileInfo{}, v.fail(err)
	}
	return fi, nil
}

// CreateFile publishes a new note at p exclusively: it never replaces
// anything. The content is prepared in a temporary file as for WriteFile,
// then hard-linked to the target name, which fails if anything has appeared
// there in the meantime (ALREADY_EXISTS, the existing file untouched), and
// the temporary name is removed. An existing target found by the checks is
// ALREADY_EXISTS too (or the code Resolve gives for a link, FIFO, ...).
//
// Where the file system has no hard links (FAT, exFAT, some network and FUSE
// file systems), it falls back to creating the target itself with O_EXCL and
// writing into it. That still never overwrites, but its crash guarantee is
// weaker: a crash during the write can leave a partly written new note (an
// existing note is never at risk, since none is replaced). A crash between
// the link and the removal of the temporary name leaves the note with a
// second, hidden name, so writes refuse it (two hard links) until RemoveTemps
// removes the temporary one.
func (v *Vault) CreateFile(p string, data []byte, acc Access) (FileInfo, error) {
	fi, err := v.writeOne(p, data, acc, true)
	if err != nil {
		return FileInfo{}, v.fail(err)
	}
	return fi, nil
}

// writeOne is a one-file write on the staged path (stage.go): stage, fsync,
// publish over whatever plain note is there (or, exclusive, over nothing),
// fsync the folder.
func (v *Vault) writeOne(p string, data []byte, acc Access, exclusive bool) (FileInfo, error) {
	st, err := v.stage(p, data, acc, exclusive, 0)
	if err != nil {
		return FileInfo{}, err
	}
	fail := func(err error) (FileInfo, error) {
		v.Discard(st)
		return FileInfo{}, err
	}
	if err := v.syncFile(st.Temp, st.Rel); err != nil {
		return fail(err)
	}
	expect := anyNote
	if exclusive {
		expect = ""
	}
	if err := v.publish(st.Temp, st.Rel, st.dir, st.name, expect, exclusive); err != nil {
		if e, ok := err.(*Error); ok && e.Code == CodeChanged {
			err = newErr(CodeAlreadyExists, st.Rel, "a file appeared there while the note was being written; it is never overwritten")
		}
		return fail(err)
	}
	d, err := v.openDir(st.Rel, st.dir, false)
	if err != nil {
		return FileInfo{}, err
	}
	defer d.close()
	d.sync(st.Rel)
	fi, err := d.root.Lstat(st.name)
	if err != nil {
		return FileInfo{}, fromOS(st.Rel, err)
	}
	return FileInfo{Path: st.Rel, Size: fi.Size(), ModTime: fi.ModTime(), IsNote: true}, nil
}

// Rename moves the note from to the path to without ever overwriting: an
// existing file at to is ALREADY_EXISTS, also when it appears during the
// move. Both paths are resolved with Move access (99-archive is allowed on
// either side; _templates, hidden and node_modules paths never are). The
// source must exist (NOT_FOUND) and be a plain note: a symbolic link, a file
// with other hard links, a FIFO, device or folder is NOT_A_NOTE. Missing
// parent folders of to are created.
//
// The move is a hard link of the source to the new name (which never
// replaces anything), verified to have landed in the folder that was
// checked, then the removal of the old name, then an fsync of both folders.
// A crash between the two leaves the note under both names (nothing is
// lost). On a file system without hard links it copies the note to a file
// created exclusively (O_EXCL) at to, fsyncs it and removes the source; a
// crash there can leave a partial copy beside the intact source. A
// case-only rename on a case-insensitive file system ("a.md" -> "A.md",
// the same file under both names) is done with a plain rename.
func (v *Vault) Rename(from, to string) error {
	if err := v.rename(from, to); err != nil {
		return v.fail(err)
	}
	return nil
}

func (v *Vault) rename(from, to string) error {
	src, err := v.check(from, Move)
	if err != nil {
		return err
	}
	if src.info == nil {
		return newErr(CodeNotFound, src.rel, "no such note")
	}
	dst, err := v.check(to, Move)
	if err != nil {
		return err
	}
	if dst.info != nil {
		if dst.real == src.real {
			return newErr(CodeAlreadyExists, dst.rel, "is the very note being moved")
		}
		if os.SameFile(dst.info, src.info) && strings.EqualFold(dst.real, src.real) {
			// Case-insensitive file system: one file, two spellings.
			if err := v.rs().root.Rename(src.real, dst.real); err != nil {
				return fromOS(src.rel, err)
			}
			return nil
		}
		return newErr(CodeAlreadyExists, dst.rel, "a note already exists there; a move never overwrites")
	}

	if testHookBeforeOpen != nil {
		testHookBeforeOpen(dst.real)
	}
	sd, err := v.openDir(src.rel, path.Dir(src.real), false)
	if err != nil {
		return err
	}
	defer sd.close()
	srcName := path.Base(src.real)
	cur, err := sd.plainFile(src.rel, srcName)
	if err != nil {
		return err
	}
	if cur == nil || !os.SameFile(cur, src.info) {
		return newErr(CodeNotFound, src.rel, "the note was moved or replaced while being moved; try again")
	}
	dd, err := v.openDir(dst.rel, path.Dir(dst.real), true)
	if err != nil {
		return err
	}
	defer dd.close()
	dstName := path.Base(dst.real)
	if _, err := dd.root.Lstat(dstName); err == nil {
		return dd.undo(newErr(CodeAlreadyExists, dst.rel, "a file appeared there; a move never overwrites"))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return dd.undo(fromOS(dst.rel, err))
	}

	placed := cur // the file now at the new name
	err = linkFile(v.rs().root, src.real, dst.real)
	switch {
	case err == nil:
		// The link went through the vault root: make sure it landed in the
		// folder that was checked, as the very file that is moved.
		got, lerr := dd.root.Lstat(dstName)
		if lerr != nil || !os.SameFile(got, cur) {
			if fi, e := v.rs().root.Lstat(dst.real); e == nil && os.SameFile(fi, cur) {
				_ = v.rs().root.Remove(dst.real) // a second name of the source: nothing is lost
			}
			return dd.undo(newErr(CodeSymlinkEscape, dst.rel, "a folder on the way was replaced during the move; nothing was moved"))
		}
	case errors.Is(err, fs.ErrExist):
		return dd.undo(newErr(CodeAlreadyExists, dst.rel, "a file appeared there; a move never overwrites"))
	case linkUnsupported(err):
		placed, err = v.copyExclusive(sd, srcName, cur, dd, dstName, src.rel, dst.rel)
		if err != nil {
			return dd.undo(err)
		}
	default:
		return dd.undo(fromOS(dst.rel, err))
	}

	// Remove the old name, if it is still the moved file.
	again, err := sd.root.Lstat(srcName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		slog.Warn("vaultfs: the old name of a moved note vanished during the move", "from", DisplayPath(src.rel), "to", DisplayPath(dst.rel))
	case err == nil && !os.SameFile(again, cur):
		// Another file took the old name meanwhile: it is not ours to remove,
		// and the note itself is at its new name.
		slog.Warn("vaultfs: the old name of a moved note was taken by another file during the move; left alone", "from", DisplayPath(src.rel), "to", DisplayPath(dst.rel))
	default:
		if err == nil {
			err = sd.root.Remove(srcName)
		}
		if err != nil {
			// Take the new name back, the source being still in place, so the
			// vault is as it was.
			if fi, e := sd.root.Lstat(srcName); e == nil && os.SameFile(fi, cur) {
				if fi, e := dd.root.Lstat(dstName); e == nil && os.SameFile(fi, placed) {
					_ = dd.root.Remove(dstName)
				}
			}
			e := fromOS(src.rel, err)
			e.Reason = "the old name could not be removed (" + e.Reason + "); the note was not moved"
			return dd.undo(e)
		}
	}
	dd.sync(dst.rel)
	sd.sync(src.rel)
	return nil
}

// copyExclusive is the move of a file system without hard links: copy the
// source into a new file created exclusively at the target, with the
// source's mode and modification time.
func (v *Vault) copyExclusive(sd *dirHandle, srcName string, srcInfo fs.FileInfo, dd *dirHandle, dstName, srcRel, dstRel string) (fs.FileInfo, error) {
	in, err := sd.root.OpenFile(srcName, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		return nil, fromOS(srcRel, err)
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !os.SameFile(fi, srcInfo) {
		return nil, newErr(CodeNotFound, srcRel, "the note was replaced while being moved; try again")
	}
	st, err := dd.createDirect(dstRel, dstName, srcInfo.Mode().Perm(), func(f *os.File) error {
		_, err := io.Copy(f, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	_ = dd.root.Chtimes(dstName, time.Now(), srcInfo.ModTime())
	return st, nil
}

// Remove deletes the note at p, resolved with Write access (so 99-archive
// is PROTECTED_PATH: an archived note leaves only by a move). It must exist
// (NOT_FOUND) and be a plain note (a symbolic link, a file with other hard
// links, a FIFO, device or folder is NOT_A_NOTE), and not read-only
// (PERMISSION_DENIED). The folder is fsynced after the removal; an emptied
// folder is kept.
func (v *Vault) Remove(p string) error {
	if err := v.removeIf(p, anyNote, Write); err != nil {
		return v.fail(err)
	}
	v.SyncDirs([]string{p})
	return nil
}

// RemoveTemps removes the temporary files at the given paths (found by
// WalkWith's Temp hook), however recent, for a caller that holds the vault's
// write lock exclusively (no write is in progress anywhere: a crash's
// leftovers are all there is): a path whose name is not a temporary
// file's, or that is not a regular file, is left alone. It returns how many
// it removed, and the first error (the others are still tried).
func (v *Vault) RemoveTemps(rels []string) (int, error) {
	n := 0
	var first error
	for _, rel := range rels {
		if !isTempName(path.Base(rel)) {
			continue
		}
		fi, err := v.rs().root.Lstat(rel)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := v.rs().root.Remove(rel); err != nil {
			if !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = v.fail(fromOS(rel, err))
			}
			continue
		}
		n++
		slog.Debug("vaultfs: removed a temporary file left by an interrupted write", "path", DisplayPath(rel))
	}
	return n, first
}

// isTempName reports names made by newTempName, and nothing else.
func isTempName(name string) bool {
	if len(name) != len(tempPrefix)+tempHexLen+len(tempSuffix) || !strings.HasPrefix(name, tempPrefix) || !strings.HasSuffix(name, tempSuffix) {
		return false
	}
	for _, c := range name[len(tempPrefix) : len(tempPrefix)+tempHexLen] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func newTempName() string {
	var b [tempHexLen / 2]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return tempPrefix + hex.EncodeToString(b[:]) + tempSuffix
}

// dirHandle is a folder of the vault opened for a write, with the folders
// that were created to reach it.
type dirHandle struct {
	v       *Vault
	rel     string   // vault-relative path of the folder ("" for the vault)
	root    *os.Root // the folder itself
	created []string // folders made for this write, outermost first
}

// openDir opens the folder dir (a vault-relative path without symbolic
// links, as walkPath computes it; "." or "" for the vault) one component at
// a time: each must be a real folder by Lstat, and the folder opened must be
// that one (os.SameFile), so a folder swapped for a symbolic link since the
// check is not entered. With create, missing folders are made (0755).
// Errors name rel, the path the client gave.
func (v *Vault) openDir(rel, dir string, create bool) (*dirHandle, error) {
	if dir == "." {
		dir = ""
	}
	r, err := v.rs().root.OpenRoot(".")
	if err != nil {
		return nil, fromOS(rel, err)
	}
	d := &dirHandle{v: v, root: r}
	if dir == "" {
		return d, nil
	}
	for seg := range strings.SplitSeq(dir, "/") {
		next := seg
		if d.rel != "" {
			next = d.rel + "/" + seg
		}
		fi, err := d.root.Lstat(seg)
		if errors.Is(err, fs.ErrNotExist) && create {
			err = d.root.Mkdir(seg, newDirMode)
			if err == nil {
				d.created = append(d.created, next)
			}
			if err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = d.root.Lstat(seg)
			}
		}
		if err != nil {
			d.root.Close()
			return nil, d.undo(fromOS(rel, err))
		}
		if !fi.IsDir() {
			d.root.Close()
			return nil, d.undo(newErr(CodeNotANote, rel, "a component of the path is %s, not a folder", describeKind(fi.Mode())))
		}
		sub, err := d.root.OpenRoot(seg)
		d.root.Close()
		if err != nil {
			return nil, d.undo(fromOS(rel, err))
		}
		st, err := sub.Stat(".")
		if err != nil || !os.SameFile(st, fi) {
			sub.Close()
			return nil, d.undo(newErr(CodeSymlinkEscape, rel, "a folder on the way was replaced while it was being opened; nothing was written"))
		}
		d.root, d.rel = sub, next
	}
	return d, nil
}

func describeKind(m fs.FileMode) string {
	if m.IsRegular() {
		return "a file"
	}
	return describeMode(m)
}

func (d *dirHandle) close() { d.root.Close() }

// join gives the vault-relative path of name in the folder.
func (d *dirHandle) join(name string) string {
	if d.rel == "" {
		return name
	}
	return d.rel + "/" + name
}

// undo removes, innermost first, the folders this write created and that
// are still empty, and returns err.
func (d *dirHandle) undo(err error) error {
	for i := len(d.created) - 1; i >= 0; i-- {
		c := d.created[i]
		if fi, e := d.v.rs().root.Lstat(c); e != nil || !fi.IsDir() {
			break
		}
		if e := d.v.rs().root.Remove(c); e != nil { // fails unless empty
			break
		}
	}
	d.created = nil
	return err
}

// plainFile looks at name in the folder: nil when nothing is there, its
// Lstat when it is a regular file with one link, NOT_A_NOTE otherwise.
func (d *dirHandle) plainFile(rel, name string) (fs.FileInfo, error) {
	fi, err := d.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fromOS(rel, err)
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return nil, newErr(CodeNotANote, rel, "is a folder, not a note")
	case !mode.IsRegular():
		return nil, newErr(CodeNotANote, rel, "is %s, not a regular file", describeMode(mode))
	}
	n, err := linkCount(d.root, name, fi)
	if err != nil {
		return nil, &Error{Code: CodeNotANote, Path: rel, Reason: "cannot tell whether it has other hard links", Err: bareCause(err)}
	}
	if n > 1 {
		return nil, newErr(CodeNotANote, rel, "has %d hard links; writing it would change the other names too", n)
	}
	return fi, nil
}

// createDirect creates name exclusively (the fallback where hard links are
// missing), fills it, gives it mode and fsyncs it; on failure the file it
// created is removed.
func (d *dirHandle) createDirect(rel, name string, mode fs.FileMode, fill func(*os.File) error) (fs.FileInfo, error) {
	f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, newErr(CodeAlreadyExists, rel, "a file appeared there while the note was being written; it is never overwritten")
	}
	if err != nil {
		return nil, fromOS(rel, err)
	}
	mine, serr := f.Stat()
	st, err := finishFile(f, mode, fill)
	if err != nil {
		if fi, e := d.root.Lstat(name); serr == nil && e == nil && os.SameFile(fi, mine) {
			_ = d.root.Remove(name)
		}
		return nil, wrapWrite(rel, err)
	}
	return st, nil
}

// finishFile fills f, sets its mode, fsyncs and closes it, and returns its
// fstat. f is closed in every case.
func finishFile(f *os.File, mode fs.FileMode, fill func(*os.File) error) (fs.FileInfo, error) {
	err := fill(f)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	var st fs.FileInfo
	if err == nil {
		st, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return st, err
}

func writeData(f *os.File, data []byte) error {
	var n int
	var err error
	if testHookWrite != nil {
		n, err = testHookWrite(f, data)
	} else {
		n, err = f.Write(data)
	}
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	return err
}

func wrapWrite(rel string, err error) *Error {
	e := fromOS(rel, err)
	if e.Code == CodeIO {
		e.Reason = "the note could not be written (" + e.Err.Error() + "); the old content, if any, is unchanged"
		if errors.Is(err, syscall.ENOSPC) {
			e.Reason = "the disk is full; the old content, if any, is unchanged"
		}
	}
	return e
}

// removeTemp removes a temporary file of the folder; a failure is logged,
// since the next start will find the file.
func (d *dirHandle) removeTemp(rel, name string) {
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		slog.Warn("vaultfs: could not remove a temporary file", "note", DisplayPath(rel), "temp", DisplayPath(d.join(name)), "err", bareCause(err))
	}
}

// sync makes the folder's new entries durable. The change is already
// visible when it runs, so a failure is logged rather than returned.
func (d *dirHandle) sync(rel string) {
	if err := syncDir(d.root); err != nil {
		slog.Warn("vaultfs: could not flush a folder to disk after a write", "note", DisplayPath(rel), "err", bareCause(err))
	}
}
