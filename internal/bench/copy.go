package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// copyTree copies the vault at src into dst (which must not exist), leaving
// out src's own .git folder; symbolic links are copied as links.
func copyTree(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if d.Name() == ".git" && p != src {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target)
		}
		return nil // sockets, FIFOs, devices: not part of a vault
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// gitInit makes dir a git repository with everything in it committed, with
// a local identity, so that the writes measured commit as they would for a
// user.
func gitInit(ctx context.Context, dir string) error {
	steps := [][]string{
		{"init", "-q"},
		{"config", "user.name", "vaultmcp bench"},
		{"config", "user.email", "bench@vaultmcp.invalid"},
		{"config", "commit.gpgsign", "false"},
		{"add", "-A"},
		// Without git's automatic collection: the copy's one large commit
		// (10,000 notes and more) would start it in the background, where
		// it competed with the measurements for the CPU and its packing of
		// the refs could hold the branch's lock when a measured write
		// updated it (a run saw the 10k vault's move not committed). The
		// copy is packed here instead, as a repository in use would be.
		{"-c", "gc.auto=0", "-c", "maintenance.auto=false", "commit", "-q", "--no-verify", "-m", "vault copied for vaultmcp bench"},
		{"-c", "gc.auto=0", "gc", "-q"},
	}
	for _, args := range steps {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		cmd := exec.CommandContext(cctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
