package vaultfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"runtime"
	"sort"
	"sync"
)

// A multi-file write (see internal/vault's transactions) goes through three
// steps here, so that it can be made all-or-nothing by a journal kept
// outside the vault:
//
//  1. Stage writes each new content to a hidden temporary file beside its
//     note, with every check WriteFile makes (nothing visible changes);
//  2. SyncStaged makes all of them durable at once (the fsyncs run side by
//     side, which a file system turns into few journal commits: one fsync a
//     file in a row is what made a large move slow);
//  3. Publish (or RemoveIf) replaces each note only if it is still exactly
//     what the write read: its SHA-256 is compared just before the rename,
//     with the same plain-file checks as WriteFile, and a note that changed
//     is left alone (CHANGED), so an edit made meanwhile is never lost.
//     SyncDirs then makes the renames durable, one fsync a folder.
//
// A temporary file is named as WriteFile's are, so a crash leaves nothing
// that is indexed, and RemoveTemps removes what no journal claims.

// CodeChanged is Publish's and RemoveIf's refusal: the note is no longer
// what the write read.
const CodeChanged Code = "CHANGED"

// anyNote is the expectation of a write that replaces whatever plain note
// is there (WriteFile): no content is compared.
const anyNote = "*"

// Staged is a note's new content waiting in a hidden temporary file.
type Staged struct {
	// Rel is the note's clean path; Temp the temporary file's
	// vault-relative path (in the note's real folder).
	Rel, Temp string
	// Create publishes with an exclusive link: the note must not exist.
	Create  bool
	dir     string // the real folder, vault-relative, no symbolic links
	name    string // the note's real base name
	created []string
	synced  bool
}

// SHA256Hex is the hex SHA-256 of b, the form every expectation here takes.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Stage checks p as WriteFile does (acc Write or Move; create refuses an
// existing note) and writes data to a new temporary file in the note's
// folder, creating missing folders. mode 0 keeps the mode of the note it
// replaces (0644 for a new one). The file is not yet fsynced.
func (v *Vault) Stage(p string, data []byte, acc Access, create bool, mode fs.FileMode) (*Staged, error) {
	st, err := v.stage(p, data, acc, create, mode)
	if err != nil {
		return nil, v.fail(err)
	}
	return st, nil
}

func (v *Vault) stage(p string, data []byte, acc Access, create bool, mode fs.FileMode) (*Staged, error) {
	if acc != Write && acc != Move {
		return nil, newErr(CodeProtectedPath, p, "a write needs %v or %v access, not %v", Write, Move, acc)
	}
	t, err := v.check(p, acc)
	if err != nil {
		return nil, err
	}
	if create && t.info != nil {
		return nil, newErr(CodeAlreadyExists, t.rel, "a note already exists there; it is never overwritten")
	}
	if len(data) > MaxNoteSize {
		return nil, tooLarge(t.rel, int64(len(data)))
	}
	if testHookBeforeOpen != nil {
		testHookBeforeOpen(t.real)
	}
	dir := path.Dir(t.real)
	d, err := v.openDir(t.rel, dir, true)
	if err != nil {
		return nil, err
	}
	defer d.close()
	name := path.Base(t.real)
	cur, err := d.plainFile(t.rel, name)
	if err != nil {
		return nil, d.undo(err)
	}
	if mode == 0 {
		mode = newFileMode
	}
	if cur != nil {
		if create {
			return nil, d.undo(newErr(CodeAlreadyExists, t.rel, "a note already exists there; it is never overwritten"))
		}
		if cur.Mode().Perm()&0o200 == 0 {
			return nil, d.undo(newErr(CodePermissionDenied, t.rel, "the note is read-only (mode %04o); it is not changed", cur.Mode().Perm()))
		}
		mode = cur.Mode().Perm()
	}
	tmp, err := d.writeTempNoSync(t.rel, data, mode)
	if err != nil {
		return nil, d.undo(err)
	}
	if dir == "." {
		dir = ""
	}
	return &Staged{Rel: t.rel, Temp: d.join(tmp), Create: create, dir: dir, name: name, created: d.created}, nil
}

// writeTempNoSync is writeTemp without the fsync (SyncStaged does it).
func (d *dirHandle) writeTempNoSync(rel string, data []byte, mode fs.FileMode) (string, error) {
	for range 10 {
		name := newTempName()
		f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fromOS(rel, err)
		}
		err = writeData(f, data)
		if err == nil {
			err = f.Chmod(mode)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			d.removeTemp(rel, name)
			return "", wrapWrite(rel, err)
		}
		return name, nil
	}
	return "", newErr(CodeIO, rel, "could not create a temporary file with a fresh name")
}

// SyncStaged fsyncs every staged file, several at a time. It stops at the
// first failure (the staged files are then to be discarded).
func (v *Vault) SyncStaged(ctx context.Context, staged []*Staged) error {
	work := make(chan *Staged)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	workers := min(len(staged), max(8, 4*runtime.NumCPU()))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for st := range work {
				if err := v.syncFile(st.Temp, st.Rel); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					continue
				}
				st.synced = true
			}
		}()
	}
	for _, st := range staged {
		if st.synced {
			continue
		}
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		work <- st
	}
	close(work)
	wg.Wait()
	if first != nil {
		return v.fail(first)
	}
	return ctx.Err()
}

func (v *Vault) syncFile(temp, rel string) error {
	f, err := v.openFile(temp, os.O_RDWR)
	if err != nil {
		return fromOS(rel, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return wrapWrite(rel, err)
	}
	return nil
}

// Discard removes a staged file that will not be published, and the
// folders made for it that stayed empty.
func (v *Vault) Discard(st *Staged) {
	d := &dirHandle{v: v, root: nil, created: st.created}
	if err := v.rs().root.Remove(st.Temp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		slog.Warn("vaultfs: could not remove a temporary file", "note", DisplayPath(st.Rel), "temp", DisplayPath(st.Temp), "err", bareCause(err))
	}
	_ = d.undo(nil)
}

// Publish puts a staged file in place of its note, if the note is still what
// the write read: expect is the SHA-256 (SHA256Hex) of the bytes it read, or
// "" when it read no note there. A note that differs is left untouched and
// the answer is CHANGED (with the staged file kept, so the caller may
// Discard it or stage again). A create is an exclusive link, a replacement a
// rename; the folder is not fsynced (SyncDirs).
func (v *Vault) Publish(st *Staged, expect string) error {
	if err := v.publish(st.Temp, st.Rel, st.dir, st.name, expect, st.Create); err != nil {
		return v.failLate(err)
	}
	return nil
}

// failLate is fail, but a LateEdit goes through as it is (it holds the
// late version for the caller).
func (v *Vault) failLate(err error) error {
	var le *LateEdit
	if errors.As(err, &le) {
		return le
	}
	return v.fail(err)
}

// PublishTemp is Publish for a staged file known only by its paths, as a
// journal records them (recovery after a crash): temp must be a temporary
// file's name in the real folder of rel. A missing temp is NOT_FOUND.
func (v *Vault) PublishTemp(temp, rel, expect string, create bool) error {
	t, err := v.check(rel, Move)
	if err != nil {
		return v.fail(err)
	}
	dir := path.Dir(t.real)
	if dir == "." {
		dir = ""
	}
	if path.Dir(temp) != path.Dir(t.real) || !isTempName(path.Base(temp)) {
		return v.fail(newErr(CodeInvalidPath, rel, "the temporary file %s is not beside the note", DisplayPath(temp)))
	}
	if err := v.publish(temp, t.rel, dir, path.Base(t.real), expect, create); err != nil {
		return v.failLate(err)
	}
	return nil
}

// RemoveTemp removes a temporary file by its vault-relative path (a
// journal's, after a crash); only names a write makes are accepted.
func (v *Vault) RemoveTemp(temp string) error {
	if !isTempName(path.Base(temp)) {
		return v.fail(newErr(CodeInvalidPath, temp, "is not a temporary file of a write"))
	}
	if err := v.rs().root.Remove(temp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return v.fail(fromOS(temp, err))
	}
	return nil
}

func (v *Vault) publish(temp, rel, dir, name, expect string, create bool) error {
	d, err := v.openDir(rel, dir, false)
	if err != nil {
		return err
	}
	defer d.close()
	tmpName := path.Base(temp)
	fi, err := d.root.Lstat(tmpName)
	if err != nil {
		return fromOS(rel, err)
	} else if !fi.Mode().IsRegular() {
		return newErr(CodeNotANote, rel, "its temporary file is not a regular file")
	}
	if testHookBeforePublish != nil {
		if err := testHookBeforePublish(d.join(tmpName)); err != nil {
			return &Error{Code: CodeIO, Path: rel, Reason: "write interrupted: " + err.Error(), Err: err}
		}
	}
	// Checked right before the rename, which replaces whatever name is
	// there: it must be nothing, or a plain note with the expected bytes.
	if !create && expect != "" && expect != anyNote {
		return d.replaceChecked(rel, tmpName, name, expect)
	}
	if err := d.expect(rel, name, expect); err != nil {
		return err
	}
	if create {
		err := linkFile(d.root, tmpName, name)
		switch {
		case err == nil:
			d.removeTemp(rel, tmpName)
			return nil
		case errors.Is(err, fs.ErrExist):
			return newErr(CodeChanged, rel, "a file appeared there while the write was in progress; it was left alone")
		case linkUnsupported(err):
			// No hard links here: create the note itself exclusively and
			// copy the content in (weaker on a crash; see CreateFile).
			if _, err := d.copyExclusive(rel, tmpName, name, fi.Mode().Perm()); err != nil {
				return err
			}
			d.removeTemp(rel, tmpName)
			return nil
		default:
			return fromOS(rel, err)
		}
	}
	if err := d.root.Rename(tmpName, name); err != nil {
		return fromOS(rel, err)
	}
	return nil
}

// replaceChecked renames tmpName over name if name still hashes to want,
// and then looks again at the file it replaced (kept open since the check):
// another program that wrote to it between the check and the rename (an
// append by a sync tool, an editor's save in place) would lose its edit, so
// such a write is answered with a LateEdit holding that file's content as
// it is now, for the caller to give back.
func (d *dirHandle) replaceChecked(rel, tmpName, name, want string) error {
	f, fi, err := d.expectOpen(rel, name, want)
	if err != nil {
		return err
	}
	defer f.Close()
	if testHookBetweenCheckAndRename != nil {
		testHookBetweenCheckAndRename(d.join(name))
	}
	if err := d.root.Rename(tmpName, name); err != nil {
		return fromOS(rel, err)
	}
	after, err := f.Stat()
	if err != nil || (after.Size() == fi.Size() && after.ModTime().Equal(fi.ModTime())) {
		return nil
	}
	now, err := io.ReadAll(io.NewSectionReader(f, 0, MaxNoteSize+1))
	if err != nil {
		return fromOS(rel, err)
	}
	return &LateEdit{Path: rel, Now: now}
}

// testHookBetweenCheckAndRename, when set by a test, runs between a
// replacement's check and its rename, with the note's real path.
var testHookBetweenCheckAndRename func(path string)

// LateEdit is Publish's answer when the note was replaced, but the version
// it replaced was written to after it was checked (by another program):
// Now is that version's content. The caller puts it back or merges it.
type LateEdit struct {
	Path string
	Now  []byte
}

func (e *LateEdit) Error() string {
	return fmt.Sprintf("%s: path %s: the note was written to by someone else as it was replaced", CodeChanged, QuotePath(e.Path))
}

// ErrorCode is CHANGED: the note's content is not what the write verified.
func (e *LateEdit) ErrorCode() string { return string(CodeChanged) }

// copyExclusive creates name with O_EXCL and copies the temporary file
// into it (the create of a file system without hard links).
func (d *dirHandle) copyExclusive(rel, tmpName, name string, mode fs.FileMode) (fs.FileInfo, error) {
	data, err := d.root.ReadFile(tmpName)
	if err != nil {
		return nil, fromOS(rel, err)
	}
	st, err := d.createDirect(rel, name, mode, func(f *os.File) error { return writeData(f, data) })
	if err != nil && CodeOf(err) == CodeAlreadyExists {
		return nil, newErr(CodeChanged, rel, "a file appeared there while the write was in progress; it was left alone")
	}
	return st, err
}

// expect checks that name is what the write read: absent when want is "",
// else a plain note whose bytes hash to want.
func (d *dirHandle) expect(rel, name, want string) error {
	f, _, err := d.expectOpen(rel, name, want)
	if f != nil {
		f.Close()
	}
	return err
}

// expectOpen is expect, keeping the note it hashed open (with its state as
// hashed) for the caller to close; nil when it hashed none (want "" or
// anyNote).
func (d *dirHandle) expectOpen(rel, name, want string) (*os.File, fs.FileInfo, error) {
	cur, err := d.plainFile(rel, name)
	if err != nil {
		return nil, nil, err
	}
	if want == anyNote {
		return nil, nil, nil
	}
	if cur == nil {
		if want == "" {
			return nil, nil, nil
		}
		return nil, nil, newErr(CodeChanged, rel, "the note was removed or renamed while the write was in progress")
	}
	if want == "" {
		return nil, nil, newErr(CodeChanged, rel, "a note appeared there while the write was in progress; it was left alone")
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		return nil, nil, fromOS(rel, err)
	}
	fi, err := f.Stat()
	if err != nil || !os.SameFile(fi, cur) {
		f.Close()
		return nil, nil, newErr(CodeChanged, rel, "the note was replaced while the write was in progress")
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, MaxNoteSize+1)); err != nil {
		f.Close()
		return nil, nil, fromOS(rel, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != want {
		f.Close()
		return nil, nil, newErr(CodeChanged, rel, "the note was changed by someone else while the write was in progress")
	}
	return f, fi, nil
}

// RemoveIf removes the note at p (Move access, so an archived note can leave
// by a move) if its bytes still hash to expect; CHANGED otherwise. A missing
// note is NOT_FOUND. The folder is not fsynced (SyncDirs).
func (v *Vault) RemoveIf(p, expect string) error {
	if err := v.removeIf(p, expect, Move); err != nil {
		return v.fail(err)
	}
	return nil
}

func (v *Vault) removeIf(p, expect string, acc Access) error {
	t, err := v.check(p, acc)
	if err != nil {
		return err
	}
	if t.info == nil {
		return newErr(CodeNotFound, t.rel, "no such note")
	}
	if testHookBeforeOpen != nil {
		testHookBeforeOpen(t.real)
	}
	d, err := v.openDir(t.rel, path.Dir(t.real), false)
	if err != nil {
		return err
	}
	defer d.close()
	name := path.Base(t.real)
	if err := d.expect(t.rel, name, expect); err != nil {
		return err
	}
	if fi, err := d.root.Lstat(name); err == nil && fi.Mode().Perm()&0o200 == 0 {
		return newErr(CodePermissionDenied, t.rel, "the note is read-only (mode %04o); it is not removed", fi.Mode().Perm())
	}
	if err := d.root.Remove(name); err != nil {
		return fromOS(t.rel, err)
	}
	return nil
}

// HashOf returns the SHA-256 of the note at p as it is now, "" when there is
// none (for recovery, which must tell "applied" from "not yet").
func (v *Vault) HashOf(p string) (string, error) {
	data, _, err := v.readNote(p)
	if err != nil {
		if CodeOf(err) == CodeNotFound {
			return "", nil
		}
		return "", v.fail(err)
	}
	return SHA256Hex(data), nil
}

// SyncDirs fsyncs the folders of the given notes (each folder once), after
// a write published or removed them. Failures are logged: the change is
// visible already.
func (v *Vault) SyncDirs(rels []string) {
	seen := make(map[string]bool)
	var dirs []string
	for _, r := range rels {
		dir := path.Dir(r)
		if t, err := v.check(r, Move); err == nil {
			dir = path.Dir(t.real)
		}
		if dir == "." {
			dir = ""
		}
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, dir := range dirs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			d, err := v.openDir(dir, dir, false)
			if err != nil {
				return
			}
			d.sync(dir)
			d.close()
		}()
	}
	wg.Wait()
}

// SameBytes reports whether the note at p holds exactly data (missing: data
// must be nil).
func (v *Vault) SameBytes(p string, data []byte) bool {
	cur, _, err := v.readNote(p)
	if err != nil {
		return data == nil && CodeOf(err) == CodeNotFound
	}
	return data != nil && bytes.Equal(cur, data)
}

// Mode returns the permission bits of the note at p (resolved for Move).
func (v *Vault) Mode(p string) (fs.FileMode, error) {
	t, err := v.check(p, Move)
	if err != nil {
		return 0, v.fail(err)
	}
	if t.info == nil {
		return 0, v.fail(newErr(CodeNotFound, t.rel, "no such note"))
	}
	return t.info.Mode().Perm(), nil
}

// PruneEmptyDirs removes the folders on the way to the removed note p that
// are now empty, innermost first, stopping at the first that is not (as git
// does when a revert removes a folder's last file).
func (v *Vault) PruneEmptyDirs(p string) {
	rel, err := Clean(p)
	if err != nil {
		return
	}
	for dir := path.Dir(rel); dir != "." && dir != ""; dir = path.Dir(dir) {
		t, err := v.walkPath(dir, walkOpts{acc: Move, allowDir: true})
		if err != nil || t.info == nil || !t.info.IsDir() || t.real != dir {
			return
		}
		if err := v.rs().root.Remove(dir); err != nil { // fails unless empty
			return
		}
	}
}
