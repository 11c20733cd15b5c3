package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// fakeBackend returns canned results and records every request it gets.
type fakeBackend struct {
	mu       sync.Mutex
	requests []any

	search    *api.SearchResult
	note      *api.Note
	list      *api.ListResult
	backlinks *api.BacklinksResult
	graph     *api.GraphResult
	history   *api.HistoryResult

	err      error                     // returned by every call when set
	panicked string                    // panics with this when set
	onSearch func(ctx context.Context) // runs inside Search when set
}

func (f *fakeBackend) record(req any) error {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	err, p := f.err, f.panicked
	f.mu.Unlock()
	if p != "" {
		panic(p)
	}
	return err
}

func (f *fakeBackend) recorded() []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeBackend) Search(ctx context.Context, req api.SearchRequest) (*api.SearchResult, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	if f.onSearch != nil {
		f.onSearch(ctx)
	}
	return f.search, nil
}

func (f *fakeBackend) GetNote(_ context.Context, req api.NoteRequest) (*api.Note, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	return f.note, nil
}

func (f *fakeBackend) List(_ context.Context, req api.ListRequest) (*api.ListResult, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	return f.list, nil
}

func (f *fakeBackend) Backlinks(_ context.Context, req api.BacklinksRequest) (*api.BacklinksResult, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	return f.backlinks, nil
}

func (f *fakeBackend) Graph(_ context.Context, req api.GraphRequest) (*api.GraphResult, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	return f.graph, nil
}

func (f *fakeBackend) History(_ context.Context, req api.HistoryRequest) (*api.HistoryResult, error) {
	if err := f.record(req); err != nil {
		return nil, err
	}
	return f.history, nil
}

func newFake() *fakeBackend {
	return &fakeBackend{
		search:    searchFixture(),
		note:      noteFixture(),
		list:      listFixture(),
		backlinks: backlinksFixture(),
		graph:     graphFixture(),
		history:   historyFixture(),
	}
}

// connect runs srv and a client over in-memory transports.
func connect(t *testing.T, srv *mcp.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0.0.1"}, copts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// jsonValue turns v into the generic JSON value it marshals to.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func toolsByName(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		m[tl.Name] = tl
	}
	return m
}

func resolveSchema(t *testing.T, s any) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	r, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestToolsEndToEnd(t *testing.T) {
	for _, lang := range []string{"en", "pt"} {
		t.Run(lang, func(t *testing.T) {
			fake := newFake()
			cs := connect(t, New(fake, Options{Lang: lang, Version: "1.2.3"}), nil)
			m := newMessages(lang)
			tools := toolsByName(t, cs)

			cases := []struct {
				tool    string
				args    map[string]any
				rawArgs string // sent as is instead of args when set
				wantReq any
				result  any
				want    string
			}{
				{
					tool: "vault_search",
					args: map[string]any{"query": "deploy steps", "limit": 10, "type": "wiki", "folder": "02-wiki",
						"tags": []string{"ops", "ci"}, "status": "active", "include_raw": true},
					wantReq: api.SearchRequest{Query: "deploy steps", Limit: 10, Type: "wiki", Folder: "02-wiki",
						Tags: []string{"ops", "ci"}, Status: "active", IncludeRaw: true},
					result: newSearchOutput(api.SearchRequest{}, fake.search),
					want:   renderSearch(m, api.SearchRequest{}, fake.search),
				},
				{
					tool:    "vault_search",
					args:    map[string]any{"query": "deploy", "explain": true},
					wantReq: api.SearchRequest{Query: "deploy", Explain: true},
					result:  newSearchOutput(api.SearchRequest{Explain: true}, fake.search),
					want:    renderSearch(m, api.SearchRequest{Explain: true}, fake.search),
				},
				{
					tool:    "vault_search",
					args:    map[string]any{"query": "deploy", "tags": nil, "limit": nil},
					wantReq: api.SearchRequest{Query: "deploy"},
					result:  newSearchOutput(api.SearchRequest{}, fake.search),
					want:    renderSearch(m, api.SearchRequest{}, fake.search),
				},
				{
					tool:    "vault_search",
					rawArgs: `{"query": "deploy", "limit": 5.0}`,
					wantReq: api.SearchRequest{Query: "deploy", Limit: 5},
					result:  newSearchOutput(api.SearchRequest{}, fake.search),
					want:    renderSearch(m, api.SearchRequest{}, fake.search),
				},
				{
					tool:    "vault_get_note",
					args:    map[string]any{"path": "02-wiki/ops/deploy.md", "offset": 20000},
					wantReq: api.NoteRequest{Path: "02-wiki/ops/deploy.md", Offset: 20000},
					result:  fake.note,
					want:    renderNote(m, fake.note),
				},
				{
					tool:    "vault_list",
					args:    map[string]any{"type": "wiki", "tags": []string{"go"}, "status": "active", "folder": "02-wiki"},
					wantReq: api.ListRequest{Type: "wiki", Tags: []string{"go"}, Status: "active", Folder: "02-wiki", Limit: api.MaxListNotes},
					result:  fake.list,
					want:    renderList(m, fake.list),
				},
				{
					tool:    "vault_list",
					args:    map[string]any{},
					wantReq: api.ListRequest{Limit: api.MaxListNotes},
					result:  fake.list,
					want:    renderList(m, fake.list),
				},
				{
					tool:    "vault_backlinks",
					args:    map[string]any{"path": "02-wiki/go/errors.md"},
					wantReq: api.BacklinksRequest{Path: "02-wiki/go/errors.md"},
					result:  fake.backlinks,
					want:    renderBacklinks(m, api.BacklinksRequest{}, fake.backlinks),
				},
				{
					tool: "vault_graph",
					args: map[string]any{"folder": "02-wiki", "type": "wiki", "tags": []string{"go"}, "status": "active",
						"include_raw": true, "include_broken": true, "max_nodes": 3},
					wantReq: api.GraphRequest{Folder: "02-wiki", Type: "wiki", Tags: []string{"go"}, Status: "active",
						IncludeRaw: true, IncludeBroken: true, MaxNodes: 3},
					result: fake.graph,
					want:   renderGraph(m, api.GraphRequest{IncludeBroken: true, MaxNodes: 3}, fake.graph),
				},
				{
					tool:    "vault_history",
					args:    map[string]any{"path": "02-wiki/go/errors.md", "limit": 200},
					wantReq: api.HistoryRequest{Path: "02-wiki/go/errors.md", Limit: 200},
					result:  fake.history,
					want:    renderHistory(m, api.HistoryRequest{}, fake.history),
				},
			}
			called := map[string]bool{}
			for i, c := range cases {
				var args any = c.args
				if c.rawArgs != "" {
					args = json.RawMessage(c.rawArgs)
				}
				res := call(t, cs, c.tool, args)
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
				if err := resolveSchema(t, tl.InputSchema).Validate(jsonValue(t, withoutNulls(c.args))); c.rawArgs == "" && err != nil {
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
			for name := range tools {
				if !called[name] {
					t.Errorf("tool %s is not exercised by this test", name)
				}
			}
		})
	}
}

func withoutNulls(args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

type writeInput struct {
	Path string `json:"path" jsonschema:"where"`
}

// TestReadOnlyLeavesWriteToolsOut registers a write and a destructive tool
// next to the real ones: read-only mode must leave both out, and their
// annotations must follow their effect.
func TestReadOnlyLeavesWriteToolsOut(t *testing.T) {
	mk := func(name string, e effect) registration {
		return tool(toolSpec[writeInput, api.Note]{
			Name: name, Title: name, Description: "test", Effect: e,
			Call: func(context.Context, api.Backend, writeInput) (*api.Note, error) {
				return &api.Note{}, nil
			},
			Render: func(*messages, writeInput, *api.Note) string { return "done" },
		})
	}
	regs := append(registry(), mk("test_write", effectWrite), mk("test_delete", effectDestructive))

	tools := toolsByName(t, connect(t, newServer(newFake(), Options{ReadOnly: true}, regs), nil))
	if tools["test_write"] != nil || tools["test_delete"] != nil || tools["vault_search"] == nil {
		t.Errorf("read-only tool list: %v", slices.Sorted(func(yield func(string) bool) {
			for k := range tools {
				if !yield(k) {
					return
				}
			}
		}))
	}

	tools = toolsByName(t, connect(t, newServer(newFake(), Options{}, regs), nil))
	w, d := tools["test_write"], tools["test_delete"]
	if w == nil || d == nil {
		t.Fatalf("write tools missing in read-write mode")
	}
	if a := w.Annotations; a.ReadOnlyHint || a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("write annotations %+v", a)
	}
	if a := d.Annotations; a.ReadOnlyHint || a.IdempotentHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("destructive annotations %+v", a)
	}
}

// refusal is a call the server must refuse before asking the backend.
type refusal struct {
	lang, tool string
	args       any
	want       string
}

// checkRefusals makes each call on a server of its language whose backend
// comes from newBackend, and checks that it is refused with the one line
// want and no structured content, and that no call reached a backend.
func checkRefusals[B interface {
	api.Backend
	recorded() []any
}](t *testing.T, newBackend func() B, cases []refusal) {
	t.Helper()
	sessions := map[string]*mcp.ClientSession{}
	backends := map[string]B{}
	for _, lang := range []string{"en", "pt"} {
		backends[lang] = newBackend()
		sessions[lang] = connect(t, New(backends[lang], Options{Lang: lang}), nil)
	}
	for _, c := range cases {
		res := call(t, sessions[c.lang], c.tool, c.args)
		got := text(t, res)
		if !res.IsError || got != c.want {
			t.Errorf("%s %s %v: isError=%v %q, want %q", c.lang, c.tool, c.args, res.IsError, got, c.want)
		}
		if res.StructuredContent != nil {
			t.Errorf("%s %v: error result has structured content %v", c.tool, c.args, res.StructuredContent)
		}
	}
	for lang, b := range backends {
		if reqs := b.recorded(); len(reqs) != 0 {
			t.Errorf("%s: invalid calls reached the backend: %v", lang, reqs)
		}
	}
}

func TestValidation(t *testing.T) {
	cases := []refusal{
		{"en", "vault_search", map[string]any{}, "INVALID_ARGUMENT: query: is required"},
		{"en", "vault_search", map[string]any{"query": nil}, "INVALID_ARGUMENT: query: is required"},
		{"en", "vault_search", map[string]any{"query": " \t\n "}, "INVALID_ARGUMENT: query: must not be empty"},
		{"en", "vault_search", map[string]any{"query": 5}, "INVALID_ARGUMENT: query: must be a string"},
		{"en", "vault_search", map[string]any{"query": "x", "limit": 0}, "INVALID_ARGUMENT: limit: must be between 1 and 50"},
		{"en", "vault_search", map[string]any{"query": "x", "limit": 51}, "INVALID_ARGUMENT: limit: must be between 1 and 50"},
		{"en", "vault_search", map[string]any{"query": "x", "limit": -3}, "INVALID_ARGUMENT: limit: must be between 1 and 50"},
		{"en", "vault_search", map[string]any{"query": "x", "limit": "5"}, "INVALID_ARGUMENT: limit: must be an integer"},
		{"en", "vault_search", map[string]any{"query": "x", "limit": 2.5}, "INVALID_ARGUMENT: limit: must be an integer"},
		{"en", "vault_search", map[string]any{"query": "x", "limit": 1e300}, "INVALID_ARGUMENT: limit: must be an integer"},
		{"en", "vault_search", json.RawMessage(`{"query": "x", "limit": 1e2}`), "INVALID_ARGUMENT: limit: must be between 1 and 50"},
		{"en", "vault_search", map[string]any{"query": "x", "tags": "go"}, "INVALID_ARGUMENT: tags: must be an array of strings"},
		{"en", "vault_search", map[string]any{"query": "x", "tags": []any{"go", 1}}, "INVALID_ARGUMENT: tags: must be an array of strings"},
		{"en", "vault_search", map[string]any{"query": "x", "include_raw": "yes"}, "INVALID_ARGUMENT: include_raw: must be a boolean"},
		{"en", "vault_search", map[string]any{"query": "x", "lmit": 5}, "INVALID_ARGUMENT: lmit: unknown argument"},
		{"en", "vault_search", map[string]any{"query": "x", "Query": "y"}, "INVALID_ARGUMENT: Query: unknown argument"},
		{"en", "vault_search", map[string]any{"query": "x", "evil\x1b[2J\u202e": 1}, `INVALID_ARGUMENT: evil\x1b[2J\u202e: unknown argument`},
		{"en", "vault_search", []int{1, 2}, "INVALID_ARGUMENT: arguments: must be a JSON object"},
		{"en", "vault_get_note", map[string]any{}, "INVALID_ARGUMENT: path: is required"},
		{"en", "vault_get_note", map[string]any{"path": "a.md", "offset": -1}, "INVALID_ARGUMENT: offset: must be at least 0"},
		{"en", "vault_backlinks", map[string]any{"path": []string{"a.md"}}, "INVALID_ARGUMENT: path: must be a string"},
		{"en", "vault_graph", map[string]any{"max_nodes": 0}, "INVALID_ARGUMENT: max_nodes: must be between 1 and 5000"},
		{"en", "vault_graph", map[string]any{"max_nodes": 5001}, "INVALID_ARGUMENT: max_nodes: must be between 1 and 5000"},
		{"en", "vault_history", map[string]any{"path": "a.md", "limit": 201}, "INVALID_ARGUMENT: limit: must be between 1 and 200"},
		{"en", "vault_history", map[string]any{"path": "a.md", "limit": 0}, "INVALID_ARGUMENT: limit: must be between 1 and 200"},
		{"en", "vault_list", map[string]any{"tags": map[string]any{}}, "INVALID_ARGUMENT: tags: must be an array of strings"},
		{"pt", "vault_search", map[string]any{"query": "  "}, "INVALID_ARGUMENT: query: não pode ser vazio"},
		{"pt", "vault_search", map[string]any{"query": "x", "limit": 99}, "INVALID_ARGUMENT: limit: deve estar entre 1 e 50"},
		{"pt", "vault_get_note", map[string]any{"offset": 1}, "INVALID_ARGUMENT: path: é obrigatório"},
	}
	checkRefusals(t, newFake, cases)
}

// codedErr is an error from another package with a stable code, as the
// gatekeeper's errors are.
type codedErr struct{ code, msg string }

func (e codedErr) Error() string     { return e.msg }
func (e codedErr) ErrorCode() string { return e.code }

func TestBackendErrors(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		panic string
		want  string
	}{
		{"api error", api.Invalid("path", "must end in .md"), "", "INVALID_ARGUMENT: path: must end in .md"},
		{"coded error wrapped", fmt.Errorf("get note: %w", codedErr{"PATH_ESCAPE", "PATH_ESCAPE: ../x.md leaves the vault"}), "",
			"PATH_ESCAPE: ../x.md leaves the vault"},
		{"api error wrapped", fmt.Errorf("vault: search: %w", &api.Error{Code: api.CodeUnavailable, Message: "index closed"}), "",
			"UNAVAILABLE: index closed"},
		{"context cancelled", fmt.Errorf("search: %w", context.Canceled), "", "INTERNAL: search: context canceled"},
		{"coded error without code in text", codedErr{"NOT_FOUND", "no such note: a.md"}, "", "NOT_FOUND: no such note: a.md"},
		{"plain multi-line error", errors.New("disk on fire\n\tsecond line\x1b[0m"), "", `INTERNAL: disk on fire second line\x1b[0m`},
		{"unavailable", &api.Error{Code: api.CodeUnavailable, Message: "index is being rebuilt"}, "", "UNAVAILABLE: index is being rebuilt"},
		{"panic", nil, "nil map write", "INTERNAL: internal error in vault_list; the server log has the details"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			fake := newFake()
			fake.err, fake.panicked = c.err, c.panic
			logger := slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
			cs := connect(t, New(fake, Options{Logger: logger}), nil)
			res := call(t, cs, "vault_list", map[string]any{})
			if got := text(t, res); !res.IsError || got != c.want {
				t.Errorf("isError=%v %q, want %q", res.IsError, got, c.want)
			}
			// The server survives and answers the next call.
			fake.mu.Lock()
			fake.err, fake.panicked = nil, ""
			fake.mu.Unlock()
			if res := call(t, cs, "vault_list", map[string]any{}); res.IsError {
				t.Errorf("call after failure: %s", text(t, res))
			}
			if c.panic != "" && !strings.Contains(logs.String(), c.panic) {
				t.Errorf("panic not logged: %s", logs.String())
			}
		})
	}

	t.Run("no result", func(t *testing.T) {
		fake := newFake()
		fake.history = nil
		cs := connect(t, New(fake, Options{Lang: "pt"}), nil)
		res := call(t, cs, "vault_history", map[string]any{"path": "a.md"})
		if got := text(t, res); !res.IsError || got != "INTERNAL: o cofre não devolveu resultado" {
			t.Errorf("isError=%v %q", res.IsError, got)
		}
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func TestSearchProgress(t *testing.T) {
	received := make(chan *mcp.ProgressNotificationParams, 8)
	fake := newFake()
	var (
		sawReporter []bool
		got         []string
	)
	// Each step waits until the client has seen the notification, so the
	// relay has nothing to coalesce and the test needs no clock.
	await := func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case n := <-received:
			got = append(got, fmt.Sprintf("%v %v/%v %s", n.ProgressToken, n.Progress, n.Total, n.Message))
		}
	}
	fake.onSearch = func(ctx context.Context) {
		report := api.Progress(ctx)
		sawReporter = append(sawReporter, report != nil)
		if report == nil {
			return
		}
		report(1, 4, "indexing 1/4")
		await(ctx)
		report(1, 4, "no increase: dropped")
		report(0, 4, "a decrease: dropped")
		report(4, 4, "indexed")
		await(ctx)
	}
	cs := connect(t, New(fake, Options{}), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			received <- req.Params
		},
	})
	params := &mcp.CallToolParams{Name: "vault_search", Arguments: map[string]any{"query": "deploy"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("search: %v %v", err, res)
	}
	want := []string{"tok-1 1/4 indexing 1/4", "tok-1 4/4 indexed"}
	if !slices.Equal(got, want) {
		t.Errorf("progress notifications %q, want %q", got, want)
	}

	// Without a token the backend gets no reporter.
	if res := call(t, cs, "vault_search", map[string]any{"query": "deploy"}); res.IsError {
		t.Fatal(text(t, res))
	}
	if !slices.Equal(sawReporter, []bool{true, false}) {
		t.Errorf("reporter attached: %v, want [true false]", sawReporter)
	}
}

func TestToolSchemasGolden(t *testing.T) {
	cs := connect(t, New(newFakeWriter(), Options{}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := slices.Clone(res.Tools)
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	got, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tools.golden.json", append(got, '\n'))
}

// TestLogLevelChecked: logging/setLevel takes the levels the specification
// names and refuses any other with invalid params, as it asks.
func TestLogLevelChecked(t *testing.T) {
	cs := connect(t, New(newFake(), Options{}), nil)
	ctx := context.Background()
	for _, level := range []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			t.Errorf("level %s: %v", level, err)
		}
	}
	for _, level := range []mcp.LoggingLevel{"bogus", "", "DEBUG", "warn"} {
		err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("level %q: %v, want invalid params", level, err)
		}
	}
}

// TestListAnswerBounded: vault_list's answer, its structured content as
// well as its text, lists at most api.MaxListNotes notes, with the total;
// the backend's result is left as it was.
func TestListAnswerBounded(t *testing.T) {
	fake := newFake()
	fake.list = &api.ListResult{}
	for i := range api.MaxListNotes + 5 {
		fake.list.Notes = append(fake.list.Notes, api.NoteSummary{Path: fmt.Sprintf("04-daily/%05d.md", i), Title: "d"})
	}
	fake.list.Total = len(fake.list.Notes)
	cs := connect(t, New(fake, Options{}), nil)
	res := call(t, cs, "vault_list", map[string]any{})
	var got api.ListResult
	data, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(data, &got)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Notes) != api.MaxListNotes || got.Total != api.MaxListNotes+5 || got.Notes[len(got.Notes)-1].Path != fmt.Sprintf("04-daily/%05d.md", api.MaxListNotes-1) {
		t.Errorf("structured content: %d notes, total %d", len(got.Notes), got.Total)
	}
	if txt := text(t, res); !strings.HasPrefix(txt, fmt.Sprintf("%d note(s):\n", api.MaxListNotes+5)) || !strings.Contains(txt, "\n… and 5 more notes") {
		t.Errorf("text starts %q, ends %q", txt[:40], txt[len(txt)-40:])
	}
	if len(fake.list.Notes) != api.MaxListNotes+5 {
		t.Errorf("the backend's result was cut to %d notes", len(fake.list.Notes))
	}
}
