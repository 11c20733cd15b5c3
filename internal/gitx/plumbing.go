package gitx

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/par"
)

// The fast commit: exactly the given paths, without `git commit` reading and
// refreshing the whole index (at 100k notes that stats 100k files, about
// 300 ms a write). It builds the new tree from HEAD's by rewriting only the
// trees on the way to the touched paths (cat-file, mktree), makes the commit
// with commit-tree, moves the branch with update-ref from the HEAD it
// started from (so a commit the user made meanwhile is never lost: the
// update fails and the commit is built again on top of it), and then sets
// the touched paths' entries of the user's index to the committed blobs,
// leaving every other entry (the user's staged changes) as it was — what
// `git commit --only` does (index.go writes the index; git update-index
// where index.go says it does not).
//
// It is used only where it gives exactly what `git commit` would: the
// repository has a HEAD, no commit hook (pre-commit, prepare-commit-msg,
// commit-msg, post-commit) and no commit signing configured. Otherwise the
// commit goes through `git commit` as before, hooks and signing included.

// commitTries is how many times the fast commit is built when the branch
// moves under it.
const commitTries = 3

// ignoreAtOnce: a commit of at most this many present files asks
// check-ignore beside hash-object and cat-file, of all of them.
const ignoreAtOnce = 16

// errFallback says the fast commit cannot give what `git commit` would.
var errFallback = errors.New("the fast commit does not apply")

// repoConfig is what the fast commit needs to know of the configuration.
type repoConfig struct {
	hasName, hasEmail bool
	sign              bool
	hooksPath         string
	includes          bool // the configuration includes other files
	// What writing tree objects without mktree must know (objects.go).
	shared       bool // core.sharedRepository set: git sets the files' modes
	compatFormat bool // extensions.compatObjectFormat: git records two ids
	fsyncObjects bool // loose objects are flushed to disk
	fsyncPacks   bool // so are packs (pack.go)
	fsyncIndex   bool // so is the index (index.go)
	sha256       bool // extensions.objectFormat is sha256
	// What writing the commit object without commit-tree must know
	// (commitobj.go): the last user.name and user.email as written, and
	// whether any other setting takes part in the identity or the header.
	name, email   string
	identityRules bool
	// What making blobs, telling ignored files and moving the branch
	// without git must know (worktree.go, refs.go).
	autocrlf        bool   // core.autocrlf converts line endings
	attrTree        bool   // attr.tree: attributes read from a tree
	attributesFile  string // core.attributesFile as written
	excludesFile    string // core.excludesFile as written
	logAllRefs      string // core.logAllRefUpdates, lower-cased ("" unset)
	bare            bool   // core.bare
	fsyncReferences bool   // refs and reflogs are flushed to disk
	noFileMode      bool   // core.fileMode false: the executable bit is not trusted
}

func (r *Repo) config(ctx context.Context) repoConfig {
	out, _ := r.Run(ctx, "config", "-z", "--get-regexp", `^(user\.(name|email|useconfigonly)|(author|committer)\.(name|email)|i18n\.commitencoding|commit\.gpgsign|core\.(hookspath|sharedrepository|fsync|fsyncobjectfiles|autocrlf|attributesfile|excludesfile|logallrefupdates|bare|filemode)|attr\.tree|extensions\.(compatobjectformat|objectformat)|include\.path|includeif\..*\.path)$`)
	var c repoConfig
	// Loose objects are flushed when either setting asks for it (the last
	// value of each counts, in whichever order they come).
	var fsyncCore, fsyncFiles bool
	packs := true // git flushes packs unless core.fsync says otherwise
	// -z: each entry is "key\nvalue\0" ("key\0" for a key with no value).
	for _, entry := range strings.Split(string(out), "\x00") {
		if entry == "" {
			continue
		}
		key, raw, _ := strings.Cut(entry, "\n")
		val := strings.TrimSpace(raw)
		switch k := strings.ToLower(key); k {
		case "user.name":
			c.hasName = c.hasName || val != ""
			c.name = raw
		case "user.email":
			c.hasEmail = c.hasEmail || val != ""
			c.email = raw
		case "user.useconfigonly", "author.name", "author.email", "committer.name", "committer.email", "i18n.commitencoding":
			c.identityRules = true
		case "commit.gpgsign":
			b, err := strconv.ParseBool(val)
			c.sign = err == nil && b || val == "yes" || val == "on"
		case "core.hookspath":
			c.hooksPath = val
		case "core.sharedrepository":
			b, err := strconv.ParseBool(val)
			c.shared = !(err == nil && !b || val == "umask")
		case "extensions.compatobjectformat":
			c.compatFormat = true
		case "extensions.objectformat":
			c.sha256 = strings.EqualFold(val, "sha256")
		case "core.fsync":
			fsyncCore = fsyncLooseObjects(val)
			packs = fsyncPacks(val)
			c.fsyncIndex = fsyncIndex(val)
			c.fsyncReferences = fsyncReferences(val)
		case "core.autocrlf":
			// "input" and true convert; false, and a key with no value
			// (true to git: converting), are told apart as git does.
			b, err := strconv.ParseBool(val)
			c.autocrlf = !strings.Contains(entry, "\n") || !(err == nil && !b)
		case "attr.tree":
			c.attrTree = true
		case "core.attributesfile":
			c.attributesFile = val
		case "core.excludesfile":
			c.excludesFile = val
		case "core.logallrefupdates":
			c.logAllRefs = strings.ToLower(val)
			if !strings.Contains(entry, "\n") {
				c.logAllRefs = "true"
			}
		case "core.filemode":
			b, err := strconv.ParseBool(val)
			c.noFileMode = strings.Contains(entry, "\n") && err == nil && !b
		case "core.bare":
			b, err := strconv.ParseBool(val)
			c.bare = !strings.Contains(entry, "\n") || err == nil && b
		case "core.fsyncobjectfiles":
			// A key with no value ("key\0") is true.
			b, err := strconv.ParseBool(val)
			fsyncFiles = !strings.Contains(entry, "\n") || err == nil && b
		default:
			if k == "include.path" || strings.HasPrefix(k, "includeif.") {
				c.includes = true
			}
		}
	}
	c.fsyncObjects = fsyncCore || fsyncFiles
	c.fsyncPacks = packs
	return c
}

// commitFast is the fast commit of specs (vault-relative, clean, unique).
func (r *Repo) commitFast(ctx context.Context, specs []string, message string, co CommitOptions, st commitSetup) (string, error) {
	for try := 1; ; try++ {
		sha, err := r.commitFastOnce(ctx, specs, message, co, st)
		if !errors.Is(err, errHeadMoved) || try == commitTries {
			return sha, err
		}
	}
}

var errHeadMoved = errors.New("the branch moved while the commit was built")

// testHookBeforeUpdateRef, when set by a test, runs between commit-tree
// and update-ref (a test commits there as the user would).
var testHookBeforeUpdateRef func()

// gcEvery: one fast commit in gcEvery runs `git gc --auto`, as every git
// commit does (its check costs a process; a vault writes a few objects a
// commit, so this keeps the loose objects under git's threshold just as well).
const gcEvery = 20

// usedFast counts the commits made by the fast path (tests read it),
// mktreeUsed those of them whose trees went through git mktree, and
// commitsWritten those whose commit object was written here.
var usedFast, mktreeUsed, commitsWritten atomic.Int64

// blobsMade counts the blobs made here rather than by hash-object,
// treesCached the commits whose trees came from the tree cache,
// refsWritten the branch moves made here rather than by update-ref, and
// ignoreAsked the check-ignore processes.
var blobsMade, treesCached, refsWritten, ignoreAsked atomic.Int64

func (r *Repo) commitFastOnce(ctx context.Context, specs []string, message string, co CommitOptions, st commitSetup) (string, error) {
	c := st.cfg
	// The commit ends by updating the user's index: do not start while
	// another program holds its lock (git commit would refuse too).
	if err := r.waitIndexUnlocked(ctx, st.indexLock); err != nil {
		return "", err
	}

	// Where git is asked nothing (worktree.go, treecache.go, refs.go).
	gitDir, commonDir := r.gitDirs()
	store := st.objects(c.sha256)
	idLen := 20
	if c.sha256 {
		idLen = 32
	}

	// The user's index, read here beside git's answers below: it tells
	// the tracked paths from the untracked ones (check-ignore need not read
	// it) and is updated here at the end (index.go); nil leaves both to git.
	var ix *userIndex
	ixRead := make(chan struct{})
	go func() {
		defer close(ixRead)
		if p := st.indexPath(); p != "" && !st.hasHook("post-index-change") {
			var err error
			if ix, err = r.loadIndex(p, c.sha256); err != nil {
				slog.Debug("git: the index is left to git", "err", err)
			}
		}
	}()
	// What each path holds in the work tree now.
	states := make([]*pathState, len(specs))
	var present []*pathState
	for i, p := range specs {
		st := &pathState{rel: p, full: r.prefix + p}
		fi, err := os.Lstat(filepath.Join(r.dir, filepath.FromSlash(p)))
		switch {
		case err == nil && fi.Mode().IsRegular():
			st.present = true
			st.mode = "100644"
			if fi.Mode().Perm()&0o100 != 0 {
				st.mode = "100755"
			}
			st.size = fi.Size()
			present = append(present, st)
		case err == nil:
			return "", errFallback // not a plain file: let git judge it
		case !errors.Is(err, os.ErrNotExist):
			return "", err
		}
		states[i] = st
	}
	presentPaths := make([]string, len(present))
	for i, st := range present {
		presentPaths[i] = st.full
	}
	// The trees on the way to every path, as they are in HEAD.
	dirs := map[string]bool{"": true}
	for _, st := range states {
		for d := path.Dir(st.full); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	// Three questions to git that do not depend on each other, asked at
	// once (three processes in about the time of one) where they are asked
	// at all: the blobs of the present files (hash-object, which also
	// applies the repository's filters; made here when no attribute can
	// apply), HEAD and its trees on the way to the paths (cat-file; from
	// the tree cache when HEAD is a commit it knows), and which present
	// files .gitignore excludes (check-ignore, without reading the index: a
	// tracked file's answer is dropped afterwards, by the index read here,
	// and only an untracked one's answer is used below; none is when no
	// ignore rule exists).
	// A commit of many files (a move rewrites every linking note) asks
	// check-ignore afterwards, of the untracked ones only: asked of
	// thousands of tracked files it cost a move of the hub's most linked
	// note a tenth of its time.
	var (
		wg                 sync.WaitGroup
		hashErr, ignoreErr error
		ignored            map[string]bool
	)
	noRules := !r.rulesApply(st.ignoreSources(gitDir, commonDir), presentPaths)
	early := len(present) <= ignoreAtOnce
	if len(present) > 0 {
		here := store != nil && r.read != nil && !r.rulesApply(st.attributeSources(gitDir, commonDir), presentPaths)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if here {
				hashErr = r.makeBlobs(ctx, store, present)
			} else {
				hashErr = r.hashObjects(ctx, present)
			}
		}()
	}
	if noRules {
		ignored = map[string]bool{}
	} else if len(present) > 0 && early {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ignored, ignoreErr = r.ignored(ctx, present, false)
		}()
	}
	// HEAD is read with its trees. Should the branch move between the two
	// (a commit of the user's), update-ref below, which names the HEAD read
	// here as the old value, refuses, and the commit is built again.
	head, branch, trees, err := r.headTrees(ctx, gitDir, commonDir, dirs, idLen)
	if err == nil && !early && !noRules {
		var fresh []*pathState
		for _, st := range present {
			if _, ok, gerr := trees[treeDir(st.full)].get(path.Base(st.full)); gerr != nil {
				err = gerr
				break
			} else if !ok {
				fresh = append(fresh, st)
			}
		}
		if err == nil {
			ignored, ignoreErr = r.ignored(ctx, fresh, false)
		}
	}
	wg.Wait()
	<-ixRead
	if err == nil && hashErr == nil && ignoreErr == nil {
		ignored, ignoreErr = r.untrackedOnly(ctx, ignored, ix)
	}
	if err = errors.Join(err, hashErr, ignoreErr); err != nil {
		if errors.Is(err, errFallback) {
			return "", errFallback
		}
		return "", err
	}
	if c.noFileMode {
		// As git: a tracked file keeps its index entry's mode, a new one
		// is 100644, whatever the file's executable bit says.
		if ix == nil {
			return "", errFallback
		}
		for _, st := range present {
			st.mode = "100644"
			if mode, ok := ix.regularMode(st.full); ok {
				st.mode = strconv.FormatUint(uint64(mode), 8)
			}
		}
	}
	changed := false
	var changes []indexChange
	for _, st := range states {
		dir, name := treeDir(st.full), path.Base(st.full)
		cur, ok, err := trees[dir].get(name)
		if err != nil {
			return "", err
		}
		switch {
		case st.present && ignored[st.full] && !ok:
			continue
		case st.present:
			if ok && cur.typ != "blob" {
				return "", errFallback // a folder became a file: let git do it
			}
			mode, _ := strconv.ParseUint(st.mode, 8, 32)
			raw, err := hex.DecodeString(st.blob)
			if err != nil {
				return "", fmt.Errorf("git hash-object: id %q", st.blob)
			}
			// A path the commit leaves as HEAD has it still gets its index
			// entry set, as git commit does for every path it is given.
			changes = append(changes, indexChange{name: st.full, mode: uint32(mode), id: raw})
			if ok && cur.id == st.blob && cur.mode == st.mode {
				continue
			}
			trees[dir].set(name, treeEntry{mode: st.mode, typ: "blob", id: st.blob})
		case ok:
			if cur.typ != "blob" {
				return "", errFallback
			}
			trees[dir].remove(name)
			changes = append(changes, indexChange{name: st.full})
		default:
			changes = append(changes, indexChange{name: st.full})
			continue // absent and untracked
		}
		changed = true
	}
	if !changed {
		return "", ErrNothingToCommit
	}
	defer r.trees.endCommit()
	// The user's new index (the committed paths matching the commit, every
	// other entry left alone) is made and written under index.lock while
	// the trees and the commit are written and the branch moved, and put
	// in place once the branch has moved (at 100k notes the index is 10 MB
	// to hash and write: about 15 ms, off the commit's way).
	var (
		pending    *pendingIndex
		pendingErr error
		prepared   chan struct{}
	)
	if ix != nil {
		prepared = make(chan struct{})
		go func() {
			defer close(prepared)
			if pending, pendingErr = r.prepareIndex(ctx, ix, changes); pendingErr == nil {
				if pendingErr = pending.write(c.fsyncIndex); pendingErr != nil {
					pending = nil
				}
			}
		}()
	}
	// dropIndex releases the new index of a commit that did not land.
	dropIndex := func() {
		if prepared != nil {
			if <-prepared; pending != nil {
				pending.abort()
			}
		}
	}
	root, err := r.writeTrees(ctx, trees, store) // store nil: trees and commit by git
	if err != nil {
		dropIndex()
		return "", err
	}
	var commit string
	ids, idsKnown := c.idents(co)
	now := time.Now()
	if idsKnown && store != nil {
		commit, err = store.write("commit", commitBody(root, head, ids, now, withTrailer(message, co)))
		if err != nil {
			dropIndex()
			return "", err
		}
		commitsWritten.Add(1)
		r.trees.putRoot(commit, root)
	}
	if commit == "" {
		if commit, err = r.commitTree(ctx, c, co, root, head, message); err != nil {
			dropIndex()
			return "", err
		}
	}
	if testHookBeforeUpdateRef != nil {
		testHookBeforeUpdateRef()
	}
	reflogMsg := "commit: " + firstLine(message)
	err = errRefFallback
	// The branch HEAD named when it was read (checked again under the
	// locks: it must still be HEAD's, at the commit read then).
	if idsKnown && branch != "" && !st.hasHook("reference-transaction") {
		err = updateHeadRef(refUpdate{ledger: r.ledger(gitDir), gitDir: gitDir, commonDir: commonDir, branch: branch, old: head, new: commit,
			committer: ids.committerName + " <" + ids.committerEmail + ">", when: now, message: reflogMsg,
			logAll: c.logAllRefs, bare: c.bare, fsync: c.fsyncReferences})
		if err == nil {
			refsWritten.Add(1)
		}
	}
	if errors.Is(err, errRefFallback) {
		_, err = r.run(ctx, runOpts{}, "update-ref", "-m", reflogMsg, "HEAD", commit, head)
	}
	if err != nil {
		dropIndex()
		if errors.Is(err, errHeadMoved) {
			return "", errHeadMoved
		}
		if moved, _ := r.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); strings.TrimSpace(string(moved)) != head {
			return "", errHeadMoved
		}
		return "", err
	}
	defer func() {
		if usedFast.Add(1)%gcEvery == 0 {
			// What git commit does after each commit: let git pack loose
			// objects when there are many (it does nothing, quickly, otherwise).
			if _, err := r.run(ctx, runOpts{}, "gc", "--auto", "--quiet"); err != nil {
				slog.Debug("git gc --auto failed", "err", err)
			}
		}
	}()
	if prepared != nil {
		<-prepared
		err := pendingErr
		if err == nil {
			err = r.installIndex(pending)
		}
		if err == nil {
			indexWritten.Add(1)
			return commit, nil
		}
		if errors.Is(err, ErrIndexLocked) {
			slog.Warn("git: committed, but the index entries of the committed files could not be updated (git status may show them as changed until the next git add)", "err", err)
			return commit, nil
		}
		slog.Debug("git: the index update is left to git update-index", "err", err)
	}
	indexToGit.Add(1)
	if _, err := r.runLocked(ctx, runOpts{stdin: indexInfo(changes, len(head)), env: literal}, "update-index", "--index-info"); err != nil {
		slog.Warn("git: committed, but the index entries of the committed files could not be updated (git status may show them as changed until the next git add)", "err", err)
	}
	return commit, nil
}

// commitTree makes the commit object with git commit-tree.
func (r *Repo) commitTree(ctx context.Context, c repoConfig, co CommitOptions, root, head, message string) (string, error) {
	env := literal
	if name, email, ok := co.author(); ok {
		env = append([]string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email}, literal...)
	}
	var pre []string
	if !c.hasName {
		pre = append(pre, "-c", "user.name="+FallbackName)
	}
	if !c.hasEmail {
		pre = append(pre, "-c", "user.email="+FallbackEmail)
	}
	out, err := r.run(ctx, runOpts{pre: pre, stdin: withTrailer(message, co), env: env}, "commit-tree", root, "-p", head, "-F", "-")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// waitIndexUnlocked waits, with runLocked's retries, while index.lock
// exists; ErrIndexLocked when it stays.
func (r *Repo) waitIndexUnlocked(ctx context.Context, lock string) error {
	return r.retryWhileLocked(ctx, "git commit", func() bool {
		_, err := os.Lstat(lock)
		return !errors.Is(err, os.ErrNotExist)
	})
}

// treeDir is the folder of a repository path, "" for the top.
func treeDir(full string) string {
	d := path.Dir(full)
	if d == "." {
		return ""
	}
	return d
}

// headTrees is HEAD's commit id and its trees at the given folders: from
// the tree cache when HEAD, read from the files, is a commit it knows,
// else from git (readTrees). branch is the branch HEAD named in the files,
// "" when they could not be read (refs.go: the branch is then moved by git).
func (r *Repo) headTrees(ctx context.Context, gitDir, commonDir string, dirs map[string]bool, idLen int) (head, branch string, trees map[string]*tree, err error) {
	h, read := readHead(gitDir, commonDir, idLen)
	if read {
		list := make([]string, 0, len(dirs))
		for d := range dirs {
			list = append(list, d)
		}
		trees, ok, err := r.trees.trees(h.id, list, idLen)
		if err != nil {
			return "", "", nil, err
		}
		if ok {
			treesCached.Add(1)
			return h.id, h.branch, trees, nil
		}
	}
	head, trees, err = r.readTrees(ctx, dirs)
	return head, h.branch, trees, err
}

// readTrees reads HEAD's commit id and its trees at the given folders (""
// the top) with one cat-file; a folder HEAD does not have is an empty tree.
// No HEAD (an unborn branch) is errFallback.
func (r *Repo) readTrees(ctx context.Context, dirs map[string]bool) (string, map[string]*tree, error) {
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	sort.Strings(list)
	var in strings.Builder
	in.WriteString("HEAD^{commit}\n")
	for _, d := range list {
		// "HEAD:<path>" names the tree; the top is "HEAD^{tree}".
		if d == "" {
			in.WriteString("HEAD^{tree}\n")
		} else {
			in.WriteString("HEAD:" + d + "\n")
		}
	}
	out, err := r.run(ctx, runOpts{stdin: in.String(), env: literal}, "cat-file", "--batch")
	if err != nil {
		return "", nil, err
	}
	br := bufio.NewReader(bytes.NewReader(out))
	// next reads one answer: the header's fields and the body (nil when
	// the object is missing).
	next := func() ([]string, []byte, error) {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(line)
		if strings.HasSuffix(strings.TrimSpace(line), " missing") {
			return f, nil, nil
		}
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("git cat-file: unexpected answer %q", strings.TrimSpace(line))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return nil, nil, fmt.Errorf("git cat-file: size %q", f[2])
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return nil, nil, fmt.Errorf("git cat-file: %w", err)
		}
		if _, err := br.ReadByte(); err != nil {
			return nil, nil, fmt.Errorf("git cat-file: %w", err)
		}
		return f, body, nil
	}
	f, body, err := next()
	if err != nil {
		return "", nil, err
	}
	if body == nil || f[1] != "commit" {
		return "", nil, errFallback // no commit yet
	}
	head := f[0]
	// The id length of every object is the commit's: SHA-1 or SHA-256.
	idLen := len(head) / 2
	trees := make(map[string]*tree, len(list))
	for _, d := range list {
		f, body, err := next()
		if err != nil {
			return "", nil, err
		}
		if body != nil && f[1] != "tree" {
			return "", nil, errFallback // a file where a folder is wanted
		}
		trees[d] = newTree(body, idLen) // no body: a folder the commit creates
		if body != nil {
			r.trees.put(f[0], body)
			if d == "" {
				r.trees.putRoot(head, f[0])
			}
		}
	}
	return head, trees, nil
}

// writeTrees writes the changed trees bottom-up, into store when there is
// one (objects.go) and otherwise with one mktree process, and returns the
// new top tree. A folder left empty is dropped from its parent.
func (r *Repo) writeTrees(ctx context.Context, trees map[string]*tree, store *objectStore) (string, error) {
	list := make([]string, 0, len(trees))
	for d := range trees {
		list = append(list, d)
	}
	// Deepest first, so each child's id is known before its parent is written.
	sort.Slice(list, func(i, j int) bool {
		di, dj := strings.Count(list[i], "/"), strings.Count(list[j], "/")
		if list[i] == "" {
			di = -1
		}
		if list[j] == "" {
			dj = -1
		}
		if di != dj {
			return di > dj
		}
		return list[i] < list[j]
	})
	var p *batchProc
	if store == nil {
		mktreeUsed.Add(1)
		var err error
		if p, err = r.startBatch(ctx, "mktree", "--batch", "-z"); err != nil {
			return "", err
		}
		defer p.close()
	}
	var root string
	for _, d := range list {
		t := trees[d]
		body, empty, err := t.body()
		if err != nil {
			return "", err
		}
		if empty && d != "" {
			trees[treeDir(d)].remove(path.Base(d))
			continue
		}
		var id string
		if store != nil {
			if id, err = store.write("tree", body); err == nil {
				r.trees.put(id, body)
			}
		} else {
			var in string
			if in, err = t.mktreeInput(); err == nil {
				if id, err = p.ask(in); err != nil {
					err = fmt.Errorf("git mktree: %w", err)
				}
			}
		}
		if err != nil {
			return "", err
		}
		if d == "" {
			root = id
		} else {
			trees[treeDir(d)].set(path.Base(d), treeEntry{mode: "040000", typ: "tree", id: id})
		}
	}
	if root == "" {
		return "", fmt.Errorf("git mktree: no top tree")
	}
	return root, nil
}

// batchProc is a git process answering one line per request.
type batchProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
}

func (r *Repo) startBatch(ctx context.Context, args ...string) (*batchProc, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	full := append([]string{"-C", r.dir, "-c", "core.quotepath=off"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = Env()
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, &Error{Args: args, Err: err}
	}
	go func() { _ = cmd.Wait(); cancel() }()
	return &batchProc{cmd: cmd, in: in, out: bufio.NewReader(out), stderr: &stderr}, nil
}

func (p *batchProc) ask(req string) (string, error) {
	if _, err := io.WriteString(p.in, req); err != nil {
		return "", err
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	return strings.TrimSpace(line), nil
}

func (p *batchProc) close() { p.in.Close() }

// pathState is what one path to commit holds in the work tree.
type pathState struct {
	rel, full string // vault-relative, repository-relative
	present   bool
	mode      string
	size      int64
	blob      string
}

// makeBlobs writes the blobs of the present files into store, as
// hash-object -w does where no attribute applies (worktree.go), reading
// them through r.read, on every core for a commit of many files (a move);
// a file bigger than ReadLimit, or one the reader does not give
// (an attachment the gatekeeper will not read), goes to hash-object.
func (r *Repo) makeBlobs(ctx context.Context, store *objectStore, present []*pathState) error {
	var small, toGit []*pathState
	var smallBytes int64
	for _, st := range present {
		if st.size > ReadLimit {
			toGit = append(toGit, st)
		} else {
			small = append(small, st)
			smallBytes += st.size
		}
	}
	packed := false
	if len(small) >= packMin && smallBytes <= packMaxBytes {
		left, err := r.packBlobs(ctx, store, small)
		if err == nil {
			packed = true
			toGit = append(toGit, left...)
		} else {
			// Written loose below, as before.
			slog.Warn("git: the commit's blobs could not be written as a pack; writing them one by one", "err", err)
		}
	}
	if !packed {
		workers := min(runtime.GOMAXPROCS(0), 1+len(small)/32)
		errs := make([]error, workers)
		left := make([][]*pathState, workers)
		par.Run(workers, func(w int) {
			for i := w; i < len(small); i += workers {
				st := small[i]
				data, found, err := r.read(st.rel)
				if err != nil || !found || int64(len(data)) > ReadLimit {
					left[w] = append(left[w], st)
					continue
				}
				if st.blob, err = store.write("blob", data); err != nil {
					errs[w] = fmt.Errorf("git: %s: %w", st.rel, err)
					return
				}
				blobsMade.Add(1)
			}
		})
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for _, l := range left {
			toGit = append(toGit, l...)
		}
	}
	if len(toGit) > 0 {
		return r.hashObjects(ctx, toGit)
	}
	return nil
}

// packBlobs writes the blobs of the present files as one pack (pack.go),
// reading and deflating them on every core, and sets their ids; it returns
// the files the reader did not give (for hash-object). On an error nothing
// is kept and no id set.
func (r *Repo) packBlobs(ctx context.Context, store *objectStore, present []*pathState) ([]*pathState, error) {
	es := make([]packEntry, len(present))
	ok := make([]bool, len(present))
	errs := make([]error, len(present))
	workers := min(runtime.GOMAXPROCS(0), 1+len(present)/32)
	par.Run(workers, func(w int) {
		for i := w; i < len(present); i += workers {
			data, found, err := r.read(present[i].rel)
			if err != nil || !found || int64(len(data)) > ReadLimit {
				continue
			}
			es[i], errs[i] = store.packBlob(data)
			ok[i] = errs[i] == nil
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var kept []packEntry
	var left []*pathState
	seen := make(map[string]bool, len(present))
	for i, st := range present {
		switch {
		case !ok[i]:
			left = append(left, st)
		case !seen[es[i].id]: // files of the same bytes: one object
			seen[es[i].id] = true
			kept = append(kept, es[i])
		}
	}
	if len(kept) == 0 {
		return left, nil
	}
	made, err := store.writePack(kept)
	if err != nil {
		return nil, err
	}
	if err := r.seesBlobs(ctx, kept); err != nil {
		removePack(made) // only what this commit made: a pack already there stays
		return nil, err
	}
	packsWritten.Add(1)
	for i, st := range present {
		if ok[i] {
			st.blob = es[i].id
			blobsMade.Add(1)
		}
	}
	return left, nil
}

// packsWritten counts the packs written by packBlobs (tests).
var packsWritten atomic.Int64

// hashObjects writes the blobs of the given present files and sets their ids.
func (r *Repo) hashObjects(ctx context.Context, present []*pathState) error {
	var in strings.Builder
	for _, st := range present {
		in.WriteString(st.full)
		in.WriteByte('\n')
	}
	// Paths on stdin are taken from the top of the work tree.
	out, err := r.run(ctx, runOpts{stdin: in.String(), top: true}, "hash-object", "-w", "--stdin-paths")
	if err != nil {
		return err
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(present) {
		return fmt.Errorf("git hash-object: %d ids for %d files", len(ids), len(present))
	}
	for i, st := range present {
		st.blob = ids[i]
	}
	return nil
}

// ignored returns which of the given paths .gitignore excludes. Asked
// withIndex, git reads the index and never reports a tracked path; without,
// it reports the rules' answer for every path (untrackedOnly then takes out
// the tracked ones) and does not read the index, which at 100k notes cost
// it 30 ms.
func (r *Repo) ignored(ctx context.Context, states []*pathState, withIndex bool) (map[string]bool, error) {
	out := map[string]bool{}
	if len(states) == 0 {
		return out, nil
	}
	var in strings.Builder
	for _, st := range states {
		in.WriteString(st.full)
		in.WriteByte(0)
	}
	ignoreAsked.Add(1)
	args := []string{"check-ignore", "-z", "--stdin"}
	if !withIndex {
		args = append(args, "--no-index")
	}
	res, err := r.run(ctx, runOpts{stdin: in.String(), top: true}, args...)
	if err != nil {
		var ge *Error
		var ee *exec.ExitError
		if errors.As(err, &ge) && errors.As(ge.Err, &ee) && ee.ExitCode() == 1 {
			return out, nil // none is ignored
		}
		return nil, err
	}
	for _, p := range strings.Split(string(res), "\x00") {
		if p != "" {
			out[p] = true
		}
	}
	return out, nil
}

// untrackedOnly keeps of ignored (check-ignore's answer without the index)
// the paths the index does not track, as check-ignore reading the index
// answers: from the index read here, or, when there is none, by asking git
// again of those paths only (usually none).
func (r *Repo) untrackedOnly(ctx context.Context, ignored map[string]bool, ix *userIndex) (map[string]bool, error) {
	if len(ignored) == 0 {
		return ignored, nil
	}
	if ix != nil {
		for p := range ignored {
			if ix.tracked(p) {
				delete(ignored, p)
			}
		}
		return ignored, nil
	}
	again := make([]*pathState, 0, len(ignored))
	for p := range ignored {
		again = append(again, &pathState{full: p})
	}
	return r.ignored(ctx, again, true)
}
