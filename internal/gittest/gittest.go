// Package gittest gives a package's tests a git that reads nothing of the
// machine it runs on: no global or system configuration (a user's
// commit.gpgsign, core.hooksPath, init.defaultBranch or identity would
// change what the tests see, and reading them reads files outside the
// repository), no global ignore or attributes file, and no repository or
// identity from the environment. HOME is left alone: the go command the
// tests of cmd/ and bench run keeps its caches and settings. vaultmcp's own
// state folder (XDG_STATE_HOME: the journal of a vault in no repository)
// goes to the same new folder, so the binaries the tests run keep nothing
// in the user's.
//
// A package whose tests run git calls Run from its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(gittest.Run(m)) }
//
// GIT_CONFIG_GLOBAL needs git 2.32 or later.
package gittest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// vars are the environment variables that point git at a repository, a
// configuration or an identity; Isolate unsets them.
var vars = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_SYSTEM",
	"GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
}

// dirVar names the folder of the configuration Isolate made, for the
// processes the isolated one starts.
const dirVar = "GITTEST_DIR"

// Isolate gives git, for the whole process and the git processes it
// starts, an empty global configuration of its own (in a new folder, with
// empty global ignore and attributes files, which git would otherwise read
// from XDG_CONFIG_HOME or HOME even without a global configuration), no
// system configuration, and none of the variables above. The returned
// function removes the folder.
//
// A process started by an isolated one (a test binary run again as a
// helper, and maybe killed) inherits its configuration: Isolate then
// makes no folder of its own, and its cleanup does nothing.
func Isolate() (cleanup func(), err error) {
	cleanup = func() {}
	dir := os.Getenv(dirVar)
	if _, err := os.Stat(filepath.Join(dir, "gitconfig")); dir == "" || err != nil {
		if dir, err = newConfig(); err != nil {
			return nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
	}
	os.Setenv(dirVar, dir)
	os.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(dir, "gitconfig"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	for _, k := range vars {
		os.Unsetenv(k)
	}
	return cleanup, nil
}

// newConfig makes a folder with an empty global configuration of git's
// (its ignore and attributes files in the folder, empty too).
func newConfig() (string, error) {
	dir, err := os.MkdirTemp("", "gittest-")
	if err != nil {
		return "", fmt.Errorf("gittest: %w", err)
	}
	ignore, attrs, conf := filepath.Join(dir, "ignore"), filepath.Join(dir, "attributes"), filepath.Join(dir, "gitconfig")
	text := fmt.Sprintf("[core]\n\texcludesFile = %s\n\tattributesFile = %s\n", filepath.ToSlash(ignore), filepath.ToSlash(attrs))
	for name, data := range map[string]string{ignore: "", attrs: "", conf: text} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("gittest: %w", err)
		}
	}
	return dir, nil
}

// Run runs m's tests isolated (see Isolate) and returns their exit code.
func Run(m *testing.M) int {
	cleanup, err := Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	return m.Run()
}
