package mcphttp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/mcphttp"
)

// clock is the injected clock of the idle expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type testServer struct {
	url    string // the /mcp endpoint
	addr   string // host:port
	h      *mcphttp.Handler
	server *mcp.Server
}

// serve runs a Handler over real HTTP on 127.0.0.1.
func serve(t *testing.T, opts mcphttp.Options) *testServer {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "mcphttp-test", Version: "1"}, nil)
	h, err := mcphttp.New(func(*http.Request) *mcp.Server { return server }, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := mcphttp.NewServer(mux, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	return &testServer{url: "http://" + ln.Addr().String() + "/mcp", addr: ln.Addr().String(), h: h, server: server}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends one JSON-RPC body and reads the whole answer.
func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// newSession makes an initialized session and returns its id.
func newSession(t *testing.T, url string, header map[string]string) string {
	t.Helper()
	resp, body := post(t, url, initBody, header)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s %q", resp.Status, body)
	}
	h := map[string]string{"Mcp-Session-Id": id}
	for k, v := range header {
		h[k] = v
	}
	if resp, body := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: %s %q", resp.Status, body)
	}
	return id
}

// ping reports the status of a ping in session id.
func ping(t *testing.T, url, id string, header map[string]string) int {
	t.Helper()
	h := map[string]string{"Mcp-Session-Id": id}
	for k, v := range header {
		h[k] = v
	}
	resp, body := post(t, url, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, h)
	if resp.StatusCode == http.StatusOK && !strings.Contains(body, `"id":7`) {
		t.Fatalf("ping answered %q", body)
	}
	return resp.StatusCode
}

// sdkSessions counts the sessions the SDK holds, once the closes it was
// asked for are done (they run in the background).
func sdkSessions(t *testing.T, s *mcp.Server, atMost int) int {
	t.Helper()
	n := 0
	for range 500 {
		n = 0
		for range s.Sessions() {
			n++
		}
		if n <= atMost {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

// Idle sessions expire on the injected clock; a request restarts a
// session's idle time; an expired session is gone for its client (404).
func TestSessionsExpireWhenIdle(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ts := serve(t, mcphttp.Options{SessionIdleTimeout: 30 * time.Minute, Now: clk.Now})
	a, b, c := newSession(t, ts.url, nil), newSession(t, ts.url, nil), newSession(t, ts.url, nil)
	if n := ts.h.Sessions(); n != 3 {
		t.Fatalf("%d sessions, want 3", n)
	}
	clk.Add(29 * time.Minute)
	ts.h.ExpireIdle()
	if n := ts.h.Sessions(); n != 3 {
		t.Fatalf("after 29 min: %d sessions, want 3", n)
	}
	if st := ping(t, ts.url, c, nil); st != http.StatusOK {
		t.Fatalf("ping at 29 min: %d", st)
	}
	clk.Add(2 * time.Minute)
	ts.h.ExpireIdle()
	if n := ts.h.Sessions(); n != 1 {
		t.Fatalf("after 31 min: %d sessions, want the one used at 29 min", n)
	}
	if n := sdkSessions(t, ts.server, 1); n != 1 {
		t.Errorf("the SDK still holds %d sessions", n)
	}
	for _, id := range []string{a, b} {
		if st := ping(t, ts.url, id, nil); st != http.StatusNotFound {
			t.Errorf("expired session answered %d, want 404", st)
		}
	}
	if st := ping(t, ts.url, c, nil); st != http.StatusOK {
		t.Errorf("live session answered %d", st)
	}
	// Expiry needs no request: the sweep runs on its own (here, directly).
	clk.Add(31 * time.Minute)
	ts.h.ExpireIdle()
	if n := ts.h.Sessions(); n != 0 {
		t.Errorf("after an hour: %d sessions", n)
	}
}

// A session with an event stream open is not idle, however long it lasts.
func TestOpenStreamKeepsSession(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ts := serve(t, mcphttp.Options{SessionIdleTimeout: time.Minute, Now: clk.Now})
	id := newSession(t, ts.url, nil)
	stop := openStream(t, ts.url, id)
	clk.Add(time.Hour)
	ts.h.ExpireIdle()
	if n := ts.h.Sessions(); n != 1 {
		t.Fatalf("session with an open stream expired")
	}
	stop()
	waitFor(t, func() bool { clk.Add(2 * time.Minute); ts.h.ExpireIdle(); return ts.h.Sessions() == 0 })
}

// openStream opens the session's standalone event stream (GET) and returns
// what closes it.
func openStream(t *testing.T, url, id string) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	return func() {
		cancel()
		resp.Body.Close()
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition never met")
}

// The cap holds: sessions past it evict the one idle the longest, so the
// count (ours and the SDK's) never passes the cap; when none is idle, a new
// session gets 503 with Retry-After.
func TestSessionCap(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const max = 5
	ts := serve(t, mcphttp.Options{MaxSessions: max, Now: clk.Now})
	var ids []string
	for range 4 * max {
		ids = append(ids, newSession(t, ts.url, nil))
		clk.Add(time.Second)
		if n := ts.h.Sessions(); n > max {
			t.Fatalf("%d sessions, cap %d", n, max)
		}
	}
	if n := sdkSessions(t, ts.server, max); n > max {
		t.Fatalf("the SDK holds %d sessions, cap %d", n, max)
	}
	// Requests without a session that are no initialize evict nothing.
	for range 2 * max {
		post(t, ts.url, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil)
		post(t, ts.url, `not json`, nil)
	}
	for i, id := range ids {
		want := http.StatusNotFound
		if i >= len(ids)-max {
			want = http.StatusOK
		}
		if st := ping(t, ts.url, id, nil); st != want {
			t.Errorf("session %d answered %d, want %d", i, st, want)
		}
	}

	// Every session busy (an open stream each): no room.
	var stops []func()
	for _, id := range ids[len(ids)-max:] {
		stops = append(stops, openStream(t, ts.url, id))
	}
	resp, body := post(t, ts.url, initBody, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "too many MCP sessions") {
		t.Fatalf("past the cap with every session busy: %s %q", resp.Status, body)
	}
	stops[0]()
	waitFor(t, func() bool {
		resp, _ := post(t, ts.url, initBody, nil)
		return resp.StatusCode == http.StatusOK
	})
	for _, stop := range stops[1:] {
		stop()
	}
	if n := ts.h.Sessions(); n > max {
		t.Fatalf("%d sessions, cap %d", n, max)
	}
}

// A body that trickles in is cut off at the deadline with 408 and its
// connection closed, long before the client would have finished.
func TestSlowBodyCutOff(t *testing.T) {
	ts := serve(t, mcphttp.Options{BodyTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 1000 // one byte each 20 ms: 20 s to send it all
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", ts.addr, size)
	sent := make(chan int, 1)
	go func() {
		n := 0
		for ; n < size; n++ {
			if _, err := conn.Write([]byte(" ")); err != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		sent <- n
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "did not arrive within 300ms") {
		t.Fatalf("slow body: %s %q", resp.Status, body)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the connection stayed open: %v", err)
	}
	if n := <-sent; n >= size {
		t.Errorf("the whole body was received (%d bytes) before the cut", n)
	}
}

// An event stream outlives the body deadline: the deadline covers bodies
// only.
func TestStreamOutlivesBodyDeadline(t *testing.T) {
	ts := serve(t, mcphttp.Options{BodyTimeout: 100 * time.Millisecond})
	id := newSession(t, ts.url, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	time.Sleep(400 * time.Millisecond) // four body deadlines
	// The server can still send on the stream: a new tool is announced to
	// every session.
	type in struct{}
	mcp.AddTool(ts.server, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "notifications/tools/list_changed") {
				line <- sc.Text()
				return
			}
		}
		line <- "stream ended: " + fmt.Sprint(sc.Err())
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, "list_changed") {
			t.Fatal(l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("nothing came on the stream")
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := serve(t, mcphttp.Options{MaxBodyBytes: 1 << 10})
	resp, body := post(t, ts.url, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 2<<10)+`"}}`, nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("%s %q", resp.Status, body)
	}
}

// An Origin header is served only when it is the listen address (any
// loopback name for a loopback listener, same port) or allow-listed.
func TestOrigin(t *testing.T) {
	ts := serve(t, mcphttp.Options{AllowedOrigins: []string{"https://App.Example.com"}})
	_, port, _ := net.SplitHostPort(ts.addr)
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{"http://127.0.0.1:" + port, http.StatusOK},
		{"http://localhost:" + port, http.StatusOK},
		{"http://[::1]:" + port, http.StatusOK},
		{"https://app.example.com", http.StatusOK},
		{"https://app.example.com:443", http.StatusOK},
		{"http://evil.example", http.StatusForbidden},
		{"http://evil.example:" + port, http.StatusForbidden},
		{"http://127.0.0.1:1", http.StatusForbidden},
		{"http://app.example.com", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"file://", http.StatusForbidden},
	} {
		h := map[string]string{}
		if tc.origin != "" {
			h["Origin"] = tc.origin
		}
		resp, body := post(t, ts.url, initBody, h)
		if resp.StatusCode != tc.want {
			t.Errorf("Origin %q: %s %q, want %d", tc.origin, resp.Status, body, tc.want)
		}
	}
	if n := ts.h.Sessions(); n != 6 {
		t.Errorf("%d sessions, want the 6 allowed", n)
	}
}

func TestOriginAllowListChecked(t *testing.T) {
	for _, bad := range []string{"app.example.com", "ftp://x", "https://x/path", "null", "https://user@x"} {
		if _, err := mcphttp.New(func(*http.Request) *mcp.Server { return nil }, mcphttp.Options{AllowedOrigins: []string{bad}}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The SDK's DNS-rebinding protection stays on.
func TestDNSRebindingRefused(t *testing.T) {
	ts := serve(t, mcphttp.Options{})
	_, port, _ := net.SplitHostPort(ts.addr)
	resp, body := post(t, ts.url, initBody, map[string]string{"Host": "evil.example:" + port})
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Host evil.example: %s %q", resp.Status, body)
	}
}

// Keys: none or a wrong one gets 401, before any session is made or
// evicted; X-API-Key and Bearer both work; a session belongs to the user
// that made it.
func TestKeys(t *testing.T) {
	keys := map[string]string{"key-a": "alice", "key-b": "bob"}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		user, ok := keys[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: user}, nil
	}
	ts := serve(t, mcphttp.Options{Verify: verify, MaxSessions: 1})
	a := newSession(t, ts.url, map[string]string{"X-API-Key": "key-a"})
	for _, h := range []map[string]string{nil, {"X-API-Key": "nope"}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic a2V5LWE="}} {
		if resp, body := post(t, ts.url, initBody, h); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%v: %s %q", h, resp.Status, body)
		}
	}
	if st := ping(t, ts.url, a, map[string]string{"Authorization": "Bearer key-a"}); st != http.StatusOK {
		t.Errorf("alice's session with her Bearer key: %d (refused keys evicted it?)", st)
	}
	if st := ping(t, ts.url, a, map[string]string{"X-API-Key": "key-b"}); st != http.StatusForbidden {
		t.Errorf("alice's session with bob's key: %d, want 403", st)
	}
}

func TestStaticKey(t *testing.T) {
	ts := serve(t, mcphttp.Options{Verify: mcphttp.StaticKey("s3cret")})
	if resp, _ := post(t, ts.url, initBody, map[string]string{"X-API-Key": "s3cre"}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong key: %s", resp.Status)
	}
	newSession(t, ts.url, map[string]string{"X-API-Key": "s3cret"})
	newSession(t, ts.url, map[string]string{"Authorization": "Bearer s3cret"})
}

// The SDK's client works through the handler, and Close ends its sessions.
func TestSDKClientAndClose(t *testing.T) {
	ts := serve(t, mcphttp.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The handler counts the session once the SDK's handler of the
	// initialize has returned, which may be after the client has its
	// answer (and has pinged): wait for it, boundedly.
	deadline := time.Now().Add(5 * time.Second)
	for ts.h.Sessions() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := ts.h.Sessions(); n != 1 {
		t.Fatalf("%d sessions", n)
	}
	ts.h.Close()
	if n := sdkSessions(t, ts.server, 0); n != 0 {
		t.Errorf("the SDK holds %d sessions after Close", n)
	}
}

// With a cap per user, one key opening sessions without end evicts its own
// idle sessions, not those of the other keys, even at the overall cap.
func TestSessionCapPerUser(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token}, nil
	}
	ts := serve(t, mcphttp.Options{Verify: verify, MaxSessions: 6, MaxSessionsPerUser: 3, Now: clk.Now})
	alice := map[string]string{"X-API-Key": "alice"}
	bob := map[string]string{"X-API-Key": "bob"}
	var bobs []string
	for range 3 {
		bobs = append(bobs, newSession(t, ts.url, bob))
		clk.Add(time.Second)
	}
	var alices []string
	for range 20 {
		alices = append(alices, newSession(t, ts.url, alice))
		clk.Add(time.Second)
	}
	for i, id := range bobs {
		if st := ping(t, ts.url, id, bob); st != http.StatusOK {
			t.Errorf("bob's session %d: %d after alice opened 20 sessions", i, st)
		}
	}
	for i, id := range alices {
		want := http.StatusNotFound
		if i >= len(alices)-3 {
			want = http.StatusOK
		}
		if st := ping(t, ts.url, id, alice); st != want {
			t.Errorf("alice's session %d answered %d, want %d", i, st, want)
		}
	}
	if n := ts.h.Sessions(); n != 6 {
		t.Errorf("%d sessions, want 6", n)
	}
}

// Every 401 carries a WWW-Authenticate challenge (RFC 9110) naming the
// metadata when there is one, with error="invalid_token" only when a key
// was sent (RFC 6750), and the JSON-RPC error body of the other refusals;
// the key sent appears in neither.
func TestUnauthorizedChallenge(t *testing.T) {
	for _, meta := range []string{"", "https://vault.example/.well-known/oauth-protected-resource/mcp"} {
		ts := serve(t, mcphttp.Options{Verify: mcphttp.StaticKey("s3cret"), ResourceMetadataURL: meta})
		for _, tc := range []struct {
			header  map[string]string
			invalid bool
		}{
			{nil, false},
			{map[string]string{"Authorization": "Basic czNjcmV0"}, false},
			{map[string]string{"X-API-Key": "wrong-key"}, true},
			{map[string]string{"Authorization": "Bearer wrong-key"}, true},
		} {
			resp, body := post(t, ts.url, initBody, tc.header)
			wa := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(wa, "Bearer ") {
				t.Errorf("%v: %s, WWW-Authenticate %q", tc.header, resp.Status, wa)
				continue
			}
			if strings.Contains(wa, `error="invalid_token"`) != tc.invalid {
				t.Errorf("%v: WWW-Authenticate %q: invalid_token should be there: %v", tc.header, wa, tc.invalid)
			}
			if meta != "" && !strings.Contains(wa, `resource_metadata="`+meta+`"`) {
				t.Errorf("%v: WWW-Authenticate %q does not name the metadata", tc.header, wa)
			}
			if resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"error":{"code":-32000`) {
				t.Errorf("%v: body %s %q, want a JSON-RPC error", tc.header, resp.Header.Get("Content-Type"), body)
			}
			if strings.Contains(wa+body, "wrong-key") {
				t.Errorf("%v: the key sent is echoed: %q %q", tc.header, wa, body)
			}
		}
	}
}

// Only a session made evicts another: a request without session id that
// is no initialize, though its body holds the word (mallory's ping), or
// an initialize the SDK refuses, evicts nobody's session when the cap is
// reached (mallory, under the per-key cap, would otherwise push out every
// other key's sessions without ever holding one).
func TestOnlyInitializeEvicts(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token}, nil
	}
	ts := serve(t, mcphttp.Options{Verify: verify, MaxSessions: 2, MaxSessionsPerUser: 1, Now: clk.Now})
	alice := map[string]string{"X-API-Key": "alice"}
	bob := map[string]string{"X-API-Key": "bob"}
	a := newSession(t, ts.url, alice)
	clk.Add(time.Second)
	b := newSession(t, ts.url, bob)
	clk.Add(time.Second)
	mallory := map[string]string{"X-API-Key": "mallory"}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"note":"initialize"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"initialize":true}}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":5}}`,
		`{"jsonrpc":"2.0","id":5,"method":"initialize","params":"x"}`,
	} {
		post(t, ts.url, body, mallory)
	}
	if st := ping(t, ts.url, a, alice); st != http.StatusOK {
		t.Errorf("alice's session: %d after requests that were no initialize", st)
	}
	if st := ping(t, ts.url, b, bob); st != http.StatusOK {
		t.Errorf("bob's session: %d after requests that were no initialize", st)
	}
	// A real initialize still makes room.
	clk.Add(time.Second)
	newSession(t, ts.url, mallory)
	if n := ts.h.Sessions(); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
}

// A page of an allowed origin can use the server from a browser: its
// preflight is answered without a key, and the answers carry the CORS
// headers that let it read them and their Mcp-Session-Id. A foreign
// origin gets none of it.
func TestAllowedOriginCORS(t *testing.T) {
	ts := serve(t, mcphttp.Options{AllowedOrigins: []string{"https://app.example.com"}, Verify: mcphttp.StaticKey("s3cret")})
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, ts.url, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-session-id, x-api-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("https://app.example.com")
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	if resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(allowed, "mcp-session-id") || !strings.Contains(allowed, "x-api-key") || !strings.Contains(allowed, "content-type") {
		t.Errorf("preflight of an allowed origin: %s %v", resp.Status, resp.Header)
	}
	if resp := preflight("https://evil.example"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of a foreign origin: %s %v", resp.Status, resp.Header)
	}

	resp, body := post(t, ts.url, initBody, map[string]string{"Origin": "https://app.example.com", "X-API-Key": "s3cret"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("initialize from an allowed origin: %s %v %q", resp.Status, resp.Header, body)
	}
	resp, _ = post(t, ts.url, initBody, map[string]string{"Origin": "https://app.example.com"})
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("a 401 to an allowed origin must be readable by it: %s %v", resp.Status, resp.Header)
	}
	if resp, _ := post(t, ts.url, initBody, map[string]string{"X-API-Key": "s3cret"}); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no Origin, yet CORS headers: %v", resp.Header)
	}
	// Another loopback name on the port is accepted as an origin but gets
	// no CORS: another program may serve pages there.
	_, port, _ := net.SplitHostPort(ts.addr)
	if resp := preflight("http://localhost:" + port); resp.StatusCode/100 == 2 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of a loopback alias: %s %v", resp.Status, resp.Header)
	}
}

// A session evicted or expired answers 404 at once, even while the SDK's
// close of it has not run yet (it still knows the session until then).
func TestClosingSessionAnswers404(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ts := serve(t, mcphttp.Options{MaxSessions: 2, SessionIdleTimeout: time.Minute, Now: clk.Now})
	release, closed := make(chan struct{}), make(chan struct{}, 3)
	mcphttp.SetCloseSession(ts.h, func(ss *mcp.ServerSession) error {
		<-release
		defer func() { closed <- struct{}{} }()
		return ss.Close()
	})
	defer func() {
		close(release)
		for range 3 { // a, b and c
			<-closed
		}
	}()
	a := newSession(t, ts.url, nil)
	clk.Add(time.Second)
	b := newSession(t, ts.url, nil)
	clk.Add(time.Second)
	c := newSession(t, ts.url, nil) // evicts a, whose close is held
	if n := sdkSessions(t, ts.server, 3); n != 3 {
		t.Fatalf("the SDK holds %d sessions while a's close is held, want 3", n)
	}
	if st := ping(t, ts.url, a, nil); st != http.StatusNotFound {
		t.Errorf("evicted session, close not done: %d, want 404", st)
	}
	clk.Add(2 * time.Minute) // b and c expire, their closes held too
	for _, id := range []string{b, c} {
		if st := ping(t, ts.url, id, nil); st != http.StatusNotFound {
			t.Errorf("expired session, close not done: %d, want 404", st)
		}
	}
	if st := ping(t, ts.url, newSession(t, ts.url, nil), nil); st != http.StatusOK {
		t.Errorf("new session: %d", st)
	}
}
