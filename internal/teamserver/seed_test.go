package teamserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// The first versions of a new project's notes name the commit they are in:
// a vault whose HEAD cannot be read is an error, not versions with no id.
func TestSeedFilesNeedsHead(t *testing.T) {
	ctx := context.Background()
	d, err := OpenData(ctx, t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := teamstore.Project{ID: teamstore.NewID(), Name: "plain", CreatedAt: time.Now()}
	if err := d.Store.AddProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // no git repository
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := d.seedFiles(ctx, p, dir); err == nil {
		t.Errorf("seedFiles without a HEAD recorded %d note(s) and no error", n)
	}
	files, err := d.Store.LiveFiles(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 0 {
		t.Errorf("%d file(s) recorded without a version id", len(files))
	}
}
