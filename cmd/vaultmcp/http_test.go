package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTP runs `vaultmcp serve --http 127.0.0.1:0` and returns the /mcp URL
// it logs.
func startHTTP(t *testing.T, args ...string) string {
	t.Helper()
	u, _ := startHTTPCmd(t, args...)
	return u
}

// startHTTPCmd is startHTTP that also returns the running command.
func startHTTPCmd(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = cleanEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`url=(http://\S+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-urls:
		return u, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("server did not log its URL")
		return "", nil
	}
}

type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServeHTTP(t *testing.T) {
	url := startHTTP(t, "--vault", copyExampleVault(t), "--api-key", "s3cret")

	// Without the key: 401 and no MCP.
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: status %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: keyTransport{"s3cret"}}, DisableStandaloneSSE: true}
	s, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text, _, isErr := call(t, s, "vault_search", map[string]any{"query": "retry backoff"})
	if isErr || !strings.Contains(text, "02-wiki/go/retry-backoff.md:") {
		t.Fatalf("search over HTTP: %s", text)
	}
}

func TestServeHTTPNeedsKeyOffLoopback(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--http", "0.0.0.0:0", "--vault", t.TempDir())
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "api-key") {
		t.Fatalf("err=%v out=%s", err, out)
	}
}

// The key in VAULTMCP_API_KEY is required by serve --http, and never
// printed: not by --help, not in the usage a wrong flag prints to stderr
// (an MCP client keeps its server's stderr in a log).
// The database URL from VAULTMCP_DB (it may hold a password) is never
// printed by the team server's usage either, and is still used.
func TestTeamServerDBFromEnvironmentNotPrinted(t *testing.T) {
	const url = "postgres://vm:pw-7c1e9b@127.0.0.1:1/vm"
	for _, args := range [][]string{{"team-server", "--help"}, {"team-server", "key", "list", "--no-such-flag"}, {"bench", "team", "--help"}} {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(cleanEnv(), "VAULTMCP_DB="+url)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "-db") || strings.Contains(string(out), "pw-7c1e9b") {
			t.Errorf("%v printed the URL (or no usage): %s", args, out)
		}
	}
	cmd := exec.Command(binary, "team-server", "key", "list", "--data", t.TempDir())
	cmd.Env = append(cleanEnv(), "VAULTMCP_DB="+url)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "127.0.0.1:1") || strings.Contains(string(out), "pw-7c1e9b") {
		t.Errorf("key list with VAULTMCP_DB of a database that is not there: %v\n%s", err, out)
	}
}

func TestServeHTTPKeyFromEnvironmentNotPrinted(t *testing.T) {
	const key = "env-key-5f3a9c"
	for _, args := range [][]string{{"serve", "--help"}, {"serve", "--http", "127.0.0.1:0", "--no-such-flag"}} {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(cleanEnv(), "VAULTMCP_API_KEY="+key)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "api-key") || strings.Contains(string(out), key) {
			t.Errorf("%v printed the key (or no usage): %s", args, out)
		}
	}

	vault := copyExampleVault(t)
	cmd := exec.Command(binary, "serve", "--http", "127.0.0.1:0", "--vault", vault)
	cmd.Env = append(cleanEnv(), "VAULTMCP_API_KEY="+key)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	u := ""
	for u == "" && sc.Scan() {
		if m := regexp.MustCompile(`url=(http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			u = m[1]
		}
	}
	go io.Copy(io.Discard, stderr)
	if resp, body := httpPost(t, u, e2eInit); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key, with VAULTMCP_API_KEY set: %s %q", resp.Status, body)
	}
	if resp, body := httpPost(t, u, e2eInit, "X-API-Key", key); resp.StatusCode != http.StatusOK {
		t.Errorf("the key of VAULTMCP_API_KEY: %s %q", resp.Status, body)
	}
}
