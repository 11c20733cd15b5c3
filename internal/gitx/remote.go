package gitx

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// A vault whose storage of record is a git remote (the team server's
// replicas): cloning it, fetching its branch, pushing to it fast-forward
// only, and putting the work tree back to what the remote holds. Every call
// is bounded by the timeout and never prompts; credentials come from git's
// own credential helpers and SSH agent, never from a URL.

// Origin is the name every clone gives its remote.
const Origin = "origin"

// The patterns are compiled on first use: a process start does not pay for them.
var (
	scpLike    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/]`) })
	branchName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$`) })
	fullHash   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`) })
)

// CheckRemoteURL accepts the remotes a team runs: https://, http://,
// ssh://, git:// and file:// URLs, the scp-like user@host:path form, and
// an absolute path to a repository on this machine. A URL holding a
// password is refused (credentials belong to a credential helper, not to a
// URL stored in a database), as are git's command transports (ext::, fd::)
// and anything that would read as an option.
func CheckRemoteURL(remote string) error {
	switch {
	case remote == "":
		return errors.New("empty")
	case strings.HasPrefix(remote, "-"):
		return errors.New("must not start with '-'")
	case strings.ContainsAny(remote, "\x00\n\r\t "):
		return errors.New("must not hold spaces or control characters")
	case strings.Contains(remote, "::"):
		return errors.New("git's transport helpers (ext::, fd::, ...) are not allowed")
	case filepath.IsAbs(remote):
		return nil
	case scpLike().MatchString(remote):
		return nil
	}
	u, err := url.Parse(remote)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "http", "ssh", "git":
		if u.Host == "" {
			return errors.New("no host")
		}
	case "file":
	default:
		return fmt.Errorf("scheme %q: use https://, ssh://, git://, file://, user@host:path or an absolute path", u.Scheme)
	}
	if _, has := u.User.Password(); has {
		return errors.New("holds a password: put credentials in a git credential helper (or use SSH keys), never in the URL")
	}
	return nil
}

// CheckBranch accepts a plain branch name.
func CheckBranch(name string) error {
	if !branchName().MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".lock") || strings.Contains(name, "//") {
		return fmt.Errorf("branch %q: use letters, digits, '.', '_', '-' and '/'", name)
	}
	return nil
}

// RedactURL removes any user information from a URL, for messages.
func RedactURL(s string) string { return credInURL().ReplaceAllString(s, "$1") }

// RedactErr is err with the user information of any URL in its message
// removed (RedactURL), still wrapping err: errors.Is and errors.As see
// what it wraps (a *PushError, a context's error), the message never
// shows a credential. Nil for nil.
func RedactErr(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: RedactURL(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// RemoteHeads lists the branches of a remote (name -> commit) and the
// branch its HEAD names ("" when it has none, as an empty repository).
func RemoteHeads(ctx context.Context, remote string) (map[string]string, string, error) {
	r := &Repo{dir: os.TempDir(), Timeout: DefaultTimeout}
	out, err := r.Run(ctx, "ls-remote", "--symref", "--", remote, "HEAD", "refs/heads/*")
	if err != nil {
		return nil, "", err
	}
	heads := map[string]string{}
	head := ""
	for _, line := range strings.Split(string(out), "\n") {
		left, ref, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if target, sym := strings.CutPrefix(left, "ref: "); sym && ref == "HEAD" {
			head = strings.TrimPrefix(target, "refs/heads/")
			continue
		}
		if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
			heads[name] = left
		}
	}
	if _, ok := heads[head]; !ok {
		head = ""
	}
	return heads, head, nil
}

// RemoteUnbornHead returns the branch that the HEAD of an empty remote
// names, which git ls-remote does not show: a clone learns it (protocol
// v2's "unborn", git 2.31 and later on both ends), so an empty bare
// repository is cloned into a temporary folder and its HEAD read there.
// "" when the remote does not say (an older git on either end: the clone
// then takes this side's default branch, a name chosen here so that it
// is recognised).
func RemoteUnbornHead(ctx context.Context, remote string) (string, error) {
	tmp, err := os.MkdirTemp("", "vaultmcp-head-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	const unknown = "vaultmcp-remote-head-unknown"
	r := &Repo{dir: tmp, Timeout: DefaultTimeout}
	if _, err := r.run(ctx, runOpts{pre: []string{"-c", "init.defaultBranch=" + unknown}}, "clone", "--quiet", "--bare", "--", remote, "probe"); err != nil {
		return "", err
	}
	out, err := (&Repo{dir: filepath.Join(tmp, "probe"), Timeout: DefaultTimeout}).Run(ctx, "symbolic-ref", "--quiet", "HEAD")
	if err != nil {
		return "", err
	}
	head, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "refs/heads/")
	if !ok || head == unknown || CheckBranch(head) != nil {
		return "", nil
	}
	return head, nil
}

// Clone clones branch of remote into dir (which must not exist or be
// empty) and opens it.
func Clone(ctx context.Context, remote, branch, dir string) (*Repo, error) {
	if err := CheckBranch(branch); err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	r := &Repo{dir: parent, Timeout: 5 * DefaultTimeout}
	if _, err := r.Run(ctx, "clone", "--quiet", "--no-hardlinks", "--origin", Origin, "--branch", branch, "--", remote, dir); err != nil {
		return nil, err
	}
	return Open(ctx, dir)
}

// SetOrigin makes url the repository's remote Origin.
func (r *Repo) SetOrigin(ctx context.Context, remote string) error {
	if _, err := r.Run(ctx, "remote", "get-url", Origin); err == nil {
		_, err = r.Run(ctx, "remote", "set-url", Origin, "--", remote)
		return err
	}
	_, err := r.Run(ctx, "remote", "add", Origin, "--", remote)
	return err
}

// trackingRef is where the remote's branch is kept locally.
func trackingRef(branch string) string { return "refs/remotes/" + Origin + "/" + branch }

// Fetch brings the remote's branch into its tracking ref and returns the
// commit it names.
func (r *Repo) Fetch(ctx context.Context, branch string) (string, error) {
	if err := CheckBranch(branch); err != nil {
		return "", err
	}
	if _, err := r.Run(ctx, "fetch", "--quiet", "--no-tags", Origin, "+refs/heads/"+branch+":"+trackingRef(branch)); err != nil {
		return "", err
	}
	return r.Tracking(ctx, branch)
}

// Tracking is the commit of the remote's branch as last fetched or pushed.
func (r *Repo) Tracking(ctx context.Context, branch string) (string, error) {
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", trackingRef(branch)+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// PushTo pushes rev to the remote's branch, fast-forward only (never
// forced), and on success moves the tracking ref to it. A failure is a
// *PushError: PushRejected when the remote has commits rev does not.
func (r *Repo) PushTo(ctx context.Context, rev, branch string) error {
	if err := CheckBranch(branch); err != nil {
		return err
	}
	sha := rev
	if !fullHash().MatchString(rev) {
		var err error
		if sha, err = r.ResolveCommit(ctx, rev); err != nil {
			return err
		}
	}
	if _, err := r.Run(ctx, "push", "--quiet", "--no-verify", Origin, sha+":refs/heads/"+branch); err != nil {
		return classifyPushErr(ctx, err)
	}
	_, err := r.Run(ctx, "update-ref", trackingRef(branch), sha)
	return err
}

// classifyPushErr makes a failed push a *PushError.
func classifyPushErr(ctx context.Context, err error) error {
	pe := &PushError{Err: err}
	var ge *Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		pe.Kind, pe.Detail = PushNetwork, "timed out"
	case ctx.Err() != nil:
		pe.Detail = "cancelled: " + ctx.Err().Error()
	case errors.As(err, &ge):
		pe.Kind, pe.Detail = classifyPush(ge.Stderr)
	default:
		pe.Detail = err.Error()
	}
	return pe
}

// ResetHard puts the branch, the index and the work tree at rev: what a
// replica does to hold exactly what the remote holds.
func (r *Repo) ResetHard(ctx context.Context, rev string) error {
	_, err := r.run(ctx, runOpts{top: true}, "reset", "--quiet", "--hard", rev)
	return err
}

// Head is the commit HEAD names.
func (r *Repo) Head(ctx context.Context) (string, error) { return r.head(ctx) }

// IsAncestor says whether commit a is b or an ancestor of b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.Run(ctx, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	var ge *Error
	if errors.As(err, &ge) && exitCode(ge.Err) == 1 {
		return false, nil
	}
	return false, err
}

// Clean says whether the work tree and index match HEAD (untracked files
// aside).
func (r *Repo) Clean(ctx context.Context) (bool, error) {
	out, err := r.run(ctx, runOpts{top: true}, "status", "--porcelain=v1", "--untracked-files=no")
	if err != nil {
		return false, err
	}
	return len(strings.TrimSpace(string(out))) == 0, nil
}

// EmptyCommit makes a commit on top of parent with parent's tree and the
// message, without touching any branch, the index or the work tree, and
// returns it.
func (r *Repo) EmptyCommit(ctx context.Context, parent, message string) (string, error) {
	if err := checkRev(parent); err != nil {
		return "", err
	}
	out, err := r.run(ctx, runOpts{pre: r.identityOpts(ctx)}, "commit-tree", parent+"^{tree}", "-p", parent, "-m", message)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CurrentBranch is the branch HEAD is on ("" when detached).
func (r *Repo) CurrentBranch(ctx context.Context) string {
	out, err := r.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// RenameBranch renames the current branch (an unborn one included).
func (r *Repo) RenameBranch(ctx context.Context, name string) error {
	if err := CheckBranch(name); err != nil {
		return err
	}
	if _, err := r.head(ctx); err == nil {
		_, err = r.Run(ctx, "branch", "-M", name)
		return err
	}
	_, err := r.Run(ctx, "symbolic-ref", "HEAD", "refs/heads/"+name)
	return err
}

// ChangedPaths lists the paths (relative to the vault folder) that differ
// between two commits.
func (r *Repo) ChangedPaths(ctx context.Context, from, to string) ([]string, error) {
	if err := checkRev(from); err != nil {
		return nil, err
	}
	if err := checkRev(to); err != nil {
		return nil, err
	}
	out, err := r.Run(ctx, "diff", "--no-renames", "--name-only", "--relative", "-z", from, to, "--")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// CommitWithTrailer returns the newest commit reachable from rev whose
// message carries the idempotency trailer with that value, or "".
func (r *Repo) CommitWithTrailer(ctx context.Context, rev, value string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := r.Run(ctx, "log", "--fixed-strings", "--grep="+IdempotencyTrailer+": "+value, "--format=%H", "-n", "1", rev, "--")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// exitCode is the exit status of a git that ran and failed (-1 otherwise).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
