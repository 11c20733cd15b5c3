package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// After Isolate, git reads nothing of the HOME the tests started with: not
// its .gitconfig, not its global ignore file; and no identity comes from
// the environment.
func TestIsolateHidesTheMachinesConfig(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Machine User\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "git", "ignore"), []byte("*.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_AUTHOR_NAME", "From Env")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "")
	cleanup, err := Isolate()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if _, ok := os.LookupEnv("GIT_AUTHOR_NAME"); ok {
		t.Error("GIT_AUTHOR_NAME still set")
	}
	if out, err := exec.Command("git", "config", "--global", "user.name").Output(); err == nil || len(out) != 0 {
		t.Errorf("git config --global user.name: %q, %v; want nothing", out, err)
	}
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repo, "status", "--porcelain").Output()
	if err != nil || !strings.Contains(string(out), "a.md") {
		t.Errorf("git status: %q, %v; want a.md untracked (the machine's ignore file not read)", out, err)
	}
}

// A process started by an isolated one (it inherits the environment)
// reuses its configuration: no second folder, which a helper process that
// is killed would leave behind.
func TestIsolateInheritedMakesNoFolder(t *testing.T) {
	t.Setenv(dirVar, "")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	first, err := Isolate()
	if err != nil {
		t.Fatal(err)
	}
	defer first()
	dir, conf := os.Getenv(dirVar), os.Getenv("GIT_CONFIG_GLOBAL")
	second, err := Isolate()
	if err != nil {
		t.Fatal(err)
	}
	second()
	if os.Getenv(dirVar) != dir || os.Getenv("GIT_CONFIG_GLOBAL") != conf {
		t.Errorf("the second Isolate changed the configuration: %s %s", os.Getenv(dirVar), os.Getenv("GIT_CONFIG_GLOBAL"))
	}
	if _, err := os.Stat(conf); err != nil {
		t.Errorf("the second cleanup removed the first's folder: %v", err)
	}
}
