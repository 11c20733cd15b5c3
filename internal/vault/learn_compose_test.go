package vault

import (
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestLearnPortuguese: the Portuguese profile writes tipo/criado/atualizado,
// **Contexto:**, ## Capturas and ## Notas.
func TestLearnPortuguese(t *testing.T) {
	files := with(learnVault, map[string]string{
		"_templates/wiki.md":          "",
		"00-index/index-knowledge.md": "",
		"02-wiki/go/go-moc.md":        "---\ntipo: moc\natualizado: 2026-01-01\n---\n# Go\n\n## Notas\n\n- [[retry-backoff]] — retries\n",
		"04-daily/2026-11-29.md":      "---\ntipo: daily\n---\n## Capturas\n\n- 08:00 [[gc]] (learning)\n\n## Tarefas\n\n- [ ] revisar\n",
	})
	dir, s := openLearn(t, files, learnOpts{lang: "pt"})
	res := learn(t, s, api.LearnRequest{Title: "Ação rápida", Insight: "Zéfiros discutem. Segunda frase.", Context: "revisão", Domain: "go", Tags: []string{"gotcha"}, Links: []string{"gc"}})
	want := "---\ntipo: wiki\ntags: [go, gotcha]\ncriado: 2026-11-29\n---\n# Ação rápida\n\nZéfiros discutem. Segunda frase.\n\n**Contexto:** revisão\n\n## Links\n\n- [[gc]]\n"
	if res.Path != "02-wiki/go/acao-rapida.md" || read(t, dir, res.Path) != want {
		t.Fatalf("%s:\n%s\nwant:\n%s", res.Path, read(t, dir, res.Path), want)
	}
	wantMOC := "---\ntipo: moc\natualizado: 2026-11-29\n---\n# Go\n\n## Notas\n\n- [[retry-backoff]] — retries\n- [[acao-rapida]] — Zéfiros discutem.\n"
	if got := read(t, dir, "02-wiki/go/go-moc.md"); got != wantMOC {
		t.Errorf("MOC:\n%s", got)
	}
	wantDaily := "---\ntipo: daily\n---\n## Capturas\n\n- 08:00 [[gc]] (learning)\n- 10:30 [[acao-rapida]] (gotcha)\n\n## Tarefas\n\n- [ ] revisar\n"
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != wantDaily {
		t.Errorf("daily:\n%s", got)
	}
	// Appending, and a new domain with its map of content and a new index.
	res = learn(t, s, api.LearnRequest{Title: "Mais zéfiros", Insight: "Zéfiros discutem muito.", Context: "café", Domain: "go"})
	if res.Path != "02-wiki/go/acao-rapida.md" || !strings.HasSuffix(read(t, dir, res.Path), "\n## 2026-11-29 — Mais zéfiros\n\nZéfiros discutem muito.\n\n**Contexto:** café\n") {
		t.Errorf("append %+v:\n%s", res, read(t, dir, res.Path))
	}
	res = learn(t, s, api.LearnRequest{Title: "Sondas", Insight: "Quixotescas sondas.", Domain: "infra", ConfirmNewDomain: true})
	if got := read(t, dir, "02-wiki/infra/infra-moc.md"); got != "---\ntipo: moc\ntags: [infra]\ncriado: 2026-11-29\natualizado: 2026-11-29\n---\n# infra\n\n## Notas\n\n- [[sondas]] — Quixotescas sondas.\n" {
		t.Errorf("new MOC:\n%s", got)
	}
	if got := read(t, dir, knowledgeIndex); got != "---\ntipo: moc\ntags: [index]\ncriado: 2026-11-29\natualizado: 2026-11-29\n---\n# Índice do conhecimento\n\n- [[infra-moc]] — infra\n" {
		t.Errorf("new index:\n%s", got)
	}

	// A template written with English keys gets the Portuguese ones.
	dir, s = openLearn(t, with(files, map[string]string{"_templates/wiki.md": "---\ntype: wiki\ncreated: \"{{date}}\"\nstatus: rascunho\n---\n# {{title}}\n"}), learnOpts{lang: "pt"})
	res = learn(t, s, api.LearnRequest{Title: "Zéfiro", Insight: "Zéfiros.", Domain: "go"})
	if got := read(t, dir, res.Path); got != "---\ntipo: wiki\ncriado: 2026-11-29\nstatus: rascunho\ntags: [go]\n---\n# Zéfiro\n\nZéfiros.\n" {
		t.Errorf("from an English template:\n%s", got)
	}

	// A new daily note in Portuguese.
	dir, s = openLearn(t, with(files, map[string]string{"04-daily/2026-11-29.md": ""}), learnOpts{lang: "pt"})
	learn(t, s, api.LearnRequest{Title: "Zéfiro", Insight: "Zéfiros.", Domain: "go", Project: "cobrança"})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "---\ntipo: daily\ntags: []\ncriado: 2026-11-29\n---\n\n# 2026-11-29\n\n## Capturas\n\n- 10:30 [[zefiro]] (learning, cobrança)\n" {
		t.Errorf("new daily:\n%s", got)
	}
}

func TestLearnKeepsCRLF(t *testing.T) {
	files := with(learnVault, map[string]string{"02-wiki/go/windows.md": "---\r\ntype: wiki\r\nupdated: 2026-01-01\r\n---\r\n# Zephyr windows\r\n\r\nZephyr windows quibble loudly."})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "More", Insight: "Zephyr windows quibble loudly at night.", Context: "c", Domain: "go"})
	want := "---\r\ntype: wiki\r\nupdated: 2026-11-29\r\n---\r\n# Zephyr windows\r\n\r\nZephyr windows quibble loudly.\r\n\r\n## 2026-11-29 — More\r\n\r\nZephyr windows quibble loudly at night.\r\n\r\n**Context:** c\r\n"
	if res.Path != "02-wiki/go/windows.md" || read(t, dir, res.Path) != want {
		t.Fatalf("%s %q", res.Path, read(t, dir, res.Path))
	}
}
