package index

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The labelled queries below were written by hand for the Obsidian help
// vault (en and pt-br folders): questions an agent would ask in its own
// words, with the one note that answers them. TestRetrievalEval runs them
// when VAULTMCP_EVAL_HELP names a copy of that vault (the folder holding en/
// and pt-br/) and prints hit@1, hit@10 and MRR@10 for several stem and fuzzy
// weights; that is how DefaultStemWeight and DefaultFuzzyWeight were chosen:
//
//	VAULTMCP_EVAL_HELP=/path/to/obsidian-help go test -run RetrievalEval -v ./internal/index/
type labelled struct{ query, relevant string }

var evalEN = []labelled{
	{"recovering deleted notes", "Plugins/File recovery.md"},
	{"embedding images and pdfs in a note", "Linking notes and files/Embed files.md"},
	{"keyboard shortcuts for commands", "User interface/Hotkeys.md"},
	{"custom domain for my published site", "Obsidian Publish/Custom domains.md"},
	{"end-to-end encryption of synced vaults", "Obsidian Sync/Security and privacy.md"},
	{"importing notes from evernote", "Import notes/Import from Evernote.md"},
	{"folding headings and indented lists", "Editing and formatting/Folding.md"},
	{"templates inserting date and time", "Plugins/Templates.md"},
	{"linking to a heading in another note", "Linking notes and files/Internal links.md"},
	{"editing with several cursors", "Editing and formatting/Multiple cursors.md"},
	{"changing the interface language", "User interface/Language settings.md"},
	{"getting refunded", "Licenses and payment/Refund policy.md"},
	{"discount for students and teachers", "Licenses and payment/Education and non-profit discount.md"},
	{"translating the app", "Contributing to Obsidian/Translations.md"},
	{"callout types", "Editing and formatting/Callouts.md"},
	{"symbolic links outside the vault", "Files and folders/Symbolic links and junctions.md"},
	{"where attachments are stored", "Editing and formatting/Attachments.md"},
	{"restoring an older version of a synced file", "Obsidian Sync/Version history.md"},
	{"daily note for today", "Plugins/Daily notes.md"},
	{"filtering the graph by tags", "Plugins/Graph view.md"},
	{"opening notes in separate windows", "User interface/Pop-out windows.md"},
	{"alternative names for a note", "Linking notes and files/Aliases.md"},
	{"nested tags", "Editing and formatting/Tags.md"},
	{"backing up my files", "Getting started/Back up your Obsidian files.md"},
	{"counting words and characters", "Plugins/Word count.md"},
	{"bookmarked searches", "Plugins/Bookmarks.md"},
	{"search operators for file paths", "Plugins/Search.md"},
	{"syncing selected folders only", "Obsidian Sync/Sync settings and selective syncing.md"},
	{"social media previews of published pages", "Obsidian Publish/Social media link previews.md"},
	{"url scheme to open notes", "Extending Obsidian/Obsidian URI.md"},
	{"two-factor authentication", "Obsidian/2-factor authentication.md"},
	{"supported file formats", "Files and folders/Accepted file formats.md"},
	{"highlighting web pages while clipping", "Obsidian Web Clipper/Highlighter.md"},
	{"dragging files between panes", "User interface/Drag and drop.md"},
	{"moving notes to another folder", "Files and folders/Manage notes.md"},
	{"writing css snippets", "Extending Obsidian/CSS snippets.md"},
	{"table view of a base", "Bases/Layouts/Table view.md"},
	{"formulas computing properties", "Bases/Formulas.md"},
}

var evalPT = []labelled{
	{"recuperar notas apagadas", "Plugin/Recuperação de arquivos.md"},
	{"incorporar imagens em uma nota", "Vinculando notas e arquivos/Incorporar arquivos.md"},
	{"atalhos de teclado personalizados", "Interface do usuário/Teclas de atalho.md"},
	{"domínio personalizado para o site publicado", "Obsidian Publish/Domínios personalizados.md"},
	{"criptografia dos cofres sincronizados", "Obsidian Sync/Segurança e privacidade.md"},
	{"importando do evernote", "Importar notas/Importar do Evernote.md"},
	{"dobrar títulos e listas", "Edição e formatação/Dobramento.md"},
	{"mudar o idioma da interface", "Interface do usuário/Configurações de idioma.md"},
	{"reembolsos", "Licenças e pagamento/Política de reembolso.md"},
	{"desconto para estudantes e professores", "Licenças e pagamento/Desconto educacional e sem fins lucrativos.md"},
	{"traduzir o aplicativo", "Contribuindo para o Obsidian/Traduções.md"},
	{"link para um título de outra nota", "Vinculando notas e arquivos/Links internos.md"},
	{"restaurar versões anteriores de um arquivo sincronizado", "Obsidian Sync/Histórico de versões.md"},
	{"nota diária de hoje", "Plugin/Notas diárias.md"},
	{"filtrar o grafo por etiquetas", "Plugin/Visão de grafo.md"},
	{"contar palavras e caracteres", "Plugin/Contagem de palavras.md"},
	{"backup dos meus arquivos", "Primeiros passos/Fazer backup dos seus arquivos do Obsidian.md"},
	{"sincronizar somente algumas pastas", "Obsidian Sync/Configurações do Sync e sincronização seletiva.md"},
	{"autenticação em dois fatores", "Obsidian/Autenticação de 2 fatores.md"},
	{"formatos de arquivo suportados", "Arquivos e pastas/Formatos de arquivo aceitos.md"},
	{"mover notas para outra pasta", "Arquivos e pastas/Gerenciar notas.md"},
	{"nomes alternativos para uma nota", "Vinculando notas e arquivos/Apelidos.md"},
	{"etiquetas aninhadas", "Edição e formatação/Etiquetas.md"},
	{"modelos que inserem data e hora", "Plugin/Modelos.md"},
	{"abrir notas em janelas separadas", "Interface do usuário/Janelas destacáveis.md"},
	{"editar com vários cursores", "Edição e formatação/Múltiplos cursores.md"},
	{"escrever trechos de css", "Estendendo o Obsidian/Trechos CSS.md"},
}

type evalScore struct{ hit1, hit10, mrr float64 }

func (s evalScore) String() string {
	return fmt.Sprintf("hit@1 %.3f  hit@10 %.3f  MRR@10 %.3f", s.hit1, s.hit10, s.mrr)
}

func evaluate(ix *Index, qs []labelled) evalScore {
	var s evalScore
	for _, q := range qs {
		seen := map[string]bool{}
		rank := 0
		for _, h := range ix.Search(q.query, Filter{}, 100) {
			if seen[h.Path] {
				continue
			}
			seen[h.Path] = true
			rank++
			if rank > 10 {
				break
			}
			if h.Path == q.relevant {
				if rank == 1 {
					s.hit1++
				}
				s.hit10++
				s.mrr += 1 / float64(rank)
				break
			}
		}
	}
	n := float64(len(qs))
	return evalScore{s.hit1 / n, s.hit10 / n, s.mrr / n}
}

// misspell deletes the second-to-last letter of the longest word of q (one
// edit, as a hurried typist would).
func misspell(q string) string {
	words := strings.Fields(q)
	longest := 0
	for i, w := range words {
		if utf8.RuneCountInString(w) > utf8.RuneCountInString(words[longest]) {
			longest = i
		}
	}
	r := []rune(words[longest])
	if len(r) >= 5 {
		r = append(r[:len(r)-2], r[len(r)-1])
	}
	words[longest] = string(r)
	return strings.Join(words, " ")
}

func TestRetrievalEval(t *testing.T) {
	root := os.Getenv("VAULTMCP_EVAL_HELP")
	if root == "" {
		t.Skip("VAULTMCP_EVAL_HELP not set")
	}
	for _, set := range []struct {
		dir, lang string
		qs        []labelled
	}{{"en", "en", evalEN}, {"pt-br", "pt", evalPT}} {
		items, _ := loadVault(t, filepath.Join(root, set.dir))
		for _, q := range set.qs {
			if _, err := os.Stat(filepath.Join(root, set.dir, q.relevant)); err != nil {
				t.Fatalf("labelled note missing: %v", err)
			}
		}
		build := func(stem, fuzzy float64) *Index {
			ix := New(Options{Lang: set.lang})
			ix.AddBatch(items)
			ix.stemWeight, ix.fuzzyWeight = stem, fuzzy // 0 turns a kind of match off
			return ix
		}
		var typo []labelled
		for _, q := range set.qs {
			typo = append(typo, labelled{misspell(q.query), q.relevant})
		}
		noStem := evaluate(build(0, DefaultFuzzyWeight), set.qs)
		t.Logf("%s: no stemming         %v", set.dir, noStem)
		for _, w := range []float64{0.3, 0.5, 0.6, 0.7, 0.8, 0.9} {
			t.Logf("%s: StemWeight %.1f      %v", set.dir, w, evaluate(build(w, DefaultFuzzyWeight), set.qs))
		}
		t.Logf("%s: misspelled, no fuzzy %v", set.dir, evaluate(build(DefaultStemWeight, 0), typo))
		for _, w := range []float64{0.2, 0.4, 0.6, 0.8} {
			t.Logf("%s: misspelled, FuzzyWeight %.1f %v", set.dir, w, evaluate(build(DefaultStemWeight, w), typo))
		}
		def := evaluate(build(DefaultStemWeight, DefaultFuzzyWeight), set.qs)
		if def.mrr < noStem.mrr {
			t.Errorf("%s: stemming at the default weight hurts: %v vs %v without", set.dir, def, noStem)
		}
	}
}
