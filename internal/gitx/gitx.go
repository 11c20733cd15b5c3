// Package gitx runs the git command line for the vault: every call bounded by
// a timeout, never prompting for credentials, never writing to our stdout.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds every git call.
const DefaultTimeout = 30 * time.Second

// ErrNotRepo is returned by Open when the folder is not inside a git work tree.
var ErrNotRepo = errors.New("not a git repository")

// ErrNoGit is returned when the git executable cannot be found.
var ErrNoGit = errors.New("git executable not found")

// Repo is a git work tree containing the vault folder.
type Repo struct {
	dir     string // the vault folder; git runs with -C dir
	prefix  string // dir relative to top, "/"-separated with a trailing "/", or ""
	setups  setupCache
	index   indexCache // the index as this Repo last wrote it (index.go)
	trees   treeCache  // trees and top trees this Repo read or wrote (treecache.go)
	read    FileReader // reads the vault's files for the fast commit; nil: git reads them
	gitDir  string     // the git directory, as Open found it ("" if not told)
	Timeout time.Duration

	// locks lists the git lock files this process holds (lockledger.go).
	ledgerOnce sync.Once
	locks      *lockLedger

	// lockRetries and lockWait bound the retries when another program holds
	// the index lock; zero means the defaults (5 retries, 200 ms apart).
	lockRetries int
	lockWait    time.Duration
}

// Open finds the git work tree that contains dir.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	// A folder with no .git in it or above it is in no work tree unless the
	// environment names one: that is told without starting git (a process
	// the first answer of a server on such a vault would wait for).
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_WORK_TREE") == "" {
		if _, ok, err := FindGitDir(dir); err == nil && !ok {
			return nil, fmt.Errorf("%w: no .git folder in the vault folder or above it", ErrNotRepo)
		}
	}
	r := &Repo{dir: dir, Timeout: DefaultTimeout}
	out, err := r.Run(ctx, "rev-parse", "--show-toplevel", "--show-prefix", "--absolute-git-dir")
	if err != nil {
		// Asked alone, so that a git directory git cannot tell is GitDir's
		// error (the write lock's place), not taken for no repository.
		if out, err = r.Run(ctx, "rev-parse", "--show-toplevel", "--show-prefix"); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotRepo, err)
		}
	}
	// --show-toplevel makes git refuse a folder outside a work tree (a bare
	// repository, .git itself); the prefix (an empty line at the top) and
	// the git directory, which the write lock needs next, are kept.
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 1 {
		r.prefix = lines[1]
	}
	if len(lines) == 3 {
		r.gitDir = lines[2]
	}
	return r, nil
}

// FileReader reads a file of the vault folder (vault-relative path) for
// the fast commit: the bytes of a file it commits, and the .gitignore and
// .gitattributes files in the vault's folders; found is false when there is
// no such file. It is the vault's gatekeeper (vaultfs): this package opens
// no file of the vault itself.
type FileReader func(rel string) (data []byte, found bool, err error)

// SetReader gives the fast commit its way of reading the vault's files.
// Without one, git reads them: the blobs come from git hash-object, and a
// rule file in the vault counts as holding rules (git is asked).
func (r *Repo) SetReader(read FileReader) { r.read = read }

// topDir is the top of the work tree: the vault folder less its prefix.
func (r *Repo) topDir() string {
	if r.prefix == "" {
		return r.dir
	}
	return filepath.Join(r.dir, strings.Repeat(".."+string(filepath.Separator), strings.Count(r.prefix, "/")))
}

// Dir is the folder git runs in.
func (r *Repo) Dir() string { return r.dir }

// Error is a failed git call: the subcommand and git's own first line of stderr.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := firstLine(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.Args[0], msg)
}

func (e *Error) Unwrap() error { return e.Err }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Env is the environment of every git call: no prompts, no pager, no editor,
// stable output.
func Env() []string {
	env := os.Environ()
	return append(env,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GCM_INTERACTIVE=never",
		"GIT_PAGER=cat",
		"GIT_EDITOR=true",
		"LC_ALL=C",
	)
}

// Run runs git with args in the vault folder, bounded by the timeout, stdin
// closed, and returns its stdout.
func (r *Repo) Run(ctx context.Context, args ...string) ([]byte, error) {
	return r.run(ctx, runOpts{}, args...)
}

// runOpts are the extras of one internal git call.
type runOpts struct {
	stdin string   // fed to git's stdin when non-empty
	env   []string // added to Env()
	pre   []string // global options before the subcommand (not shown in errors)
	top   bool     // run at the top of the work tree, not in the vault folder
}

func (r *Repo) run(ctx context.Context, o runOpts, args ...string) ([]byte, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir := r.dir
	if o.top {
		dir = r.topDir()
	}
	full := append([]string{"-C", dir, "-c", "core.quotepath=off", "-c", "color.ui=false"}, o.pre...)
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(Env(), o.env...)
	if o.stdin != "" {
		cmd.Stdin = strings.NewReader(o.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %s: %w", timeout, ctx.Err())
		}
		return stdout.Bytes(), &Error{Args: args, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// Commit is one entry of a note's history.
type Commit struct {
	Hash    string
	Date    time.Time
	Author  string
	Subject string
}

// Log returns the commits that touched path (vault-relative), newest first,
// following renames, at most limit.
func (r *Repo) Log(ctx context.Context, path string, limit int) ([]Commit, error) {
	return r.log(ctx, "", path, limit)
}

// LogBefore is Log of the history before commit (a commit id): the commits
// reachable from its first parent.
func (r *Repo) LogBefore(ctx context.Context, commit, path string, limit int) ([]Commit, error) {
	if !IsCommitID(commit) {
		return nil, fmt.Errorf("gitx: %q is not a commit id", commit)
	}
	return r.log(ctx, commit+"^", path, limit)
}

// IsCommitID reports whether s is 4 to 64 hexadecimal digits, of either
// case: a commit id as a write's answer or a log shows it, abbreviated or
// whole, never an option or a revision expression.
func IsCommitID(s string) bool {
	return len(s) >= 4 && len(s) <= 64 && isHex(strings.ToLower(s))
}

func (r *Repo) log(ctx context.Context, rev, path string, limit int) ([]Commit, error) {
	if limit <= 0 {
		limit = 20
	}
	// The path is a note's name, never a glob: "[a].md" must not also
	// list the commits of a.md, nor "*.md" those of every note.
	// Fields and commits are separated by NUL, the one byte no field can
	// hold: a subject may contain any other (U+001E and U+001F included),
	// and a separator it could hold would let a commit message make up
	// versions that no commit made.
	args := []string{"log", "--follow", "-z", fmt.Sprintf("-n%d", limit), "--format=%H%x00%aI%x00%an%x00%s"}
	if rev != "" {
		args = append(args, rev)
	}
	out, err := r.run(ctx, runOpts{env: literal}, append(args, "--", path)...)
	if err != nil {
		// A repository without any commit yet has no history at all.
		if noCommitsYet(err) {
			return nil, nil
		}
		return nil, err
	}
	return parseLog(out), nil
}

// logFields is the number of NUL-separated fields of one commit in Log's
// output.
const logFields = 4

func parseLog(out []byte) []Commit {
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var commits []Commit
	for len(f) >= logFields {
		t, _ := time.Parse(time.RFC3339, f[1])
		commits = append(commits, Commit{Hash: f[0], Date: t, Author: f[2], Subject: strings.TrimSpace(f[3])})
		f = f[logFields:]
	}
	return commits
}
