package vault

import (
	"cmp"
	"context"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/msgcat"
)

// TestCatalogueInStep: every text in both languages, none empty, the same
// format verbs in the same order.
func TestCatalogueInStep(t *testing.T) {
	for _, bad := range catalogue.Check() {
		t.Error(bad)
	}
}

// TestMessagesFollowLang: the vault's own warnings and refusals are in the
// language of Options.Lang (VAULT_LANG), as the rest of the tool output
// is; English without it, whatever language the vault's notes are in.
func TestMessagesFollowLang(t *testing.T) {
	files := map[string]string{
		"01-maps/go-moc.md":   "---\ntipo: moc\n---\n# Go\n",
		"02-wiki/go/retry.md": "---\ntipo: wiki\n---\n# Retry\n\nUse backoff.\n",
	}
	for _, c := range []struct {
		lang                                  string
		noGit, refused, badTag, row           string
		badYAML, emptyKey, samePath, commitID string
		offsetMin, offsetPast, moveFolder     string
		folder                                string
	}{
		{"pt", "o cofre não é um repositório git", "não pode ser apagada: é um mapa de conteúdo",
			`"a b": uma tag é uma palavra só`, "não encontrado em 02-wiki/go/retry.md",
			"content: o bloco de frontmatter não é YAML válido", "frontmatter: as chaves não podem ser vazias", "to: é o mesmo caminho que from",
			"version: precisa ser o id de um commit",
			"offset: precisa ser 0 ou mais", "offset: 999 passa do fim da nota", "from: 02-wiki/go é uma pasta; vault_move move uma nota por vez", `folder: nenhuma nota está em "02-wiki/Go" (você quis dizer 02-wiki/go?)`},
		{"pt-BR", "o cofre não é um repositório git", "não pode ser apagada: é um mapa de conteúdo",
			`"a b": uma tag é uma palavra só`, "não encontrado em 02-wiki/go/retry.md",
			"content: o bloco de frontmatter não é YAML válido", "frontmatter: as chaves não podem ser vazias", "to: é o mesmo caminho que from",
			"version: precisa ser o id de um commit",
			"offset: precisa ser 0 ou mais", "offset: 999 passa do fim da nota", "from: 02-wiki/go é uma pasta; vault_move move uma nota por vez", `folder: nenhuma nota está em "02-wiki/Go" (você quis dizer 02-wiki/go?)`},
		{"", "the vault is not a git repository", "cannot be deleted: it is a map of content",
			`"a b": a tag is one word`, "not found in 02-wiki/go/retry.md",
			"content: the frontmatter block is not valid YAML", "frontmatter: keys must not be empty", "to: is the same path as from",
			"version: must be a commit id",
			"offset: must be 0 or more", "offset: 999 is past the end of the note", "from: 02-wiki/go is a folder; vault_move moves one note at a time", `folder: no note lies under "02-wiki/Go" (did you mean 02-wiki/go?)`},
	} {
		// The language comes from the vault's options, or from the call's
		// context (api.WithLang: a team server's client) over a vault in the
		// other language.
		for _, viaCtx := range []bool{false, true} {
			ctx := context.Background()
			vaultLang := c.lang
			if viaCtx {
				vaultLang = "pt"
				if msgcat.Base(c.lang) == "pt" {
					vaultLang = "en"
				}
				ctx = api.WithLang(ctx, cmp.Or(c.lang, "en"))
			}
			// Not a git repository: the write's warning says so.
			_, s := openLearn(t, files, learnOpts{lang: vaultLang, noGit: true})
			res, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/new.md", Content: "# New\n"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), c.noGit) {
				t.Errorf("lang %q (from the context: %v): warnings %q, want %q", c.lang, viaCtx, res.Warnings, c.noGit)
			}
			// In git: a refusal, a field's refusal and a failed edit.
			_, s = openLearn(t, files, learnOpts{lang: vaultLang})
			for _, call := range []struct {
				want string
				fn   func() error
			}{
				{c.refused, func() error {
					_, err := s.Delete(ctx, api.DeleteRequest{Path: "01-maps/go-moc.md"})
					return err
				}},
				{c.badTag, func() error {
					_, err := s.Learn(ctx, api.LearnRequest{Title: "T", Insight: "I", Domain: "go", Tags: []string{"a b"}})
					return err
				}},
				{c.row, func() error {
					_, err := s.EditNote(ctx, api.EditRequest{Path: "02-wiki/go/retry.md", OldText: "absent", NewText: "x"})
					return err
				}},
				{c.badYAML, func() error {
					_, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/bad.md", Content: "---\nbroken: [\n---\n# Bad\n"})
					return err
				}},
				{c.emptyKey, func() error {
					_, err := s.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/bad.md", Content: "# Bad\n", Frontmatter: map[string]any{" ": "x"}})
					return err
				}},
				{c.commitID, func() error {
					_, err := s.Undo(ctx, api.UndoRequest{Version: "HEAD"})
					return err
				}},
				{c.folder, func() error {
					_, err := s.Search(ctx, api.SearchRequest{Query: "backoff", Folder: "02-wiki/Go"})
					return err
				}},
				{c.samePath, func() error {
					_, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go/retry.md", To: "02-wiki/go/retry.md"})
					return err
				}},
				{c.offsetMin, func() error {
					_, err := s.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/retry.md", Offset: -1})
					return err
				}},
				{c.offsetPast, func() error {
					_, err := s.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/retry.md", Offset: 999})
					return err
				}},
				{c.moveFolder, func() error {
					_, err := s.Move(ctx, api.MoveRequest{From: "02-wiki/go", To: "02-wiki/golang"})
					return err
				}},
			} {
				err := call.fn()
				if err == nil || !strings.Contains(err.Error(), call.want) {
					t.Errorf("lang %q (from the context: %v): %v, want %q", c.lang, viaCtx, err, call.want)
				}
			}
		}
	}
}
