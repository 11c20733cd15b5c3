package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Learn makes the fake writer a full local-like backend: it records the
// request and answers with the learn_created fixture.
func (f *fakeWriter) Learn(_ context.Context, req api.LearnRequest) (*api.LearnResult, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	return learnFixtures()["learn_created"], nil
}

var _ api.Learner = (*fakeWriter)(nil)

// writerOnly is a backend that writes but cannot file a learning (the
// embedded interface hides the fake's Learn method).
type writerOnly struct{ api.WriteBackend }

// learnerOnly can file a learning but has no write side: vault_learn needs
// both.
type learnerOnly struct {
	api.Backend
	api.Learner
}

func learnFixtures() map[string]*api.LearnResult {
	const commit = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
	return map[string]*api.LearnResult{
		"learn_created": {
			WriteResult: api.WriteResult{
				Action: api.ActionCreated, Path: "02-wiki/ops/retry-budgets.md",
				Files:     []string{"00-index/index-knowledge.md", "02-wiki/ops/ops-moc.md", "02-wiki/ops/retry-budgets.md", "04-daily/2026-11-29.md"},
				SHA256:    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				Committed: true, Version: commit,
				Diff: "--- /dev/null\n+++ b/02-wiki/ops/retry-budgets.md\n@@ -0,0 +1,3 @@\n+# Retry budgets\n+\n+Cap retries at 10% of requests.\n",
			},
			Mode: api.LearnCreated, Domain: "ops", Decision: api.LearnNoMatch, Reason: "no match: no note is like it",
			Propagated: []string{"02-wiki/ops/ops-moc.md", "00-index/index-knowledge.md", "04-daily/2026-11-29.md"},
		},
		"learn_appended": {
			WriteResult: api.WriteResult{
				Action: api.ActionAppended, Path: "02-wiki/go/retry-backoff.md",
				Files:     []string{"02-wiki/go/retry-backoff.md", "04-daily/2026-11-29.md"},
				SHA256:    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
				Committed: true, Version: commit, Pushed: pushed(true),
				Diff: "@@ -12,0 +13,4 @@\n+\n+## 2026-11-29 — Jitter caps\n+\n+Cap the jitter at the base delay.\n",
			},
			Mode: api.LearnAppended, Domain: "go", Decision: api.LearnDuplicate, Candidate: "02-wiki/go/retry-backoff.md", Ratio: 2.41,
			Reason:     "duplicate of 02-wiki/go/retry-backoff.md (ratio 2.41 over the runner-up, in the same domain)",
			Propagated: []string{"04-daily/2026-11-29.md"},
		},
		"learn_escape_not_committed": {
			WriteResult: api.WriteResult{
				Action: api.ActionCreated, Path: "02-wiki/go/retry-backoff-2026-11-29.md",
				Files:  []string{"02-wiki/go/go-moc.md", "02-wiki/go/retry-backoff-2026-11-29.md", "04-daily/2026-11-29.md"},
				SHA256: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
				Warnings: []string{
					"02-wiki/go/retry-backoff.md is taken by something that is not a note (NOT_A_NOTE: is a named pipe (FIFO), not a regular file); the insight went to a new note, 02-wiki/go/retry-backoff-2026-11-29.md",
					"the vault is not a git repository: the change was written but not committed",
				},
				Diff: "--- /dev/null\n+++ b/02-wiki/go/retry-backoff-2026-11-29.md\n@@ -0,0 +1 @@\n+# Retry backoff\n",
			},
			Mode: api.LearnCreated, Domain: "go", Decision: api.LearnRatioLow, Candidate: "02-wiki/go/context.md", Ratio: 1.32,
			Reason:     "top result 02-wiki/go/context.md does not stand out: ratio 1.32 below 1.8 over the runner-up 02-wiki/go/errors.md",
			Propagated: []string{"02-wiki/go/go-moc.md", "04-daily/2026-11-29.md"},
		},
		"learn_unknown_decision": {
			WriteResult: api.WriteResult{
				Action: api.ActionAppended, Path: "02-wiki/go/x\u202e.md",
				Files:     []string{"02-wiki/go/x\u202e.md", "02-wiki/go/other.md"},
				Committed: true, Version: "v7",
			},
			Mode: api.LearnAppended, Domain: "go", Decision: "decided_by_a_newer_server",
			Reason:     "a reason \x1b[2J from a newer server",
			Propagated: []string{},
		},
	}
}

// TestLearnTool calls vault_learn over MCP in both languages: the request
// reaches the backend normalised, the text is the rendering of the result,
// and the structured content is the result, valid against the schema.
func TestLearnTool(t *testing.T) {
	for _, lang := range []string{"en", "pt"} {
		t.Run(lang, func(t *testing.T) {
			fake := newFakeWriter()
			cs := connect(t, New(fake, Options{Lang: lang}), nil)
			tl := toolsByName(t, cs)["vault_learn"]
			if tl == nil {
				t.Fatal("vault_learn not listed")
			}
			cases := []struct {
				args map[string]any
				want api.LearnRequest
			}{
				{
					args: map[string]any{"title": "Retry budgets", "insight": "Cap retries at 10% of requests.", "context": "incident 42",
						"domain": "ops", "project": "billing", "tags": []string{"pattern", "resilience"}, "links": []string{"retry-backoff"},
						"confirm_new_domain": true},
					want: api.LearnRequest{Title: "Retry budgets", Insight: "Cap retries at 10% of requests.", Context: "incident 42",
						Domain: "ops", Project: "billing", Tags: []string{"pattern", "resilience"}, Links: []string{"retry-backoff"},
						ConfirmNewDomain: true},
				},
				{
					// Context is required but may be empty; optional fields may be null.
					args: map[string]any{"title": "T", "insight": "I", "context": "", "domain": "go", "tags": nil, "project": nil},
					want: api.LearnRequest{Title: "T", Insight: "I", Domain: "go"},
				},
			}
			want := learnFixtures()["learn_created"]
			for i, c := range cases {
				res := call(t, cs, "vault_learn", c.args)
				got := text(t, res)
				if res.IsError {
					t.Fatalf("isError: %s", got)
				}
				if w := renderLearn(newMessages(lang), want); got != w {
					t.Errorf("text\n%s\nwant\n%s", got, w)
				}
				if g, w := jsonValue(t, res.StructuredContent), jsonValue(t, want); !reflect.DeepEqual(g, w) {
					t.Errorf("structuredContent\n%v\nwant\n%v", g, w)
				}
				if err := resolveSchema(t, tl.OutputSchema).Validate(jsonValue(t, res.StructuredContent)); err != nil {
					t.Errorf("structuredContent does not match the output schema: %v", err)
				}
				if err := resolveSchema(t, tl.InputSchema).Validate(jsonValue(t, withoutNulls(c.args))); err != nil {
					t.Errorf("arguments do not match the input schema: %v", err)
				}
				reqs := fake.recorded()
				if len(reqs) != i+1 || !reflect.DeepEqual(reqs[i], c.want) {
					t.Errorf("backend got %#v, want %#v", reqs, c.want)
				}
			}
			// The structured content flattens the write result: an agent
			// finds version and diff where every write tool puts them.
			st := jsonValue(t, call(t, cs, "vault_learn", cases[1].args).StructuredContent).(map[string]any)
			for _, key := range []string{"action", "path", "files", "committed", "version", "diff", "mode", "decision", "reason", "propagated", "domain"} {
				if _, ok := st[key]; !ok {
					t.Errorf("structured content lacks %q: %v", key, st)
				}
			}
		})
	}
}

func TestLearnValidation(t *testing.T) {
	base := func(kv ...any) map[string]any {
		m := map[string]any{"title": "T", "insight": "I", "context": "C", "domain": "go"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
				continue
			}
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		lang string
		args any
		want string
	}{
		{"en", base("title", nil), "INVALID_ARGUMENT: title: is required"},
		{"en", base("insight", nil), "INVALID_ARGUMENT: insight: is required"},
		{"en", base("context", nil), "INVALID_ARGUMENT: context: is required"},
		{"en", base("domain", nil), "INVALID_ARGUMENT: domain: is required"},
		{"en", base("title", " \n"), "INVALID_ARGUMENT: title: must not be empty"},
		{"en", base("insight", ""), "INVALID_ARGUMENT: insight: must not be empty"},
		{"en", base("domain", "\t"), "INVALID_ARGUMENT: domain: must not be empty"},
		{"en", base("title", 7), "INVALID_ARGUMENT: title: must be a string"},
		{"en", base("tags", "go"), "INVALID_ARGUMENT: tags: must be an array of strings"},
		{"en", base("links", []int{1}), "INVALID_ARGUMENT: links: must be an array of strings"},
		{"en", base("confirm_new_domain", "yes"), "INVALID_ARGUMENT: confirm_new_domain: must be a boolean"},
		{"en", base("path", "a.md"), "INVALID_ARGUMENT: path: unknown argument"},
		{"en", "not an object", "INVALID_ARGUMENT: arguments: must be a JSON object"},
		{"pt", base("insight", " "), "INVALID_ARGUMENT: insight: não pode ser vazio"},
		{"pt", base("domain", nil), "INVALID_ARGUMENT: domain: é obrigatório"},
	}
	var refusals []refusal
	for _, c := range cases {
		refusals = append(refusals, refusal{c.lang, "vault_learn", c.args, c.want})
	}
	checkRefusals(t, newFakeWriter, refusals)
}

// TestLearnAvailability: vault_learn exists only for a backend that both
// writes and learns, never in read-only mode, and is a write that removes
// nothing.
func TestLearnAvailability(t *testing.T) {
	cases := []struct {
		name    string
		backend api.Backend
		opts    Options
		want    bool
	}{
		{"writer and learner", newFakeWriter(), Options{}, true},
		{"writer and learner, read-only", newFakeWriter(), Options{ReadOnly: true}, false},
		{"writer only", writerOnly{newFakeWriter()}, Options{}, false},
		{"learner without a write side", learnerOnly{newFake(), newFakeWriter()}, Options{}, false},
		{"reader", newFake(), Options{}, false},
	}
	for _, c := range cases {
		tl := toolsByName(t, connect(t, New(c.backend, c.opts), nil))["vault_learn"]
		if (tl != nil) != c.want {
			t.Errorf("%s: vault_learn listed = %v, want %v", c.name, tl != nil, c.want)
			continue
		}
		if tl == nil {
			continue
		}
		a := tl.Annotations
		if a.ReadOnlyHint || a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint || a.Title != "Record a learning" {
			t.Errorf("%s: annotations %+v", c.name, a)
		}
		for _, want := range []string{"without asking", "02-wiki", "daily note", "vault_undo", "confirm_new_domain", "diff"} {
			if !strings.Contains(tl.Description, want) {
				t.Errorf("description lacks %q", want)
			}
		}
	}
}

// TestLearnErrors: a refusal of the backend is one line naming its code and
// field, in whatever language the backend wrote it.
func TestLearnErrors(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&api.Error{Code: api.CodeNeedsConfirm, Field: "confirm_new_domain", Message: `"ops" would be a new domain (existing: db, go)`},
			`NEEDS_CONFIRMATION: confirm_new_domain: "ops" would be a new domain (existing: db, go)`},
		{api.Invalid("title", "must contain a letter or digit"), "INVALID_ARGUMENT: title: must contain a letter or digit"},
		{&api.Error{Code: api.CodeReadOnly, Message: "the vault is open read-only"}, "READ_ONLY: the vault is open read-only"},
	}
	for _, c := range cases {
		fake := newFakeWriter()
		fake.err = c.err
		cs := connect(t, New(fake, Options{}), nil)
		res := call(t, cs, "vault_learn", map[string]any{"title": "T", "insight": "I", "context": "", "domain": "ops"})
		if got := text(t, res); !res.IsError || got != c.want || res.StructuredContent != nil {
			t.Errorf("isError=%v %q, want %q", res.IsError, got, c.want)
		}
	}
}

// TestLearnLogged: a learning is a write, and the server log records it as
// it records every write.
func TestLearnLogged(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))
	cs := connect(t, New(newFakeWriter(), Options{Logger: logger}), nil)
	res := call(t, cs, "vault_learn", map[string]any{"title": "T", "insight": "I", "context": "", "domain": "ops"})
	if res.IsError {
		t.Fatal(text(t, res))
	}
	want := learnFixtures()["learn_created"]
	for _, s := range []string{"vault written", "tool=vault_learn", "action=" + want.Action, "path=" + want.Path, "version=" + want.Version} {
		if !strings.Contains(logs.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, logs.String())
		}
	}
}

func TestRenderLearnGolden(t *testing.T) {
	for _, lang := range []string{"en", "pt"} {
		m := newMessages(lang)
		for name, res := range learnFixtures() {
			golden(t, filepath.Join("render", lang, name+".txt"), []byte(renderLearn(m, res)))
		}
		// Every decision, worded in this language.
		var b strings.Builder
		for _, d := range []struct {
			decision string
			ratio    float64
		}{
			{api.LearnNoMatch, 0}, {api.LearnOutsideWiki, 0}, {api.LearnViaGraph, 0}, {api.LearnStructural, 0},
			{api.LearnRatioLow, 1.32}, {api.LearnNoOverlap, 3.5}, {api.LearnDuplicate, 2.41}, {api.LearnDuplicate, 0},
		} {
			res := &api.LearnResult{Decision: d.decision, Ratio: d.ratio, Candidate: "02-wiki/go/retry-backoff.md", Domain: "ops", Reason: "unused"}
			b.WriteString(d.decision + ": " + learnReason(m, res) + "\n")
		}
		golden(t, filepath.Join("render", lang, "learn_reasons.txt"), []byte(b.String()))
	}
}

// TestRenderLearnSafety checks the properties a careless -update could
// bless: nothing hostile gets through, every decision has its own wording,
// and the file list appears only when it names something more.
func TestRenderLearnSafety(t *testing.T) {
	fx := learnFixtures()
	for _, lang := range []string{"en", "pt"} {
		m := newMessages(lang)
		odd := renderLearn(m, fx["learn_unknown_decision"])
		for _, bad := range []string{"\x1b", "\u202e"} {
			if strings.Contains(odd, bad) {
				t.Errorf("%s: output contains %q", lang, bad)
			}
		}
		if !strings.Contains(odd, `a reason \x1b[2J from a newer server`) || !strings.Contains(odd, "02-wiki/go/other.md") {
			t.Errorf("%s: unknown decision or extra file not shown:\n%s", lang, odd)
		}
		if created := renderLearn(m, fx["learn_created"]); strings.Contains(created, m.get(msgWriteFiles, "")) ||
			!strings.Contains(created, m.get(msgLearnPropagated, "02-wiki/ops/ops-moc.md, 00-index/index-knowledge.md, 04-daily/2026-11-29.md")) {
			t.Errorf("%s: created:\n%s", lang, created)
		}
		seen := map[string]string{}
		for _, d := range []string{api.LearnNoMatch, api.LearnOutsideWiki, api.LearnViaGraph, api.LearnStructural, api.LearnRatioLow, api.LearnNoOverlap, api.LearnDuplicate} {
			r := learnReason(m, &api.LearnResult{Decision: d, Candidate: "c.md", Ratio: 2, Reason: "English"})
			if r == "English" || seen[r] != "" {
				t.Errorf("%s: %s worded as %q (also %s)", lang, d, r, seen[r])
			}
			seen[r] = d
		}
	}
	if got := learnReason(newMessages("en"), &api.LearnResult{Decision: api.LearnRatioLow, Candidate: "c.md", Ratio: 1.32}); !strings.Contains(got, "1.32") || !strings.Contains(got, "1.8") {
		t.Errorf("ratio missing: %q", got)
	}
}
