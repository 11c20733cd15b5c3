package vault

import (
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestListFolderThroughItsFolders: a folder's list (found through the
// folders that hold notes) is the whole list's notes under that folder,
// nested folders included and a sibling with the same beginning left out,
// before and after writes change the folders.
func TestListFolderThroughItsFolders(t *testing.T) {
	files := with(learnVault, map[string]string{
		"02-wiki/go/deep/inner.md":  "# Inner\n\nDeep.\n",
		"02-wiki/golang/sibling.md": "# Sibling\n\nNot under go.\n",
		"02-wiki/go/diagram.png":    "not a note",
	})
	_, s := openLearn(t, files, learnOpts{})
	ctx := t.Context()
	check := func(step string) {
		t.Helper()
		all, err := s.List(ctx, api.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, folder := range []string{"02-wiki/go", "02-wiki/go/", "02-wiki", "02-wiki/go/deep", "02-wiki/golang"} {
			var want []string
			for _, n := range all.Notes {
				if strings.HasPrefix(n.Path, strings.TrimSuffix(folder, "/")+"/") {
					want = append(want, n.Path)
				}
			}
			got, err := s.List(ctx, api.ListRequest{Folder: folder})
			if err != nil {
				t.Fatalf("%s: %s: %v", step, folder, err)
			}
			var paths []string
			for _, n := range got.Notes {
				paths = append(paths, n.Path)
			}
			if !slices.Equal(paths, want) || got.Total != len(want) {
				t.Errorf("%s: folder %s: %q (total %d), want %q", step, folder, paths, got.Total, want)
			}
		}
	}
	check("at the start")
	if _, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/deep/new.md", Content: "# New\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/deep/inner.md", To: "02-wiki/golang/inner.md"}); err != nil {
		t.Fatal(err)
	}
	check("after a write and a move")
}
