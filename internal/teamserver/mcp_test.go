package teamserver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// keyTransport adds the API key to every request of an MCP client.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

func (e *env) mcpSession(t *testing.T, path, key string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.http.URL + path, HTTPClient: &http.Client{Transport: keyTransport{key}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func toolNames(t *testing.T, s *mcp.ClientSession) map[string]bool {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
	}
	return names
}

// MCP over Streamable HTTP per project, with the REST API's keys: a
// read-write key gets every tool and its writes are authored, given ids
// and audited like REST writes; a read-only key gets only the read tools.
func TestMCPEndpoint(t *testing.T) {
	e := newEnv(t, envOpts{})
	s := e.mcpSession(t, "/projects/ex/mcp", e.rw)
	if names := toolNames(t, s); !names["vault_search"] || !names["vault_write_note"] || !names["vault_learn"] {
		t.Errorf("tools for a read-write key: %v", names)
	}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "vault_search", Arguments: map[string]any{"query": "advisory locks"}})
	if err != nil || res.IsError {
		t.Fatalf("vault_search: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "advisory-locks.md") {
		t.Errorf("search text: %s", text)
	}
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "vault_write_note", Arguments: map[string]any{"path": "notes/from-mcp.md", "content": "# From MCP\n"}})
	if err != nil || res.IsError {
		t.Fatalf("vault_write_note: %v %+v", err, res)
	}
	if f, ok := e.fileAt("ex", "notes/from-mcp.md"); !ok || f.ID == "" {
		t.Error("a note written over MCP has no file id")
	}
	if last := e.gitLog(e.ex, "%an|%s")[0]; last != "alice|docs(vault): create notes/from-mcp.md" {
		t.Errorf("last commit %q, want authored by alice", last)
	}
	rows, _ := e.data.Store.Audit(context.Background(), teamstore.AuditQuery{Project: e.ex.ID, Limit: 1})
	if len(rows) != 1 || rows[0].Operation != "mcp write" || rows[0].KeyName != "alice" || rows[0].Version == "" {
		t.Errorf("audit of the MCP write: %+v", rows)
	}

	ro := e.mcpSession(t, "/mcp?project=ex", e.ro)
	if names := toolNames(t, ro); !names["vault_search"] || names["vault_write_note"] || names["vault_delete"] {
		t.Errorf("tools for a read-only key: %v", names)
	}
	// A key limited to one project may omit it.
	only := e.mcpSession(t, "/mcp", e.scoped)
	if names := toolNames(t, only); !names["vault_write_note"] {
		t.Errorf("tools on the scoped key's only project: %v", names)
	}
	wantStatus(t, "/mcp with a key for two projects", e.do("POST", "/mcp", e.rw, []byte(`{}`)), 400, "invalid_argument")
	wantStatus(t, "MCP on a project outside the key's scope", e.do("POST", "/projects/ex/mcp", e.scoped, []byte(`{}`)), 403, "forbidden")
}

// MCP without a key is 401 naming the protected-resource metadata, which is
// served (RFC 9728) for the server and for each MCP endpoint.
func TestMCPAuthAndResourceMetadata(t *testing.T) {
	e := newEnv(t, envOpts{})
	a := e.do("POST", "/projects/ex/mcp", "", []byte(`{}`))
	wantStatus(t, "MCP without a key", a, 401, "unauthorized")
	wa := a.header.Get("WWW-Authenticate")
	wantMeta := e.http.URL + "/.well-known/oauth-protected-resource/projects/ex/mcp"
	if !strings.Contains(wa, `resource_metadata="`+wantMeta+`"`) {
		t.Errorf("WWW-Authenticate = %q, want resource_metadata %s", wa, wantMeta)
	}
	m := e.do("GET", "/.well-known/oauth-protected-resource/projects/ex/mcp", "", nil)
	wantStatus(t, "metadata", m, 200, "")
	var md oauth.ProtectedResource
	m.json(t, &md)
	if md.Resource != e.http.URL+"/projects/ex/mcp" || len(md.BearerMethodsSupported) != 1 || md.BearerMethodsSupported[0] != "header" {
		t.Errorf("metadata = %+v", md)
	}
	root := e.do("GET", "/.well-known/oauth-protected-resource", "", nil)
	var rmd map[string]any
	json.Unmarshal(root.body, &rmd)
	if rmd["resource"] != e.http.URL {
		t.Errorf("root metadata = %s", root.body)
	}
	wantStatus(t, "metadata of something else", e.do("GET", "/.well-known/oauth-protected-resource/api/x", "", nil), 404, "not_found")
}

// A session belongs to the key that opened it: another key presenting its
// session id is refused. A request from a foreign Origin is refused.
func TestMCPSessionIsolationAndOrigin(t *testing.T) {
	e := newEnv(t, envOpts{})
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	a := e.do("POST", "/projects/ex/mcp", e.rw, init, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %v %s", a.status, a.header, a.body)
	}
	list := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	other := e.do("POST", "/projects/ex/mcp", e.ro, list, "Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
	if other.status < 400 || strings.Contains(string(other.body), "vault_search") {
		t.Errorf("another key with alice's session id: %d %s", other.status, other.body)
	}
	cross := e.do("POST", "/projects/ex/mcp", e.rw, init, "Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Origin", "https://evil.example")
	if cross.status != http.StatusForbidden {
		t.Errorf("a cross-site request: %d %s", cross.status, cross.body)
	}
	// The session's own key may close it.
	del := e.do("DELETE", "/projects/ex/mcp", e.rw, nil, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
	if del.status >= 300 {
		t.Fatalf("closing the session: %d %s", del.status, del.body)
	}
	gone := e.do("POST", "/projects/ex/mcp", e.rw, list, "Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
	if gone.status != http.StatusNotFound {
		t.Errorf("a closed session: %d %s", gone.status, gone.body)
	}
}

// A shutdown finishes although an MCP client holds a standalone event
// stream open: the stream is ended, and Serve returns without error.
func TestShutdownEndsMCPStreams(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.http.Close()
	e.http = nil
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- e.srv.Serve(ctx, Listen{Addr: "127.0.0.1:0", OnListen: func(a net.Addr) { addr <- a }})
	}()
	base := "http://" + (<-addr).String()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	s, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: base + "/projects/ex/mcp", HTTPClient: &http.Client{Transport: keyTransport{e.rw}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListTools(cctx, nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after the shutdown: %v", err)
		}
	case <-time.After(ShutdownGrace + 10*time.Second):
		t.Fatal("Serve did not return")
	}
}

// TestMCPResourceSubscriptions: a project's MCP endpoint offers its notes'
// change notifications (resources/subscribe) and path completion, as the
// local server does: a note written through the REST API is announced to a
// subscriber of its resource.
func TestMCPResourceSubscriptions(t *testing.T) {
	e := newEnv(t, envOpts{})
	updated := make(chan string, 8)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "sub-test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
	})
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/projects/ex/mcp", HTTPClient: &http.Client{Transport: keyTransport{e.rw}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	caps := s.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
		t.Fatalf("capabilities %+v", caps)
	}
	const uri = "vault://note/02-wiki/go/subscribed.md"
	if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	body, ctype := multipartBody(t, "02-wiki/go/subscribed.md", "# Subscribed\n")
	wantStatus(t, "create", e.do("POST", "/api/projects/ex/files", e.rw, body, "Content-Type", ctype), 201, "")
	select {
	case got := <-updated:
		if got != uri {
			t.Fatalf("updated %q, want %q", got, uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated within 10 s")
	}
}

// One key's MCP sessions on a project are capped: its 101st session evicts
// its own session idle the longest, and another key's session stays.
func TestMCPSessionsCappedPerKey(t *testing.T) {
	e := newEnv(t, envOpts{})
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	open := func(key string) string {
		a := e.do("POST", "/projects/ex/mcp", key, init, hdr...)
		sid := a.header.Get("Mcp-Session-Id")
		if a.status != 200 || sid == "" {
			t.Fatalf("initialize: %d %s", a.status, a.body)
		}
		return sid
	}
	list := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	status := func(key, sid string) int {
		return e.do("POST", "/projects/ex/mcp", key, list, append(hdr, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")...).status
	}
	other := open(e.ro)
	var mine []string
	for range mcpSessionsPerKey + 1 {
		mine = append(mine, open(e.rw))
	}
	if st := status(e.rw, mine[0]); st != http.StatusNotFound {
		t.Errorf("the key's oldest session after %d more: %d, want 404", mcpSessionsPerKey, st)
	}
	if st := status(e.rw, mine[len(mine)-1]); st != http.StatusOK {
		t.Errorf("the key's newest session: %d", st)
	}
	if st := status(e.ro, other); st != http.StatusOK {
		t.Errorf("another key's session: %d", st)
	}
}

// An MCP event stream outlives no revocation: when its key is revoked, the
// open stream (which would go on carrying the project's change
// notifications) is ended.
func TestMCPStreamEndsWhenKeyRevoked(t *testing.T) {
	old := mcpStreamRecheck
	mcpStreamRecheck = 20 * time.Millisecond
	t.Cleanup(func() { mcpStreamRecheck = old })
	e := newEnv(t, envOpts{})
	key, _, err := e.data.AddKey(context.Background(), "leaver", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	a := e.do("POST", "/projects/ex/mcp", key, init, hdr...)
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", a.status, a.body)
	}
	e.do("POST", "/projects/ex/mcp", key, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), append(hdr, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")...)
	req, _ := http.NewRequest("GET", e.http.URL+"/projects/ex/mcp", nil)
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET stream: %s", resp.Status)
	}
	ended := make(chan struct{})
	go func() {
		io.Copy(io.Discard, resp.Body)
		close(ended)
	}()
	select {
	case <-ended:
		t.Fatal("the stream ended before the key was revoked")
	case <-time.After(200 * time.Millisecond):
	}
	if err := e.data.RevokeKey(context.Background(), "leaver"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the stream of a revoked key is still open")
	}
}

// The MCP server kept for a (project, key) is dropped once it has had no
// session for a while, so the cache does not grow with every key (every
// OAuth user) ever seen; one with a session open is kept.
func TestMCPServersOfGoneUsersDropped(t *testing.T) {
	e := newEnv(t, envOpts{})
	gone := e.mcpSession(t, "/projects/ex/mcp", e.rw)
	toolNames(t, gone)
	live := e.mcpSession(t, "/projects/ex/mcp", e.ro)
	if err := gone.Close(); err != nil {
		t.Fatal(err)
	}
	cached := func() int {
		e.srv.mcp.mu.Lock()
		defer e.srv.mcp.mu.Unlock()
		return len(e.srv.mcp.servers)
	}
	if n := cached(); n != 2 {
		t.Fatalf("%d servers cached, want 2", n)
	}
	e.clock.Advance(mcpServerKeep + time.Minute)
	e.mcpSession(t, "/projects/other/mcp", e.rw) // a new server: the cache is swept
	if n := cached(); n != 2 {
		t.Errorf("%d servers cached after the sweep, want 2 (the live session's and the new one)", n)
	}
	if names := toolNames(t, live); !names["vault_search"] {
		t.Errorf("the live session after the sweep: %v", names)
	}
}
