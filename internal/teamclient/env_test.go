package teamclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/teamserver"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// fakeClock is the test's time. Sleep advances it at once (a pause costs
// nothing), and Advance fires the timers that come due, so a test decides
// when an attempt times out.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	sleeps []time.Duration
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	c.Advance(d)
	return ctx.Err()
}

// Advance moves the time on by d and runs the timers that came due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t.f)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// server is a real team server on 127.0.0.1 over a data directory holding
// the example vault as project "ex" and an empty project "empty".
type server struct {
	t    testing.TB
	data *teamserver.Data
	srv  *teamserver.Server
	http *httptest.Server
	ex   teamstore.Project
	// keys: rw may do anything, ro only read.
	rw, ro string
}

func newServer(t testing.TB) *server {
	t.Helper()
	ctx := context.Background()
	d, err := teamserver.OpenData(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, data: d}
	if s.ex, _, err = d.AddProject(ctx, "ex", filepath.Join("..", "..", "examples", "vault")); err != nil {
		t.Fatal(err)
	}
	if _, _, err = d.AddProject(ctx, "empty", ""); err != nil {
		t.Fatal(err)
	}
	if s.rw, _, err = d.AddKey(ctx, "alice", nil, false); err != nil {
		t.Fatal(err)
	}
	if s.ro, _, err = d.AddKey(ctx, "reader", nil, true); err != nil {
		t.Fatal(err)
	}
	s.srv, err = teamserver.New(ctx, teamserver.Config{Data: d, NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	s.http = httptest.NewServer(s.srv.Handler())
	t.Cleanup(func() {
		s.http.Close()
		s.srv.Close()
		d.Close()
	})
	return s
}

// commits counts the commits of project ex's vault.
func (s *server) commits() int {
	s.t.Helper()
	out, err := exec.Command("git", "-C", s.data.VaultDir(s.ex.ID), "rev-list", "--count", "HEAD").Output()
	if err != nil {
		s.t.Fatal(err)
	}
	var n int
	for _, c := range strings.TrimSpace(string(out)) {
		n = n*10 + int(c-'0')
	}
	return n
}

// commitsTouching counts the commits of project ex that touched path.
func (s *server) commitsTouching(path string) int {
	s.t.Helper()
	out, err := exec.Command("git", "-C", s.data.VaultDir(s.ex.ID), "log", "--format=%H", "--", path).Output()
	if err != nil {
		s.t.Fatal(err)
	}
	return len(strings.Fields(string(out)))
}

// plain hides the extension endpoints, as a Team Vault server without
// them answers: 404 for POST /api/projects/{p}/{op} other than files.
func plain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(segs) == 4 && segs[0] == "api" && segs[1] == "projects" && segs[3] != "files" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":"not_found","message":"Not found"}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fault is what the proxy does with one request.
type fault int

const (
	pass       fault = iota
	dropBefore       // close the connection without passing the request on
	dropAfter        // pass it on, wait for the answer, then close the connection without it
	slow             // pass it on, then let the attempt time out (advance the clock) and never answer
	hang             // hold the request, never pass it on, until the client goes away
	status           // answer with the canned status, header and body without passing it on
	vanish           // pass it on without waiting, and close the connection at once (the server is still applying it)
)

// seen is one request the proxy saw.
type seen struct {
	method, path, query string
	idemKey, ifMatch    string
	fault               fault
}

// proxy is a fault-injecting proxy of the test's own in front of a team
// server, on 127.0.0.1.
type proxy struct {
	t     testing.TB
	to    string
	clock *fakeClock
	http  *httptest.Server
	// plan decides each request's fault (n counts from 0); nil passes
	// every request.
	mu      sync.Mutex
	plan    func(n int, r *http.Request) (fault, *canned)
	log     []seen
	arrived chan struct{}  // a hang request arrived
	wg      sync.WaitGroup // requests passed on in the background
}

// canned is the answer of a status fault.
type canned struct {
	status int
	header map[string]string
	body   string
}

func newProxy(t testing.TB, upstream http.Handler, clock *fakeClock) *proxy {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	p := &proxy{t: t, to: up.URL, clock: clock, arrived: make(chan struct{}, 16)}
	p.http = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		p.http.Close()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) setPlan(f func(n int, r *http.Request) (fault, *canned)) {
	p.mu.Lock()
	p.plan = f
	p.log = nil
	p.mu.Unlock()
}

func (p *proxy) seen() []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seen(nil), p.log...)
}

func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	n := len(p.log)
	f, c := pass, (*canned)(nil)
	if p.plan != nil {
		f, c = p.plan(n, r)
	}
	p.log = append(p.log, seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, idemKey: r.Header.Get("Idempotency-Key"), ifMatch: r.Header.Get("If-Match"), fault: f})
	p.mu.Unlock()
	switch f {
	case dropBefore:
		p.drop(w)
		return
	case hang:
		p.arrived <- struct{}{}
		<-r.Context().Done()
		return
	case vanish:
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if _, err := p.forward(r, body); err != nil {
				p.t.Errorf("proxy: %v", err)
			}
		}()
		p.drop(w)
		return
	case status:
		for k, v := range c.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(c.status)
		io.WriteString(w, c.body)
		return
	}
	resp, err := p.forward(r, body)
	if err != nil {
		p.t.Errorf("proxy: %v", err)
		p.drop(w)
		return
	}
	switch f {
	case dropAfter:
		p.drop(w)
		return
	case slow:
		// The answer is on its way, too late: the attempt's time is up.
		p.clock.Advance(AttemptTimeout)
		<-r.Context().Done()
		return
	}
	for k, vs := range resp.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.status)
	w.Write(resp.body)
}

type upAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (p *proxy) forward(r *http.Request, body []byte) (*upAnswer, error) {
	req, err := http.NewRequest(r.Method, p.to+r.URL.RequestURI(), strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return &upAnswer{resp.StatusCode, resp.Header, b}, err
}

// drop closes the client's connection without an answer.
func (p *proxy) drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		p.t.Errorf("proxy: hijack: %v", err)
		return
	}
	conn.Close()
}

// newClient is a client of the proxy with the fake clock and no jitter
// beyond the given one.
func newClient(t *testing.T, url, key, project string, clock Clock, jitter time.Duration) *Client {
	t.Helper()
	c, err := New(Config{URL: url, APIKey: key, Project: project, CacheDir: t.TempDir(), Clock: clock, Jitter: func() time.Duration { return jitter }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantCode fails unless err is an *api.Error with that code.
func wantCode(t *testing.T, what string, err error, code string) *api.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	if api.CodeOf(err) != code {
		t.Fatalf("%s: %v, want code %s", what, err, code)
	}
	e, _ := err.(*api.Error)
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
