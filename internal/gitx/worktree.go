package gitx

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Two of git's answers the fast commit can give itself when nothing could
// change them, each saving a git process (5-6 ms here, and three processes
// at once on two cores cost a 100k-note write about 20 ms):
//
//   - a file's blob id, asked of `git hash-object`, is the hash of its bytes
//     when no attribute can apply to it (no clean filter, no end-of-line
//     conversion, no working-tree-encoding): no .gitattributes file in the
//     folders from the top of the work tree down to it, none in
//     $GIT_DIR/info/attributes, core.attributesFile, the default global
//     attributes file or the system one, no attr.tree or GIT_ATTR_SOURCE,
//     and core.autocrlf unset or false;
//   - a new file is not ignored when no ignore rule exists at all: no rule
//     in a .gitignore of the folders down to it, in $GIT_DIR/info/exclude,
//     core.excludesFile or the default global ignore file.
//
// A file holding only blank lines and comments has no rule. Anything else
// — a rule anywhere on the way, a file that cannot be read — asks git as
// before: the answers are never guessed. The files of the vault (the ones
// committed, the rule files in its folders) are read through the vault's
// gatekeeper (Repo.SetReader); without it git reads them.

// ReadLimit is the largest file whose blob is made here, and so what a
// FileReader need read of a file; a bigger one (an attachment a move
// carries) goes to hash-object, which streams it.
const ReadLimit = 8 << 20

// ruleSources are the files of one kind of rules: the repository-wide ones
// and the per-folder file name.
type ruleSources struct {
	files   []string // read for every path
	perDir  string   // ".gitignore" or ".gitattributes"
	unknown bool     // a source that cannot be told: always ask git
}

// attributeSources are the attribute files that could apply to a work
// tree file, or unknown when git must be asked.
func (s commitSetup) attributeSources(gitDir, commonDir string) ruleSources {
	c := s.cfg
	if c.attrTree || c.autocrlf || commonDir == "" {
		return ruleSources{unknown: true}
	}
	if _, ok := os.LookupEnv("GIT_ATTR_SOURCE"); ok {
		return ruleSources{unknown: true}
	}
	src := ruleSources{perDir: ".gitattributes", files: infoFiles(gitDir, commonDir, "attributes")}
	global, ok := userConfigFile(c.attributesFile, "attributes")
	if !ok {
		return ruleSources{unknown: true}
	}
	if global != "" {
		src.files = append(src.files, global)
	}
	if os.Getenv("GIT_ATTR_NOSYSTEM") == "" {
		src.files = append(src.files, s.attrSystem...)
	}
	return src
}

// ignoreSources are the ignore files that could exclude a new work tree
// file, or unknown when git must be asked.
func (s commitSetup) ignoreSources(gitDir, commonDir string) ruleSources {
	if commonDir == "" {
		return ruleSources{unknown: true}
	}
	src := ruleSources{perDir: ".gitignore", files: infoFiles(gitDir, commonDir, "exclude")}
	global, ok := userConfigFile(s.cfg.excludesFile, "ignore")
	if !ok {
		return ruleSources{unknown: true}
	}
	if global != "" {
		src.files = append(src.files, global)
	}
	return src
}

// infoFiles are the files called name in the info folder of the common git
// folder and, in a linked work tree, of its own git folder too (both are
// read: which one git reads has changed between versions).
func infoFiles(gitDir, commonDir, name string) []string {
	files := []string{filepath.Join(commonDir, "info", name)}
	if gitDir != "" && gitDir != commonDir {
		files = append(files, filepath.Join(gitDir, "info", name))
	}
	return files
}

// userConfigFile is the global file git reads for name ("attributes",
// "ignore"): the configured one (a leading ~/ is the home folder), else
// $XDG_CONFIG_HOME/git/name, else ~/.config/git/name; "" when there is
// none to read, false when it cannot be told.
func userConfigFile(configured, name string) (string, bool) {
	if configured != "" {
		if rest, ok := strings.CutPrefix(configured, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", false
			}
			return filepath.Join(home, rest), true
		}
		if strings.HasPrefix(configured, "~") || !filepath.IsAbs(configured) {
			return "", false // ~user, or relative to git's own folder
		}
		return configured, true
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", name), true
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "git", name), true
	}
	return "", true
}

// rulesApply reports whether any rule of src could apply to the work tree
// files at rels (repository-relative, "/"-separated): true when a source
// has a rule or cannot be read. A rule file in the vault's folders is read
// through r.read; one in a folder above the vault, outside it, directly.
func (r *Repo) rulesApply(src ruleSources, rels []string) bool {
	if src.unknown {
		return true
	}
	for _, f := range src.files {
		if hasRules(f) {
			return true
		}
	}
	seen := map[string]bool{}
	for _, rel := range rels {
		for d := path.Dir(rel); ; d = path.Dir(d) {
			if d == "." {
				d = ""
			}
			if !seen[d] {
				seen[d] = true
				if r.ruleFileHasRules(path.Join(d, src.perDir)) {
					return true
				}
			}
			if d == "" {
				break
			}
		}
	}
	return false
}

// ruleFileHasRules reports whether the rule file at full (repository-
// relative) holds a rule, or cannot be read.
func (r *Repo) ruleFileHasRules(full string) bool {
	if vrel, ok := strings.CutPrefix(full, r.prefix); ok {
		if r.read == nil {
			return true
		}
		data, found, err := r.read(vrel)
		return err != nil || found && rulesIn(data)
	}
	return hasRules(filepath.Join(r.topDir(), filepath.FromSlash(full)))
}

// hasRules reports whether the file at p (outside the vault: in the git
// folder, the user's or the system's) holds a rule; a missing file holds
// none; one that cannot be read, or is not a plain file, counts as holding
// one.
func hasRules(p string) bool {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false
	}
	return err != nil || rulesIn(data)
}

// rulesIn reports whether a rule file's bytes hold a rule: a line other
// than spaces alone or a comment (a "#" first; git reads a line starting
// with any other blank as a pattern).
func rulesIn(data []byte) bool {
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(bytes.TrimRight(line, " ")) > 0 && line[0] != '#' {
			return true
		}
	}
	return false
}
