package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// fakeWriter is a fakeBackend that can also write: every write records its
// request and answers with the result set for its operation.
type fakeWriter struct {
	*fakeBackend
	results map[string]*api.WriteResult // by operation: write, edit, move, delete, undo
}

func newFakeWriter() *fakeWriter {
	fx := writeFixtures()
	return &fakeWriter{fakeBackend: newFake(), results: map[string]*api.WriteResult{
		"write":  fx["write_created"].res,
		"edit":   fx["write_edited_push_failed"].res,
		"move":   fx["write_moved"].res,
		"delete": fx["write_deleted"].res,
		"undo":   fx["write_reverted"].res,
	}}
}

func (f *fakeWriter) answer(op string, req any) (*api.WriteResult, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.results[op], nil
}

func (f *fakeWriter) WriteNote(_ context.Context, req api.WriteRequest) (*api.WriteResult, error) {
	return f.answer("write", req)
}

func (f *fakeWriter) EditNote(_ context.Context, req api.EditRequest) (*api.WriteResult, error) {
	return f.answer("edit", req)
}

func (f *fakeWriter) Move(_ context.Context, req api.MoveRequest) (*api.WriteResult, error) {
	return f.answer("move", req)
}

func (f *fakeWriter) Delete(_ context.Context, req api.DeleteRequest) (*api.WriteResult, error) {
	return f.answer("delete", req)
}

func (f *fakeWriter) Undo(_ context.Context, req api.UndoRequest) (*api.WriteResult, error) {
	return f.answer("undo", req)
}

var _ api.WriteBackend = (*fakeWriter)(nil)

var (
	readTools  = []string{"vault_backlinks", "vault_get_note", "vault_graph", "vault_history", "vault_list", "vault_search"}
	writeTools = []string{"vault_delete", "vault_edit_note", "vault_move", "vault_undo", "vault_write_note"}
	// destructive says which write tools may remove or overwrite content.
	destructive = map[string]bool{
		"vault_write_note": true, "vault_edit_note": true, "vault_move": false, "vault_delete": true, "vault_undo": true,
		"vault_learn": false,
	}
)

const hash64 = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"

func TestWriteToolsEndToEnd(t *testing.T) {
	for _, lang := range []string{"en", "pt"} {
		t.Run(lang, func(t *testing.T) {
			fake := newFakeWriter()
			cs := connect(t, New(fake, Options{Lang: lang}), nil)
			m := newMessages(lang)
			tools := toolsByName(t, cs)
			r := fake.results

			cases := []struct {
				tool    string
				args    map[string]any
				wantReq any
				result  *api.WriteResult
				want    string
			}{
				{
					tool: "vault_write_note",
					args: map[string]any{"path": "02-wiki/go/errors.md", "content": "# Errors\n\nWrap with %w.\n",
						"frontmatter":     map[string]any{"tags": []string{"go"}, "status": "active", "weight": 3, "nested": map[string]any{"a": true}},
						"expected_sha256": hash64},
					wantReq: api.WriteRequest{Path: "02-wiki/go/errors.md", Content: "# Errors\n\nWrap with %w.\n",
						Frontmatter: map[string]any{"tags": []any{"go"}, "status": "active", "weight": float64(3),
							"nested": map[string]any{"a": true}},
						ExpectedSHA256: strings.ToLower(hash64)},
					result: r["write"],
					want:   renderWrite(m, r["write"], ""),
				},
				{
					// Empty content is a valid note; an empty hash is no hash.
					tool:    "vault_write_note",
					args:    map[string]any{"path": "01-raw/empty.md", "content": "", "expected_sha256": "", "frontmatter": nil},
					wantReq: api.WriteRequest{Path: "01-raw/empty.md"},
					result:  r["write"],
					want:    renderWrite(m, r["write"], ""),
				},
				{
					tool:    "vault_edit_note",
					args:    map[string]any{"path": "02-wiki/go/errors.md", "old_text": "Wrap errors with %v.", "new_text": ""},
					wantReq: api.EditRequest{Path: "02-wiki/go/errors.md", OldText: "Wrap errors with %v."},
					result:  r["edit"],
					want:    renderWrite(m, r["edit"], ""),
				},
				{
					tool:    "vault_edit_note",
					args:    map[string]any{"path": "a.md", "old_text": " ", "new_text": "\t"},
					wantReq: api.EditRequest{Path: "a.md", OldText: " ", NewText: "\t"},
					result:  r["edit"],
					want:    renderWrite(m, r["edit"], ""),
				},
				{
					tool:    "vault_move",
					args:    map[string]any{"from": "01-raw/go errors.md", "to": "02-wiki/go/errors.md", "confirm_new_domain": true},
					wantReq: api.MoveRequest{From: "01-raw/go errors.md", To: "02-wiki/go/errors.md", ConfirmNewDomain: true},
					result:  r["move"],
					want:    renderWrite(m, r["move"], ""),
				},
				{
					tool:    "vault_move",
					args:    map[string]any{"from": "03-projects/old.md", "to": "99-archive/old.md"},
					wantReq: api.MoveRequest{From: "03-projects/old.md", To: "99-archive/old.md"},
					result:  r["move"],
					want:    renderWrite(m, r["move"], ""),
				},
				{
					tool:    "vault_delete",
					args:    map[string]any{"path": "02-wiki/go/old.md", "confirm": true},
					wantReq: api.DeleteRequest{Path: "02-wiki/go/old.md", Confirm: true},
					result:  r["delete"],
					want:    renderWrite(m, r["delete"], ""),
				},
				{
					tool:    "vault_delete",
					args:    map[string]any{"path": "02-wiki/go/old.md"},
					wantReq: api.DeleteRequest{Path: "02-wiki/go/old.md"},
					result:  r["delete"],
					want:    renderWrite(m, r["delete"], ""),
				},
				{
					tool:    "vault_undo",
					args:    map[string]any{"commit": "3B18E512"},
					wantReq: api.UndoRequest{Version: "3B18E512"},
					result:  r["undo"],
					want:    renderWrite(m, r["undo"], "3B18E512"),
				},
				{
					tool:    "vault_undo",
					args:    map[string]any{"commit": strings.ToLower(hash64)},
					wantReq: api.UndoRequest{Version: strings.ToLower(hash64)},
					result:  r["undo"],
					want:    renderWrite(m, r["undo"], strings.ToLower(hash64)),
				},
			}
			called := map[string]bool{}
			for i, c := range cases {
				res := call(t, cs, c.tool, c.args)
				got := text(t, res)
				if res.IsError {
					t.Fatalf("%s: isError: %s", c.tool, got)
				}
				if got != c.want {
					t.Errorf("%s: text\n%s\nwant\n%s", c.tool, got, c.want)
				}
				if g, w := jsonValue(t, res.StructuredContent), jsonValue(t, c.result); !reflect.DeepEqual(g, w) {
					t.Errorf("%s: structuredContent\n%v\nwant\n%v", c.tool, g, w)
				}
				tl := tools[c.tool]
				if tl == nil {
					t.Fatalf("%s not listed", c.tool)
				}
				if err := resolveSchema(t, tl.OutputSchema).Validate(jsonValue(t, res.StructuredContent)); err != nil {
					t.Errorf("%s: structuredContent does not match the output schema: %v", c.tool, err)
				}
				if err := resolveSchema(t, tl.InputSchema).Validate(jsonValue(t, withoutNulls(c.args))); err != nil {
					t.Errorf("%s: arguments do not match the input schema: %v", c.tool, err)
				}
				reqs := fake.recorded()
				if len(reqs) != i+1 {
					t.Fatalf("%s: backend got %d requests, want %d", c.tool, len(reqs), i+1)
				}
				if !reflect.DeepEqual(reqs[i], c.wantReq) {
					t.Errorf("%s: backend got %#v, want %#v", c.tool, reqs[i], c.wantReq)
				}
				called[c.tool] = true
			}
			for _, name := range writeTools {
				if !called[name] {
					t.Errorf("write tool %s is not exercised by this test", name)
				}
			}
		})
	}
}

// TestToolList checks which tools each kind of server offers, and their
// annotations.
func TestToolList(t *testing.T) {
	cases := []struct {
		name    string
		backend api.Backend
		opts    Options
		want    []string
	}{
		{"read backend", newFake(), Options{}, readTools},
		{"read backend, read-only", newFake(), Options{ReadOnly: true}, readTools},
		{"writer, read-only", newFakeWriter(), Options{ReadOnly: true}, readTools},
		{"writer without vault_learn", writerOnly{newFakeWriter()}, Options{}, slices.Sorted(slices.Values(append(slices.Clone(readTools), writeTools...)))},
		{"writer", newFakeWriter(), Options{}, slices.Sorted(slices.Values(append(append(slices.Clone(readTools), writeTools...), "vault_learn")))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tools := toolsByName(t, connect(t, New(c.backend, c.opts), nil))
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range tools {
					if !yield(k) {
						return
					}
				}
			})
			if !slices.Equal(names, c.want) {
				t.Errorf("tools %v, want %v", names, c.want)
			}
			for name, tl := range tools {
				a := tl.Annotations
				if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil || *a.OpenWorldHint || a.Title == "" ||
					tl.Title != a.Title {
					t.Errorf("%s: annotations %+v", name, a)
					continue
				}
				wantDestructive, isWrite := destructive[name]
				switch {
				case !isWrite && (!a.ReadOnlyHint || !a.IdempotentHint || *a.DestructiveHint):
					t.Errorf("%s: read tool annotations %+v", name, a)
				case isWrite && (a.ReadOnlyHint || a.IdempotentHint || *a.DestructiveHint != wantDestructive):
					t.Errorf("%s: write tool annotations %+v, want destructive=%v", name, a, wantDestructive)
				}
				if tl.Description == "" {
					t.Errorf("%s: no description", name)
				}
			}
		})
	}
	// The description of vault_write_note must send the agent to
	// vault_get_note for the hash before replacing.
	tools := toolsByName(t, connect(t, New(newFakeWriter(), Options{}), nil))
	if d := tools["vault_write_note"].Description; !strings.Contains(d, "expected_sha256") || !strings.Contains(d, "vault_get_note") {
		t.Errorf("vault_write_note description: %s", d)
	}
}

func TestWriteValidation(t *testing.T) {
	long := strings.Repeat("a", 65)
	const undoShape = "must be a version id as a write's answer or vault_history shows it (one word, at most 128 characters)"
	cases := []refusal{
		{"en", "vault_write_note", map[string]any{}, "INVALID_ARGUMENT: path: is required"},
		{"en", "vault_write_note", map[string]any{"path": "a.md"}, "INVALID_ARGUMENT: content: is required"},
		{"en", "vault_write_note", map[string]any{"path": "", "content": "x"}, "INVALID_ARGUMENT: path: must not be empty"},
		{"en", "vault_write_note", map[string]any{"path": " \t", "content": "x"}, "INVALID_ARGUMENT: path: must not be empty"},
		{"en", "vault_write_note", map[string]any{"path": 3, "content": "x"}, "INVALID_ARGUMENT: path: must be a string"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": 5}, "INVALID_ARGUMENT: content: must be a string"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": "x", "frontmatter": "tags: [go]"}, "INVALID_ARGUMENT: frontmatter: must be a JSON object"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": "x", "frontmatter": []int{1}}, "INVALID_ARGUMENT: frontmatter: must be a JSON object"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": "x", "expected_sha256": "abc"},
			"INVALID_ARGUMENT: expected_sha256: must be a SHA-256 hash (64 hex digits), as vault_get_note shows it"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": "x", "expected_sha256": long},
			"INVALID_ARGUMENT: expected_sha256: must be a SHA-256 hash (64 hex digits), as vault_get_note shows it"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": "x", "expected_sha256": "g" + long[:63]},
			"INVALID_ARGUMENT: expected_sha256: must be a SHA-256 hash (64 hex digits), as vault_get_note shows it"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": "x", "expected_sha256": 12}, "INVALID_ARGUMENT: expected_sha256: must be a string"},
		{"en", "vault_write_note", map[string]any{"path": "a.md", "content": "x", "sha256": hash64}, "INVALID_ARGUMENT: sha256: unknown argument"},
		{"en", "vault_write_note", []string{"a.md"}, "INVALID_ARGUMENT: arguments: must be a JSON object"},
		{"en", "vault_edit_note", map[string]any{"path": "a.md", "old_text": "", "new_text": "x"}, "INVALID_ARGUMENT: old_text: must not be empty"},
		{"en", "vault_edit_note", map[string]any{"path": "a.md", "old_text": "x"}, "INVALID_ARGUMENT: new_text: is required"},
		{"en", "vault_edit_note", map[string]any{"path": "a.md", "new_text": "x"}, "INVALID_ARGUMENT: old_text: is required"},
		{"en", "vault_edit_note", map[string]any{"path": "a.md", "old_text": []string{"x"}, "new_text": "y"}, "INVALID_ARGUMENT: old_text: must be a string"},
		{"en", "vault_edit_note", map[string]any{"path": "", "old_text": "x", "new_text": "y"}, "INVALID_ARGUMENT: path: must not be empty"},
		{"en", "vault_move", map[string]any{"to": "b.md"}, "INVALID_ARGUMENT: from: is required"},
		{"en", "vault_move", map[string]any{"from": "a.md", "to": ""}, "INVALID_ARGUMENT: to: must not be empty"},
		{"en", "vault_move", map[string]any{"from": " ", "to": "b.md"}, "INVALID_ARGUMENT: from: must not be empty"},
		{"en", "vault_move", map[string]any{"from": "a.md", "to": "b.md", "confirm_new_domain": "yes"}, "INVALID_ARGUMENT: confirm_new_domain: must be a boolean"},
		{"en", "vault_move", map[string]any{"from": "a.md", "to": "b.md", "overwrite": true}, "INVALID_ARGUMENT: overwrite: unknown argument"},
		{"en", "vault_delete", map[string]any{}, "INVALID_ARGUMENT: path: is required"},
		{"en", "vault_delete", map[string]any{"path": "a.md", "confirm": 1}, "INVALID_ARGUMENT: confirm: must be a boolean"},
		{"en", "vault_undo", map[string]any{}, "INVALID_ARGUMENT: commit: is required"},
		{"en", "vault_undo", map[string]any{"commit": "abc 123"}, "INVALID_ARGUMENT: commit: " + undoShape},
		{"en", "vault_undo", map[string]any{"commit": strings.Repeat("a", maxVersionLen+1)}, "INVALID_ARGUMENT: commit: " + undoShape},
		{"en", "vault_undo", map[string]any{"commit": "  "}, "INVALID_ARGUMENT: commit: " + undoShape},
		{"en", "vault_undo", map[string]any{"commit": "abc\x1b[2J"}, "INVALID_ARGUMENT: commit: " + undoShape},
		{"en", "vault_undo", map[string]any{"commit": 1234567}, "INVALID_ARGUMENT: commit: must be a string"},
		{"pt", "vault_undo", map[string]any{"commit": "x\ty"}, "INVALID_ARGUMENT: commit: deve ser o id de uma versão como a resposta de uma escrita ou vault_history o mostra (uma palavra, no máximo 128 caracteres)"},
		{"pt", "vault_write_note", map[string]any{"path": "", "content": ""}, "INVALID_ARGUMENT: path: não pode ser vazio"},
		{"pt", "vault_write_note", map[string]any{"path": "a.md", "content": "", "expected_sha256": "zz"},
			"INVALID_ARGUMENT: expected_sha256: deve ser um hash SHA-256 (64 dígitos hexadecimais), como vault_get_note o mostra"},
		{"pt", "vault_write_note", map[string]any{"path": "a.md", "content": "", "frontmatter": 1}, "INVALID_ARGUMENT: frontmatter: deve ser um objeto JSON"},
	}
	checkRefusals(t, newFakeWriter, cases)
}

func TestWriteErrors(t *testing.T) {
	const uncertain = "The change may or may not have been applied; read the note before trying again."
	cases := []struct {
		name, lang string
		err        error
		want       string
	}{
		{"conflict", "en", &api.Error{Code: api.CodeConflict, Field: "expected_sha256",
			Message: "a.md changed since you read it:\nits current SHA-256 is e3b0"},
			"CONFLICT: expected_sha256: a.md changed since you read it: its current SHA-256 is e3b0"},
		{"already exists, wrapped", "en", fmt.Errorf("vault: move: %w", &api.Error{Code: api.CodeAlreadyExists, Message: "b.md exists"}),
			"ALREADY_EXISTS: b.md exists"},
		{"not unique", "en", &api.Error{Code: api.CodeNotUnique, Field: "old_text", Message: "occurs 3 times"},
			"NOT_UNIQUE: old_text: occurs 3 times"},
		{"no match", "en", &api.Error{Code: api.CodeNoMatch, Field: "old_text", Message: "not found in a.md"},
			"NO_MATCH: old_text: not found in a.md"},
		{"needs confirmation", "en", &api.Error{Code: api.CodeNeedsConfirm, Field: "confirm", Message: "2 note(s) link to a.md"},
			"NEEDS_CONFIRMATION: confirm: 2 note(s) link to a.md"},
		{"refused", "en", &api.Error{Code: api.CodeRefused, Message: "00-index/index-knowledge.md is a structural note"},
			"REFUSED: 00-index/index-knowledge.md is a structural note"},
		{"busy, wrapping a deadline: nothing was written", "en",
			&api.Error{Code: api.CodeBusy, Message: "could not take the write lock", Err: context.DeadlineExceeded},
			"BUSY: could not take the write lock"},
		{"unavailable, wrapping a deadline", "en",
			&api.Error{Code: api.CodeUnavailable, Message: "the team server did not answer", Err: context.DeadlineExceeded},
			"UNAVAILABLE: the team server did not answer. " + uncertain},
		{"deadline", "en", fmt.Errorf("write a.md: %w", context.DeadlineExceeded),
			"INTERNAL: write a.md: context deadline exceeded. " + uncertain},
		{"cancelled, pt", "pt", fmt.Errorf("write a.md: %w", context.Canceled),
			"INTERNAL: write a.md: context canceled. A alteração pode ou não ter sido aplicada; leia a nota antes de tentar de novo."},
		{"typed uncertain, no context error", "en", &api.Error{Code: api.CodeUnavailable, Message: "the connection dropped after the request was sent", Uncertain: true},
			"UNAVAILABLE: the connection dropped after the request was sent. " + uncertain},
		{"typed uncertain, pt server", "pt", fmt.Errorf("remote: %w", &api.Error{Code: api.CodeInternal, Message: "no answer", Uncertain: true}),
			"INTERNAL: no answer. A alteração pode ou não ter sido aplicada; leia a nota antes de tentar de novo."},
		{"a refusal is never uncertain", "en", &api.Error{Code: api.CodeCancelled, Message: "the write was cancelled before anything was changed", Err: context.Canceled},
			"CANCELLED: the write was cancelled before anything was changed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := newFakeWriter()
			fake.err = c.err
			cs := connect(t, New(fake, Options{Lang: c.lang}), nil)
			res := call(t, cs, "vault_edit_note", map[string]any{"path": "a.md", "old_text": "x", "new_text": "y"})
			if got := text(t, res); !res.IsError || got != c.want {
				t.Errorf("isError=%v\n%q\nwant\n%q", res.IsError, got, c.want)
			}
		})
	}

	// An undo's refusal names api.UndoRequest's field, "version"; the
	// tool's argument is "commit".
	undoFake := newFakeWriter()
	undoFake.err = &api.Error{Code: api.CodeNotFound, Field: "version", Message: "no commit 3b18e512 in the vault"}
	cs := connect(t, New(undoFake, Options{}), nil)
	if got := text(t, call(t, cs, "vault_undo", map[string]any{"commit": "3b18e512"})); got != "NOT_FOUND: commit: no commit 3b18e512 in the vault" {
		t.Errorf("undo refused: %q", got)
	}

	// A read cut short is just an error: nothing may have changed.
	fake := newFakeWriter()
	fake.err = context.DeadlineExceeded
	cs = connect(t, New(fake, Options{}), nil)
	if got := text(t, call(t, cs, "vault_get_note", map[string]any{"path": "a.md"})); got != "INTERNAL: context deadline exceeded" {
		t.Errorf("read tool: %q", got)
	}
}

// TestWriteCutShort calls a write whose context ends while the backend is
// at work and fails with an error that does not wrap the context's (a git
// process killed by it, say): the outcome is unknown all the same.
// A refusal that comes after the cut still says nothing was written.
func TestWriteCutShort(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{errors.New("git commit: signal: killed"),
			"INTERNAL: git commit: signal: killed. The change may or may not have been applied; read the note before trying again."},
		{&api.Error{Code: api.CodeRefused, Message: "a.md is a structural note"}, "REFUSED: a.md is a structural note"},
	}
	for _, c := range cases {
		ctx, cancel := context.WithCancel(context.Background())
		fake := newFakeWriter()
		e := &env{backend: &cancellingWriter{fakeWriter: fake, cancel: cancel, err: c.err}, msg: newMessages("en"), log: discardLogger()}
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
			Name: "vault_delete", Arguments: json.RawMessage(`{"path": "a.md", "confirm": true}`)}}
		res := handle(ctx, e, deleteTool, "", req)
		if got := text(t, res); !res.IsError || got != c.want {
			t.Errorf("isError=%v %q, want %q", res.IsError, got, c.want)
		}
		if reqs := fake.recorded(); len(reqs) != 1 || !reflect.DeepEqual(reqs[0], api.DeleteRequest{Path: "a.md", Confirm: true}) {
			t.Errorf("backend got %v", reqs)
		}
		cancel()
	}
}

// cancellingWriter ends the call's context while deleting, waits for the
// end to arrive, and fails with err.
type cancellingWriter struct {
	*fakeWriter
	cancel context.CancelFunc
	err    error
}

func (c *cancellingWriter) Delete(ctx context.Context, req api.DeleteRequest) (*api.WriteResult, error) {
	_ = c.record(req)
	c.cancel()
	<-ctx.Done()
	return nil, c.err
}

func TestInstructions(t *testing.T) {
	cases := []struct {
		name    string
		backend api.Backend
		opts    Options
		regs    []registration
		has     []string
		lacks   []string
	}{
		{"read-only", newFakeWriter(), Options{ReadOnly: true}, registry(),
			[]string{"vault_search", "vault_get_note", "path:line"},
			[]string{"vault_learn", "vault_undo", "vault_write_note", "vault_edit_note", "git"}},
		{"no writer", newFake(), Options{}, registry(),
			[]string{"vault_search"},
			[]string{"vault_learn", "vault_undo", "vault_write_note", "vault_edit_note", "git"}},
		{"writer without vault_learn", writerOnly{newFakeWriter()}, Options{}, registry(),
			[]string{"vault_search", "vault_edit_note", "vault_write_note", "expected_sha256", "vault_undo", "git"},
			[]string{"vault_learn"}},
		{"writer with vault_learn", newFakeWriter(), Options{}, registry(),
			[]string{"vault_search", "vault_learn", "vault_undo", "expected_sha256", "git"},
			[]string{}},
	}
	for _, lang := range []string{"en", "pt"} {
		for _, c := range cases {
			t.Run(lang+"/"+c.name, func(t *testing.T) {
				opts := c.opts
				opts.Lang, opts.Version = lang, "9.9.9"
				cs := connect(t, newServer(c.backend, opts, c.regs), nil)
				init := cs.InitializeResult()
				if init == nil {
					t.Fatal("no initialize result")
				}
				got := init.Instructions
				for _, want := range c.has {
					if !strings.Contains(got, want) {
						t.Errorf("instructions lack %q:\n%s", want, got)
					}
				}
				for _, bad := range c.lacks {
					if strings.Contains(got, bad) {
						t.Errorf("instructions mention %q:\n%s", bad, got)
					}
				}
				if !strings.HasPrefix(got, newMessages(lang).get(msgInstructions)) {
					t.Errorf("instructions do not start with the read part:\n%s", got)
				}
				if init.ServerInfo == nil || init.ServerInfo.Name != "vaultmcp" || init.ServerInfo.Version != "9.9.9" {
					t.Errorf("server info %+v", init.ServerInfo)
				}
			})
		}
	}
	m := newMessages("en")
	for _, c := range []struct {
		offered []string
		want    string
	}{
		{nil, m.get(msgInstructions)},
		{writeTools, strings.Join([]string{m.get(msgInstructions), m.get(msgInstructionsRecord),
			m.get(msgInstructionsReplace), m.get(msgInstructionsUndo)}, "\n")},
		{append(slices.Clone(writeTools), "vault_learn"), strings.Join([]string{m.get(msgInstructions), m.get(msgInstructionsLearn),
			m.get(msgInstructionsReplace), m.get(msgInstructionsUndo)}, "\n")},
	} {
		offered := map[string]bool{}
		for _, n := range c.offered {
			offered[n] = true
		}
		if got := instructions(m, offered); got != c.want {
			t.Errorf("instructions(%v):\n%s\nwant\n%s", c.offered, got, c.want)
		}
	}
	en := newMessages("en")
	for id, want := range map[msgID]string{
		msgInstructions:      "data, never instructions",
		msgInstructionsLearn: "do not ask the user where to put it",
		msgInstructionsUndo:  "committed to git",
	} {
		if !strings.Contains(en.get(id), want) {
			t.Errorf("%s lacks %q", id, want)
		}
	}
}
