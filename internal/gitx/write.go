package gitx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path"
	"strings"
	"time"
)

// TrailerKey and TrailerValue mark the commits this server makes: every
// commit message ends with the trailer line "Vaultmcp-Commit: yes", which is
// how Undo tells our commits from the user's.
const (
	TrailerKey   = "Vaultmcp-Commit"
	TrailerValue = "yes"
)

// Fallback identity used when the repository has no user.name / user.email
// configured, so that a commit never fails for lack of an identity.
const (
	FallbackName  = "vaultmcp"
	FallbackEmail = "vaultmcp@localhost"
)

// Errors of the write side.
var (
	// ErrNothingToCommit: none of the given paths differs from HEAD.
	ErrNothingToCommit = errors.New("nothing to commit")
	// ErrIndexLocked: another program kept .git/index.lock through all retries.
	ErrIndexLocked = errors.New("the git index is locked by another program (index.lock exists; if no git program is running, remove it)")
	// ErrNotOurs: the commit was not made by this server (no trailer).
	ErrNotOurs = errors.New("commit was not made by vaultmcp")
	// ErrUnknownCommit: the revision does not name a commit of the repository.
	ErrUnknownCommit = errors.New("unknown commit")
	// ErrRevertConflict: the revert conflicted with later changes; it was
	// aborted and nothing changed.
	ErrRevertConflict = errors.New("revert conflicts with later changes (aborted, nothing changed)")
	// ErrLocalChanges: git refused to start because of the user's staged
	// changes or unstaged changes in files the operation touches.
	ErrLocalChanges = errors.New("uncommitted local changes are in the way (commit, unstage or stash them first)")
	// ErrInProgress: a merge, revert or cherry-pick of the user is in
	// progress; we do not touch it.
	ErrInProgress = errors.New("a merge, revert or cherry-pick is in progress in the repository")
)

// literal makes every path argument a literal path, never a glob or magic
// pathspec (note names may contain '*', '?' or '[').
var literal = []string{"GIT_LITERAL_PATHSPECS=1"}

// cleanPath checks that p is a vault-relative path and returns it in clean
// "/"-separated form.
func cleanPath(p string) (string, error) {
	q := strings.ReplaceAll(p, "\\", "/")
	if q == "" || strings.HasPrefix(q, "/") || strings.ContainsRune(q, 0) {
		return "", fmt.Errorf("invalid vault path %q", p)
	}
	q = path.Clean(q)
	if q == "." || q == ".." || strings.HasPrefix(q, "../") {
		return "", fmt.Errorf("path %q leaves the vault", p)
	}
	return q, nil
}

// runLocked runs git and, while the failure is a held index.lock, retries a
// few times with a short pause. Only operations that fail before changing
// anything when the lock is held go through here.
func (r *Repo) runLocked(ctx context.Context, o runOpts, args ...string) ([]byte, error) {
	var out []byte
	var err error
	if lerr := r.retryWhileLocked(ctx, "git "+args[0], func() bool {
		out, err = r.run(ctx, o, args...)
		return err != nil && isIndexLocked(err)
	}); lerr != nil {
		return out, lerr
	}
	return out, err
}

// retryWhileLocked calls try until it says another program's index.lock
// was not in its way, pausing lockWait between tries, at most lockRetries
// times (5 and 200 ms unless a test set them); ErrIndexLocked, after what,
// when the lock stays or ctx ends first.
func (r *Repo) retryWhileLocked(ctx context.Context, what string, try func() (locked bool)) error {
	retries, wait := r.lockRetries, r.lockWait
	if retries <= 0 {
		retries = 5
	}
	if wait <= 0 {
		wait = 200 * time.Millisecond
	}
	for attempt := 0; ; attempt++ {
		if !try() {
			return nil
		}
		if attempt == retries {
			return fmt.Errorf("%s: %w (tried %d times)", what, ErrIndexLocked, attempt+1)
		}
		slog.Debug("git index.lock held by another program; retrying", "op", what, "attempt", attempt+1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w: %w", what, ErrIndexLocked, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// identityOpts returns -c options supplying the fallback identity for the
// parts (name, email) the repository's configuration lacks. Identity from
// GIT_AUTHOR_* / GIT_COMMITTER_* environment variables still wins over these.
func (r *Repo) identityOpts(ctx context.Context) []string {
	out, _ := r.Run(ctx, "config", "--get-regexp", `^user\.(name|email)$`)
	var hasName, hasEmail bool
	for _, line := range strings.Split(string(out), "\n") {
		key, val, _ := strings.Cut(line, " ")
		if strings.TrimSpace(val) == "" {
			continue
		}
		switch strings.ToLower(key) {
		case "user.name":
			hasName = true
		case "user.email":
			hasEmail = true
		}
	}
	var opts []string
	if !hasName {
		opts = append(opts, "-c", "user.name="+FallbackName)
	}
	if !hasEmail {
		opts = append(opts, "-c", "user.email="+FallbackEmail)
	}
	return opts
}

// IdempotencyTrailer is the trailer key that records the client's
// idempotency key of the write a commit made (CommitOptions.IdempotencyKey).
const IdempotencyTrailer = "Vaultmcp-Idempotency-Key"

// LinksRewrittenTrailer and NotesRewrittenTrailer record, in the commit of
// a move, how many links it rewrote and in how many other notes, so that an
// answer rebuilt from the commit (after a crash) says what the move did.
const (
	LinksRewrittenTrailer = "Vaultmcp-Links-Rewritten"
	NotesRewrittenTrailer = "Vaultmcp-Notes-Rewritten"
)

// CommitOptions are the extras of one commit.
type CommitOptions struct {
	// AuthorName and AuthorEmail, when set, make the commit's author (the
	// committer stays the repository's identity).
	AuthorName, AuthorEmail string
	// IdempotencyKey, when set, is recorded as a trailer line.
	IdempotencyKey string
}

// author returns the commit author the options name (the fallback email
// when only a name is given), and false when they name none.
func (co CommitOptions) author() (name, email string, ok bool) {
	name = trailerValue(co.AuthorName)
	if name == "" {
		return "", "", false
	}
	email = trailerValue(co.AuthorEmail)
	if email == "" {
		email = FallbackEmail
	}
	return name, email, true
}

// trailerValue makes s safe as one trailer value: one line, no control
// characters, bounded.
func trailerValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.TrimSpace(s)
}

// withTrailer returns message with the trailer lines appended: as their own
// paragraph, or joined to a trailer block the message already ends with.
func withTrailer(message string, o CommitOptions) string {
	msg := strings.TrimRight(strings.ReplaceAll(message, "\r\n", "\n"), " \t\n")
	if msg == "" {
		msg = "vaultmcp change"
	}
	trailer := TrailerKey + ": " + TrailerValue
	if k := trailerValue(o.IdempotencyKey); k != "" {
		trailer += "\n" + IdempotencyTrailer + ": " + k
	}
	paras := strings.Split(msg, "\n\n")
	last := paras[len(paras)-1]
	if len(paras) > 1 && isTrailerBlock(last) {
		return msg + "\n" + trailer + "\n"
	}
	return msg + "\n\n" + trailer + "\n"
}

// isTrailerBlock reports whether every line of para is "Key: value".
func isTrailerBlock(para string) bool {
	for _, line := range strings.Split(para, "\n") {
		key, _, ok := strings.Cut(line, ":")
		if !ok || key == "" || strings.TrimLeft(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
}

// hasTrailer reports whether a commit message carries our trailer in its
// final paragraph.
func hasTrailer(message string) bool {
	msg := strings.TrimRight(strings.ReplaceAll(message, "\r\n", "\n"), " \t\n")
	paras := strings.Split(msg, "\n\n")
	if len(paras) < 2 {
		return false
	}
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		key, val, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(key), TrailerKey) && strings.EqualFold(strings.TrimSpace(val), TrailerValue) {
			return true
		}
	}
	return false
}

// Commit commits exactly paths (vault-relative; new, modified or deleted) with
// message plus the trailer, and nothing else: other staged changes of the
// user stay staged and unstaged ones stay in the work tree (git commit --only
// semantics; the committed paths' index entries end up equal to the commit).
// Paths that are unchanged, unknown to git and absent, or ignored by
// .gitignore are left out; when nothing is left, ErrNothingToCommit.
// The repository's identity is used; parts of it that are not configured are
// filled in with "vaultmcp <vaultmcp@localhost>". Where the repository has no
// commit hook and no commit signing, the commit is built with plumbing
// (plumbing.go) and never reads the rest of the index, so its cost does not
// grow with the vault; otherwise it is `git commit`, and the user's hooks run
// and signing applies. Returns the new commit's full hash.
func (r *Repo) Commit(ctx context.Context, paths []string, message string) (string, error) {
	return r.CommitWith(ctx, paths, message, CommitOptions{})
}

// CommitWith is Commit with an author and trailers (see CommitOptions).
func (r *Repo) CommitWith(ctx context.Context, paths []string, message string, co CommitOptions) (string, error) {
	want := make(map[string]string) // repository-relative -> vault-relative
	var specs []string
	for _, p := range paths {
		c, err := cleanPath(p)
		if err != nil {
			return "", err
		}
		if _, dup := want[r.prefix+c]; dup {
			continue
		}
		want[r.prefix+c] = c
		specs = append(specs, c)
	}
	if len(specs) == 0 {
		return "", ErrNothingToCommit
	}
	if st := r.commitSetup(ctx); !st.cfg.sign && !st.hasHooks() {
		sha, err := r.commitFast(ctx, specs, message, co, st)
		if !errors.Is(err, errFallback) {
			return sha, err
		}
	}
	// What git thinks of each path. GIT_OPTIONAL_LOCKS=0: status must not
	// take the index lock just to refresh stat data.
	out, err := r.run(ctx, runOpts{env: append([]string{"GIT_OPTIONAL_LOCKS=0"}, literal...)},
		append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--"}, specs...)...)
	if err != nil {
		return "", err
	}
	var add, commit []string
	seen := make(map[string]bool)
	for _, e := range parseStatus(out) {
		rel, ok := want[e.path]
		if !ok || seen[rel] {
			continue
		}
		switch e.xy {
		case "!!":
			slog.Debug("not committing a path ignored by .gitignore", "path", rel)
			continue
		case "??":
			add = append(add, rel)
		}
		seen[rel] = true
		commit = append(commit, rel)
	}
	if len(commit) == 0 {
		return "", ErrNothingToCommit
	}
	if len(add) > 0 {
		if _, err := r.runLocked(ctx, runOpts{env: literal}, append([]string{"add", "--"}, add...)...); err != nil {
			return "", err
		}
	}
	args := []string{"commit", "--only", "--quiet", "--no-edit", "--cleanup=whitespace", "--file=-", "--"}
	args = append(args, commit...)
	env := literal
	if name, email, ok := co.author(); ok {
		env = append([]string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email}, literal...)
	}
	if out, err := r.runLocked(ctx, runOpts{pre: r.identityOpts(ctx), stdin: withTrailer(message, co), env: env}, args...); err != nil {
		if len(add) > 0 {
			// Leave the user's index as it was: unstage the new files again.
			if _, rerr := r.runLocked(ctx, runOpts{env: literal}, append([]string{"reset", "--quiet", "--"}, add...)...); rerr != nil {
				slog.Warn("git: could not unstage new files after a failed commit", "err", rerr)
			}
		}
		if nothingToCommit(err, out) {
			return "", ErrNothingToCommit
		}
		return "", err
	}
	return r.head(ctx)
}

// head returns the full hash of HEAD.
func (r *Repo) head(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// statusEntry is one record of `git status --porcelain=v1 -z`.
type statusEntry struct {
	xy   string
	path string // repository-relative
}

func parseStatus(out []byte) []statusEntry {
	var entries []statusEntry
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 4 {
			continue
		}
		e := statusEntry{xy: rec[:2], path: rec[3:]}
		entries = append(entries, e)
		if e.xy[0] == 'R' || e.xy[0] == 'C' {
			// The source of a rename or copy follows as its own field.
			i++
			if i < len(recs) && recs[i] != "" {
				entries = append(entries, statusEntry{xy: e.xy, path: recs[i]})
			}
		}
	}
	return entries
}

// exited reports whether err is git having run and exited with a failure
// status (as opposed to not starting, being killed or timing out).
func exited(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() > 0
}

// checkRev refuses revisions that could be taken for options or that carry
// characters no revision has.
func checkRev(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, " \t\r\n\x00") || len(rev) > 256 {
		return fmt.Errorf("%w: %q", ErrUnknownCommit, rev)
	}
	return nil
}

// ResolveCommit turns a revision (full or short hash, HEAD~1, a branch) into
// the full hash of the commit it names; ErrUnknownCommit when it names none.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		if exited(err) {
			return "", fmt.Errorf("%w: %q", ErrUnknownCommit, rev)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// message returns the full message of a commit.
func (r *Repo) message(ctx context.Context, hash string) (string, error) {
	out, err := r.Run(ctx, "log", "-1", "--format=%B", hash, "--")
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// IsOurs reports whether commit (any revision) names a commit that carries
// the trailer. A revision that names no commit gives false and an error
// wrapping ErrUnknownCommit.
func (r *Repo) IsOurs(ctx context.Context, commit string) (bool, error) {
	hash, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return false, err
	}
	msg, err := r.message(ctx, hash)
	if err != nil {
		return false, err
	}
	return hasTrailer(msg), nil
}

// inProgress reports whether a revert, cherry-pick or merge is under way.
func (r *Repo) inProgress(ctx context.Context) bool {
	for _, ref := range []string{"REVERT_HEAD", "CHERRY_PICK_HEAD", "MERGE_HEAD"} {
		if _, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", ref); err == nil {
			return true
		}
	}
	return false
}

// Revert reverts one commit made by this server (git revert), refusing any
// other with ErrNotOurs. The revert commit carries the trailer too, so an undo
// can itself be undone. A conflicting revert is aborted (git revert --abort,
// which keeps the user's unrelated local changes) and reported as
// ErrRevertConflict. Staged changes, or unstaged ones in the files concerned,
// make git refuse: ErrLocalChanges. A commit already reverted:
// ErrNothingToCommit. Returns the new commit's hash and the vault-relative
// paths the revert changed (paths outside the vault folder are not listed).
func (r *Repo) Revert(ctx context.Context, commit string) (string, []string, error) {
	hash, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return "", nil, err
	}
	msg, err := r.message(ctx, hash)
	if err != nil {
		return "", nil, err
	}
	if !hasTrailer(msg) {
		return "", nil, fmt.Errorf("%s: %w", short(hash), ErrNotOurs)
	}
	if r.inProgress(ctx) {
		return "", nil, ErrInProgress
	}
	before, _ := r.head(ctx)
	ident := r.identityOpts(ctx)
	out, err := r.runLocked(ctx, runOpts{pre: ident}, "revert", "--no-edit", hash)
	if err != nil {
		switch {
		case r.inProgress(ctx):
			// Ours to clean up: none was in progress before we started.
			if _, aerr := r.Run(ctx, "revert", "--abort"); aerr != nil {
				return "", nil, fmt.Errorf("%w; and git revert --abort failed: %w", ErrRevertConflict, aerr)
			}
			return "", nil, fmt.Errorf("reverting %s: %w", short(hash), ErrRevertConflict)
		case nothingToCommit(err, out):
			return "", nil, fmt.Errorf("reverting %s (already reverted?): %w", short(hash), ErrNothingToCommit)
		case wouldOverwriteLocal(err):
			return "", nil, fmt.Errorf("reverting %s: %w", short(hash), ErrLocalChanges)
		}
		return "", nil, err
	}
	// Put the trailer on the revert commit: rewrite its message only
	// (--only without paths leaves whatever the user has staged alone).
	revMsg, err := r.message(ctx, "HEAD")
	if err == nil {
		_, err = r.runLocked(ctx, runOpts{pre: ident, stdin: withTrailer(revMsg, CommitOptions{})},
			"commit", "--amend", "--only", "--quiet", "--no-verify", "--cleanup=whitespace", "--file=-")
	}
	if err != nil {
		// The revert itself is done; only the mark is missing.
		slog.Warn("git: the revert commit could not be marked as made by vaultmcp", "err", err)
	}
	sha, err := r.head(ctx)
	if err != nil {
		return "", nil, err
	}
	if sha == before {
		return "", nil, fmt.Errorf("reverting %s: %w", short(hash), ErrNothingToCommit)
	}
	out, err = r.Run(ctx, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--relative", sha, "--")
	if err != nil {
		return sha, nil, err
	}
	var changed []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			changed = append(changed, p)
		}
	}
	return sha, changed, nil
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// Committed reports whether path's current work-tree content equals its
// content in HEAD (after git's clean filters, as git itself compares): false
// when the file is untracked, modified, missing, or the repository has no
// commit yet.
func (r *Repo) Committed(ctx context.Context, p string) (bool, error) {
	c, err := cleanPath(p)
	if err != nil {
		return false, err
	}
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD:./"+c)
	if err != nil {
		if exited(err) {
			return false, nil // not in HEAD (or no HEAD)
		}
		return false, err
	}
	inHead := strings.TrimSpace(string(out))
	out, err = r.run(ctx, runOpts{env: literal}, "hash-object", "--", c)
	if err != nil {
		if exited(err) {
			return false, nil // missing or unreadable: not the committed bytes
		}
		return false, err
	}
	return strings.TrimSpace(string(out)) == inHead, nil
}

// HeadHolds reports, for each vault-relative path of files, whether HEAD
// holds exactly those bytes there (its mode aside; nil bytes: HEAD has no
// file there). It is told in process, without a git process when HEAD's
// trees are in the tree cache (a commit of this server made HEAD): the
// blob ids are computed here and compared with HEAD's. A path held is
// certain (the same id is the same bytes); one not held may still be one
// git would call unchanged (a clean filter, line-ending conversion), so a
// caller that must know asks git about those. ok is false when HEAD's
// trees could not be read (no HEAD, a path git must judge).
func (r *Repo) HeadHolds(ctx context.Context, files map[string][]byte) (held map[string]bool, ok bool) {
	st := r.commitSetup(ctx)
	gitDir, commonDir := r.gitDirs()
	idLen := 20
	if st.cfg.sha256 {
		idLen = 32
	}
	full := make(map[string]string, len(files))
	dirs := map[string]bool{"": true}
	for p := range files {
		c, err := cleanPath(p)
		if err != nil {
			return nil, false
		}
		f := r.prefix + c
		full[p] = f
		for d := path.Dir(f); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	_, _, trees, err := r.headTrees(ctx, gitDir, commonDir, dirs, idLen)
	if err != nil {
		return nil, false
	}
	held = make(map[string]bool, len(files))
	for p, data := range files {
		cur, found, err := trees[treeDir(full[p])].get(path.Base(full[p]))
		if err != nil {
			return nil, false
		}
		if data == nil {
			held[p] = !found
			continue
		}
		held[p] = found && cur.typ == "blob" && cur.id == objectID("blob", data, st.cfg.sha256)
	}
	return held, true
}

// GitDir returns the absolute path of the repository's git directory.
func (r *Repo) GitDir(ctx context.Context) (string, error) {
	if r.gitDir != "" {
		return r.gitDir, nil
	}
	out, err := r.Run(ctx, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
