package vault

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// treeOf lists every path under dir (folders too), .git left out.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestWritePathBounds is the write of issue 9: a path of 2,046 folders
// (which took 17 s and left the folders behind) and the other paths past a
// limit are refused by every write with INVALID_PATH naming the field and
// the limit, and nothing appears on disk or in git.
func TestWritePathBounds(t *testing.T) {
	dir, s := gitVault(t)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, dir)
	cases := map[string]string{
		strings.Repeat("a/", 2046) + "x.md":                      strconv.Itoa(vaultfs.MaxPathBytes),
		strings.Repeat("a/", vaultfs.MaxPathSegments) + "x.md":   strconv.Itoa(vaultfs.MaxPathSegments),
		strings.Repeat("n", vaultfs.MaxSegmentBytes-2) + ".md":   strconv.Itoa(vaultfs.MaxSegmentBytes),
		strings.Repeat("d", vaultfs.MaxSegmentBytes+1) + "/x.md": strconv.Itoa(vaultfs.MaxSegmentBytes),
	}
	for p, limit := range cases {
		errs := map[string]error{}
		_, errs["write"] = s.WriteNote(ctx, api.WriteRequest{Path: p, Content: "# x\n"})
		_, errs["edit"] = s.EditNote(ctx, api.EditRequest{Path: p, OldText: "a", NewText: "b"})
		_, errs["move to"] = s.Move(ctx, api.MoveRequest{From: "02-wiki/db/pool.md", To: p})
		_, errs["move from"] = s.Move(ctx, api.MoveRequest{From: p, To: "02-wiki/db/x.md"})
		_, errs["delete"] = s.Delete(ctx, api.DeleteRequest{Path: p})
		_, errs["get"] = s.GetNote(ctx, api.NoteRequest{Path: p})
		_, errs["backlinks"] = s.Backlinks(ctx, api.BacklinksRequest{Path: p})
		_, errs["history"] = s.History(ctx, api.HistoryRequest{Path: p})
		for op, err := range errs {
			var ae *api.Error
			if api.CodeOf(err) != string(vaultfs.CodeInvalidPath) || !strings.Contains(err.Error(), limit) {
				t.Errorf("%s %.40q…: %v; want INVALID_PATH naming %s", op, p, err, limit)
			} else if !errors.As(err, &ae) || ae.Field == "" || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v does not name the field on one line", op, err)
			}
		}
	}
	if after := treeOf(t, dir); !slices.Equal(before, after) {
		t.Errorf("refused writes changed the vault: %d paths before, %d after", len(before), len(after))
	}
	if st := gitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after refused writes:\n%s", st)
	}
}
