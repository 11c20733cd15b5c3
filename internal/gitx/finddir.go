package gitx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FindGitDir finds, without running git, the git directory of the work
// tree that contains dir, as `git rev-parse --absolute-git-dir` would: the
// `.git` folder of dir or of the nearest parent that has one (a `.git` file
// of a linked work tree or submodule is followed to the folder it names),
// $GIT_DIR when set, and no search above a folder listed in
// $GIT_CEILING_DIRECTORIES. ok is false when dir is in no work tree.
//
// It is for a process that has no git program: the write lock and the
// journal of a vault live in its git directory, and they must be the same
// files for every process on the vault, whether or not it can run git
// (otherwise two servers would stop excluding each other).
func FindGitDir(dir string) (gitDir string, ok bool, err error) {
	if gd := os.Getenv("GIT_DIR"); gd != "" {
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(dir, gd)
		}
		return filepath.Clean(gd), true, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	ceilings := map[string]bool{}
	for _, c := range filepath.SplitList(os.Getenv("GIT_CEILING_DIRECTORIES")) {
		if c != "" {
			ceilings[filepath.Clean(c)] = true
		}
	}
	for cur := abs; ; {
		gd, found, err := gitDirAt(cur)
		if err != nil || found {
			return gd, found, err
		}
		parent := filepath.Dir(cur)
		if parent == cur || ceilings[parent] {
			return "", false, nil
		}
		cur = parent
	}
}

// gitDirAt reads dir/.git: a folder is the git directory, a file says
// "gitdir: PATH" (relative to dir).
func gitDirAt(dir string) (string, bool, error) {
	p := filepath.Join(dir, ".git")
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if fi.IsDir() {
		return p, true, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", false, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	target, found := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !found {
		return "", false, errors.New(p + ": not a gitdir file")
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return filepath.Clean(target), true, nil
}
