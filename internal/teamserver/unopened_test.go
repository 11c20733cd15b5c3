package teamserver

import (
	"context"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// A project whose vault folder is missing at the start does not stop the
// server: the other projects are served, its requests are answered 503
// (without a new attempt at each) until it opens, tried again by the
// server's upkeep or by a request once openRetry has passed; a write a
// crash left running in it is settled when it opens.
func TestUnopenedProjectDoesNotStopTheServer(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	e.crashedCreate(t, "applied", "notes/crash.md", "# Crash\n")
	e.stop()
	exDir, otherDir := e.vaultDir(e.ex), e.vaultDir(e.other)
	for _, d := range []string{exDir, otherDir} {
		if err := os.Rename(d, d+".aside"); err != nil {
			t.Fatal(err)
		}
	}
	e.start(envOpts{}) // fails the test when the start fails
	a := e.do("GET", "/api/projects/ex/files", e.rw, nil)
	wantStatus(t, "a project without its folder", a, 503, teamapi.CodeUnavailable)
	if strings.Contains(string(a.body), exDir) {
		t.Errorf("the refusal names the server's folder: %s", a.body)
	}
	wantStatus(t, "a retry of the write left running, meanwhile", e.create(e.rw, "ex", "notes/crash.md", "# Crash\n", "Idempotency-Key", "applied"), 503, teamapi.CodeUnavailable)
	wantStatus(t, "a search in another project without its folder", e.do("POST", "/api/projects/other/search", e.rw, []byte(`{"query":"x"}`)), 503, teamapi.CodeUnavailable)
	wantMetric(t, e, "vaultmcp_projects_unopened 2")
	if running, _ := e.data.Store.RunningIdem(ctx); len(running) != 1 {
		t.Fatalf("running records = %+v, want the one left by the crash", running)
	}

	// Back, before openRetry has passed: still refused, no new attempt.
	for _, d := range []string{exDir, otherDir} {
		if err := os.Rename(d+".aside", d); err != nil {
			t.Fatal(err)
		}
	}
	wantStatus(t, "a request before the retry is due", e.do("GET", "/api/projects/ex/files", e.rw, nil), 503, teamapi.CodeUnavailable)
	e.clock.Advance(openRetry / 2)
	e.srv.upkeep(ctx)
	wantMetric(t, e, "vaultmcp_projects_unopened 2")

	// Due: a request opens "other"; the upkeep opens "ex" and settles its write.
	e.clock.Advance(openRetry / 2)
	wantStatus(t, "a request once the retry is due", e.do("POST", "/api/projects/other/search", e.rw, []byte(`{"query":"x"}`)), 200, "")
	wantMetric(t, e, "vaultmcp_projects_unopened 1")
	e.srv.upkeep(ctx)
	wantMetric(t, e, "vaultmcp_projects_unopened 0")
	if running, _ := e.data.Store.RunningIdem(ctx); len(running) != 0 {
		t.Errorf("records still running once the project opened: %+v", running)
	}
	commits := len(e.gitLog(e.ex, "%H"))
	retry := e.create(e.rw, "ex", "notes/crash.md", "# Crash\n", "Idempotency-Key", "applied")
	wantStatus(t, "the retry once the project opened", retry, 201, "")
	if retry.header.Get("Idempotent-Replayed") != "true" {
		t.Error("the retry was not answered from the settled record")
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits {
		t.Errorf("%d commits after the retry, want %d (nothing applied twice)", n, commits)
	}
}

func wantMetric(t *testing.T, e *env, line string) {
	t.Helper()
	a := e.do("GET", "/metrics", "", nil)
	for _, l := range strings.Split(string(a.body), "\n") {
		if l == line {
			return
		}
	}
	t.Errorf("no line %q in /metrics", line)
}

// stallingRemote is a git remote served over smart HTTP by git's own
// http-backend, whose answers can be refused (503) or held until let go.
type stallingRemote struct {
	url     string
	mu      sync.Mutex
	mode    string // "serve", "refuse" or "hold"
	held    int    // requests that reached the hold
	entered chan struct{}
	release chan struct{}
}

func newStallingRemote(t *testing.T) *stallingRemote {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "vault.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	if out, err := exec.Command("git", "-C", bare, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: git, Args: []string{"http-backend"}, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	r := &stallingRemote{mode: "serve", entered: make(chan struct{}, 16), release: make(chan struct{})}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		mode := r.mode
		if mode == "hold" {
			r.held++
		}
		r.mu.Unlock()
		switch mode {
		case "refuse":
			http.Error(w, "not now", http.StatusServiceUnavailable)
			return
		case "hold":
			r.entered <- struct{}{}
			<-r.release
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		r.letGo()
		hs.Close()
	})
	r.url = hs.URL + "/vault.git"
	return r
}

func (r *stallingRemote) set(mode string) {
	r.mu.Lock()
	r.mode = mode
	r.mu.Unlock()
}

func (r *stallingRemote) holds() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// letGo serves the held requests and those to come.
func (r *stallingRemote) letGo() {
	r.set("serve")
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

// A retry of a project that could not be opened is made by one request at
// a time (here a clone from its git remote, held by the remote): the
// requests meanwhile, and the upkeep, are answered 503 at once instead of
// each cloning; once the clone is let go, the project is served.
func TestUnopenedProjectRetriedOnce(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	remote := newStallingRemote(t)
	p, _, err := e.data.CreateProject(ctx, ProjectSpec{Name: "remote", From: filepath.Join("..", "..", "examples", "vault"), Remote: remote.url})
	if err != nil {
		t.Fatal(err)
	}
	e.stop()
	if err := os.RemoveAll(e.vaultDir(p)); err != nil {
		t.Fatal(err)
	}
	remote.set("refuse")
	e.start(envOpts{})
	wantStatus(t, "a project whose clone failed", e.do("GET", "/api/projects/remote/files", e.rw, nil), 503, teamapi.CodeUnavailable)

	e.clock.Advance(openRetry)
	remote.set("hold")
	first := make(chan answer, 1)
	go func() { first <- e.do("GET", "/api/projects/remote/files", e.rw, nil) }()
	select {
	case <-remote.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the due retry never reached the remote")
	}
	// While that clone is held: another request, and the upkeep, do not
	// clone again (each would be held too, and this test would time out).
	other := make(chan answer, 1)
	go func() { other <- e.do("GET", "/api/projects/remote/files", e.rw, nil) }()
	select {
	case a := <-other:
		wantStatus(t, "a request while the retry runs", a, 503, teamapi.CodeUnavailable)
	case <-time.After(10 * time.Second):
		t.Error("a request while the retry runs attempted the open too")
	}
	upkept := make(chan struct{})
	go func() {
		e.srv.upkeep(ctx)
		close(upkept)
	}()
	select {
	case <-upkept:
	case <-time.After(10 * time.Second):
		t.Error("the upkeep attempted the open while the retry ran")
	}
	if n := remote.holds(); n != 1 {
		t.Errorf("%d requests reached the remote while the clone was held, want 1", n)
	}
	remote.letGo()
	wantStatus(t, "the request that retried", <-first, 200, "")
	wantStatus(t, "a request once it opened", e.do("GET", "/api/projects/remote/files", e.rw, nil), 200, "")
}
