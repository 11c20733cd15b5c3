package vault

import (
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// frontmatterTags returns the tags line of a note's frontmatter.
func frontmatterTags(t *testing.T, text string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "tags:") {
			return l
		}
	}
	t.Fatalf("no tags line in:\n%s", text)
	return ""
}

// TestLearnTagsTheDomainAsTheVaultDoes: a new note carries its domain as its
// first tag when most notes of the domain's folder do (learnVault's go
// notes), not when they do not (its db notes are tagged postgres); a new
// domain follows most of the vault's wiki notes.
func TestLearnTagsTheDomainAsTheVaultDoes(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		req   api.LearnRequest
		want  string
	}{
		{"tagged domain", learnVault,
			api.LearnRequest{Title: "Quixotic goroutines", Insight: "Quixotic goroutines leak.", Domain: "go", Tags: []string{"Go", "leaks"}},
			"tags: [draft, go, leaks]"},
		{"untagged domain", learnVault,
			api.LearnRequest{Title: "Quixotic indexes", Insight: "Quixotic indexes bloat.", Domain: "db", Tags: []string{"bloat"}},
			"tags: [draft, bloat]"},
		{"new domain, most notes tagged", learnVault,
			api.LearnRequest{Title: "Quixotic probes", Insight: "Quixotic probes fail.", Domain: "k8s", ConfirmNewDomain: true},
			"tags: [draft, k8s]"},
		{"new domain, most notes not tagged", with(learnVault, map[string]string{
			"02-wiki/db/locks.md": "---\ntype: wiki\ntags: [postgres]\n---\n# Locks\n\nAdvisory locks.\n",
			"02-wiki/db/wal.md":   "# WAL\n\nThe write-ahead log.\n",
		}),
			api.LearnRequest{Title: "Quixotic probes", Insight: "Quixotic probes fail.", Domain: "k8s", ConfirmNewDomain: true},
			"tags: [draft]"},
		{"a domain's map of content does not count", with(learnVault, map[string]string{
			"02-wiki/db/db-moc.md": "---\ntype: moc\ntags: [db]\n---\n# Databases\n\n## Notes\n\n- [[pool]]\n",
			"02-wiki/db/wal.md":    "---\ntags: [db]\n---\n# WAL\n\nThe write-ahead log.\n",
		}),
			api.LearnRequest{Title: "Quixotic indexes", Insight: "Quixotic indexes bloat.", Domain: "db"},
			"tags: [draft]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, s := openLearn(t, tc.files, learnOpts{})
			res := learn(t, s, tc.req)
			if res.Mode != api.LearnCreated {
				t.Fatalf("not created: %+v", res)
			}
			if got := frontmatterTags(t, read(t, dir, res.Path)); got != tc.want {
				t.Errorf("%s: %s, want %s", res.Path, got, tc.want)
			}
		})
	}
}

// TestLearnIndexLineInTheIndexsForm: a new domain's line in the knowledge
// index links its map of content as the index's other domain lines do;
// where that form cannot be followed, by the map's name, or by its path when
// another note has that name.
func TestLearnIndexLineInTheIndexsForm(t *testing.T) {
	cases := []struct {
		name  string
		index string
		extra map[string]string
		want  string
	}{
		{"relative path with the domain as alias", "- [[../02-wiki/go/go-moc|go]] — Go, the language\n- [[db-moc]] — Databases\n", nil,
			"- [[../02-wiki/k8s/k8s-moc|k8s]] — k8s"},
		{"vault path with another alias", "- [[02-wiki/go/go-moc|The Go language]] — Go\n", nil,
			"- [[02-wiki/k8s/k8s-moc|k8s]] — k8s"},
		{"path with the extension", "- [[../02-wiki/go/go-moc.md]] — Go\n", nil,
			"- [[../02-wiki/k8s/k8s-moc.md]] — k8s"},
		{"name", "- [[go-moc]] — Go\n", nil,
			"- [[k8s-moc]] — k8s"},
		{"a markdown link is not followed", "- [Go](../02-wiki/go/go-moc.md) — Go\n", nil,
			"- [[k8s-moc]] — k8s"},
		{"a link by another name is not followed", "- [[Go MOC]] — Go\n", map[string]string{"02-wiki/go/go-moc.md": "---\ntype: moc\naliases: [Go MOC]\n---\n# Go\n\n## Notes\n"},
			"- [[k8s-moc]] — k8s"},
		{"a name another note has", "- [[go-moc]] — Go\n", map[string]string{"99-archive/k8s-moc.md": "# Old k8s\n\nOld.\n"},
			"- [[02-wiki/k8s/k8s-moc]] — k8s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			index := "---\ntype: moc\n---\n# Knowledge index\n\n## Domains\n\n" + tc.index
			files := with(learnVault, map[string]string{knowledgeIndex: index})
			for k, v := range tc.extra {
				files[k] = v
			}
			dir, s := openLearn(t, files, learnOpts{})
			learn(t, s, api.LearnRequest{Title: "Quixotic probes", Insight: "Quixotic probes fail.", Domain: "k8s", ConfirmNewDomain: true})
			want := "---\ntype: moc\n---\n# Knowledge index\n\n## Domains\n\n" + tc.index + tc.want + "\n"
			if got := read(t, dir, knowledgeIndex); got != want {
				t.Fatalf("index:\n%s\nwant:\n%s", got, want)
			}
			// The line leads to the new map: its backlinks list the index.
			bl, err := s.Backlinks(t.Context(), api.BacklinksRequest{Path: "02-wiki/k8s/k8s-moc.md"})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, b := range bl.Backlinks {
				found = found || b.Path == knowledgeIndex
			}
			if !found {
				t.Errorf("the index's line does not lead to the new map: %+v", bl.Backlinks)
			}
		})
	}
}

func TestLikeEntry(t *testing.T) {
	for _, tc := range []struct{ target, d, want string }{
		{"go-moc", "go", "k8s-moc"},
		{"go/go-moc", "go", "k8s/k8s-moc"},
		{"02-wiki/go/go-moc", "go", "02-wiki/k8s/k8s-moc"},
		{"../02-wiki/go/go-moc.md", "go", "../02-wiki/k8s/k8s-moc.md"},
		{"../02-wiki/go/go-moc.MD", "go", "../02-wiki/k8s/k8s-moc.MD"},
		{"02-wiki/golang/go-moc", "go", ""},
		{"Go MOC", "go", ""},
		{"ago-moc", "go", ""},
	} {
		got, ok := likeEntry(tc.target, tc.d, "k8s")
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("likeEntry(%q, %q) = %q, %v; want %q", tc.target, tc.d, got, ok, tc.want)
		}
	}
}

// TestLearnNewMOCTitledAsTheOthers: a new domain's map of content takes the
// title form of the vault's other maps.
func TestLearnNewMOCTitledAsTheOthers(t *testing.T) {
	moc := func(title string) string { return "---\ntype: moc\n---\n# " + title + "\n\n## Notes\n" }
	cases := []struct {
		name string
		mocs map[string]string
		want string
	}{
		{"capitalised", map[string]string{"02-wiki/go/go-moc.md": moc("Go — map of content"), "02-wiki/db/db-moc.md": moc("DB — map of content")},
			"# K8s — map of content"},
		{"as written", map[string]string{"02-wiki/go/go-moc.md": moc("go: index"), "02-wiki/db/db-moc.md": moc("db: index")},
			"# k8s: index"},
		{"the rest most share", map[string]string{"02-wiki/go/go-moc.md": moc("Go - map"), "02-wiki/db/db-moc.md": moc("Db — Mapa de Conteúdo"),
			"02-wiki/ml/ml-moc.md": moc("ML — Mapa de Conteúdo"), "02-wiki/ml/notes.md": "# Notes\n"},
			"# K8s — Mapa de Conteúdo"},
		{"no form to follow", map[string]string{"02-wiki/go/go-moc.md": moc("Go"), "02-wiki/db/db-moc.md": moc("Databases — map")},
			"# k8s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, s := openLearn(t, with(learnVault, tc.mocs), learnOpts{})
			learn(t, s, api.LearnRequest{Title: "Quixotic probes", Insight: "Quixotic probes fail.", Domain: "k8s", ConfirmNewDomain: true})
			text := read(t, dir, "02-wiki/k8s/k8s-moc.md")
			if !strings.Contains(text, "\n"+tc.want+"\n\n## Notes\n") {
				t.Errorf("new map of content:\n%s\nwant its title %q", text, tc.want)
			}
		})
	}
}

// TestLearnNewDailyTagsAsTheVaultsDailies: a daily note made without a
// template has a tags key only when the vault's latest daily note has one,
// holding the tags most of its daily notes carry; with no daily note yet, an
// empty list.
func TestLearnNewDailyTagsAsTheVaultsDailies(t *testing.T) {
	daily := func(fm string) string { return "---\n" + fm + "\n---\n# Day\n\n## Captures\n" }
	cases := []struct {
		name  string
		files map[string]string
		want  string // the new daily note's frontmatter
	}{
		{"no daily note", learnVault, "---\ntype: daily\ntags: []\ncreated: 2026-11-29\n---\n"},
		{"dailies without tags", with(learnVault, map[string]string{
			"04-daily/2026-11-20.md": daily("type: daily"),
			"04-daily/2026-11-21.md": daily("type: daily\ncreated: 2026-11-21"),
		}), "---\ntype: daily\ncreated: 2026-11-29\n---\n"},
		{"dailies tagged journal, with the day's topics", with(learnVault, map[string]string{
			"04-daily/2026-11-19.md":      daily("type: daily"),
			"04-daily/2026-11-20.md":      daily("type: daily\ntags: [journal, go]"),
			"04-daily/2026/2026-11-21.md": daily("type: daily\ntags: [Journal, Planning, go]"),
			"04-daily/2026-11-22.md":      daily("type: daily\ntags: [journal, db]"),
		}), "---\ntype: daily\ntags: [journal]\ncreated: 2026-11-29\n---\n"},
		{"the latest has the key, most carry no tag", with(learnVault, map[string]string{
			"04-daily/2026-11-20.md": daily("type: daily"),
			"04-daily/2026-11-21.md": daily("type: daily"),
			"04-daily/2026-11-22.md": daily("type: daily\ntags: [go]"),
		}), "---\ntype: daily\ntags: []\ncreated: 2026-11-29\n---\n"},
		{"the latest has no key", with(learnVault, map[string]string{
			"04-daily/2026-11-20.md": daily("type: daily\ntags: [journal]"),
			"04-daily/2026-11-21.md": daily("type: daily\ntags: [journal]"),
			"04-daily/2026-11-22.md": daily("type: daily"),
		}), "---\ntype: daily\ncreated: 2026-11-29\n---\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, s := openLearn(t, tc.files, learnOpts{})
			learn(t, s, api.LearnRequest{Title: "Quixotic goroutines", Insight: "Quixotic goroutines leak.", Domain: "go"})
			if got := read(t, dir, "04-daily/2026-11-29.md"); !strings.HasPrefix(got, tc.want) {
				t.Errorf("new daily note:\n%s\nwant it to begin with:\n%s", got, tc.want)
			}
		})
	}
}
