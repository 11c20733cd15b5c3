package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// teamProc is a running `vaultmcp team-server`.
type teamProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
	done   chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var listenURL = regexp.MustCompile(`msg="team server listening" url=(\S+)`)

// startTeam starts the server on a free loopback port and waits until it
// listens.
func startTeam(t *testing.T, data string, env []string, args ...string) *teamProc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"team-server", "--data", data, "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	pr, pw := io.Pipe()
	p := &teamProc{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = io.MultiWriter(p.stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listenURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() { p.done <- cmd.Wait(); pw.Close() }()
	select {
	case p.url = <-found:
	case err := <-p.done:
		t.Fatalf("team-server exited before listening: %v\n%s", err, p.stderr.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("team-server did not listen within 60 s\n%s", p.stderr.String())
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *teamProc) stop(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil && !strings.Contains(err.Error(), "killed") {
			t.Errorf("team-server exited with %v\n%s", err, p.stderr.String())
		}
	case <-time.After(90 * time.Second):
		p.cmd.Process.Kill()
		t.Errorf("team-server did not stop within 90 s of SIGTERM")
	}
}

// waitDead waits for a server that kills itself.
func (p *teamProc) waitDead(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not die")
	}
}

// teamCLI runs a management command.
func teamCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"team-server"}, args...)...)
	cmd.Env = cleanEnv()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, err := teamCLI(t, args...)
	if err != nil {
		t.Fatalf("team-server %v: %v\n%s", args, err, errs)
	}
	return strings.TrimSpace(out)
}

// teamAnswer is one HTTP answer of the server.
type teamAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a teamAnswer) code() string {
	var b struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(a.body, &b)
	return b.Error.Code
}

func (a teamAnswer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("not JSON (%d): %s", a.status, a.body)
	}
}

var teamClient = &http.Client{Timeout: 60 * time.Second}

func teamDo(t *testing.T, method, url, key string, body []byte, header ...string) teamAnswer {
	t.Helper()
	a, err := teamTry(method, url, key, body, header...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return a
}

func teamTry(method, url, key string, body []byte, header ...string) (teamAnswer, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return teamAnswer{}, err
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := teamClient.Do(req)
	if err != nil {
		return teamAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return teamAnswer{resp.StatusCode, resp.Header, b}, err
}

func want(t *testing.T, what string, a teamAnswer, status int, code string) {
	t.Helper()
	if a.status != status || (code != "" && a.code() != code) {
		t.Errorf("%s: %d %s, want %d %s", what, a.status, strings.TrimSpace(string(a.body)), status, code)
	}
}

type wireFile struct {
	ID          string `json:"id"`
	Path        string `json:"path"`
	FileType    string `json:"fileType"`
	ContentHash string `json:"contentHash"`
	Size        int64  `json:"size"`
	MimeType    string `json:"mimeType"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
}

// createBody is a create as the Team Vault client sends it: a "path" field
// and a "file" part whose file name is the path's last segment.
func createBody(t *testing.T, path, content string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("path", path)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, path[strings.LastIndex(path, "/")+1:]))
	h.Set("Content-Type", "text/markdown")
	fw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(fw, content)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func gitCount(t *testing.T, dir string, args ...string) int {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "rev-list", "--count", "HEAD"}, args...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

// teamData makes a data directory with the example vault (a git repository
// with history) as project "ex", and returns it with a read-write key.
func teamData(t *testing.T) (data, key, vaultDir string) {
	t.Helper()
	src := copyExampleVault(t)
	data = filepath.Join(t.TempDir(), "data")
	id := mustCLI(t, "project", "add", "--data", data, "--from", src, "ex")
	key = mustCLI(t, "key", "add", "--data", data, "alice")
	return data, key, filepath.Join(data, "vaults", id)
}

// The management commands: projects (empty and imported with history), keys
// (printed once, scoped, read-only, listed with their last use, revoked).
func TestTeamServerManagement(t *testing.T) {
	src := copyExampleVault(t)
	if err := os.WriteFile(filepath.Join(src, "uncommitted.md"), []byte("# Not committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	out, errs, err := teamCLI(t, "project", "add", "--data", data, "--from", src, "ex")
	if err != nil {
		t.Fatalf("project add: %v\n%s", err, errs)
	}
	id := strings.TrimSpace(out)
	if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(id) {
		t.Errorf("project add printed %q, want the project id", out)
	}
	if !strings.Contains(errs, "1 uncommitted change(s)") {
		t.Errorf("no warning about the uncommitted note: %q", errs)
	}
	vault := filepath.Join(data, "vaults", id)
	if got, want := gitCount(t, vault), gitCount(t, src); got != want {
		t.Errorf("the imported vault has %d commits, the source %d: history not imported", got, want)
	}
	if _, err := os.Stat(filepath.Join(vault, "uncommitted.md")); err == nil {
		t.Error("an uncommitted note was imported")
	}
	if _, errs, err := teamCLI(t, "project", "add", "--data", data, "ex"); err == nil || !strings.Contains(errs, `a project named "ex" exists`) {
		t.Errorf("second project ex: %v %s", err, errs)
	}
	if _, errs, err := teamCLI(t, "project", "add", "--data", data, "bad/name"); err == nil || !strings.Contains(errs, "project name") {
		t.Errorf("bad project name: %v %s", err, errs)
	}
	mustCLI(t, "project", "add", "--data", data, "empty")
	list := mustCLI(t, "project", "list", "--data", data)
	if !strings.Contains(list, "ex") || !strings.Contains(list, "empty") || !strings.Contains(list, id) {
		t.Errorf("project list:\n%s", list)
	}

	key := mustCLI(t, "key", "add", "--data", data, "alice")
	if !regexp.MustCompile(`^tv_[0-9a-f]{64}$`).MatchString(key) {
		t.Errorf("key add printed %q, want tv_ and 64 hex digits", key)
	}
	ro := mustCLI(t, "key", "add", "--data", data, "--project", "ex", "--read-only", "bob")
	if _, errs, err := teamCLI(t, "key", "add", "--data", data, "alice"); err == nil || !strings.Contains(errs, "active key") {
		t.Errorf("second key alice: %v %s", err, errs)
	}
	if _, errs, err := teamCLI(t, "key", "add", "--data", data, "--project", "nope", "carol"); err == nil || !strings.Contains(errs, "nope") {
		t.Errorf("key for an unknown project: %v %s", err, errs)
	}
	db, _ := os.ReadFile(filepath.Join(data, "team.db"))
	if bytes.Contains(db, []byte(key)) || bytes.Contains(db, []byte(key[3:])) {
		t.Error("the key is stored in clear in the database")
	}
	keys := mustCLI(t, "key", "list", "--data", data)
	if !regexp.MustCompile(`alice\s+all projects\s+read-write\s+\S+\s+never\s+active`).MatchString(keys) ||
		!regexp.MustCompile(`bob\s+ex\s+read-only`).MatchString(keys) || strings.Contains(keys, "tv_") {
		t.Errorf("key list:\n%s", keys)
	}

	srv := startTeam(t, data, nil)
	want(t, "alice", teamDo(t, "GET", srv.url+"/api/auth/me", key, nil), 200, "")
	want(t, "bob reads ex", teamDo(t, "GET", srv.url+"/api/projects/ex/files?path=02-wiki/go/context.md", ro, nil), 200, "")
	want(t, "bob on empty", teamDo(t, "GET", srv.url+"/api/projects/empty/files", ro, nil), 403, "forbidden")
	if !regexp.MustCompile(`alice\s+all projects\s+read-write\s+\S+\s+\d{4}-\d\d-\d\dT`).MatchString(mustCLI(t, "key", "list", "--data", data)) {
		t.Error("key list does not show alice's last use")
	}
	// A rotation too: the old secret is refused, the new one keeps the
	// key's scope and access.
	rotated := mustCLI(t, "key", "rotate", "--data", data, "bob")
	if !regexp.MustCompile(`^tv_[0-9a-f]{64}$`).MatchString(rotated) || rotated == ro {
		t.Errorf("key rotate printed %q, want a new key", rotated)
	}
	want(t, "bob's old secret", teamDo(t, "GET", srv.url+"/api/projects/ex/files?path=02-wiki/go/context.md", ro, nil), 401, "unauthorized")
	want(t, "bob's new secret reads ex", teamDo(t, "GET", srv.url+"/api/projects/ex/files?path=02-wiki/go/context.md", rotated, nil), 200, "")
	want(t, "bob's new secret on empty", teamDo(t, "GET", srv.url+"/api/projects/empty/files", rotated, nil), 403, "forbidden")
	ro = rotated
	if keys := mustCLI(t, "key", "list", "--data", data); strings.Count(keys, "bob ") != 1 || !regexp.MustCompile(`bob\s+ex\s+read-only\s+\S+\s+\S+\s+active`).MatchString(keys) {
		t.Errorf("key list after the rotation:\n%s", keys)
	}
	if _, errs, err := teamCLI(t, "key", "rotate", "--data", data, "nobody"); err == nil || !strings.Contains(errs, `no active key named "nobody"`) {
		t.Errorf("rotating an unknown key: %v %s", err, errs)
	}
	if !regexp.MustCompile(`(?m)^\S+Z\s+bob\s+-\s+key rotate\s+ok`).MatchString(mustCLI(t, "audit", "--data", data, "--limit", "1")) {
		t.Errorf("no audit row of the rotation:\n%s", mustCLI(t, "audit", "--data", data, "--limit", "1"))
	}
	// Revocation takes effect on the running server at once.
	mustCLI(t, "key", "revoke", "--data", data, "alice")
	want(t, "alice after the revoke", teamDo(t, "GET", srv.url+"/api/auth/me", key, nil), 401, "unauthorized")
	if _, errs, err := teamCLI(t, "key", "revoke", "--data", data, "alice"); err == nil || !strings.Contains(errs, "no active key") {
		t.Errorf("revoking twice: %v %s", err, errs)
	}
	// A project added while the server runs is served without a restart.
	mustCLI(t, "project", "add", "--data", data, "late")
	want(t, "bob on late", teamDo(t, "GET", srv.url+"/api/projects/late/files", ro, nil), 403, "forbidden")
	admin := mustCLI(t, "key", "add", "--data", data, "admin")
	want(t, "a project added while running", teamDo(t, "GET", srv.url+"/api/projects/late/files", admin, nil), 200, "")
	// A second server on the same data directory is refused.
	cmd := exec.Command(binary, "team-server", "--data", data, "--listen", "127.0.0.1:0")
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "another team-server") {
		t.Errorf("a second server on the same data: %v %s", err, out)
	}
}

// An empty --project (a script's unset variable: --project "$P") is
// refused: it used to make a key for every project, the widest scope there
// is, from a command meant to narrow it.
func TestTeamKeyEmptyProject(t *testing.T) {
	data := t.TempDir()
	mustCLI(t, "project", "add", "--data", data, "ex")
	for _, p := range []string{"", " , ", "ex,"} {
		_, errs, err := teamCLI(t, "key", "add", "--data", data, "--project", p, "ci")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(errs, "--project") {
			t.Errorf("key add --project %q: %v %q, want exit 2 naming --project", p, err, errs)
		}
	}
	if keys := mustCLI(t, "key", "list", "--data", data); strings.Contains(keys, "ci") {
		t.Errorf("a key was made:\n%s", keys)
	}
}

// project add --from "" (a script's unset variable) is refused rather than
// taken as no --from: it made an empty project where an import was meant.
// So is an empty --remote.
func TestTeamProjectAddEmptyFrom(t *testing.T) {
	data := t.TempDir()
	for _, flag := range []string{"--from", "--remote"} {
		_, errs, err := teamCLI(t, "project", "add", "--data", data, flag, "", "p")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(errs, flag) {
			t.Errorf("project add %s \"\": %v %q, want exit 2 naming %s", flag, err, errs, flag)
		}
	}
	if list := mustCLI(t, "project", "list", "--data", data); strings.Contains(list, "p ") {
		t.Errorf("a project was made:\n%s", list)
	}
}

// Listening off loopback needs TLS or an explicit --insecure-http; with TLS
// the server speaks HTTPS.
func TestTeamServerListenRules(t *testing.T) {
	data, key, _ := teamData(t)
	cmd := exec.Command(binary, "team-server", "--data", data, "--listen", "0.0.0.0:0")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--insecure-http") {
		t.Errorf("non-loopback without TLS: %v %s", err, out)
	}
	cmd = exec.Command(binary, "team-server", "--listen", "127.0.0.1:0")
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--data") {
		t.Errorf("no data directory: %v %s", err, out)
	}
	certFile, keyFile, pool := selfSigned(t)
	srv := startTeam(t, data, nil, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(srv.url, "https://127.0.0.1:") {
		t.Fatalf("TLS server at %s", srv.url)
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", srv.url+"/api/auth/me", nil)
	req.Header.Set("X-API-Key", key)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HTTPS request: %d", resp.StatusCode)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (string, string, *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	kb, _ := x509.MarshalECPrivateKey(priv)
	os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return cf, kf, pool
}

// Every endpoint of the REST API and its error codes, over the real binary.
func TestTeamServerEndpoints(t *testing.T) {
	data, key, _ := teamData(t)
	ro := mustCLI(t, "key", "add", "--data", data, "--read-only", "reader")
	srv := startTeam(t, data, nil)
	api := srv.url + "/api/projects/ex"

	var me struct {
		Key struct {
			Name     string   `json:"name"`
			ReadOnly bool     `json:"readOnly"`
			Projects []string `json:"projects"`
		} `json:"key"`
	}
	teamDo(t, "GET", srv.url+"/api/auth/me", key, nil).decode(t, &me)
	if me.Key.Name != "alice" || me.Key.ReadOnly {
		t.Errorf("me = %+v", me)
	}
	var projects struct {
		Projects []struct{ ID, Name string } `json:"projects"`
	}
	teamDo(t, "GET", srv.url+"/api/projects", key, nil).decode(t, &projects)
	if len(projects.Projects) != 1 || projects.Projects[0].Name != "ex" {
		t.Fatalf("projects = %+v", projects)
	}
	byID := srv.url + "/api/projects/" + projects.Projects[0].ID

	var all struct{ Files []wireFile }
	teamDo(t, "GET", api+"/files", key, nil).decode(t, &all)
	if len(all.Files) < 30 {
		t.Errorf("%d files listed", len(all.Files))
	}
	for _, f := range all.Files {
		if f.ID == "" || f.FileType != "markdown" || f.MimeType != "text/markdown" || len(f.ContentHash) != 64 || f.Size == 0 || f.CreatedAt == "" {
			t.Errorf("listed file %+v", f)
		}
		if strings.HasPrefix(f.Path, "attachments/") || strings.HasPrefix(f.Path, "_templates/") {
			t.Errorf("listed %s", f.Path)
		}
	}
	var pre struct{ Files []wireFile }
	teamDo(t, "GET", byID+"/files?prefix=02-wiki/go/", key, nil).decode(t, &pre)
	if len(pre.Files) < 5 {
		t.Errorf("prefix 02-wiki/go/: %d files", len(pre.Files))
	}
	for _, f := range pre.Files {
		if !strings.HasPrefix(f.Path, "02-wiki/go/") {
			t.Errorf("prefix listed %s", f.Path)
		}
	}
	var missing struct{ Files []wireFile }
	a := teamDo(t, "GET", api+"/files?path=no/such/note.md", key, nil)
	want(t, "missing path", a, 200, "")
	a.decode(t, &missing)
	if missing.Files == nil || len(missing.Files) != 0 {
		t.Errorf("a missing path answers %s, want an empty list", a.body)
	}

	body, ct := createBody(t, "notes/e2e.md", "# E2E\n\nfirst\n")
	a = teamDo(t, "POST", api+"/files", key, body, "Content-Type", ct)
	want(t, "create", a, 201, "")
	var created struct{ File wireFile }
	a.decode(t, &created)
	f := created.File
	if f.Path != "notes/e2e.md" || a.header.Get("ETag") != `"`+f.ContentHash+`"` {
		t.Errorf("created %+v ETag %s", f, a.header.Get("ETag"))
	}
	want(t, "create again", teamDo(t, "POST", api+"/files", key, body, "Content-Type", ct), 409, "path_exists")
	raw := teamDo(t, "GET", api+"/files/"+f.ID, key, nil)
	want(t, "raw bytes", raw, 200, "")
	if !strings.HasSuffix(string(raw.body), "# E2E\n\nfirst\n") || raw.header.Get("ETag") != `"`+f.ContentHash+`"` {
		t.Errorf("raw = %q, ETag %s", raw.body, raw.header.Get("ETag"))
	}
	put := teamDo(t, "PUT", api+"/files/"+f.ID, key, []byte("# E2E\n\nsecond\n"), "Content-Type", "application/octet-stream", "If-Match", raw.header.Get("ETag"))
	want(t, "PUT", put, 200, "")
	want(t, "PUT with the old ETag", teamDo(t, "PUT", api+"/files/"+f.ID, key, []byte("# E2E\n\nthird\n"), "If-Match", raw.header.Get("ETag")), 412, "precondition_failed")
	want(t, "PUT with a read-only key", teamDo(t, "PUT", api+"/files/"+f.ID, ro, []byte("x")), 403, "read_only_key")
	var moved struct{ File struct{ ID, Path string } }
	a = teamDo(t, "PATCH", api+"/files/"+f.ID, key, []byte(`{"newPath":"notes/e2e-moved.md"}`), "Content-Type", "application/json")
	want(t, "PATCH", a, 200, "")
	a.decode(t, &moved)
	if moved.File.ID != f.ID || moved.File.Path != "notes/e2e-moved.md" {
		t.Errorf("moved = %+v", moved)
	}
	var versions struct {
		Versions []struct {
			ID            string `json:"id"`
			VersionNumber int    `json:"versionNumber"`
			ContentHash   string `json:"contentHash"`
			Message       string `json:"message"`
			CreatedAt     string `json:"createdAt"`
		}
	}
	teamDo(t, "GET", api+"/files/"+f.ID+"/versions", key, nil).decode(t, &versions)
	if len(versions.Versions) != 3 || versions.Versions[0].VersionNumber != 3 || versions.Versions[2].VersionNumber != 1 || len(versions.Versions[0].ID) != 40 {
		t.Errorf("versions = %+v", versions)
	}
	var sr struct {
		Results []struct{ Path string } `json:"results"`
	}
	teamDo(t, "POST", api+"/search", key, []byte(`{"query":"advisory locks","limit":2}`)).decode(t, &sr)
	if len(sr.Results) == 0 || !strings.Contains(sr.Results[0].Path, "advisory-locks") {
		t.Errorf("search = %+v", sr)
	}
	want(t, "DELETE", teamDo(t, "DELETE", api+"/files/"+f.ID, key, nil), 200, "")
	want(t, "GET deleted", teamDo(t, "GET", api+"/files/"+f.ID, key, nil), 404, "not_found")
	want(t, "unknown file id", teamDo(t, "GET", api+"/files/nope", key, nil), 404, "not_found")
	want(t, "unknown project", teamDo(t, "GET", srv.url+"/api/projects/nope/files", key, nil), 404, "not_found")
	want(t, "unknown endpoint", teamDo(t, "GET", srv.url+"/nothing", key, nil), 404, "not_found")
	want(t, "wrong method", teamDo(t, "DELETE", api+"/files", key, nil), 405, "method_not_allowed")
	want(t, "not multipart", teamDo(t, "POST", api+"/files", key, []byte("x"), "Content-Type", "text/plain"), 415, "unsupported_media_type")
	want(t, "a path attack", teamDo(t, "GET", api+"/files?path=../../etc/passwd.md", key, nil), 400, "path_escape")
	big := bytes.Repeat([]byte("a"), 10<<20+1)
	want(t, "over 10 MiB", teamDo(t, "PUT", api+"/files/"+all.Files[0].ID, key, big), 413, "too_large")
	want(t, "no key", teamDo(t, "GET", api+"/files", "", nil), 401, "unauthorized")
	want(t, "key in the query", teamDo(t, "GET", api+"/files?apikey="+key, "", nil), 400, "key_in_query")
}

// The rate limit over the real binary: 429 with Retry-After.
func TestTeamServerRateLimit(t *testing.T) {
	data, key, _ := teamData(t)
	srv := startTeam(t, data, nil, "--rate-limit", "0.5", "--rate-burst", "2")
	for i := range 2 {
		want(t, fmt.Sprint("request ", i+1), teamDo(t, "GET", srv.url+"/api/auth/me", key, nil), 200, "")
	}
	a := teamDo(t, "GET", srv.url+"/api/auth/me", key, nil)
	want(t, "over the burst", a, 429, "rate_limited")
	if ra := a.header.Get("Retry-After"); ra != "1" && ra != "2" {
		t.Errorf("Retry-After = %q", ra)
	}
}

// A rate or burst that is no number of requests is refused with exit
// status 2 naming the flag: --rate-limit NaN used to start a server that
// refused every key's second request, and -1 one without any limit.
func TestTeamServerRateFlags(t *testing.T) {
	// The flags are checked before the data directory is opened: one that
	// cannot be keeps a server that took them from running on.
	data := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(data, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"--rate-limit NaN", "--rate-limit -1", "--rate-limit +Inf", "--rate-burst -5", "--rate-burst 0", "--lang xx"} {
		_, stderr, code := runBinary(t, nil, append([]string{"team-server", "--data", data, "--listen", "127.0.0.1:0"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(stderr, strings.Fields(args)[0]) {
			t.Errorf("team-server %s: exit %d, stderr %q; want exit 2 naming the flag", args, code, stderr)
		}
	}
}

// kill -9 of the server between applying a write and recording its answer:
// after a restart the retry gets the answer, and the write is in git once.
func TestTeamServerCrashAfterApply(t *testing.T) {
	data, key, vault := teamData(t)
	before := gitCount(t, vault)
	srv := startTeam(t, data, []string{"VAULTMCP_TEST_CRASH=after-apply"})
	body, ct := createBody(t, "notes/crash.md", "# Crash\n\nonce\n")
	if a, err := teamTry("POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-1"); err == nil {
		t.Fatalf("the server answered %d instead of dying", a.status)
	}
	srv.waitDead(t)
	if n := gitCount(t, vault); n != before+1 {
		t.Fatalf("%d commits after the crash, want the write applied (+1)", n-before)
	}
	srv2 := startTeam(t, data, nil)
	a := teamDo(t, "POST", srv2.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-1")
	want(t, "the retry", a, 201, "")
	if a.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was applied again instead of answered from the record: %v %s", a.header, a.body)
	}
	var created struct{ File wireFile }
	a.decode(t, &created)
	if created.File.Path != "notes/crash.md" || created.File.ID == "" {
		t.Errorf("answer = %s", a.body)
	}
	if n := gitCount(t, vault); n != before+1 {
		t.Errorf("%d commits after the retry, want 1", n-before)
	}
	out, _ := exec.Command("git", "-C", vault, "log", "--format=%an %s", "-1").Output()
	if !strings.HasPrefix(string(out), "alice docs(vault): create notes/crash.md") {
		t.Errorf("last commit: %s", out)
	}
	raw := teamDo(t, "GET", srv2.url+"/api/projects/ex/files/"+created.File.ID, key, nil)
	if strings.Count(string(raw.body), "once") != 1 {
		t.Errorf("note after the retry: %q", raw.body)
	}
}

// kill -9 between applying a move and recording its answer: the answer the
// retry gets says how many links the move rewrote in how many notes, and
// carries the moved note's ETag, as the answer of the same move not
// interrupted does.
func TestTeamServerCrashAfterApplyMove(t *testing.T) {
	type moveAnswer struct {
		File           struct{ ID, Path string }
		LinksRewritten int `json:"linksRewritten"`
		NotesRewritten int `json:"notesRewritten"`
	}
	const from, body = "02-wiki/go/retry-backoff.md", `{"newPath":"02-wiki/go/backoff.md"}`
	move := func(crash bool) (teamAnswer, moveAnswer) {
		data, key, _ := teamData(t)
		srv := startTeam(t, data, nil)
		var l struct{ Files []wireFile }
		teamDo(t, "GET", srv.url+"/api/projects/ex/files?path="+from, key, nil).decode(t, &l)
		if len(l.Files) != 1 {
			t.Fatalf("%s not listed", from)
		}
		id := l.Files[0].ID
		if crash {
			srv.stop(t)
			srv = startTeam(t, data, []string{"VAULTMCP_TEST_CRASH=after-apply"})
			if a, err := teamTry("PATCH", srv.url+"/api/projects/ex/files/"+id, key, []byte(body), "Idempotency-Key", "move-1"); err == nil {
				t.Fatalf("the server answered %d instead of dying", a.status)
			}
			srv.waitDead(t)
			srv = startTeam(t, data, nil)
		}
		a := teamDo(t, "PATCH", srv.url+"/api/projects/ex/files/"+id, key, []byte(body), "Idempotency-Key", "move-1")
		want(t, "the move", a, 200, "")
		var m moveAnswer
		a.decode(t, &m)
		return a, m
	}
	plain, want := move(false)
	rebuilt, got := move(true)
	if rebuilt.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not answered from the record: %v", rebuilt.header)
	}
	if want.LinksRewritten == 0 || want.NotesRewritten == 0 {
		t.Fatalf("the move rewrote no links (%+v): the test needs a note with backlinks", want)
	}
	if got.File.Path != want.File.Path || got.LinksRewritten != want.LinksRewritten || got.NotesRewritten != want.NotesRewritten {
		t.Errorf("rebuilt answer %+v, want the counts of the move %+v", got, want)
	}
	if e := rebuilt.header.Get("ETag"); e == "" || e != plain.header.Get("ETag") {
		t.Errorf("rebuilt answer's ETag %q, want %q", e, plain.header.Get("ETag"))
	}
}

// kill -9 between applying an edit (an extension write) and recording its
// answer: the rebuilt answer gives the note's new sha256, which the next
// write of the note is made against.
func TestTeamServerCrashAfterApplyEdit(t *testing.T) {
	data, key, vault := teamData(t)
	const body = `{"path":"02-wiki/go/context.md","old_text":"# Context cancellation in Go","new_text":"# Context cancellation in Go (edited)"}`
	srv := startTeam(t, data, []string{"VAULTMCP_TEST_CRASH=after-apply"})
	if a, err := teamTry("POST", srv.url+"/api/projects/ex/edit", key, []byte(body), "Idempotency-Key", "edit-1"); err == nil {
		t.Fatalf("the server answered %d instead of dying", a.status)
	}
	srv.waitDead(t)
	srv = startTeam(t, data, nil)
	a := teamDo(t, "POST", srv.url+"/api/projects/ex/edit", key, []byte(body), "Idempotency-Key", "edit-1")
	want(t, "the retry", a, 200, "")
	var res struct {
		SHA256  string `json:"sha256"`
		Version string `json:"version"`
	}
	a.decode(t, &res)
	now, err := os.ReadFile(filepath.Join(vault, "02-wiki", "go", "context.md"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(now); a.header.Get("Idempotent-Replayed") != "true" || res.Version == "" || res.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("rebuilt answer %s (replayed %q), want the sha256 of the note as edited", a.body, a.header.Get("Idempotent-Replayed"))
	}
}

// kill -9 after the idempotency record but before the write: the restart
// drops the record and the retry applies the write, once.
func TestTeamServerCrashBeforeApply(t *testing.T) {
	data, key, vault := teamData(t)
	before := gitCount(t, vault)
	srv := startTeam(t, data, []string{"VAULTMCP_TEST_CRASH=before-apply"})
	body, ct := createBody(t, "notes/never.md", "# Never\n")
	if a, err := teamTry("POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-2"); err == nil {
		t.Fatalf("the server answered %d instead of dying", a.status)
	}
	srv.waitDead(t)
	if n := gitCount(t, vault); n != before {
		t.Fatalf("%d commits after a crash before the write", n-before)
	}
	srv2 := startTeam(t, data, nil)
	a := teamDo(t, "POST", srv2.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-2")
	want(t, "the retry", a, 201, "")
	if a.header.Get("Idempotent-Replayed") != "" {
		t.Error("a write never applied was answered from the record")
	}
	again := teamDo(t, "POST", srv2.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-2")
	if again.header.Get("Idempotent-Replayed") != "true" || again.status != 201 {
		t.Errorf("a second retry: %d %v", again.status, again.header)
	}
	if n := gitCount(t, vault); n != before+1 {
		t.Errorf("%d commits, want 1", n-before)
	}
}

// A restart keeps ids, tombstones, versions, keys and idempotency records.
func TestTeamServerRestartPersistence(t *testing.T) {
	data, key, _ := teamData(t)
	srv := startTeam(t, data, nil)
	api := srv.url + "/api/projects/ex"
	body, ct := createBody(t, "notes/keep.md", "# Keep\n")
	created := teamDo(t, "POST", api+"/files", key, body, "Content-Type", ct, "Idempotency-Key", "persist-1")
	var c struct{ File wireFile }
	created.decode(t, &c)
	gone, gct := createBody(t, "notes/gone.md", "# Gone\n")
	var g struct{ File wireFile }
	teamDo(t, "POST", api+"/files", key, gone, "Content-Type", gct).decode(t, &g)
	want(t, "delete", teamDo(t, "DELETE", api+"/files/"+g.File.ID, key, nil), 200, "")
	var ctx struct{ Files []wireFile }
	teamDo(t, "GET", api+"/files?path=02-wiki/go/context.md", key, nil).decode(t, &ctx)
	srv.stop(t)

	srv = startTeam(t, data, nil)
	api = srv.url + "/api/projects/ex"
	var again struct{ Files []wireFile }
	teamDo(t, "GET", api+"/files?path=notes/keep.md", key, nil).decode(t, &again)
	if len(again.Files) != 1 || again.Files[0].ID != c.File.ID {
		t.Errorf("after a restart notes/keep.md is %+v, want id %s", again.Files, c.File.ID)
	}
	var ctx2 struct{ Files []wireFile }
	teamDo(t, "GET", api+"/files?path=02-wiki/go/context.md", key, nil).decode(t, &ctx2)
	if ctx2.Files[0].ID != ctx.Files[0].ID {
		t.Error("an imported note's id changed across a restart")
	}
	replay := teamDo(t, "POST", api+"/files", key, body, "Content-Type", ct, "Idempotency-Key", "persist-1")
	if replay.header.Get("Idempotent-Replayed") != "true" || string(replay.body) != string(created.body) {
		t.Errorf("the idempotency record did not survive the restart: %d %v", replay.status, replay.header)
	}
	want(t, "the tombstone", teamDo(t, "GET", api+"/files/"+g.File.ID, key, nil), 404, "not_found")
	var revived struct{ File wireFile }
	teamDo(t, "POST", api+"/files", key, gone, "Content-Type", gct).decode(t, &revived)
	if revived.File.ID != g.File.ID {
		t.Errorf("revived after a restart with id %s, want %s", revived.File.ID, g.File.ID)
	}
	var vs struct{ Versions []struct{ VersionNumber int } }
	teamDo(t, "GET", api+"/files/"+c.File.ID+"/versions", key, nil).decode(t, &vs)
	if len(vs.Versions) != 1 {
		t.Errorf("versions after a restart: %+v", vs)
	}
}

// The API driven exactly as the Team Vault MCP client drives it: find a
// note by GET files?path= and an exact path match among the answers,
// create with multipart ("path", and "file" named after the last segment),
// replace with a raw PUT as application/octet-stream, read raw bytes.
func TestTeamVaultClientCompat(t *testing.T) {
	data, key, _ := teamData(t)
	srv := startTeam(t, data, nil)
	base := srv.url + "/api/projects/ex"
	find := func(path string) (wireFile, bool) {
		var l struct{ Files []wireFile }
		teamDo(t, "GET", base+"/files?path="+url.QueryEscape(path), key, nil).decode(t, &l)
		for _, f := range l.Files {
			if f.Path == path {
				return f, true
			}
		}
		return wireFile{}, false
	}
	upsert := func(path, content string) wireFile {
		if f, ok := find(path); ok {
			a := teamDo(t, "PUT", base+"/files/"+f.ID, key, []byte(content), "Content-Type", "application/octet-stream")
			want(t, "PUT "+path, a, 200, "")
			var r struct{ File wireFile }
			a.decode(t, &r)
			return r.File
		}
		body, ct := createBody(t, path, content)
		a := teamDo(t, "POST", base+"/files", key, body, "Content-Type", ct)
		want(t, "POST "+path, a, 201, "")
		var r struct{ File wireFile }
		a.decode(t, &r)
		return r.File
	}
	first := upsert("03-projects/team/plan.md", "# Plan\n\n- step one\n")
	second := upsert("03-projects/team/plan.md", "---\ntype: project\n---\n# Plan\n\n- step one\n- step two\n")
	if first.ID != second.ID {
		t.Errorf("the upsert changed the id: %s then %s", first.ID, second.ID)
	}
	raw := teamDo(t, "GET", base+"/files/"+second.ID, key, nil)
	if string(raw.body) != "---\ntype: project\n---\n# Plan\n\n- step one\n- step two\n" {
		t.Errorf("raw content = %q", raw.body)
	}
	if raw.header.Get("ETag") != `"`+second.ContentHash+`"` {
		t.Errorf("ETag %s, contentHash %s", raw.header.Get("ETag"), second.ContentHash)
	}
	// A note name with spaces and non-ASCII letters round-trips.
	odd := upsert("02-wiki/postgres/Índice de conexões.md", "# Índice\n")
	if f, ok := find("02-wiki/postgres/Índice de conexões.md"); !ok || f.ID != odd.ID {
		t.Errorf("lookup of a non-ASCII name: %+v %v", f, ok)
	}
	if _, ok := find("03-projects/team/PLAN.md"); ok {
		t.Error("the exact-path lookup matched another letter case")
	}
}

// headerTransport adds the API key to every request of an MCP client.
type headerTransport struct{ key string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.key)
	return http.DefaultTransport.RoundTrip(r)
}

// MCP over Streamable HTTP on the real binary: the go-sdk client connects
// to a project's endpoint with a key, searches, writes (authored by the
// key), and the server still stops cleanly on SIGTERM with the client's
// event stream open.
func TestTeamServerMCP(t *testing.T) {
	data, key, vault := teamData(t)
	srv := startTeam(t, data, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url + "/projects/ex/mcp", HTTPClient: &http.Client{Transport: headerTransport{key}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, srv.stderr.String())
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "vault_search", Arguments: map[string]any{"query": "retry backoff"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "retry-backoff.md") {
		t.Fatalf("vault_search: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "vault_learn", Arguments: map[string]any{
		"title": "Jitter spreads retries", "insight": "Add random jitter to every backoff so clients do not retry in lockstep.",
		"context": "e2e", "domain": "go", "tags": []string{"pattern"}}})
	if err != nil || res.IsError {
		t.Fatalf("vault_learn: %v %+v", err, res)
	}
	out, _ := exec.Command("git", "-C", vault, "log", "-1", "--format=%an|%s").Output()
	if strings.TrimSpace(string(out)) != "alice|docs(vault): Jitter spreads retries" {
		t.Errorf("last commit %q", out)
	}
	srv.stop(t)
	if strings.Contains(srv.stderr.String(), "shutdown:") {
		t.Errorf("the shutdown did not finish cleanly:\n%s", srv.stderr.String())
	}
}

// kill -9 after a write is applied, and the vault's folder gone at the next
// start: the server starts all the same and serves the other projects, the
// project without its folder is answered 503 (its reason in the log), and
// once the folder is back the retry is answered from the write's commit.
func TestTeamServerStartsWithoutAProjectFolder(t *testing.T) {
	data, key, vault := teamData(t)
	mustCLI(t, "project", "add", "--data", data, "empty")
	srv := startTeam(t, data, []string{"VAULTMCP_TEST_CRASH=after-apply"})
	body, ct := createBody(t, "notes/crash.md", "# Crash\n\nonce\n")
	if a, err := teamTry("POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-1"); err == nil {
		t.Fatalf("the server answered %d instead of dying", a.status)
	}
	srv.waitDead(t)
	before := gitCount(t, vault)
	if err := os.Rename(vault, vault+".aside"); err != nil {
		t.Fatal(err)
	}
	srv = startTeam(t, data, nil)
	want(t, "the project without its folder", teamDo(t, "GET", srv.url+"/api/projects/ex/files", key, nil), 503, "unavailable")
	want(t, "the retry meanwhile", teamDo(t, "POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-1"), 503, "unavailable")
	want(t, "the other project", teamDo(t, "GET", srv.url+"/api/projects/empty/files", key, nil), 200, "")
	if log := srv.stderr.String(); !strings.Contains(log, `msg="a project cannot be opened`) || !strings.Contains(log, "project=ex") {
		t.Errorf("the log does not say which project cannot be opened:\n%s", log)
	}
	srv.stop(t)
	if err := os.Rename(vault+".aside", vault); err != nil {
		t.Fatal(err)
	}
	srv = startTeam(t, data, nil)
	a := teamDo(t, "POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct, "Idempotency-Key", "crash-1")
	want(t, "the retry once the folder is back", a, 201, "")
	if a.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was applied again instead of answered from the record: %v %s", a.header, a.body)
	}
	if n := gitCount(t, vault); n != before {
		t.Errorf("%d commits after the retry, want none", n-before)
	}
}

// team-server audit reads the audit log while the server runs: newest
// first, as a table or JSON lines, filtered by project, key and time.
func TestTeamServerAudit(t *testing.T) {
	data, key, _ := teamData(t)
	mustCLI(t, "project", "add", "--data", data, "other")
	bob := mustCLI(t, "key", "add", "--data", data, "bob")
	srv := startTeam(t, data, nil)
	body, ct := createBody(t, "notes/audited.md", "# Audited\n")
	want(t, "alice creates", teamDo(t, "POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct), 201, "")
	want(t, "bob edits text that is not there", teamDo(t, "POST", srv.url+"/api/projects/ex/edit", bob,
		[]byte(`{"path":"notes/audited.md","old_text":"absent","new_text":"x"}`)), 422, "no_match")
	body, ct = createBody(t, "elsewhere.md", "# Elsewhere\n")
	want(t, "bob creates in other", teamDo(t, "POST", srv.url+"/api/projects/other/files", bob, body, "Content-Type", ct), 201, "")

	table := mustCLI(t, "audit", "--data", data)
	lines := strings.Split(table, "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "TIME") ||
		!regexp.MustCompile(`^\S+Z\s+bob\s+other\s+create\s+ok\s+[0-9a-f]{12}\s+elsewhere\.md$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^\S+Z\s+bob\s+ex\s+edit\s+no_match\s+-\s+notes/audited\.md$`).MatchString(lines[2]) ||
		!regexp.MustCompile(`^\S+Z\s+alice\s+ex\s+create\s+ok\s+[0-9a-f]{12}\s+notes/audited\.md$`).MatchString(lines[3]) {
		t.Errorf("audit, newest first:\n%s", table)
	}
	type row struct {
		Key, Project, Operation, Result, Version string
		Paths                                    []string
	}
	rowsOf := func(args ...string) []row {
		t.Helper()
		var rows []row
		for _, l := range strings.Split(mustCLI(t, append([]string{"audit", "--data", data, "--json"}, args...)...), "\n") {
			if l == "" {
				continue
			}
			var r row
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("audit --json line %q: %v", l, err)
			}
			rows = append(rows, r)
		}
		return rows
	}
	if rows := rowsOf("--key", "bob", "--project", "ex"); len(rows) != 1 || rows[0].Operation != "edit" || rows[0].Result != "no_match" {
		t.Errorf("bob's rows in ex: %+v", rows)
	}
	if rows := rowsOf("--project", "other", "--limit", "1"); len(rows) != 1 || rows[0].Key != "bob" || rows[0].Operation != "create" || len(rows[0].Version) != 40 {
		t.Errorf("the newest row of other: %+v", rows)
	}
	if rows := rowsOf("--since", "1h", "--key", "alice"); len(rows) != 2 || rows[0].Operation != "create" || rows[1].Operation != "key add" {
		t.Errorf("alice's rows of the last hour: %+v", rows)
	}
	if rows := rowsOf("--since", "1d", "--key", "bob"); len(rows) != 3 {
		t.Errorf("bob's rows of the last day: %+v", rows)
	}
	if rows := rowsOf("--since", "2999-01-01"); len(rows) != 0 {
		t.Errorf("rows after 2999: %+v", rows)
	}
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--since", "yesterday"}, 2, `--since "yesterday"`},
		{[]string{"--limit", "0"}, 2, "--limit 0"},
		{[]string{"--project", "nope"}, 1, `--project "nope": no such project`},
	} {
		_, errs, err := teamCLI(t, append([]string{"audit", "--data", data}, c.args...)...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("audit %v: %v %q, want exit %d saying %q", c.args, err, errs, c.code, c.says)
		}
	}
}

// team-server backup copies a data directory while its server runs: a
// server started on the copy serves the notes, ids and keys of the moment
// of the backup, and clones again the vault of a project kept in a git
// remote.
func TestTeamServerBackup(t *testing.T) {
	data, key, _ := teamData(t)
	bare := filepath.Join(t.TempDir(), "kept.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	mustCLI(t, "project", "add", "--data", data, "--remote", bare, "kept")
	srv := startTeam(t, data, nil)
	body, ct := createBody(t, "notes/before.md", "# Before\n\nbacked up\n")
	a := teamDo(t, "POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct)
	want(t, "a note before the backup", a, 201, "")
	var before struct{ File wireFile }
	a.decode(t, &before)
	body, ct = createBody(t, "kept.md", "# Kept\n")
	want(t, "a note in the remote's project", teamDo(t, "POST", srv.url+"/api/projects/kept/files", key, body, "Content-Type", ct), 201, "")

	backup := filepath.Join(t.TempDir(), "backup")
	out := mustCLI(t, "backup", "--data", data, "--to", backup)
	if !strings.Contains(out, "the database and 1 vault(s)") || !strings.Contains(out, "1 project(s) kept in a git remote (kept)") {
		t.Errorf("backup says %q", out)
	}
	body, ct = createBody(t, "notes/after.md", "# After\n")
	want(t, "a note after the backup", teamDo(t, "POST", srv.url+"/api/projects/ex/files", key, body, "Content-Type", ct), 201, "")
	if !regexp.MustCompile(`(?m)^\S+Z\s+-\s+-\s+backup\s+ok\s+-\s+` + regexp.QuoteMeta(backup) + `$`).MatchString(mustCLI(t, "audit", "--data", data, "--limit", "3")) {
		t.Errorf("no audit row of the backup:\n%s", mustCLI(t, "audit", "--data", data, "--limit", "3"))
	}
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--to", backup}, 1, "exists and is not an empty folder"},
		{[]string{"--to", filepath.Join(data, "inside")}, 1, "inside the data directory"},
		{nil, 2, "--to NEW_DIR"},
	} {
		_, errs, err := teamCLI(t, append([]string{"backup", "--data", data}, c.args...)...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("backup %v: %v %q, want exit %d saying %q", c.args, err, errs, c.code, c.says)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "inside")); err == nil {
		t.Error("a refused backup left its folder in the data directory")
	}
	srv.stop(t)

	restored := startTeam(t, backup, nil)
	got := teamDo(t, "GET", restored.url+"/api/projects/ex/files/"+before.File.ID, key, nil)
	want(t, "the note of before the backup, by its id", got, 200, "")
	if string(got.body) != "# Before\n\nbacked up\n" {
		t.Errorf("its content: %q", got.body)
	}
	if f := teamDo(t, "GET", restored.url+"/api/projects/ex/files?path=notes/after.md", key, nil); f.status != 200 || !strings.Contains(string(f.body), `"files":[]`) {
		t.Errorf("the note written after the backup: %d %s", f.status, f.body)
	}
	if f := teamDo(t, "GET", restored.url+"/api/projects/kept/files?path=kept.md", key, nil); f.status != 200 || !strings.Contains(string(f.body), `"path":"kept.md"`) {
		t.Errorf("the remote's project, cloned again: %d %s", f.status, f.body)
	}
	body, ct = createBody(t, "notes/restored.md", "# Restored\n")
	want(t, "a write on the restored server", teamDo(t, "POST", restored.url+"/api/projects/ex/files", key, body, "Content-Type", ct), 201, "")
}

// team-server project remove: refused while a server holds the data
// directory and while a key may use only that project; then the project
// is gone from the metadata (its name free again), its vault kept aside,
// its audit rows and the other projects untouched.
func TestTeamServerProjectRemove(t *testing.T) {
	data, key, _ := teamData(t)
	id := mustCLI(t, "project", "add", "--data", data, "gone")
	mustCLI(t, "key", "add", "--data", data, "--project", "gone", "scoped")
	both := mustCLI(t, "key", "add", "--data", data, "--project", "gone,ex", "both")
	srv := startTeam(t, data, nil)
	body, ct := createBody(t, "kept.md", "# Kept aside\n")
	want(t, "a note in the project to remove", teamDo(t, "POST", srv.url+"/api/projects/gone/files", key, body, "Content-Type", ct, "Idempotency-Key", "k1"), 201, "")
	if _, errs, err := teamCLI(t, "project", "remove", "--data", data, "gone"); err == nil || !strings.Contains(errs, "stop the server first") {
		t.Errorf("remove while the server runs: %v %s", err, errs)
	}
	srv.stop(t)
	if _, errs, err := teamCLI(t, "project", "remove", "--data", data, "gone"); err == nil || !strings.Contains(errs, "the active key(s) scoped may use only this project") {
		t.Errorf("remove with a key limited to it: %v %s", err, errs)
	}
	if _, err := os.Stat(filepath.Join(data, "vaults", id)); err != nil {
		t.Fatalf("a refused removal moved the vault: %v", err)
	}
	mustCLI(t, "key", "revoke", "--data", data, "scoped")
	out := mustCLI(t, "project", "remove", "--data", data, "gone")
	aside := filepath.Join(data, "removed", "gone-"+id)
	if !strings.Contains(out, "removed project gone; its vault is kept in "+aside) {
		t.Errorf("remove says %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(aside, "kept.md")); err != nil || string(b) != "# Kept aside\n" {
		t.Errorf("the vault kept aside: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(data, "vaults", id)); !os.IsNotExist(err) {
		t.Errorf("the vault is still in vaults/: %v", err)
	}
	if list := mustCLI(t, "project", "list", "--data", data); strings.Contains(list, "gone") {
		t.Errorf("project list after the removal:\n%s", list)
	}
	audit := mustCLI(t, "audit", "--data", data, "--project", id)
	if !regexp.MustCompile(`(?m)^\S+Z\s+-\s+\S+\s+project remove\s+ok`).MatchString(audit) || !regexp.MustCompile(`(?m)^\S+Z\s+alice\s+\S+\s+create\s+ok`).MatchString(audit) {
		t.Errorf("the removed project's audit rows:\n%s", audit)
	}
	if _, errs, err := teamCLI(t, "project", "remove", "--data", data, "gone"); err == nil || !strings.Contains(errs, `no project "gone"`) {
		t.Errorf("removing it twice: %v %s", err, errs)
	}
	srv = startTeam(t, data, nil)
	want(t, "the removed project", teamDo(t, "GET", srv.url+"/api/projects/gone/files", key, nil), 404, "not_found")
	want(t, "a key to both, on the one left", teamDo(t, "GET", srv.url+"/api/projects/ex/files?path=02-wiki/go/context.md", both, nil), 200, "")
	want(t, "a key to both, on the removed one", teamDo(t, "GET", srv.url+"/api/projects/gone/files", both, nil), 403, "forbidden")
	mustCLI(t, "project", "add", "--data", data, "gone") // the name is free again
}

// key add --expires and key rotate --expires: the expiry is listed; a past
// or unreadable one is refused.
func TestTeamKeyExpiresFlags(t *testing.T) {
	data := t.TempDir()
	mustCLI(t, "project", "add", "--data", data, "ex")
	mustCLI(t, "key", "add", "--data", data, "--expires", "90d", "ci")
	mustCLI(t, "key", "add", "--data", data, "--expires", "2099-01-02", "far")
	list := mustCLI(t, "key", "list", "--data", data)
	if !regexp.MustCompile(`(?m)^NAME.*STATE\s+EXPIRES$`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^ci\s+all projects\s+read-write\s+\S+\s+never\s+active\s+\d{4}-\d\d-\d\dT\S+Z$`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^far\s+.*\s+active\s+2099-01-02T00:00:00Z$`).MatchString(list) {
		t.Errorf("key list:\n%s", list)
	}
	mustCLI(t, "key", "rotate", "--data", data, "--expires", "never", "ci")
	if list := mustCLI(t, "key", "list", "--data", data); !regexp.MustCompile(`(?m)^ci\s+.*\s+active\s+never$`).MatchString(list) {
		t.Errorf("key list after a rotation to no expiry:\n%s", list)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"key", "add", "--data", data, "--expires", "2020-01-01", "old"}, "already past"},
		{[]string{"key", "add", "--data", data, "--expires", "soon", "x"}, `--expires "soon"`},
		{[]string{"key", "rotate", "--data", data, "--expires", "-3d", "ci"}, `--expires "-3d"`},
	} {
		if _, errs, err := teamCLI(t, c.args...); err == nil || !strings.Contains(errs, c.says) {
			t.Errorf("%v: %v %q, want it refused saying %q", c.args, err, errs, c.says)
		}
	}
}
