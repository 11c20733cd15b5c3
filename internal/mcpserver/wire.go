package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
)

// A tool answer is encoded once on its way out.
//
// The SDK marshals an *mcp.CallToolResult through two MarshalJSON methods
// (the result's and each text content's), and encoding/json validates and
// compacts what a MarshalJSON returns byte by byte: the text of a search
// answer (7 kB on the obsidian-hub vault) went through encoding/json three
// times and the structured content twice, which cost more than the search
// itself. oneEncoding hands the SDK the same answer as a wireResult, a plain
// struct that encoding/json writes in one pass (strings escaped once, no
// compaction), with the same JSON value: the same members, the same
// content, the fields the SDK sets (resultType for clients of protocol
// 2026-07-28 and later) taken from the SDK's own encoding of the result
// without its content. A result this does not know how to write the same
// way (content other than plain text, input requests, a member this does not
// know) goes out as the SDK writes it. A test compares the two encodings on
// every tool and both protocol generations.

// oneEncoding is the outermost receiving middleware: it replaces the
// result of a tools/call by its wireResult.
func oneEncoding() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && err == nil && method == "tools/call" {
				if w := newWireResult(r); w != nil {
					if extra := req.GetExtra(); jsonrpcio.InPlace(extra) {
						return &inPlaceResult{wireResult: w, extra: extra}, nil
					}
					return w, nil
				}
			}
			return res, err
		}
	}
}

// wireResult is an *mcp.CallToolResult as it goes on the wire. It embeds
// the result to be an mcp.Result (with the SDK's own methods, so that what
// the SDK does to the result after the middleware, such as adding _meta and
// resultType for clients of the per-request protocol, is done to it); the
// MarshalJSON field hides the result's MarshalJSON method, so that
// encoding/json writes the exported fields below directly, in one pass. The
// members other than the content are read when the answer is encoded, from
// the SDK's own encoding of the result without its content (rest).
type wireResult struct {
	*mcp.CallToolResult `json:"-"`
	MarshalJSON         struct{} `json:"-"`

	Meta              restMember `json:"_meta,omitzero"`
	Content           []wireText `json:"content"`
	StructuredContent any        `json:"structuredContent,omitempty"`
	IsError           restMember `json:"isError,omitzero"`
	ResultType        restMember `json:"resultType,omitzero"`

	members map[string]json.RawMessage // of rest, once read
}

// wireText is a text content block.
type wireText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// wireMembers are the members of a result besides its content that a
// wireResult writes; a result with any other is left to the SDK.
var wireMembers = map[string]bool{"_meta": true, "content": true, "isError": true, "resultType": true}

// newWireResult is r as a wireResult, or nil when r holds anything it does
// not write as the SDK does.
func newWireResult(r *mcp.CallToolResult) *wireResult {
	w := &wireResult{CallToolResult: r, Content: make([]wireText, len(r.Content)), StructuredContent: r.StructuredContent}
	for i, c := range r.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t.Meta != nil || t.Annotations != nil {
			return nil
		}
		w.Content[i] = wireText{Type: "text", Text: t.Text}
	}
	members, ok := rest(r)
	if !ok {
		return nil
	}
	for k := range members {
		if !wireMembers[k] {
			return nil
		}
	}
	w.Meta = restMember{w, "_meta"}
	w.IsError = restMember{w, "isError"}
	w.ResultType = restMember{w, "resultType"}
	return w
}

// rest is the members of r as the SDK encodes it with no content: small,
// and with the unexported result type. The members of a result without
// _meta are one of a few (isError or not, a result type or not): they are
// decoded once each and kept (restCache), read only.
func rest(r *mcp.CallToolResult) (map[string]json.RawMessage, bool) {
	c := *r
	c.Content, c.StructuredContent = []mcp.Content{}, nil
	data, err := c.MarshalJSON()
	if err != nil {
		return nil, false
	}
	if r.Meta == nil {
		if m, ok := restCache.Load(string(data)); ok {
			return m.(map[string]json.RawMessage), true
		}
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil || string(members["content"]) != "[]" {
		return nil, false
	}
	if r.Meta == nil && restCached.Add(1) <= maxRestCache {
		restCache.Store(string(data), members)
	}
	return members, true
}

// restCache holds the decoded members of the encodings of results without
// _meta (rest), at most maxRestCache of them.
var (
	restCache  sync.Map // string -> map[string]json.RawMessage
	restCached atomic.Int64
)

const maxRestCache = 64

// restMember is one member of the SDK's encoding of the result without its
// content, read when encoding/json writes the wireResult.
type restMember struct {
	w    *wireResult
	name string
}

func (m restMember) value() json.RawMessage {
	if m.w == nil {
		return nil
	}
	if m.w.members == nil {
		m.w.members, _ = rest(m.w.CallToolResult)
	}
	return m.w.members[m.name]
}

// IsZero leaves the member out (omitzero) when the SDK writes none.
func (m restMember) IsZero() bool { return m.value() == nil }

// MarshalJSON is the member as the SDK writes it.
func (m restMember) MarshalJSON() ([]byte, error) { return m.value(), nil }
