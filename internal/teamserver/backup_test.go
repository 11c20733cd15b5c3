package teamserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A backup that fails half-way (the second vault cannot be read, after the
// database and the first vault are copied) leaves neither its folder nor
// the one it was made in; a backup into an empty folder replaces it.
func TestBackupCutShortLeavesNothing(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	parent := t.TempDir()
	dest := filepath.Join(parent, "backup")
	other := e.vaultDir(e.other)
	if err := os.Rename(other, other+".aside"); err != nil {
		t.Fatal(err)
	}
	_, err := e.data.Backup(ctx, dest)
	if err == nil || !strings.Contains(err.Error(), "project other") {
		t.Fatalf("backup with a vault missing: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a backup cut short left %v", entries)
	}
	if err := os.Rename(other+".aside", other); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := e.data.Backup(ctx, dest)
	if err != nil || len(rep.Vaults) != 2 {
		t.Fatalf("backup into an empty folder: %+v %v", rep, err)
	}
	for _, p := range []string{"team.db", "vaults/" + e.ex.ID + "/.git", "vaults/" + e.other.ID + "/.git"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("the backup has no %s: %v", p, err)
		}
	}
	if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the backup's folder: %v %v, want mode 0700", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("beside the backup: %v", entries)
	}
}
