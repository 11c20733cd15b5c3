package gitx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The fast commit reads HEAD and moves the branch itself where git's files
// backend is in use and the case is the plain one: HEAD names a branch
// (refs/heads/…) whose value is a loose ref file. It then does what
// `git update-ref -m <message> HEAD <new> <old>` does there, in git's order:
// HEAD.lock and the branch's .lock are taken (created exclusively), the
// branch is checked to still be <old>, the new value is written to its
// lock, a line is added to the branch's log and to HEAD's (created when
// core.logAllRefUpdates asks for them, as for a branch in a repository
// with a work tree by default; only added to when they exist otherwise),
// the lock is renamed onto the branch and HEAD.lock removed. Refs and logs
// are flushed when core.fsync names references.
//
// Anything else — a detached HEAD, a branch only in packed-refs, the
// reftable backend (its HEAD names no readable file), a lock another
// program holds, a reference-transaction hook (git runs it on every ref
// update), identities not known here — goes to `git update-ref` as before.

// errRefFallback: the ref update is left to git update-ref.
var errRefFallback = errors.New("the ref update is left to git")

// headState is HEAD as read from the files: the branch it names ("" when
// detached) and the commit.
type headState struct {
	branch string // "refs/heads/main"
	id     string
}

// readHead reads HEAD and its branch from the git folders; false when that
// is not the plain case (git is asked then).
func readHead(gitDir, commonDir string, idLen int) (headState, bool) {
	if gitDir == "" || commonDir == "" {
		return headState{}, false
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return headState{}, false
	}
	target, ok := strings.CutPrefix(string(data), "ref: ")
	if !ok {
		return headState{}, false
	}
	target = strings.TrimSuffix(target, "\n")
	if !validBranch(target) {
		return headState{}, false
	}
	id, ok := readLooseRef(filepath.Join(commonDir, filepath.FromSlash(target)), idLen)
	if !ok {
		return headState{}, false
	}
	return headState{branch: target, id: id}, true
}

// validBranch accepts the branch names read here: refs/heads/ and plain
// components (anything unusual is git's to read).
func validBranch(ref string) bool {
	name, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || name == "" {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return !strings.ContainsAny(name, "\x00\\ ~^:?*[\n\r\t\x7f") && !strings.Contains(name, "..") && !strings.Contains(name, "@{")
}

// readLooseRef reads a loose ref file holding an object id; false when
// there is none or it holds anything else.
func readLooseRef(p string, idLen int) (string, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	id := strings.TrimSuffix(string(data), "\n")
	if len(id) != 2*idLen || !isHex(id) {
		return "", false
	}
	return id, true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// refUpdate is one branch move: HEAD's branch from old to new.
type refUpdate struct {
	ledger            *lockLedger // the locks taken are listed there (may be nil)
	gitDir, commonDir string
	branch            string // "refs/heads/main"
	old, new          string
	committer         string // "Name <email>"
	when              time.Time
	message           string // the reflog message, before normalising
	logAll            string // core.logAllRefUpdates as read
	bare              bool
	fsync             bool
}

// testHookRefUpdate, when set by a test, runs between the branch's lock
// being written and renamed (a process killed there leaves the branch as
// it was, and a lock git reports).
var testHookRefUpdate func()

// updateHeadRef moves the branch as git update-ref would (see above).
// errRefFallback when the case is not one it handles and nothing was
// changed; errHeadMoved when the branch is no longer at old.
func updateHeadRef(u refUpdate) error {
	headLock := filepath.Join(u.gitDir, "HEAD.lock")
	refPath := filepath.Join(u.commonDir, filepath.FromSlash(u.branch))
	refLock := refPath + ".lock"
	for _, ref := range []string{u.branch, "HEAD"} {
		if _, ok := u.autoLog(ref); !ok {
			return errRefFallback
		}
	}
	u.ledger.intend(headLock)
	hl, err := createLock(headLock)
	if err != nil {
		u.ledger.released(headLock)
		return err
	}
	u.ledger.took(headLock, hl)
	defer func() {
		hl.Close()
		os.Remove(headLock)
		u.ledger.released(headLock)
	}()
	u.ledger.intend(refLock)
	rl, err := createLock(refLock)
	if err != nil {
		u.ledger.released(refLock)
		return err
	}
	u.ledger.took(refLock, rl)
	committed := false
	defer func() {
		if !committed {
			rl.Close()
			os.Remove(refLock)
		}
		u.ledger.released(refLock)
	}()
	// Under the locks: HEAD still names the branch, the branch is at old.
	head, ok := readHead(u.gitDir, u.commonDir, len(u.old)/2)
	if !ok || head.branch != u.branch {
		return errRefFallback
	}
	if head.id != u.old {
		return errHeadMoved
	}
	if _, err := rl.WriteString(u.new + "\n"); err != nil {
		return fmt.Errorf("git ref %s: %w", u.branch, err)
	}
	if u.fsync {
		if err := rl.Sync(); err != nil {
			return fmt.Errorf("git ref %s: %w", u.branch, err)
		}
	}
	if err := rl.Close(); err != nil {
		return fmt.Errorf("git ref %s: %w", u.branch, err)
	}
	line := u.old + " " + u.new + " " + u.committer + " " + strconv.FormatInt(u.when.Unix(), 10) + " " + zoneOffset(u.when)
	if msg := reflogMessage(u.message); msg != "" {
		line += "\t" + msg
	}
	line += "\n"
	// The branch's log, then HEAD's, as git writes them before the rename.
	for _, lg := range []struct{ path, ref string }{
		{filepath.Join(u.commonDir, "logs", filepath.FromSlash(u.branch)), u.branch},
		{filepath.Join(u.gitDir, "logs", "HEAD"), "HEAD"},
	} {
		create, _ := u.autoLog(lg.ref)
		if err := appendReflog(lg.path, line, create, u.fsync); err != nil {
			return fmt.Errorf("git reflog of %s: %w", lg.ref, err)
		}
	}
	if testHookRefUpdate != nil {
		testHookRefUpdate()
	}
	if err := os.Rename(refLock, refPath); err != nil {
		return fmt.Errorf("git ref %s: %w", u.branch, err)
	}
	committed = true
	return nil
}

// createLock creates a lock file exclusively, as git does (mode 0666 less
// the umask); errRefFallback when it exists (git, asked instead, waits for
// it a little and says who holds it).
func createLock(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil, errRefFallback
	}
	if err != nil {
		return nil, fmt.Errorf("git ref lock: %w", err)
	}
	return f, nil
}

// autoLog reports whether a missing log of ref is created: by default for
// branches and HEAD in a repository with a work tree, for every ref with
// "always", for none with false; false for ok when git would not read the
// setting (it stops at a value that is no boolean).
func (u refUpdate) autoLog(ref string) (create, ok bool) {
	switch u.logAll {
	case "always":
		return true, true
	case "":
		return !u.bare, true
	}
	on, ok := gitBool(u.logAll)
	return on && (ref == "HEAD" || strings.HasPrefix(ref, "refs/heads/")), ok
}

// gitBool reads a boolean setting as git does; false for ok when it is none.
func gitBool(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	n, err := strconv.Atoi(v)
	return n != 0, err == nil
}

// appendReflog adds line to the log at p, creating it (and its folders)
// when create says so.
func appendReflog(p, line string, create, fsync bool) error {
	flags := os.O_WRONLY | os.O_APPEND
	if create {
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(p, flags, 0o666)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if err == nil && fsync {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// reflogMessage is a reflog message as git stores it: leading blanks
// dropped, every run of blanks inside one space, trailing ones dropped.
func reflogMessage(msg string) string {
	var b strings.Builder
	space := true
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		isSpace := c == ' ' || c == '\t' || c == '\n' || c == '\r'
		if space && isSpace {
			continue
		}
		space = isSpace
		if isSpace {
			c = ' '
		}
		b.WriteByte(c)
	}
	return strings.TrimRight(b.String(), " ")
}
