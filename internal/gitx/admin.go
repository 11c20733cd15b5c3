package gitx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The git of setting repositories up, outside any vault's writes: a team
// server's new project (an empty repository, an imported folder, a cloned
// one), its backups. Each run is bounded by AdminTimeout and never
// prompts; a process git started that keeps its output open (a filter,
// ssh) does not hold it past the bound.

// AdminTimeout bounds each git run of this file (a clone or an import of a
// large folder takes longer than a write's commit). A variable for the
// tests.
var AdminTimeout = 5 * DefaultTimeout

// Admin runs git with args in dir ("" the current folder) and returns its
// standard output; an error says which git command failed and what git
// wrote to its standard error.
func Admin(ctx context.Context, dir string, args ...string) (string, error) {
	out, stderr, err := adminRun(ctx, dir, nil, args)
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr))
	}
	return out, nil
}

// adminRun runs git with the options pre and then args in dir.
func adminRun(ctx context.Context, dir string, pre, args []string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, AdminTimeout)
	defer cancel()
	full := pre
	if dir != "" {
		full = append([]string{"-C", dir}, pre...)
	}
	cmd := exec.CommandContext(ctx, "git", append(full, args...)...)
	cmd.Env = Env()
	cmd.WaitDelay = 2 * time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %s: %w", AdminTimeout, ctx.Err())
		}
		return out.String(), errb.String(), err
	}
	return out.String(), errb.String(), nil
}

// Init makes dir (and its parents) and a git repository in it.
func Init(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, err := Admin(ctx, dir, "init", "--quiet")
	return err
}

// CommitAll commits everything in the work tree dir (git add -A), with the
// fallback identity when the repository has none, hooks not run;
// allowEmpty commits when nothing changed too.
func CommitAll(ctx context.Context, dir, message string, allowEmpty bool) error {
	if _, err := Admin(ctx, dir, "add", "-A"); err != nil {
		return err
	}
	args := []string{"commit", "--quiet", "--no-verify", "-m", message}
	if allowEmpty {
		args = append(args, "--allow-empty")
	}
	ident := []string{"-c", "user.name=" + FallbackName, "-c", "user.email=" + FallbackEmail}
	if out, stderr, err := adminRun(ctx, dir, ident, args); err != nil {
		return fmt.Errorf("git commit: %w: %s", err, strings.TrimSpace(out+stderr))
	}
	return nil
}

// CloneCommitted clones the git repository src into dst, without a
// remote, its branch at the commit at ("" for the branch's last): what is
// committed, not the work tree's changes (Uncommitted counts them).
func CloneCommitted(ctx context.Context, src, dst, at string) error {
	args := []string{"clone", "--quiet", "--no-hardlinks"}
	if at != "" {
		args = append(args, "--no-checkout") // checked out at at, once
	}
	if _, err := Admin(ctx, "", append(args, "--", src, dst)...); err != nil {
		return err
	}
	if at != "" {
		if _, err := Admin(ctx, dst, "reset", "--quiet", "--hard", at); err != nil {
			return err
		}
	}
	_, err := Admin(ctx, dst, "remote", "remove", "origin")
	return err
}

// Uncommitted counts the changes in the work tree of the repository dir
// that are not committed (0 when git cannot tell).
func Uncommitted(ctx context.Context, dir string) int {
	if st, err := Admin(ctx, dir, "status", "--porcelain"); err == nil && strings.TrimSpace(st) != "" {
		return len(strings.Split(strings.TrimSpace(st), "\n"))
	}
	return 0
}
