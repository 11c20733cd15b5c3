package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

const e2eInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func httpPost(t *testing.T, u, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// httpSession opens an initialized session and returns its id.
func httpSession(t *testing.T, u string) string {
	t.Helper()
	resp, body := httpPost(t, u, e2eInit)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s %q", resp.Status, body)
	}
	httpPost(t, u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", id)
	return id
}

func httpPing(t *testing.T, u, id string) int {
	t.Helper()
	resp, _ := httpPost(t, u, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, "Mcp-Session-Id", id)
	return resp.StatusCode
}

// serve --http refuses a foreign Origin with 403 and serves its own.
func TestServeHTTPOrigin(t *testing.T) {
	u := startHTTP(t, "--vault", copyExampleVault(t), "--allow-origin", "https://app.example.com")
	host := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/mcp")
	_, port, _ := net.SplitHostPort(host)
	for origin, want := range map[string]int{
		"http://evil.example":            http.StatusForbidden,
		"http://127.0.0.1:" + port:       http.StatusOK,
		"http://localhost:" + port:       http.StatusOK,
		"https://app.example.com":        http.StatusOK,
		"https://app.example.com.evil.x": http.StatusForbidden,
	} {
		if resp, body := httpPost(t, u, e2eInit, "Origin", origin); resp.StatusCode != want {
			t.Errorf("Origin %s: %s %q, want %d", origin, resp.Status, body, want)
		}
	}
}

// --max-sessions holds: the sessions past it evict the oldest idle ones.
// --session-timeout expires an idle session.
func TestServeHTTPSessionLimits(t *testing.T) {
	u := startHTTP(t, "--vault", copyExampleVault(t), "--max-sessions", "3", "--session-timeout", "2s")
	var ids []string
	for range 6 {
		ids = append(ids, httpSession(t, u))
	}
	for i, id := range ids {
		want := http.StatusNotFound
		if i >= 3 {
			want = http.StatusOK
		}
		if st := httpPing(t, u, id); st != want {
			t.Errorf("session %d: %d, want %d", i, st, want)
		}
	}
	time.Sleep(3 * time.Second) // idle well past the 2 s timeout (2 s leaves the steps above room on a loaded machine)
	if st := httpPing(t, u, ids[5]); st != http.StatusNotFound {
		t.Errorf("session idle past --session-timeout: %d, want 404", st)
	}
}

// --body-timeout cuts a slow body off with 408.
func TestServeHTTPSlowBody(t *testing.T) {
	u := startHTTP(t, "--vault", copyExampleVault(t), "--body-timeout", "300ms")
	pu, _ := url.Parse(u)
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{", pu.Host)
	go func() {
		for range 499 {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("slow body: %s", resp.Status)
	}
}

// Bad limits are refused at start with the flag named.
func TestServeHTTPBadLimits(t *testing.T) {
	for _, tc := range [][]string{
		{"--max-sessions", "0", "--max-sessions"},
		{"--session-timeout", "soon", "--session-timeout"},
		{"--body-timeout", "1ns", "--body-timeout"},
		{"--allow-origin", "app.example.com", "--allow-origin"},
	} {
		cmd := exec.Command(binary, "serve", "--http", "127.0.0.1:0", "--vault", t.TempDir(), tc[0], tc[1])
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc[2]) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("%v: err=%v out=%q", tc[:2], err, out)
		}
	}
}

// SIGTERM ends serve --http gracefully: no new connection is taken, an
// open event stream ends at once, and a request in flight is still
// answered before the process exits (as stdio answers the calls it read).
func TestServeHTTPShutdownAnswersRequestsInFlight(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	u, cmd := startHTTPCmd(t, "--vault", copyExampleVault(t))
	pu, _ := url.Parse(u)
	id := httpSession(t, u)

	// An event stream of the session, open until the server ends it.
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", stream, err)
	}
	defer stream.Body.Close()

	// A request in flight: the server has begun reading its body (it sent
	// 100 Continue) when the signal comes.
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", pu.Host, id, len(body))
	br := bufio.NewReader(conn)
	cont, err := http.ReadResponse(br, nil)
	if err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue: %v %v", cont, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The shutdown has begun once the listener is closed.
	for {
		c, err := net.Dial("tcp", pu.Host)
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	// The event stream ends while the request is still in flight.
	if _, err := io.Copy(io.Discard, stream.Body); err != nil {
		t.Logf("event stream: %v", err)
	}

	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatalf("sending the body after SIGTERM: %v", err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the request in flight at SIGTERM got no answer: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"id":7`) {
		t.Fatalf("the request in flight at SIGTERM: %s %q", resp.Status, answer)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve --http after SIGTERM: %v", err)
	}
}
