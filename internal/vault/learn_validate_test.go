package vault

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

func TestSlugify(t *testing.T) {
	cases := map[string]string{
		"Retry with backoff":            "retry-with-backoff",
		"  --Hello, World!--  ":         "hello-world",
		"Café à la crème":               "cafe-a-la-creme",
		"Ação e reação":                 "acao-e-reacao",
		"Straße, Æsir, Øre, Łódź":       "strasse-aesir-ore-lodz",
		"C++ & Go: 2 tips":              "c-go-2-tips",
		"日本語":                           "日本語",
		"日本語のメモ: キャッシュ":                 "日本語のメモ-キャッシュ",
		"Заметка О Кэше":                "заметка-о-кэше",
		"!!!":                           "",
		"x" + strings.Repeat("-y", 60):  "x" + strings.Repeat("-y", 39),
		strings.Repeat("ab ", 40) + "c": strings.TrimRight(strings.Repeat("ab-", 27), "-"),
	}
	long := strings.Repeat("長", 100) // 300 bytes: cut at 66 characters (198 bytes)
	cases[long] = strings.Repeat("長", 66)
	for in, want := range cases {
		got := slugify(in)
		if got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
		if len([]rune(got)) > maxSlugLen || len(got) > maxSlugBytes || strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Errorf("slugify(%q) = %q breaks the rules", in, got)
		}
	}
}

func TestLearnValidation(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	head := headCommit(t, dir)
	ok := api.LearnRequest{Title: "T", Insight: "I", Context: "C", Domain: "go"}
	mod := func(f func(r *api.LearnRequest)) api.LearnRequest {
		r := ok
		f(&r)
		return r
	}
	cases := []struct {
		req         api.LearnRequest
		code, field string
		msg         string
	}{
		{mod(func(r *api.LearnRequest) { r.Title = " \n\t" }), api.CodeInvalidArgument, "title", "must not be empty"},
		{mod(func(r *api.LearnRequest) { r.Title = "!!! ???" }), api.CodeInvalidArgument, "title", "letter or digit"},
		{mod(func(r *api.LearnRequest) { r.Title = "—!?" }), api.CodeInvalidArgument, "title", "letter or digit"},
		{mod(func(r *api.LearnRequest) { r.Title = "bell\a" }), api.CodeInvalidArgument, "title", "control"},
		{mod(func(r *api.LearnRequest) { r.Title = "rlo\u202e" }), api.CodeInvalidArgument, "title", "control"},
		{mod(func(r *api.LearnRequest) { r.Title = strings.Repeat("t", 201) }), api.CodeInvalidArgument, "title", "at most 200"},
		{mod(func(r *api.LearnRequest) { r.Title = "bad \xff" }), api.CodeInvalidArgument, "title", "UTF-8"},
		{mod(func(r *api.LearnRequest) { r.Insight = "  " }), api.CodeInvalidArgument, "insight", "must not be empty"},
		{mod(func(r *api.LearnRequest) { r.Insight = "nul\x00" }), api.CodeInvalidArgument, "insight", "control"},
		{mod(func(r *api.LearnRequest) { r.Context = "esc\x1b[2J" }), api.CodeInvalidArgument, "context", "control"},
		{mod(func(r *api.LearnRequest) { r.Domain = "" }), api.CodeInvalidArgument, "domain", "must not be empty"},
		{mod(func(r *api.LearnRequest) { r.Domain = "my domain" }), api.CodeInvalidArgument, "domain", "without spaces"},
		{mod(func(r *api.LearnRequest) { r.Domain = "go/sub" }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = `a\b` }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = "c:" }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = "what?" }), api.CodeInvalidArgument, "domain", "one folder name"},
		{mod(func(r *api.LearnRequest) { r.Domain = ".." }), api.CodeInvalidArgument, "domain", "dot"},
		{mod(func(r *api.LearnRequest) { r.Domain = ".obsidian" }), api.CodeInvalidArgument, "domain", "dot"},
		{mod(func(r *api.LearnRequest) { r.Domain = strings.Repeat("d", 65) }), api.CodeInvalidArgument, "domain", "at most 64"},
		{mod(func(r *api.LearnRequest) { r.Domain, r.ConfirmNewDomain = "node_modules", true }), "PROTECTED_PATH", "domain", "node_modules"},
		{mod(func(r *api.LearnRequest) { r.Domain, r.ConfirmNewDomain = "_Templates", true }), "PROTECTED_PATH", "domain", "_templates"},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"ok", " "} }), api.CodeInvalidArgument, "tags", "empty tag"},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"two words"} }), api.CodeInvalidArgument, "tags", "one word"},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"a,b"} }), api.CodeInvalidArgument, "tags", "one word"},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"it's"} }), api.CodeInvalidArgument, "tags", `without spaces or any of , # [ ] { } " ' |`},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"a|b"} }), api.CodeInvalidArgument, "tags", `"a|b": a tag is one word`},
		{mod(func(r *api.LearnRequest) { r.Tags = []string{"#2026"} }), api.CodeInvalidArgument, "tags", `"2026": a tag needs a character other than a digit`},
		{mod(func(r *api.LearnRequest) { r.Tags = make([]string, 51) }), api.CodeInvalidArgument, "tags", "at most 50"},
		{mod(func(r *api.LearnRequest) { r.Links = []string{"[[]]"} }), api.CodeInvalidArgument, "links", "empty link"},
		{mod(func(r *api.LearnRequest) { r.Links = []string{"a]]b"} }), api.CodeInvalidArgument, "links", "note name"},
		{mod(func(r *api.LearnRequest) { r.Project = "p\x00" }), api.CodeInvalidArgument, "project", "control"},
		{mod(func(r *api.LearnRequest) { r.Domain = "ops" }), api.CodeNeedsConfirm, "confirm_new_domain", `"ops" would be a new domain (existing: db, go)`},
	}
	for _, c := range cases {
		_, err := s.Learn(context.Background(), c.req)
		var ae *api.Error
		if err == nil || api.CodeOf(err) != c.code || !errors.As(err, &ae) || ae.Field != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v, want %s %s %q", c.req, err, c.code, c.field, c.msg)
		}
	}
	if headCommit(t, dir) != head || exists(dir, "04-daily") || exists(dir, "02-wiki/ops") {
		t.Fatal("a refused learning changed the vault")
	}
	if out := gitRun(t, dir, "status", "--porcelain"); out != "" {
		t.Fatalf("work tree changed:\n%s", out)
	}
}
