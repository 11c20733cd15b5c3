package vaultfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// MaxNoteSize is the largest note ReadNote returns (10 MiB).
const MaxNoteSize = 10 << 20

// maxSymlinks bounds how many symbolic links one resolution follows.
const maxSymlinks = 40

var errNoLinkCount = errors.New("the number of hard links cannot be read on this platform")

// testHookBeforeOpen, when set by a test, runs in ReadNote between the check
// of the path and the open of the file, and in the writes between the check
// and the opening of the target's folder (for Rename, with the target's
// real path), to swap things in at that moment.
var testHookBeforeOpen func(real string)

// FileInfo describes a file of the vault.
type FileInfo struct {
	Path    string // clean vault-relative path, as asked for (or as walked)
	Size    int64
	ModTime time.Time
	IsNote  bool // .md or .markdown

	// walked identifies the regular file Walk (or a read) saw, of Size
	// bytes (when known); it lets ReadWalked skip the per-component checks
	// that Walk already made. Only the identity is kept, not the whole
	// os.FileInfo: that was about 200 bytes more for every note an index
	// holds (27 MiB of live heap at 100k notes).
	walked fileID
}

// regularInfo is the FileInfo of the regular file at rel that fi describes
// (an lstat or fstat result).
func regularInfo(rel string, fi os.FileInfo, isNote bool) FileInfo {
	return FileInfo{Path: rel, Size: fi.Size(), ModTime: fi.ModTime(), IsNote: isNote, walked: idOf(fi)}
}

// Vault is an open vault folder. Every access goes through an *os.Root, so no
// path, however it was checked, can reach outside the folder at the moment of
// use. A Vault is safe for concurrent use.
type Vault struct {
	cur      atomic.Pointer[rootState] // the folder at dir, as last opened (Reopen)
	dir      string                    // absolute, symlinks evaluated
	redacts  []string                  // spellings of the vault directory, longest first
	readOnly bool

	mu      sync.Mutex
	retired []*rootState // folders Reopen replaced, closed by Close
}

// rootState is the vault's folder held open.
type rootState struct {
	root *os.Root
	fast fastRoot // the folder held open for the fast path of ReadWalked
}

// rs returns the vault's folder as last opened.
func (v *Vault) rs() *rootState { return v.cur.Load() }

// CodeReadOnly refuses a write to a vault opened with ReadOnly(true).
const CodeReadOnly Code = "READ_ONLY"

// An Option configures a Vault at Open.
type Option func(*Vault)

// ReadOnly(true) opens the vault read-only, the zero-trust mode of
// VAULT_READ_ONLY: every write (Resolve for Write or Move included) is
// refused with READ_ONLY, and a note with more than one hard link is not
// read: ReadNote, ReadWalked and Resolve refuse it with NOT_A_NOTE and Walk
// reports it instead of giving it. Its other names may be anywhere on the
// same file system, so its contents may be a file from outside the vault
// that someone linked in. Stat still describes such a note (it reads no
// content), so that a caller refreshing it learns why it cannot be read.
// Attachments are never read, so their links do not matter.
func ReadOnly(on bool) Option { return func(v *Vault) { v.readOnly = on } }

// IsReadOnly reports whether the vault was opened with ReadOnly(true).
func (v *Vault) IsReadOnly() bool { return v.readOnly }

// Open opens the vault folder dir, which must exist and be a directory. Its
// errors are for the operator (stderr at start-up) and name dir as given.
func Open(dir string, opts ...Option) (*Vault, error) {
	if dir == "" {
		return nil, errors.New("vaultfs: no vault directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("vaultfs: vault directory %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("vaultfs: vault directory %q does not exist", dir)
	case err != nil:
		return nil, fmt.Errorf("vaultfs: vault directory %q: %w", dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("vaultfs: vault directory %q is not a directory", dir)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("vaultfs: vault directory %q: %w", dir, err)
	}
	if filepath.Dir(real) == real {
		return nil, fmt.Errorf("vaultfs: vault directory %q is the root of a file system; refusing it", dir)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("vaultfs: vault directory %q: %w", dir, err)
	}
	v := &Vault{dir: real}
	v.cur.Store(&rootState{root: root, fast: openFastRoot(root)})
	for _, o := range opts {
		o(v)
	}
	seen := map[string]bool{}
	for _, d := range []string{real, abs, filepath.ToSlash(real), filepath.ToSlash(abs)} {
		if !seen[d] {
			seen[d] = true
			v.redacts = append(v.redacts, d)
		}
	}
	sort.Slice(v.redacts, func(i, j int) bool { return len(v.redacts[i]) > len(v.redacts[j]) })
	return v, nil
}

// Close releases the vault folder. Later calls fail with IO_ERROR.
func (v *Vault) Close() error {
	v.mu.Lock()
	for _, r := range v.retired {
		r.fast.close()
		r.root.Close()
	}
	v.retired = nil
	v.mu.Unlock()
	v.rs().fast.close()
	return v.rs().root.Close()
}

// Reopen opens the vault's folder again when the directory now at its path
// is not the one held open: the folder was replaced (moved away or removed,
// and another one put in its place: a fresh clone, a restored backup, a
// sync tool's swap). Until then every read went to the old folder, which a
// user no longer sees, or failed once it was removed. It reports whether it
// switched; with nothing at the path (yet), or no directory there, it
// keeps the folder it holds and returns an error. The replaced folder is
// closed by Close, not here: a read under way may still be using it.
func (v *Vault) Reopen() (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now, err := os.Stat(v.dir)
	if err != nil {
		return false, fromOS("", err)
	}
	if !now.IsDir() {
		return false, newErr(CodeNotANote, "", "the vault folder is no longer a directory")
	}
	old := v.rs()
	if held, err := old.root.Stat("."); err == nil && os.SameFile(held, now) {
		return false, nil
	}
	root, err := os.OpenRoot(v.dir)
	if err != nil {
		return false, fromOS("", err)
	}
	v.cur.Store(&rootState{root: root, fast: openFastRoot(root)})
	v.retired = append(v.retired, old)
	return true, nil
}

// Dir is the vault's absolute directory with symlinks evaluated. It is for
// git and the watcher only; never show it to a client.
func (v *Vault) Dir() string { return v.dir }

// Redact replaces every occurrence of the vault's absolute directory (as
// evaluated and as given) in s with "<vault>".
func (v *Vault) Redact(s string) string {
	for _, d := range v.redacts {
		s = strings.ReplaceAll(s, d, "<vault>")
	}
	return s
}

// fail makes an error safe to return to a client: the vault directory is
// redacted from its path and reason.
func (v *Vault) fail(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return &Error{Code: CodeIO, Reason: v.Redact(err.Error())}
	}
	c := *e
	c.Path = v.Redact(c.Path)
	c.Reason = v.Redact(c.Reason)
	if c.Err != nil && strings.Contains(c.Err.Error(), v.dir) {
		c.Err = errors.New(v.Redact(c.Err.Error()))
	}
	return &c
}

// target is a path checked by walkPath.
type target struct {
	rel  string      // the clean path as asked for
	real string      // the same file with every symbolic link resolved
	info fs.FileInfo // Lstat of real; nil when it does not exist (Write, Move)
}

type walkOpts struct {
	acc         Access
	requireNote bool // the real path must have a note's extension too
	allowDir    bool // a directory at the end is returned, not refused
	statOnly    bool // the caller reads no content (Stat): hard links are not judged
	newNames    bool // the files and folders a write would create must have portable names (checkNewName)
}

// Resolve is the gatekeeper's one check: Clean, CheckPolicy, then a walk of
// every existing component with Lstat through the root. A symbolic link that
// leaves the vault (or is absolute) is SYMLINK_ESCAPE; one that stays inside
// is followed for reads, and the file it leads to must pass the same rules
// (a link to .git/config or node_modules is refused with that path's code).
// For Read the file must exist (NOT_FOUND) and be a regular file
// (NOT_A_NOTE). For Write and Move a missing file is fine, but a symbolic
// link, a file with more than one hard link, a FIFO, device, socket or
// directory at the target is NOT_A_NOTE. It returns the clean path; for
// Write and Move, the path the write lands at: through a symbolic link
// inside the vault, the path it leads to (a caller that commits the write
// must name that one: git refuses a path beyond a symbolic link).
func (v *Vault) Resolve(p string, acc Access) (string, error) {
	t, err := v.check(p, acc)
	if err != nil {
		return "", v.fail(err)
	}
	if acc != Read && t.real != "" {
		return t.real, nil
	}
	return t.rel, nil
}

// ResolveNew is Resolve for a write that may create a note under a name
// the client chose (a new note, a move's target, a learning): every file
// or folder the write would create must also have a portable name
// (checkNewName), INVALID_PATH otherwise. Existing files and folders on
// the way are not judged: a note with such a name stays readable,
// replaceable and movable to a better one.
func (v *Vault) ResolveNew(p string, acc Access) (string, error) {
	t, err := v.checkWith(p, acc, true)
	if err != nil {
		return "", v.fail(err)
	}
	if acc != Read && t.real != "" {
		return t.real, nil
	}
	return t.rel, nil
}

func (v *Vault) check(p string, acc Access) (*target, error) {
	return v.checkWith(p, acc, false)
}

func (v *Vault) checkWith(p string, acc Access, newNames bool) (*target, error) {
	rel, err := Clean(p)
	if err != nil {
		return nil, err
	}
	if v.readOnly && acc != Read {
		return nil, newErr(CodeReadOnly, rel, "the vault is open read-only; a %v is refused", acc)
	}
	if err := v.checkPolicy(rel, acc); err != nil {
		return nil, err
	}
	return v.walkPath(rel, walkOpts{acc: acc, requireNote: true, newNames: newNames && acc != Read})
}

// CheckPath is Clean and CheckPolicy of the path of a note that need not
// exist (vault_history's: a deleted note keeps its history), with the
// vault's one addition: a folder of the vault is told as one.
func (v *Vault) CheckPath(p string, acc Access) (string, error) {
	rel, err := Clean(p)
	if err != nil {
		return "", err
	}
	return rel, v.checkPolicy(rel, acc)
}

// checkPolicy is CheckPolicy, but a folder, which has no note's
// extension, is NOT_A_NOTE saying it is a folder (every tool takes one
// note), not only INVALID_EXTENSION.
func (v *Vault) checkPolicy(rel string, acc Access) error {
	err := CheckPolicy(rel, acc)
	if CodeOf(err) == CodeInvalidExtension && v.IsFolder(rel) {
		return newErr(CodeNotANote, rel, "is a folder, not a note: give the path of a note in it (ending in .md)")
	}
	return err
}

// walkPath resolves rel (clean and policy-checked by the caller) component
// by component, with Lstat through the root, following symbolic links by
// hand so that each one can be judged. A path with no symbolic link on it
// is looked at in one step where the system allows (fastRoot.lstat): the
// same answer, fewer system calls.
func (v *Vault) walkPath(rel string, o walkOpts) (*target, error) {
	if t, ok, err := v.walkFast(rel, o); ok {
		return t, err
	}
	done := make([]string, 0, 8) // resolved components, no symlinks among them
	pending := strings.Split(rel, "/")
	hops := 0
	viaLink := false
	missing := false
	var info fs.FileInfo
	for len(pending) > 0 {
		seg := pending[0]
		pending = pending[1:]
		switch seg {
		case "", ".":
			continue
		case "..": // only from a symlink's target
			if len(done) == 0 {
				return nil, newErr(CodeSymlinkEscape, rel, "a symbolic link on the way points outside the vault")
			}
			done = done[:len(done)-1]
			continue
		}
		last := len(pending) == 0
		cand := strings.Join(append(done, seg), "/")
		fi, err := v.rs().root.Lstat(cand)
		if err != nil {
			switch {
			case errors.Is(err, fs.ErrNotExist) && o.acc != Read:
				created := len(done)
				done = append(done, seg)
				for _, s := range pending {
					switch s {
					case "", ".":
					case "..":
						return nil, newErr(CodeNotANote, rel, "a symbolic link on the way points into a missing folder")
					default:
						done = append(done, s)
					}
				}
				if o.newNames {
					for i, s := range done[created:] {
						if err := checkNewName(rel, s, created+i == len(done)-1); err != nil {
							return nil, err
						}
					}
				}
				pending = nil
				missing = true
				continue
			case errors.Is(err, syscall.ENOTDIR) && o.acc != Read:
				return nil, newErr(CodeNotANote, rel, "a component of the path is a file, not a folder")
			}
			return nil, fromOS(rel, err)
		}
		mode := fi.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			if last && o.acc != Read {
				return nil, newErr(CodeNotANote, rel, "is a symbolic link; a %v never follows one", o.acc)
			}
			hops++
			if hops > maxSymlinks {
				return nil, newErr(CodeNotANote, rel, "too many levels of symbolic links (a loop?)")
			}
			link, err := v.rs().root.Readlink(cand)
			if err != nil {
				return nil, fromOS(rel, err)
			}
			link = filepath.ToSlash(link)
			if link == "" || path.IsAbs(link) || filepath.IsAbs(link) || filepath.VolumeName(link) != "" {
				return nil, newErr(CodeSymlinkEscape, rel, "a symbolic link on the way has an absolute target, which is treated as outside the vault")
			}
			viaLink = true
			pending = append(strings.Split(link, "/"), pending...)
		case mode.IsDir():
			if len(pending) == 0 && !o.allowDir {
				return nil, newErr(CodeNotANote, rel, "is a folder, not a note")
			}
			done = append(done, seg)
			if len(pending) == 0 {
				info = fi
			}
		default:
			if len(pending) > 0 {
				if o.acc == Read {
					return nil, newErr(CodeNotFound, rel, "a component of the path is a file, not a folder")
				}
				return nil, newErr(CodeNotANote, rel, "a component of the path is a file, not a folder")
			}
			done = append(done, seg)
			info = fi
		}
	}
	t := &target{rel: rel, real: strings.Join(done, "/"), info: info}
	if info == nil && !missing {
		// The walk ended on a folder through a link ending in "." or "..".
		if !o.allowDir {
			return nil, newErr(CodeNotANote, rel, "is a folder, not a note")
		}
		name := t.real
		if name == "" {
			name = "."
		}
		fi, err := v.rs().root.Lstat(name)
		if err != nil {
			return nil, fromOS(rel, err)
		}
		t.info = fi
	}
	return v.judge(t, viaLink, o)
}

// walkFast is walkPath's one step (fastRoot.lstat) for a path with no
// symbolic link on it: an existing file or folder, or a missing file in an
// existing folder (a new note, a read of a note that is not there), with
// walkPath's answer; ok is false for anything else.
func (v *Vault) walkFast(rel string, o walkOpts) (t *target, ok bool, err error) {
	defer func() {
		if ok {
			fastChecks.Add(1)
		}
	}()
	fast := v.rs().fast
	fi, missing, ok := fast.lstat(rel)
	if !ok {
		return nil, false, nil
	}
	if !missing {
		t, err := v.judge(&target{rel: rel, real: rel, info: fi}, false, o)
		return t, true, err
	}
	dir, name := path.Split(rel)
	if dir != "" {
		if fi, missing, ok := fast.lstat(dir[:len(dir)-1]); !ok || missing || !fi.IsDir() {
			return nil, false, nil
		}
	}
	// Only the last component is missing, as walkPath would find it.
	if o.acc == Read {
		return nil, true, fromOS(rel, syscall.ENOENT)
	}
	if o.newNames {
		if err := checkNewName(rel, name, true); err != nil {
			return nil, true, err
		}
	}
	return &target{rel: rel, real: rel}, true, nil
}

// fastChecks counts the paths walkFast answered (tests).
var fastChecks atomic.Int64

// judge ends walkPath with the rules for what the walk found (t.info nil:
// nothing, for a write); viaLink says a symbolic link was followed.
func (v *Vault) judge(t *target, viaLink bool, o walkOpts) (*target, error) {
	rel := t.rel
	if o.allowDir && t.info != nil && t.info.IsDir() {
		return t, nil // inside the vault; the caller does not enter it
	}
	if viaLink && t.real != rel {
		if err := checkPolicy(t.real, o.acc, o.requireNote); err != nil {
			e := err.(*Error)
			return nil, &Error{Code: e.Code, Path: rel, Reason: fmt.Sprintf("is a symbolic link to %s, which is refused: %s", QuotePath(t.real), e.Reason)}
		}
	}
	if t.info == nil {
		return t, nil // Write or Move of a new file
	}
	mode := t.info.Mode()
	switch {
	case mode.IsRegular():
	case mode.IsDir():
		return nil, newErr(CodeNotANote, rel, "is a folder, not a note")
	default:
		return nil, newErr(CodeNotANote, rel, "is %s, not a regular file", describeMode(mode))
	}
	switch {
	case o.acc != Read:
		n, err := linkCount(v.rs().root, t.real, t.info)
		if err != nil {
			return nil, &Error{Code: CodeNotANote, Path: rel, Reason: "cannot tell whether it has other hard links", Err: bareCause(err)}
		}
		if n > 1 {
			return nil, newErr(CodeNotANote, rel, "has %d hard links; writing it would change the other names too", n)
		}
	case v.readOnly && !o.statOnly && IsNoteName(t.real):
		if err := v.checkSingleLink(rel, t.real, t.info); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// checkSingleLink is the read-only mode's rule for reading a note: the file
// (fi, the Lstat or fstat of real) must have exactly one name, or its
// contents may be a file from outside the vault hard-linked in.
func (v *Vault) checkSingleLink(rel, real string, fi fs.FileInfo) error {
	n, err := linkCount(v.rs().root, real, fi)
	if err != nil {
		return &Error{Code: CodeNotANote, Path: rel, Reason: "cannot tell whether it has other hard links, which a read-only vault does not read", Err: bareCause(err)}
	}
	if n > 1 {
		return newErr(CodeNotANote, rel, "has %d hard links; a read-only vault does not read a note with other names, which may be a file from outside the vault", n)
	}
	return nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a special file"
}

// ReadNote resolves p for Read and reads the note through the root. The
// opened file is checked again with fstat: it must be a regular file and the
// very file the check saw (a swap in between is refused), and at most
// MaxNoteSize bytes (TOO_LARGE). It returns the bytes and the info of the
// opened file, with Path the clean path asked for.
func (v *Vault) ReadNote(p string) ([]byte, FileInfo, error) {
	data, fi, err := v.readNote(p)
	if err != nil {
		return nil, FileInfo{}, v.fail(err)
	}
	return data, fi, nil
}

func (v *Vault) readNote(p string) ([]byte, FileInfo, error) {
	for try := 1; ; try++ {
		t, err := v.check(p, Read)
		if err != nil {
			return nil, FileInfo{}, err
		}
		data, fi, err := v.readTarget(t, MaxNoteSize)
		if errors.Is(err, errReplaced) && try < replacedTries {
			continue // a write put a new file at the path: check that one
		}
		if err != nil {
			return nil, FileInfo{}, err
		}
		return data, regularInfo(t.rel, fi, true), nil
	}
}

// errReplaced is the cause of the NOT_FOUND of a read whose path named
// another file when it was opened than when it was checked: a write that
// replaces a note (a new file renamed over it) does that, so the read
// checks the path again, up to replacedTries times in all.
var errReplaced = errors.New("replaced between check and open")

const replacedTries = 3

// ReadFile reads any regular file of the vault — a note, an attachment —
// with the checks of ReadNote (every component of the path judged,
// symbolic links included; the opened file the very file checked) and at
// most limit bytes (TOO_LARGE past it). It is how the git commit reads the
// bytes it commits (and ReadDotFile the rule files it honours).
func (v *Vault) ReadFile(p string, limit int64) ([]byte, error) {
	rel, err := Clean(p)
	if err != nil {
		return nil, v.fail(err)
	}
	if err := checkPolicy(rel, Read, false); err != nil {
		return nil, v.fail(err)
	}
	return v.readChecked(rel, limit)
}

// ReadDotFile reads the file called name, a dotfile such as .gitignore,
// in the vault folder dir ("" the top) — a name ReadFile refuses, hidden
// names being off limits to every other read. The folder is checked as any
// path is, and the file read as ReadFile reads it.
func (v *Vault) ReadDotFile(dir, name string, limit int64) ([]byte, error) {
	if len(name) < 2 || name[0] != '.' || name[1] == '.' || strings.ContainsAny(name, "/\\:\x00") {
		return nil, v.fail(newErr(CodeInvalidPath, name, "not a dotfile's name"))
	}
	rel := name
	if dir != "" {
		c, err := Clean(dir)
		if err != nil {
			return nil, v.fail(err)
		}
		if c != dir {
			return nil, v.fail(newErr(CodeInvalidPath, dir, "not a clean vault path (expected %s)", QuotePath(c)))
		}
		if err := checkPolicy(c, Read, false); err != nil {
			return nil, v.fail(err)
		}
		rel = c + "/" + name
	}
	return v.readChecked(rel, limit)
}

// readChecked walks rel (clean and policy-checked by the caller, as for
// walkPath) and reads the file, at most limit bytes.
func (v *Vault) readChecked(rel string, limit int64) ([]byte, error) {
	for try := 1; ; try++ {
		t, err := v.walkPath(rel, walkOpts{acc: Read})
		if err != nil {
			return nil, v.fail(err)
		}
		data, _, err := v.readTarget(t, limit)
		if errors.Is(err, errReplaced) && try < replacedTries {
			continue
		}
		if err != nil {
			return nil, v.fail(err)
		}
		return data, nil
	}
}

// readTarget opens a checked target through the root and reads it, at
// most limit bytes.
func (v *Vault) readTarget(t *target, limit int64) ([]byte, fs.FileInfo, error) {
	if t.info.Size() > limit {
		return nil, nil, tooLargeFor(t.rel, t.info.Size(), limit)
	}
	if testHookBeforeOpen != nil {
		testHookBeforeOpen(t.real)
	}
	f, err := v.openFile(t.real, os.O_RDONLY|openReadFlags)
	if err != nil {
		return nil, nil, fromOS(t.rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fromOS(t.rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, newErr(CodeNotANote, t.rel, "is %s, not a regular file", describeMode(fi.Mode()))
	}
	if !os.SameFile(fi, t.info) {
		e := newErr(CodeNotFound, t.rel, "the file was replaced while it was being opened; try again")
		e.Err = errReplaced
		return nil, nil, e
	}
	if v.readOnly {
		// Again on the opened file: a name may have been added since the check.
		if err := v.checkSingleLink(t.rel, t.real, fi); err != nil {
			return nil, nil, err
		}
	}
	if fi.Size() > limit {
		return nil, nil, tooLargeFor(t.rel, fi.Size(), limit)
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, nil, fromOS(t.rel, err)
	}
	if int64(buf.Len()) > limit {
		return nil, nil, tooLargeFor(t.rel, int64(buf.Len()), limit)
	}
	return buf.Bytes(), fi, nil
}

// openFile opens the existing file rel (clean, vault-relative) through the
// root, in one step when no component of it is a symbolic link
// (fastRoot.openFile). The caller checks that the file opened is the one
// it means (os.SameFile with what walkPath found).
func (v *Vault) openFile(rel string, flags int) (*os.File, error) {
	if f, ok := v.rs().fast.openFile(rel, flags); ok {
		return f, nil
	}
	return v.rs().root.OpenFile(rel, flags, 0)
}

// tooLargeFor is TOO_LARGE for a read limited to limit bytes.
func tooLargeFor(rel string, size, limit int64) *Error {
	if limit == MaxNoteSize {
		return tooLarge(rel, size)
	}
	return newErr(CodeTooLarge, rel, "%d bytes is over the %d-byte limit of this read", size, limit)
}

// TooLarge is the gatekeeper's refusal of a note of size bytes at rel, over
// MaxNoteSize: for a backend that checks a note's size before sending it
// (the remote client on a plain team server).
func TooLarge(rel string, size int64) error { return tooLarge(rel, size) }

func tooLarge(rel string, size int64) *Error {
	return newErr(CodeTooLarge, rel, "%d bytes is over the %d-byte limit for a note", size, MaxNoteSize)
}

// ReadWalked reads again a note that Walk listed or ReadNote read: the
// checks already judged every component of its path, so this opens it
// through the root at once and only verifies (fstat, os.SameFile) that the
// file opened is the very file checked then (on Linux it is first opened
// with openat2 beneath the vault's folder, no symbolic link allowed: see
// fastroot_linux.go); anything else (a file replaced
// or swapped since) falls back to the full checks of ReadNote. It is the fast
// path of the first index build (where the per-component checks cost a third
// of the time) and of quoting search hits.
func (v *Vault) ReadWalked(w FileInfo) ([]byte, FileInfo, error) {
	if !walkedNote(w) {
		return v.ReadNote(w.Path)
	}
	if data, fi, ok := v.rs().fast.readWalked(v, w); ok {
		return data, fi, nil
	}
	f, err := v.rs().root.OpenFile(w.Path, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		return v.ReadNote(w.Path)
	}
	return v.readOpened(w, f)
}

// walkedNote: ReadWalked may take its fast path for w.
func walkedNote(w FileInfo) bool {
	return w.walked.known() && w.IsNote && w.Size <= MaxNoteSize
}

// readOpened finishes ReadWalked with the file f opened for w (and closes
// it).
func (v *Vault) readOpened(w FileInfo, f *os.File) ([]byte, FileInfo, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !w.walked.same(fi) || fi.Size() > MaxNoteSize {
		return v.ReadNote(w.Path)
	}
	if v.readOnly {
		if n, err := linkCount(v.rs().root, w.Path, fi); err != nil || n > 1 {
			return v.ReadNote(w.Path) // which refuses it, saying why
		}
	}
	buf := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, FileInfo{}, fromOS(w.Path, err)
		}
		if len(buf) == cap(buf) {
			if len(buf) > MaxNoteSize {
				return nil, FileInfo{}, tooLarge(w.Path, int64(len(buf)))
			}
			buf = append(buf, 0)[:len(buf)]
		}
	}
	return buf, regularInfo(w.Path, fi, true), nil
}

// IsFolder reports whether p names a folder of the vault that a read could
// enter: clean, not hidden or protected, reached without leaving the vault.
// It lets a caller refused for a path without a note's extension tell the
// client that the path is a folder (a tool that takes one note cannot be
// given a folder) instead of only that the extension is missing.
func (v *Vault) IsFolder(p string) bool {
	rel, err := Clean(p)
	if err != nil || checkPolicy(rel, Read, false) != nil {
		return false
	}
	t, err := v.walkPath(rel, walkOpts{acc: Read, allowDir: true, statOnly: true})
	return err == nil && t.info != nil && t.info.IsDir()
}

// Stat is a cheap re-check of a path that is already clean (a search hit,
// a walked file): it must be exactly what Clean returns, not protected, and
// reach a regular file inside the vault (symbolic links judged as in
// Resolve). Attachments are allowed; IsNote tells. Missing -> NOT_FOUND.
func (v *Vault) Stat(rel string) (FileInfo, error) {
	if err := checkPolicy(rel, Read, false); err != nil {
		return FileInfo{}, v.fail(err)
	}
	t, err := v.walkPath(rel, walkOpts{acc: Read, requireNote: IsNoteName(rel), statOnly: true})
	if err != nil {
		return FileInfo{}, v.fail(err)
	}
	return FileInfo{Path: rel, Size: t.info.Size(), ModTime: t.info.ModTime(), IsNote: IsNoteName(rel)}, nil
}

// Unchanged reports whether the note w describes (as Walk listed it or a
// read returned it) is still that very file, by one lstat of its path: the
// same identity (device and inode), size and modification time, a regular
// file, and, in read-only mode, still with a single link. It lets a caller
// that keeps a note's bytes (read through the gatekeeper when w was made)
// serve them again without reading the file. A path whose folders were
// swapped for symbolic links may be followed by the lstat, but then no
// identity matches (false), and nothing is read through it: the bytes
// served are the ones the gatekeeper read before.
func (v *Vault) Unchanged(w FileInfo) bool {
	if !w.walked.known() || !w.IsNote {
		return false
	}
	fi, err := os.Lstat(filepath.Join(v.dir, filepath.FromSlash(w.Path)))
	if err != nil || !fi.Mode().IsRegular() || !w.walked.same(fi) || fi.Size() != w.Size || !fi.ModTime().Equal(w.ModTime) {
		return false
	}
	if v.readOnly {
		if n, err := linkCount(v.rs().root, w.Path, fi); err != nil || n > 1 {
			return false
		}
	}
	return true
}
