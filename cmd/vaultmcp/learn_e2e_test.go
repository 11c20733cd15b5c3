package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// notesContaining lists the notes of the vault whose text contains s, once
// per occurrence; skipMOCs leaves out the maps of content (which quote the
// first sentence of a new note).
func notesContaining(t *testing.T, vault, s string, skipMOCs bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(vault, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") || (skipMOCs && strings.HasSuffix(p, "-moc.md")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if n := strings.Count(string(b), s); n > 0 {
			rel, _ := filepath.Rel(vault, p)
			for range n {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gitOut(t *testing.T, vault string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", vault}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestStdioLearn files a learning in a new domain over the real binary:
// refused without confirmation, then built (note, map of content, knowledge
// index, daily note) in one commit, searchable at once, and taken back by
// one vault_undo.
func TestStdioLearn(t *testing.T) {
	vault := copyExampleVault(t)
	s := connect(t, "VAULT_PATH="+vault)
	if ins := s.InitializeResult().Instructions; !strings.Contains(ins, "vault_learn") {
		t.Errorf("instructions do not mention vault_learn: %q", ins)
	}
	args := map[string]any{
		"title": "Kafka consumer lag", "insight": "Alert on consumer lag in time, not in messages: a quiet topic hides a stuck consumer.",
		"context": "notifier incident review", "domain": "kafka", "project": "notifier", "tags": []any{"gotcha"},
		"links": []any{"on-call"},
	}
	text, _, isErr := call(t, s, "vault_learn", args)
	if !isErr || !strings.Contains(text, "NEEDS_CONFIRMATION") || !strings.Contains(text, "devops, go, http, postgres") {
		t.Fatalf("new domain without confirmation: %s", text)
	}
	head := strings.TrimSpace(gitOut(t, vault, "rev-parse", "HEAD"))
	args["confirm_new_domain"] = true
	text, st, isErr := call(t, s, "vault_learn", args)
	if isErr || st["mode"] != "created" || st["path"] != "02-wiki/kafka/kafka-consumer-lag.md" {
		t.Fatalf("learn: %s", text)
	}
	for _, want := range []string{"Created 02-wiki/kafka/kafka-consumer-lag.md.", "Reason: ", "Propagated to: 02-wiki/kafka/kafka-moc.md, 00-index/index-knowledge.md, 04-daily/",
		"Commit: yes", "Undo: vault_undo", "```diff", "+Alert on consumer lag in time"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
	files := strs(st["files"])
	commitFiles := strings.Fields(gitOut(t, vault, "show", "--name-only", "--format=", "HEAD"))
	if len(files) != 4 || !slices.Equal(files, commitFiles) {
		t.Errorf("files %v, commit %v", files, commitFiles)
	}
	if subject := strings.TrimSpace(gitOut(t, vault, "log", "-1", "--format=%s")); subject != "docs(vault): Kafka consumer lag" {
		t.Errorf("commit subject %q", subject)
	}
	note, err := os.ReadFile(filepath.Join(vault, "02-wiki/kafka/kafka-consumer-lag.md"))
	if err != nil || !strings.Contains(string(note), "## Context\n\nnotifier incident review\n") /* the template's section */ || !strings.Contains(string(note), "- [[on-call]]") ||
		!strings.Contains(string(note), "type: wiki") || !strings.Contains(string(note), "tags: [kafka, gotcha]") /* the domain first, as the vault's notes have it */ {
		t.Errorf("note: %v\n%s", err, note)
	}
	daily := files[len(files)-1]
	if b, _ := os.ReadFile(filepath.Join(vault, daily)); !strings.Contains(string(b), " [[kafka-consumer-lag]] (gotcha, notifier)") {
		t.Errorf("daily note %s:\n%s", daily, b)
	}
	text, _, _ = call(t, s, "vault_search", map[string]any{"query": "consumer lag quiet topic"})
	if !strings.Contains(text, "02-wiki/kafka/kafka-consumer-lag.md:") {
		t.Errorf("the new note is not searchable at once:\n%s", text)
	}

	text, _, isErr = call(t, s, "vault_undo", map[string]any{"commit": st["version"]})
	if isErr || !strings.Contains(text, "Commit: yes") {
		t.Fatalf("undo: %s", text)
	}
	if diff := gitOut(t, vault, "diff", "--stat", head, "HEAD"); diff != "" {
		t.Errorf("undo left changes:\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(vault, "02-wiki/kafka")); !os.IsNotExist(err) {
		t.Errorf("the new domain folder is still there: %v", err)
	}
	if status := gitOut(t, vault, "status", "--porcelain"); status != "" {
		t.Errorf("work tree not clean:\n%s", status)
	}
}

// TestStdioLearnPortuguese: VAULT_LANG=pt answers in Portuguese and writes
// the Portuguese frontmatter keys and labels.
func TestStdioLearnPortuguese(t *testing.T) {
	vault := copyExampleVault(t)
	s := connect(t, "VAULT_PATH="+vault, "VAULT_LANG=pt")
	text, st, isErr := call(t, s, "vault_learn", map[string]any{
		"title": "Fila de quíntuplos", "insight": "Quíntuplos xilofônicos atrasam a fila.", "context": "revisão", "domain": "go",
	})
	if isErr || !strings.Contains(text, "Motivo: ") || !strings.Contains(text, "Commit: sim") {
		t.Fatalf("learn: %s", text)
	}
	p, _ := st["path"].(string)
	note, err := os.ReadFile(filepath.Join(vault, p))
	// The example vault's template is English: its Context section takes
	// the context whatever the profile.
	if err != nil || !strings.Contains(string(note), "## Context\n\nrevisão\n") {
		t.Fatalf("%s: %v\n%s", p, err, note)
	}
	if st["mode"] != "created" || !strings.Contains(string(note), "\ntipo: wiki\n") || !strings.Contains(string(note), "\ncriado: ") || strings.Contains(string(note), "\ntype:") {
		t.Errorf("new note frontmatter:\n%s", note)
	}
}

// TestTwoProcessesLearnSameTitle runs two servers on one vault, each
// learning the same title from several goroutines at once: every insight is
// kept exactly once, nothing is overwritten, and each learning is one commit.
func TestTwoProcessesLearnSameTitle(t *testing.T) {
	vault := copyExampleVault(t)
	head := strings.TrimSpace(gitOut(t, vault, "rev-parse", "HEAD"))
	const perProcess = 3
	var wg sync.WaitGroup
	var insights []string
	for p := 0; p < 2; p++ {
		s := connect(t, "VAULT_PATH="+vault)
		for i := 0; i < perProcess; i++ {
			insight := fmt.Sprintf("Quixotic zeppelin ballast number p%di%d needs a kerfuffle check.", p, i)
			insights = append(insights, insight)
			wg.Add(1)
			go func() {
				defer wg.Done()
				text, _, isErr := call(t, s, "vault_learn", map[string]any{
					"title": "Zeppelin ballast checks", "insight": insight, "context": fmt.Sprintf("process %d", p), "domain": "devops",
				})
				if isErr || !strings.Contains(text, "Commit: yes") {
					t.Errorf("process %d: %s", p, text)
				}
			}()
		}
	}
	wg.Wait()
	for _, ins := range insights {
		if where := notesContaining(t, vault, ins, true); len(where) != 1 {
			t.Errorf("%q is in %v, want exactly one note", ins, where)
		}
	}
	log := gitOut(t, vault, "log", "--format=%s", head+"..HEAD")
	if n := strings.Count(log, "docs(vault): Zeppelin ballast checks\n"); n != 2*perProcess {
		t.Errorf("%d commits:\n%s", n, log)
	}
	if status := gitOut(t, vault, "status", "--porcelain"); status != "" {
		t.Errorf("work tree not clean:\n%s", status)
	}
	// The note was created once and then only appended to.
	if b, err := os.ReadFile(filepath.Join(vault, "02-wiki/devops/zeppelin-ballast-checks.md")); err != nil || strings.Count(string(b), "\n# Zeppelin ballast checks\n") != 1 {
		t.Errorf("note: %v\n%s", err, b)
	}
}
