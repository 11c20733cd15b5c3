package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recording is a server transport that keeps the raw results of the tool
// answers the server writes, in order.
type recording struct {
	mcp.Transport
	mu      sync.Mutex
	results []json.RawMessage
}

func (r *recording) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return &recordingConn{Connection: c, r: r}, err
}

type recordingConn struct {
	mcp.Connection
	r *recording
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var members map[string]json.RawMessage
	if res, ok := msg.(*jsonrpc.Response); ok && res.Error == nil && json.Unmarshal(res.Result, &members) == nil && members["content"] != nil {
		c.r.mu.Lock()
		c.r.results = append(c.r.results, append(json.RawMessage(nil), res.Result...))
		c.r.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// wireCalls are tool calls whose answers cover every kind of result: each
// tool of a local server, hostile text (control, bidi and HTML characters),
// explanations, errors, an unknown tool, writes with diffs.
var wireCalls = []struct {
	tool string
	args map[string]any
}{
	{"vault_search", map[string]any{"query": "deploy"}},
	{"vault_search", map[string]any{"query": "deploy", "explain": true}},
	{"vault_search", map[string]any{"query": "deploy", "limit": 0}},
	{"vault_get_note", map[string]any{"path": "02-wiki/ops/deploy.md"}},
	{"vault_list", map[string]any{}},
	{"vault_backlinks", map[string]any{"path": "02-wiki/go/errors.md"}},
	{"vault_graph", map[string]any{"max_nodes": 3}},
	{"vault_history", map[string]any{"path": "02-wiki/go/errors.md"}},
	{"vault_write_note", map[string]any{"path": "02-wiki/go/errors.md", "content": "# Errors <b>&</b>\n"}},
	{"vault_move", map[string]any{"from": "01-raw/a.md", "to": "02-wiki/go/a.md"}},
	{"vault_edit_note", map[string]any{"path": "02-wiki/go/errors.md", "old_text": "Wrap errors with %v.", "new_text": ""}},
	{"vault_delete", map[string]any{"path": "02-wiki/go/old.md", "confirm": true}},
	{"vault_undo", map[string]any{"commit": "3B18E512"}},
	{"vault_learn", map[string]any{"title": "Retry <with> jitter", "insight": "Full jitter & a cap.", "context": "ops", "domain": "go"}},
	{"vault_no_such_tool", map[string]any{}},
}

// answers makes wireCalls on a server (with the one-pass encoding or the
// SDK's) through a client of the given protocol version, and returns the
// raw results the server wrote for them, in order.
func answers(t *testing.T, sdkEncoding bool, protocol string) []json.RawMessage {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	rec := &recording{Transport: st}
	ss, err := New(newFakeWriter(), Options{sdkEncoding: sdkEncoding}).Connect(ctx, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cs.Close()
		_ = ss.Wait()
	}()
	if got := cs.InitializeResult().ProtocolVersion; got != protocol {
		t.Fatalf("protocol %s negotiated, want %s", got, protocol)
	}
	for _, c := range wireCalls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.results) != len(wireCalls) {
		t.Fatalf("%d tool answers recorded, want %d", len(rec.results), len(wireCalls))
	}
	return rec.results
}

// Every tool answer is the same JSON value whether the server encodes it
// in one pass or leaves it to the SDK, for clients of either protocol
// generation (2026-07-28 adds resultType to results).
func TestOneEncodingSameAnswers(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			fast, sdk := answers(t, false, protocol), answers(t, true, protocol)
			for i, c := range wireCalls {
				var f, s any
				if err := json.Unmarshal(fast[i], &f); err != nil {
					t.Fatalf("%s: one-pass answer is not JSON: %v", c.tool, err)
				}
				if err := json.Unmarshal(sdk[i], &s); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(f, s) {
					t.Errorf("%s: one-pass answer\n%s\nSDK's\n%s", c.tool, fast[i], sdk[i])
				}
			}
			// The 2026-07-28 schema requires resultType on every result:
			// the answer to an unknown tool, made before any tool handler,
			// too.
			for i, c := range wireCalls {
				if protocol >= "2026-07-28" && !strings.Contains(string(fast[i]), `"resultType":"complete"`) {
					t.Errorf("%s: no resultType in %s", c.tool, fast[i])
				}
			}
		})
	}
}

// A result holding what the one-pass encoding does not write (content that
// is not plain text, input requests) is left to the SDK.
func TestOneEncodingLeavesOthers(t *testing.T) {
	for _, r := range []*mcp.CallToolResult{
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": 1}}}},
		{Content: []mcp.Content{}, RequestState: "state"},
	} {
		if w := newWireResult(r); w != nil {
			t.Errorf("%+v written in one pass", r)
		}
	}
	r := &mcp.CallToolResult{Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}},
		StructuredContent: map[string]any{"n": 1}, IsError: true}
	w := newWireResult(r)
	if w == nil {
		t.Fatal("a plain result was left to the SDK")
	}
	got, _ := json.Marshal(w)
	want, _ := json.Marshal(r)
	var g, s any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal(want, &s)
	if !reflect.DeepEqual(g, s) {
		t.Errorf("one pass %s, SDK %s", got, want)
	}
	if _, ok := any(w).(json.Marshaler); ok {
		t.Error("wireResult has a MarshalJSON method: encoding/json would compact its output again")
	}
}
