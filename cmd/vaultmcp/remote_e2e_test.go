package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/teamserver"
)

// teamServer is a real team server on 127.0.0.1 with the example vault as
// project "ex", a read-write key and a read-only one; wrap, when given,
// stands in front of its handler.
type teamServer struct {
	url    string
	rw, ro string
	data   *teamserver.Data
}

func startTeamServer(t *testing.T, wrap func(http.Handler) http.Handler) *teamServer {
	t.Helper()
	ctx := context.Background()
	d, err := teamserver.OpenData(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := &teamServer{data: d}
	if _, _, err := d.AddProject(ctx, "ex", filepath.Join("..", "..", "examples", "vault")); err != nil {
		t.Fatal(err)
	}
	if ts.rw, _, err = d.AddKey(ctx, "alice", nil, false); err != nil {
		t.Fatal(err)
	}
	if ts.ro, _, err = d.AddKey(ctx, "reader", nil, true); err != nil {
		t.Fatal(err)
	}
	srv, err := teamserver.New(ctx, teamserver.Config{Data: d, NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	ts.url = hs.URL
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		d.Close()
	})
	return ts
}

func connectRemote(t *testing.T, env ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.Command(binary)
	cmd.Env = append(cleanEnv(), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() { session.Close() })
	return session, stderr
}

func toolNames(t *testing.T, s *mcp.ClientSession) map[string]bool {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range res.Tools {
		names[tl.Name] = true
	}
	return names
}

var writeTools = []string{"vault_write_note", "vault_edit_note", "vault_move", "vault_delete", "vault_undo", "vault_learn"}

// vaultmcp with TEAM_VAULT_* set: every tool, through the go-sdk client,
// against a real team server.
func TestRemoteEveryTool(t *testing.T) {
	ts := startTeamServer(t, nil)
	s, stderr := connectRemote(t, "TEAM_VAULT_URL="+ts.url, "TEAM_VAULT_API_KEY="+ts.rw, "TEAM_VAULT_PROJECT_ID=ex")
	names := toolNames(t, s)
	for _, n := range append([]string{"vault_search", "vault_get_note", "vault_list", "vault_backlinks", "vault_graph", "vault_history", "vault_whoami", "vault_projects"}, writeTools...) {
		if !names[n] {
			t.Errorf("tool %s missing", n)
		}
	}
	line := ""
	logSays(stderr, "connected to the team server")
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "connected to the team server") {
			line = l
		}
	}
	if !strings.Contains(line, "url="+ts.url) || !strings.Contains(line, "read_only=false") || !strings.Contains(line, "project=ex") || strings.Contains(stderr.String(), ts.rw) {
		t.Errorf("connect line %q\nstderr:\n%s", line, stderr)
	}

	must := func(name string, args map[string]any, want ...string) map[string]any {
		t.Helper()
		text, st, isErr := call(t, s, name, args)
		if isErr {
			t.Fatalf("%s: %s", name, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Fatalf("%s: no %q in\n%s", name, w, text)
			}
		}
		return st
	}
	must("vault_search", map[string]any{"query": "retry backoff"}, "02-wiki/go/retry-backoff.md:", "\n> ")
	note := must("vault_get_note", map[string]any{"path": `02-wiki\go\context.md`}, "02-wiki/go/context.md — Context cancellation in Go")
	must("vault_list", map[string]any{"folder": "02-wiki/go"}, "02-wiki/go/context.md")
	must("vault_backlinks", map[string]any{"path": "02-wiki/go/context.md"}, "02-wiki/")
	must("vault_graph", map[string]any{"folder": "02-wiki"}, "Graph:")
	must("vault_history", map[string]any{"path": "02-wiki/go/context.md"}, "version(s) of 02-wiki/go/context.md")
	must("vault_whoami", nil, "Team server: "+ts.url, "API key: alice (read and write)", "Default project: ex (searched on the server)")
	must("vault_projects", nil, "1 project(s):", "- ex (", "— default")

	created := must("vault_write_note", map[string]any{"path": "notes/e2e.md", "content": "# E2E\n\nfirst\n"}, "Created notes/e2e.md.", "Commit: yes (")
	must("vault_write_note", map[string]any{"path": "./notes//e2e.md", "content": "# E2E\n\nsecond\n", "expected_sha256": created["sha256"]}, "Replaced notes/e2e.md.")
	must("vault_edit_note", map[string]any{"path": "notes/e2e.md", "old_text": "second", "new_text": "third"}, "Edited notes/e2e.md.", "+third")
	moved := must("vault_move", map[string]any{"from": "notes/e2e.md", "to": "notes/e2e-moved.md"}, "Moved notes/e2e.md to notes/e2e-moved.md")
	must("vault_undo", map[string]any{"commit": moved["version"]}, "Reverted commit")
	must("vault_delete", map[string]any{"path": "notes/e2e.md"}, "Deleted notes/e2e.md.")
	must("vault_learn", map[string]any{"title": "Remote capture works", "insight": "A learning sent through the team server lands in the shared vault.", "context": "e2e", "domain": "go"}, "02-wiki/go/")
	must("vault_search", map[string]any{"query": "context", "project": "ex"}, "02-wiki/go/context.md")

	text, _, isErr := call(t, s, "vault_get_note", map[string]any{"path": "02-wiki/go/nothing.md"})
	if !isErr || !strings.HasPrefix(text, "NOT_FOUND: ") || !strings.HasSuffix(text, "(HTTP 404 not_found)") {
		t.Errorf("missing note: %q", text)
	}
	text, _, isErr = call(t, s, "vault_write_note", map[string]any{"path": "02-wiki/go/context.md", "content": "x", "expected_sha256": note["sha256"].(string)[:63] + "0"})
	if !isErr || !strings.HasPrefix(text, "CONFLICT: ") {
		t.Errorf("stale hash: %q", text)
	}
	text, _, isErr = call(t, s, "vault_search", map[string]any{"query": "x", "project": "nope"})
	if !isErr || !strings.HasPrefix(text, "NOT_FOUND: ") {
		t.Errorf("unknown project: %q", text)
	}
}

// Read-only mode: TEAM_VAULT_READ_ONLY, or a read-only key, leaves every
// write tool out.
func TestRemoteReadOnly(t *testing.T) {
	ts := startTeamServer(t, nil)
	for _, env := range [][]string{
		{"TEAM_VAULT_URL=" + ts.url, "TEAM_VAULT_API_KEY=" + ts.rw, "TEAM_VAULT_PROJECT_ID=ex", "TEAM_VAULT_READ_ONLY=1"},
		{"TEAM_VAULT_URL=" + ts.url, "TEAM_VAULT_API_KEY=" + ts.ro, "TEAM_VAULT_PROJECT_ID=ex"},
	} {
		s, stderr := connectRemote(t, env...)
		names := toolNames(t, s)
		for _, w := range writeTools {
			if names[w] {
				t.Errorf("%v: read-only server offers %s", env[1][:20], w)
			}
		}
		if !names["vault_search"] || !names["vault_whoami"] {
			t.Errorf("read tools missing: %v", names)
		}
		if !logSays(stderr, "read_only=true") {
			t.Errorf("stderr:\n%s", stderr)
		}
		if text, _, isErr := call(t, s, "vault_search", map[string]any{"query": "retry"}); isErr {
			t.Errorf("search: %s", text)
		}
	}
}

// A Team Vault server without the extension endpoints: search comes from
// the local mirror, through the binary.
func TestRemotePlainServer(t *testing.T) {
	ts := startTeamServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
			if len(segs) == 4 && segs[0] == "api" && segs[1] == "projects" && segs[3] != "files" {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"error":{"code":"not_found","message":"Not found"}}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	s, _ := connectRemote(t, "TEAM_VAULT_URL="+ts.url, "TEAM_VAULT_API_KEY="+ts.rw, "TEAM_VAULT_PROJECT_ID=ex")
	text, _, isErr := call(t, s, "vault_search", map[string]any{"query": "retry backoff"})
	if isErr || !strings.Contains(text, "02-wiki/go/retry-backoff.md:") {
		t.Fatalf("search: %s", text)
	}
	text, _, _ = call(t, s, "vault_whoami", nil)
	if !strings.Contains(text, "a plain Team Vault server") {
		t.Errorf("whoami: %s", text)
	}
	text, _, isErr = call(t, s, "vault_learn", map[string]any{"title": "t", "insight": "i", "context": "", "domain": "go"})
	if !isErr || !strings.HasPrefix(text, "UNSUPPORTED: ") {
		t.Errorf("learn: %s", text)
	}
}

// A host's notifications/cancelled aborts the request in flight.
func TestRemoteCancel(t *testing.T) {
	arrived, gone := make(chan struct{}, 1), make(chan struct{}, 1)
	ts := startTeamServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/search") && r.Method == http.MethodPost {
				// The server notices a client gone once the body is read.
				io.ReadAll(r.Body)
				arrived <- struct{}{}
				select {
				case <-r.Context().Done():
					gone <- struct{}{}
				case <-time.After(20 * time.Second):
				}
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	s, stderr := connectRemote(t, "TEAM_VAULT_URL="+ts.url, "TEAM_VAULT_API_KEY="+ts.rw, "TEAM_VAULT_PROJECT_ID=ex", "VAULTMCP_LOG_LEVEL=debug")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "vault_search", Arguments: map[string]any{"query": "retry"}})
		done <- err
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the search never reached the server")
	}
	cancel()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatalf("the request was not aborted after notifications/cancelled\n%s", stderr)
	}
	<-done
	// The session still works.
	if text, _, isErr := call(t, s, "vault_projects", nil); isErr {
		t.Errorf("after the cancellation: %s", text)
	}
}

// Missing URL or key: exit 1 with one usage line naming the variables.
// TestRemoteKeyRefused: a key the team server refuses at start (unknown,
// or revoked) ends the process with status 1 and one line naming the
// variable, not a server whose every tool fails; the key is not printed.
func TestRemoteKeyRefused(t *testing.T) {
	ts := startTeamServer(t, nil)
	for _, key := range []string{"tv_notakey", ts.rw + "x"} {
		cmd := exec.Command(binary)
		cmd.Env = append(cleanEnv(), "TEAM_VAULT_URL="+ts.url, "TEAM_VAULT_API_KEY="+key)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("key %.8s…: err = %v, want exit 1; stderr:\n%s", key, err, stderr.String())
		}
		msg := strings.TrimSpace(stderr.String())
		if stdout.Len() != 0 || strings.Contains(msg, "\n") || strings.Contains(msg, key) ||
			!strings.Contains(msg, "TEAM_VAULT_API_KEY") || !strings.Contains(msg, "refused the key") || !strings.Contains(msg, "UNAUTHORIZED") {
			t.Errorf("key %.8s…: stdout=%q stderr=%q", key, stdout.String(), msg)
		}
	}
}

func TestRemoteConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{[]string{"TEAM_VAULT_API_KEY=tv_x"}, []string{"TEAM_VAULT_URL", "TEAM_VAULT_API_KEY"}},
		{[]string{"TEAM_VAULT_URL=https://vault.example.com"}, []string{"TEAM_VAULT_URL", "TEAM_VAULT_API_KEY"}},
		{[]string{"TEAM_VAULT_URL=ftp://vault.example.com", "TEAM_VAULT_API_KEY=tv_x"}, []string{"TEAM_VAULT_URL", "http"}},
		// A host and port without a scheme: said to need one, not only
		// "not a URL".
		{[]string{"TEAM_VAULT_URL=127.0.0.1:8787", "TEAM_VAULT_API_KEY=tv_x"}, []string{"TEAM_VAULT_URL", "http://"}},
		{[]string{"TEAM_VAULT_URL=https://u:p@vault.example.com", "TEAM_VAULT_API_KEY=tv_x"}, []string{"TEAM_VAULT_URL", "credentials"}},
		{[]string{"TEAM_VAULT_URL=https://vault.example.com", "TEAM_VAULT_API_KEY=tv_x", "TEAM_VAULT_PROJECT_ID=a/b"}, []string{"TEAM_VAULT_PROJECT_ID"}},
		// A read-only switch that is neither yes nor no is not taken for
		// no: the server would offer the writes its operator meant to
		// forbid.
		{[]string{"TEAM_VAULT_URL=https://vault.example.com", "TEAM_VAULT_API_KEY=tv_x", "TEAM_VAULT_READ_ONLY=y"}, []string{"TEAM_VAULT_READ_ONLY", `"y"`}},
		{[]string{"TEAM_VAULT_URL=https://vault.example.com", "TEAM_VAULT_API_KEY=tv_x", "TEAM_VAULT_READ_ONLY=read-only"}, []string{"TEAM_VAULT_READ_ONLY"}},
		// The same for the local server's switches.
		{[]string{"VAULT_PATH=.", "VAULT_READ_ONLY=maybe"}, []string{"VAULT_READ_ONLY", `"maybe"`}},
		{[]string{"VAULT_PATH=.", "VAULT_AUTO_PUSH=y"}, []string{"VAULT_AUTO_PUSH", `"y"`}},
	} {
		cmd := exec.Command(binary)
		cmd.Env = append(cleanEnv(), tc.env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("%v: err = %v, want exit 1", tc.env, err)
		}
		msg := strings.TrimSpace(stderr.String())
		if stdout.Len() != 0 || strings.Contains(msg, "\n") || strings.Contains(msg, "tv_x") {
			t.Errorf("%v: stdout=%q stderr=%q", tc.env, stdout.String(), msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q lacks %q", tc.env, msg, w)
			}
		}
	}
}

// TestRemoteURLWithoutAPI: a TEAM_VAULT_URL at which the server answers
// 404 for GET /api/auth/me (the API's path given twice, a wrong path)
// names no team server: the process ends with status 1 and one line
// naming the variable, rather than a warning that the server is not
// reachable and tools that all fail; a URL ending in /api is told to
// leave it out.
func TestRemoteURLWithoutAPI(t *testing.T) {
	ts := startTeamServer(t, nil)
	for _, tc := range []struct{ url, hint string }{
		{ts.url + "/api", "without /api"},
		{ts.url + "/api/", "without /api"},
		{ts.url + "/vault", "HTTP 404"},
	} {
		cmd := exec.Command(binary)
		cmd.Env = append(cleanEnv(), "TEAM_VAULT_URL="+tc.url, "TEAM_VAULT_API_KEY="+ts.rw)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("%s: err = %v, want exit 1; stderr:\n%s", tc.url, err, stderr.String())
		}
		msg := strings.TrimSpace(stderr.String())
		if stdout.Len() != 0 || strings.Contains(msg, "\n") || strings.Contains(msg, ts.rw) ||
			!strings.Contains(msg, "TEAM_VAULT_URL") || !strings.Contains(msg, tc.hint) {
			t.Errorf("%s: stdout=%q stderr=%q", tc.url, stdout.String(), msg)
		}
	}
}

// TestRemoteUntrustedCertificate: an https TEAM_VAULT_URL whose server
// shows a certificate this machine does not trust ends the process with
// status 1 and one line naming the variable and the certificate, after one
// attempt, rather than a warning that the server is not reachable.
func TestRemoteUntrustedCertificate(t *testing.T) {
	hs := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(hs.Close)
	cmd := exec.Command(binary)
	cmd.Env = append(cleanEnv(), "TEAM_VAULT_URL="+hs.URL, "TEAM_VAULT_API_KEY=tv_x")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Errorf("err = %v, want exit 1; stderr:\n%s", err, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if stdout.Len() != 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, "TEAM_VAULT_URL") || !strings.Contains(msg, "certificate") {
		t.Errorf("stdout=%q stderr=%q", stdout.String(), msg)
	}
}

// TestRemoteDefaultProjectUnusable: a default project the key may not use
// is a warning at start, and the connected line does not claim the server
// lacks the extension endpoints (extensions=unknown: the project could not
// be asked).
func TestRemoteDefaultProjectUnusable(t *testing.T) {
	ts := startTeamServer(t, nil)
	ctx := context.Background()
	if _, _, err := ts.data.AddProject(ctx, "other", ""); err != nil {
		t.Fatal(err)
	}
	key, _, err := ts.data.AddKey(ctx, "scoped", []string{"other"}, false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary)
	cmd.Env = append(cleanEnv(), "TEAM_VAULT_URL="+ts.url, "TEAM_VAULT_API_KEY="+key, "TEAM_VAULT_PROJECT_ID=ex")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	log := stderr.String()
	if !strings.Contains(log, "the default project cannot be used") || !strings.Contains(log, "extensions=unknown") || strings.Contains(log, "extensions=false") {
		t.Errorf("stderr:\n%s", log)
	}
}

// TestRemoteSaysLocalVaultUnused: a local vault given beside TEAM_VAULT_URL
// (--vault, VAULT_PATH) is not served: the start says so, once.
func TestRemoteSaysLocalVaultUnused(t *testing.T) {
	ts := startTeamServer(t, nil)
	vault := t.TempDir()
	for _, tc := range []struct {
		args, env []string
		warned    bool
	}{
		{[]string{"--vault", vault}, nil, true},
		{nil, []string{"VAULT_PATH=" + vault}, true},
		{nil, nil, false},
	} {
		cmd := exec.Command(binary, tc.args...)
		cmd.Env = append(append(cleanEnv(), "TEAM_VAULT_URL="+ts.url, "TEAM_VAULT_API_KEY="+ts.rw), tc.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v %v: %v; stderr:\n%s", tc.args, tc.env, err, stderr.String())
		}
		if got := strings.Count(stderr.String(), "the local vault is not used"); got != map[bool]int{true: 1, false: 0}[tc.warned] {
			t.Errorf("%v %v: said %d times; stderr:\n%s", tc.args, tc.env, got, stderr.String())
		}
	}
}

// The server words its refusals and warnings in the client's language
// (VAULT_LANG, sent as Accept-Language), not in its own: a client in
// Portuguese of a server in English reads one language.
func TestRemoteRefusalsInTheClientsLanguage(t *testing.T) {
	ts := startTeamServer(t, nil)
	for _, c := range []struct{ lang, want string }{
		{"pt", "NO_MATCH: old_text: não encontrado em 02-wiki/go/context.md"},
		{"", "NO_MATCH: old_text: not found in 02-wiki/go/context.md"},
	} {
		s, _ := connectRemote(t, "TEAM_VAULT_URL="+ts.url, "TEAM_VAULT_API_KEY="+ts.rw, "TEAM_VAULT_PROJECT_ID=ex", "VAULT_LANG="+c.lang)
		text, _, isErr := call(t, s, "vault_edit_note", map[string]any{"path": "02-wiki/go/context.md", "old_text": "no such text anywhere", "new_text": "x"})
		if !isErr || !strings.HasPrefix(text, c.want) {
			t.Errorf("VAULT_LANG=%q: %q, want it to start with %q", c.lang, text, c.want)
		}
	}
}
