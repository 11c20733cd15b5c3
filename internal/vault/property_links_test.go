package vault

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// propVault has notes linking to auth-guard only through properties.
var propVault = map[string]string{
	"02-wiki/nestjs/auth-guard.md": "---\ntype: wiki\n---\n# Auth guard\n\nThe guard validates tokens.\n",
	"02-wiki/nestjs/nestjs-moc.md": "---\ntype: moc\nrelated:\n  - \"[[auth-guard]]\"\n---\n# NestJS\n\n## Notes\n\n- [[bullmq]] — queues\n",
	"02-wiki/nestjs/bullmq.md":     "---\ntype: wiki\nrelated: \"[[auth-guard]]\"\nsee: ['[[auth-guard#Setup|guard]]']\n---\n# Bullmq worker\n\nZygomorphic quorum queues carry the user context.\n",
	"03-projects/potentia.md":      "---\ntype: project\ncreated: 2026-08-20\n---\n# Potentia\n\nNo link here.\n",
	"04-daily/2026-08-20.md":       "---\ntype: daily\n---\n## Captures\n",
}

// TestPropertyLinksCounted: links in properties are backlinks, graph edges
// and graph expansion paths; a date naming a daily note is none of those.
func TestPropertyLinksCounted(t *testing.T) {
	s := openTest(t, writeVault(t, propVault), false)
	ctx := context.Background()
	bl, err := s.Backlinks(ctx, api.BacklinksRequest{Path: "02-wiki/nestjs/auth-guard.md"})
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, b := range bl.Backlinks {
		from = append(from, b.Path)
	}
	if bl.Total != 2 || bl.Links != 3 || !slices.Equal(from, []string{"02-wiki/nestjs/bullmq.md", "02-wiki/nestjs/nestjs-moc.md"}) {
		t.Errorf("backlinks %+v", bl)
	}
	if bl.Backlinks[0].Lines[0] != 3 || bl.Backlinks[1].Lines[0] != 4 {
		t.Errorf("backlink lines %+v", bl.Backlinks)
	}
	if daily, err := s.Backlinks(ctx, api.BacklinksRequest{Path: "04-daily/2026-08-20.md"}); err != nil || daily.Total != 0 {
		t.Errorf("a date property counted as a link to the daily note: %+v %v", daily, err)
	}
	g, err := s.Graph(ctx, api.GraphRequest{})
	if err != nil {
		t.Fatal(err)
	}
	edges := 0
	for _, e := range g.Edges {
		if e.To == "02-wiki/nestjs/auth-guard.md" {
			edges++
		}
	}
	if edges != 2 { // one edge per linking note
		t.Errorf("%d edges to auth-guard: %+v", edges, g.Edges)
	}
	res := search(t, s, api.SearchRequest{Query: "zygomorphic quorum", Limit: 10})
	found := false
	for _, h := range res.Results {
		found = found || h.Path == "02-wiki/nestjs/auth-guard.md" && h.ViaGraph
	}
	if !found {
		t.Errorf("auth-guard not reached via graph: %+v", res.Results)
	}
	n, err := s.GetNote(ctx, api.NoteRequest{Path: "02-wiki/nestjs/bullmq.md"})
	if err != nil || n.LinksTotal != 2 {
		t.Errorf("get_note links: %+v %v", n, err)
	}
}

// TestMoveRewritesPropertyLinks: vault_move keeps property links on their
// note, quoting and form kept, and the MOC upkeep ignores a frontmatter
// list item.
func TestMoveRewritesPropertyLinks(t *testing.T) {
	dir := writeVault(t, propVault)
	gitInit(t, dir)
	s := openTest(t, dir, false)
	res, err := s.Move(context.Background(), api.MoveRequest{From: "02-wiki/nestjs/auth-guard.md", To: "02-wiki/nestjs/jwt-guard.md"})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "02-wiki/nestjs/bullmq.md"); !strings.Contains(got, "related: \"[[jwt-guard]]\"\nsee: ['[[jwt-guard#Setup|guard]]']\n") {
		t.Errorf("bullmq.md:\n%s", got)
	}
	moc := read(t, dir, "02-wiki/nestjs/nestjs-moc.md")
	if !strings.Contains(moc, "related:\n  - \"[[jwt-guard]]\"\n") || !strings.Contains(moc, "- [[bullmq]] — queues\n") {
		t.Errorf("MOC:\n%s", moc)
	}
	if !strings.Contains(res.Diff, "+related: \"[[jwt-guard]]\"") {
		t.Errorf("diff:\n%s", res.Diff)
	}
	bl, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: "02-wiki/nestjs/jwt-guard.md"})
	if err != nil || bl.Total != 2 {
		t.Errorf("backlinks after the move: %+v %v", bl, err)
	}
}
