package vault

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// ptVault is a Portuguese vault in the numbered layout: tipo/criado keys,
// Notas and Capturas sections, and no VAULT_LANG to say so.
var ptVault = map[string]string{
	"00-index/index-knowledge.md":  "---\ntipo: moc\natualizado: 2026-02-01\n---\n# Índice\n\n## Domínios\n\n- [[docker-moc]] — contêineres\n",
	"02-wiki/docker/docker-moc.md": "---\ntipo: moc\ntags: [docker]\ncriado: 2026-02-01\n---\n# Docker\n\n## Notas\n\n- [[camadas]] — cache de camadas\n",
	"02-wiki/docker/camadas.md":    "---\ntipo: wiki\ntags: [docker]\ncriado: 2026-02-01\n---\n# Camadas\n\nO cache de camadas acelera o build.\n",
	"04-daily/2026-11-29.md":       "---\ntipo: daily\ncriado: 2026-11-29\n---\n# 2026-11-29\n\n## Capturas\n\n- 09:14 [[camadas]] (pattern)\n",
	"04-daily/2026-11-28.md":       "---\ntipo: diário\n---\n## Tarefas\n\n- revisar o build\n",
}

// TestProfileDetected: with no language set, a Portuguese vault is written
// in its own profile: tipo/criado keys, its Capturas section (no "##
// Captures" beside it), Portuguese labels.
func TestProfileDetected(t *testing.T) {
	dir, s := openLearn(t, ptVault, learnOpts{})
	lang, why := s.Profile()
	if lang != "pt" || !strings.HasPrefix(why, "detected from the vault: ") || !strings.Contains(why, "criado") || !strings.Contains(why, "section Capturas") {
		t.Errorf("Profile() = %s, %q", lang, why)
	}
	res := learn(t, s, api.LearnRequest{Title: "Rotação de segredos", Insight: "Rotacione os segredos do registro a cada trimestre.", Context: "auditoria", Domain: "docker"})
	note := read(t, dir, res.Path)
	if !strings.HasPrefix(note, "---\ntipo: wiki\ntags: [docker]\ncriado: 2026-11-29\n---\n") || !strings.Contains(note, "**Contexto:** auditoria") {
		t.Errorf("new note:\n%s", note)
	}
	daily := read(t, dir, "04-daily/2026-11-29.md")
	if strings.Contains(daily, "Captures") || !strings.Contains(daily, "## Capturas\n\n- 09:14 [[camadas]] (pattern)\n- 10:30 [[rotacao-de-segredos]] (learning)\n") {
		t.Errorf("daily note:\n%s", daily)
	}
	moc := read(t, dir, "02-wiki/docker/docker-moc.md")
	if !strings.Contains(moc, "## Notas\n\n- [[camadas]] — cache de camadas\n- [[rotacao-de-segredos]] —") || strings.Contains(moc, "## Notes") {
		t.Errorf("MOC:\n%s", moc)
	}
	// A note written without frontmatter gets the profile's keys.
	w, err := s.WriteNote(context.Background(), api.WriteRequest{Path: "03-projects/x.md", Content: "# X\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, w.Path); !strings.HasPrefix(got, "---\ntipo: nota\ntags: []\ncriado: 2026-11-29\n---\n") {
		t.Errorf("written note:\n%s", got)
	}
	// A new domain's MOC and index line, and a new day's note, too.
	learn(t, s, api.LearnRequest{Title: "Filas", Insight: "Use backoff nas filas.", Domain: "filas", ConfirmNewDomain: true})
	if got := read(t, dir, "02-wiki/filas/filas-moc.md"); !strings.HasPrefix(got, "---\ntipo: moc\n") || !strings.Contains(got, "## Notas\n") {
		t.Errorf("new MOC:\n%s", got)
	}
	if got := read(t, dir, "00-index/index-knowledge.md"); !strings.Contains(got, "## Domínios\n\n- [[docker-moc]] — contêineres\n- [[filas-moc]] — filas\n") {
		t.Errorf("knowledge index:\n%s", got)
	}
}

// TestProfileDetectedNewDaily: the daily note a Portuguese vault does not
// have yet is created with Capturas, and without a tags key, as the vault's
// other daily note has none.
func TestProfileDetectedNewDaily(t *testing.T) {
	dir, s := openLearn(t, with(ptVault, map[string]string{"04-daily/2026-11-29.md": ""}), learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Rotação de segredos", Insight: "Rotacione os segredos do registro.", Domain: "docker"})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "---\ntipo: daily\ncriado: 2026-11-29\n---\n\n# 2026-11-29\n\n## Capturas\n\n- 10:30 [[rotacao-de-segredos]] (learning)\n" {
		t.Errorf("daily note:\n%s", got)
	}
}

// TestProfileSources: an English vault is detected English; a vault with no
// sign is English by default and detected again once notes change; a
// language set by the caller wins over the vault's.
func TestProfileSources(t *testing.T) {
	_, s := openLearn(t, learnVault, learnOpts{})
	if lang, why := s.Profile(); lang != "en" || !strings.Contains(why, "detected") || !strings.Contains(why, "type") {
		t.Errorf("English vault: %s, %q", lang, why)
	}

	_, s = openLearn(t, ptVault, learnOpts{lang: "en"})
	if lang, why := s.Profile(); lang != "en" || why != "set by --lang or VAULT_LANG" {
		t.Errorf("VAULT_LANG=en on a Portuguese vault: %s, %q", lang, why)
	}

	dir, s := openLearn(t, map[string]string{"a.md": "# A\n\nText.\n"}, learnOpts{})
	if lang, why := s.Profile(); lang != "en" || !strings.HasPrefix(why, "the default") {
		t.Errorf("no sign: %s, %q", lang, why)
	}
	writeFile(t, dir, "b.md", []byte("---\ntipo: nota\ncriado: 2026-01-01\n---\n# B\n"))
	s.Refresh("b.md")
	if lang, why := s.Profile(); lang != "pt" || !strings.Contains(why, "type nota") {
		t.Errorf("after a Portuguese note: %s, %q", lang, why)
	}
}

// TestProfileSignsRemembered: a vault with no sign is looked at again after
// each change, but a sampled note is read again only once it has changed;
// a note edited in place to carry Portuguese signs turns the profile.
func TestProfileSignsRemembered(t *testing.T) {
	dir, s := openLearn(t, map[string]string{"a.md": "# A\n\nText.\n", "b.md": "# B\n", "c.md": "# C\n\n## Plain\n"}, learnOpts{})
	reads := func() int {
		s.signMu.Lock()
		defer s.signMu.Unlock()
		return s.signReads
	}
	if lang, _ := s.Profile(); lang != "en" || reads() != 3 {
		t.Fatalf("first detection: %s, %d notes read", lang, reads())
	}
	writeFile(t, dir, "d.md", []byte("# D\n"))
	s.Refresh("d.md")
	if lang, why := s.Profile(); lang != "en" || !strings.HasPrefix(why, "the default") || reads() != 4 {
		t.Fatalf("after a new note: %s %q, %d notes read in all (want 4: the new one)", lang, why, reads())
	}
	writeFile(t, dir, "b.md", []byte("---\ntipo: nota\n---\n# B\n\n## Tarefas\n"))
	s.Refresh("b.md")
	if lang, why := s.Profile(); lang != "pt" || !strings.Contains(why, "section Tarefas") || reads() != 5 {
		t.Fatalf("after b.md changed: %s %q, %d notes read in all (want 5)", lang, why, reads())
	}
}

// TestProfileTemplateSigns: the templates (never indexed) count.
func TestProfileTemplateSigns(t *testing.T) {
	_, s := openLearn(t, map[string]string{"a.md": "# A\n", "_templates/wiki.md": "---\ntipo: wiki\ncriado: <% tp.date.now() %>\n---\n# <% tp.file.title %>\n\n## Solução\n"}, learnOpts{})
	if lang, why := s.Profile(); lang != "pt" || !strings.Contains(why, "1 notes") {
		t.Errorf("Profile() = %s, %q", lang, why)
	}
}

// TestFirstPaths keeps the first (or last) n paths of any order.
func TestFirstPaths(t *testing.T) {
	var first, last firstPaths
	for _, p := range []string{"d", "a", "f", "c", "b", "e", "g"} {
		first.keep(p, 3, false)
		last.keep(p, 3, true)
	}
	if strings.Join(first.paths, "") != "abc" || strings.Join(last.paths, "") != "gfe" {
		t.Errorf("first %v, last %v", first.paths, last.paths)
	}
}

// TestProfileSampleBounded: the sample is at most profileSample notes, the
// structural ones and the newest daily notes first.
func TestProfileSampleBounded(t *testing.T) {
	files := map[string]string{"00-index/index-knowledge.md": "# I\n"}
	for i := range 40 {
		files[fmt.Sprintf("04-daily/2026-01-%02d.md", i%28+1)] = "# d\n"
		files[fmt.Sprintf("02-wiki/d%02d/d%02d-moc.md", i, i)] = "# m\n"
		files[fmt.Sprintf("zz/n%03d.md", i)] = "# n\n"
		files[fmt.Sprintf("02-wiki/d%02d/w.md", i)] = "# w\n"
	}
	_, s := openLearn(t, files, learnOpts{})
	got := s.profileSampleNotes(s.indexedNotes)
	if len(got) != profileSample || got[0] != "00-index/index-knowledge.md" || got[1] != "02-wiki/d00/d00-moc.md" ||
		got[17] != "04-daily/2026-01-28.md" || got[18] != "04-daily/2026-01-27.md" || got[33] != "02-wiki/d00/w.md" {
		t.Errorf("sample %q", got)
	}
}
