package teamserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// clock is the injected clock of a test server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a team server over a data directory holding the example vault as
// project "ex" and an empty project "other", served on 127.0.0.1.
type env struct {
	t     testing.TB
	data  *Data
	srv   *Server
	http  *httptest.Server
	clock *clock
	ex    teamstore.Project
	other teamstore.Project
	// Keys: rw (every project), ro (read-only), scoped (only "other").
	rw, ro, scoped string
}

type envOpts struct {
	rate  float64
	burst int
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)}
	d, err := OpenData(ctx, t.TempDir(), c.Now)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, data: d, clock: c}
	if e.ex, _, err = d.AddProject(ctx, "ex", filepath.Join("..", "..", "examples", "vault")); err != nil {
		t.Fatal(err)
	}
	if e.other, _, err = d.AddProject(ctx, "other", ""); err != nil {
		t.Fatal(err)
	}
	if e.rw, _, err = d.AddKey(ctx, "alice", nil, false); err != nil {
		t.Fatal(err)
	}
	if e.ro, _, err = d.AddKey(ctx, "reader", nil, true); err != nil {
		t.Fatal(err)
	}
	if e.scoped, _, err = d.AddKey(ctx, "outsider", []string{"other"}, false); err != nil {
		t.Fatal(err)
	}
	e.start(o)
	t.Cleanup(func() {
		e.stop()
		d.Close()
	})
	return e
}

func (e *env) start(o envOpts) {
	e.t.Helper()
	srv, err := New(context.Background(), Config{Data: e.data, Now: e.clock.Now, RateLimit: o.rate, RateBurst: o.burst, NoSnapshots: true})
	if err != nil {
		e.t.Fatal(err)
	}
	e.srv = srv
	e.http = httptest.NewServer(srv.Handler())
}

func (e *env) stop() {
	if e.http != nil {
		e.http.Close()
		e.http = nil
	}
	if e.srv != nil {
		e.srv.Close()
		e.srv = nil
	}
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", a.status, err, a.body)
	}
}

// code is the error code of an error answer.
func (a answer) code() string {
	var b teamapi.ErrorBody
	_ = json.Unmarshal(a.body, &b)
	return b.Error.Code
}

// do sends a request with key (none when ""), body and header pairs.
func (e *env) do(method, path, key string, body []byte, header ...string) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

// multipartBody is a create's body: "path" and a "file" part named after
// the last segment, as the Team Vault client sends it.
func multipartBody(t testing.TB, path, content string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("path", path); err != nil {
		t.Fatal(err)
	}
	name := path[strings.LastIndex(path, "/")+1:]
	if strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
		name = "note.md" // the MIME header cannot carry it
	}
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(fw, content)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func (e *env) create(key, project, path, content string, header ...string) answer {
	e.t.Helper()
	body, ct := multipartBody(e.t, path, content)
	return e.do("POST", "/api/projects/"+project+"/files", key, body, append([]string{"Content-Type", ct}, header...)...)
}

func (e *env) fileAt(project, path string) (teamapi.File, bool) {
	e.t.Helper()
	a := e.do("GET", "/api/projects/"+project+"/files?path="+path, e.rw, nil)
	if a.status != 200 {
		e.t.Fatalf("GET files?path=%s: %d %s", path, a.status, a.body)
	}
	var l teamapi.FileList
	a.json(e.t, &l)
	for _, f := range l.Files {
		if f.Path == path {
			return f, true
		}
	}
	return teamapi.File{}, false
}

func (e *env) vaultDir(p teamstore.Project) string { return e.data.VaultDir(p.ID) }

// gitLog returns `git log` of a project's vault in a format.
func (e *env) gitLog(p teamstore.Project, format string) []string {
	e.t.Helper()
	out, err := exec.Command("git", "-C", e.vaultDir(p), "log", "--format="+format).Output()
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func wantStatus(t *testing.T, what string, a answer, status int, code string) {
	t.Helper()
	if a.status != status || (code != "" && a.code() != code) {
		t.Errorf("%s: %d %s, want %d %s", what, a.status, strings.TrimSpace(string(a.body)), status, code)
	}
}

var (
	uuidRe   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	commitRe = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	keyRe    = regexp.MustCompile(`tv_[0-9a-f]{64}`)
)

// normalise replaces what differs from run to run (ids, commits) by stable
// placeholders numbered in order of appearance, and indents the JSON.
func normalise(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	seen := map[string]string{}
	replace := func(re *regexp.Regexp, prefix string) {
		out = re.ReplaceAllFunc(out, func(m []byte) []byte {
			k := string(m)
			if r, ok := seen[k]; ok {
				return []byte(r)
			}
			n := 0
			for _, r := range seen {
				if strings.HasPrefix(r, "<"+prefix) {
					n++
				}
			}
			r := "<" + prefix + "-" + string(rune('a'+n)) + ">"
			seen[k] = r
			return []byte(r)
		})
	}
	replace(uuidRe, "id")
	replace(commitRe, "version")
	replace(keyRe, "key")
	return append(out, '\n')
}

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func execGit(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	return string(out), err
}
