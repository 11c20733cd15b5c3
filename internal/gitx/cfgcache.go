package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// What the fast commit asks git before each commit — the configuration
// (identity, signing, hooks path), the hooks folder, the index lock's path —
// changes only when a configuration file or the environment does, and each
// answer costs a git process (10-20 ms on a loaded machine, a fifth of a
// write). They are kept per repository and asked again only when the
// signature of what they depend on changes: the size and modification time
// of every configuration file git reads (the repository's, the global and
// XDG ones, the system one) and the environment variables that move or
// replace them. A configuration that includes other files (include.path,
// includeIf) is never cached: its inputs are not all known here.

// commitSetup is the cached answer.
type commitSetup struct {
	sig       string
	cfg       repoConfig
	hooksDir  string // "" when it could not be told
	indexLock string
	objDir    string // the loose objects' folder, "" when it could not be told
	// attrSystem is the system attributes file git reads, as git var
	// tells it (git 2.42 and later), or the usual places of one.
	attrSystem []string
}

// objects is where the fast commit writes its trees itself, nil when they
// must go through mktree (objects.go says when).
func (s commitSetup) objects(sha256 bool) *objectStore {
	if s.objDir == "" || s.cfg.shared || s.cfg.compatFormat {
		return nil
	}
	return &objectStore{dir: s.objDir, sha256: sha256, fsync: s.cfg.fsyncObjects, fsyncPack: s.cfg.fsyncPacks}
}

type setupCache struct {
	mu     sync.Mutex
	dirs   []string // the git dir and the common dir, asked once
	setup  *commitSetup
	asks   int // how many times the setup was asked of git (tests)
	noDirs bool
}

// configEnv are the environment variables that change which configuration
// git reads, or where the index is.
var configEnv = []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
	"GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"}

// setupSignature is the signature of the inputs, or "" when it cannot be
// made (then nothing is cached).
func (r *Repo) setupSignature(ctx context.Context) string {
	c := &r.setups
	if c.dirs == nil && !c.noDirs {
		out, err := r.Run(ctx, "rev-parse", "--absolute-git-dir", "--git-common-dir")
		lines := strings.Fields(string(out))
		if err != nil || len(lines) != 2 {
			c.noDirs = true
		} else {
			common := lines[1]
			if !filepath.IsAbs(common) {
				common = filepath.Join(r.dir, common)
			}
			c.dirs = []string{lines[0], filepath.Clean(common)}
		}
	}
	if c.noDirs {
		return ""
	}
	var b strings.Builder
	for _, k := range configEnv {
		v, ok := os.LookupEnv(k)
		fmt.Fprintf(&b, "%s=%t:%s\x00", k, ok, v)
	}
	files := []string{filepath.Join(c.dirs[0], "config"), filepath.Join(c.dirs[1], "config"), filepath.Join(c.dirs[0], "config.worktree"),
		"/etc/gitconfig", "/usr/local/etc/gitconfig"}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if v := os.Getenv("XDG_CONFIG_HOME"); v != "" {
		files = append(files, filepath.Join(v, "git", "config"))
	}
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if v := os.Getenv(k); v != "" {
			files = append(files, v)
		}
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			fmt.Fprintf(&b, "%s:-\x00", f)
			continue
		}
		fmt.Fprintf(&b, "%s:%d:%d\x00", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}

// commitSetup returns the configuration, hooks folder and index lock path
// for a commit, from the cache when nothing they depend on changed.
func (r *Repo) commitSetup(ctx context.Context) commitSetup {
	c := &r.setups
	c.mu.Lock()
	defer c.mu.Unlock()
	sig := r.setupSignature(ctx)
	if sig != "" && c.setup != nil && c.setup.sig == sig {
		return *c.setup
	}
	c.asks++
	s := commitSetup{sig: sig, cfg: r.config(ctx)}
	dir := s.cfg.hooksPath
	if dir == "" {
		if out, err := r.Run(ctx, "rev-parse", "--git-path", "hooks"); err == nil {
			dir = strings.TrimSpace(string(out))
		}
	}
	if dir != "" {
		if strings.HasPrefix(dir, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				dir = filepath.Join(home, dir[2:])
			}
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(r.dir, dir)
		}
	}
	s.hooksDir = dir
	if out, err := r.Run(ctx, "rev-parse", "--git-path", "index.lock", "--git-path", "objects"); err == nil {
		if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) == 2 {
			abs := func(p string) string {
				if !filepath.IsAbs(p) {
					return filepath.Join(r.dir, p)
				}
				return p
			}
			s.indexLock, s.objDir = abs(lines[0]), abs(lines[1])
		}
	}
	s.attrSystem = []string{"/etc/gitattributes", "/usr/local/etc/gitattributes", "/opt/homebrew/etc/gitattributes"}
	if out, err := r.Run(ctx, "var", "GIT_ATTR_SYSTEM"); err == nil && strings.TrimSpace(string(out)) != "" {
		s.attrSystem = []string{strings.TrimSpace(string(out))}
	}
	if sig != "" && !s.cfg.includes && s.indexLock != "" {
		c.setup = &s
	} else {
		c.setup = nil
	}
	return s
}

// hasHook reports whether the named hook is installed; true when the hooks
// folder is not known.
func (s commitSetup) hasHook(name string) bool {
	if s.hooksDir == "" {
		return true
	}
	fi, err := os.Stat(filepath.Join(s.hooksDir, name))
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// gitDirs are the git folder and the common one (the same but in a linked
// work tree), as commitSetup asked them; "" when not known.
func (r *Repo) gitDirs() (gitDir, commonDir string) {
	c := &r.setups
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.dirs) != 2 {
		return "", ""
	}
	return c.dirs[0], c.dirs[1]
}

// hasHooks reports whether any hook that `git commit` runs is installed
// (an executable file in the hooks folder); true when the folder is not
// known (the safe path).
func (s commitSetup) hasHooks() bool {
	if s.hooksDir == "" {
		return true
	}
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"} {
		if s.hasHook(h) {
			return true
		}
	}
	return false
}
