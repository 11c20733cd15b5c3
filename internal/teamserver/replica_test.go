package teamserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/pgtest"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// cluster is replicas of the team server in this process: one PostgreSQL
// database, a data directory each, a shared injected clock, each served on
// 127.0.0.1; projects kept in bare git repositories in t.TempDir().
type cluster struct {
	t     *testing.T
	db    string
	clock *clock
	reps  []*replicaProc
	key   string
	p     teamstore.Project
	bare  string // the project's git remote
	// pause and roundWait, when set, are given to the replicas started
	// next (see replication.pause and roundWait).
	pause     func(ctx context.Context, d time.Duration) bool
	roundWait time.Duration
	// storeWait and afterApply, when set, are given to the servers
	// started next (see Server.storeWaitTest and afterApply).
	storeWait  time.Duration
	afterApply func()
	// oauth, when set, is the token verifier of the servers started next.
	oauth *oauth.Verifier
}

type replicaProc struct {
	data *Data
	srv  *Server
	http *httptest.Server
	dead bool
}

const testTTL = 30 * time.Second

// newCluster makes n replicas and the project "team" in a bare remote (the
// example vault pushed to it).
func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	c := &cluster{t: t, db: pgtest.DB(t), clock: &clock{t: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)}}
	c.bare = filepath.Join(t.TempDir(), "team.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", c.bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	for i := 0; i < n; i++ {
		c.reps = append(c.reps, c.start())
	}
	ctx := context.Background()
	var err error
	c.p, _, err = c.reps[0].data.CreateProject(ctx, ProjectSpec{Name: "team", From: filepath.Join("..", "..", "examples", "vault"), Remote: c.bare})
	if err != nil {
		t.Fatal(err)
	}
	// The admin's clone is not a replica's: it goes, as on a machine the
	// management command ran on.
	os.RemoveAll(c.reps[0].data.VaultDir(c.p.ID))
	if c.key, _, err = c.reps[0].data.AddKey(ctx, "alice", nil, false); err != nil {
		t.Fatal(err)
	}
	return c
}

// afterLease sends the request req makes while the vault's lease (of a
// holder killed or restarted) is live: it must wait, not be answered, until
// the lease expires; then it is, within 30 s, and afterLease returns the
// answer.
func (c *cluster) afterLease(what string, req func() answer) answer {
	c.t.Helper()
	done := make(chan answer, 1)
	go func() { done <- req() }()
	select {
	case got := <-done:
		c.t.Fatalf("%s answered while the lease is live: %d %s", what, got.status, got.body)
	case <-time.After(500 * time.Millisecond):
	}
	c.clock.Advance(testTTL + time.Second)
	select {
	case got := <-done:
		return got
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s: no answer 30 s after the lease expired", what)
	}
	return answer{}
}

func (c *cluster) start() *replicaProc {
	c.t.Helper()
	return c.startAt("")
}

// startAt starts a replica listening on addr (a free port when "").
func (c *cluster) startAt(addr string) *replicaProc {
	c.t.Helper()
	return c.startWith(addr, c.db)
}

// startWith starts a replica listening on addr that reaches the database
// at db (the cluster's, or through a proxy).
func (c *cluster) startWith(addr, db string) *replicaProc {
	c.t.Helper()
	return c.startFull(addr, db, "", nil)
}

// startFull starts a replica listening on addr, reaching the database at
// db, advertised at advertise (its own URL when ""), logging to log (nil:
// nowhere).
func (c *cluster) startFull(addr, db, advertise string, log *slog.Logger) *replicaProc {
	c.t.Helper()
	d, err := OpenDataDB(context.Background(), c.t.TempDir(), db, c.clock.Now)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { d.Close() })
	return c.serve(d, addr, advertise, log)
}

// serve starts a replica on the data directory d (see startFull).
func (c *cluster) serve(d *Data, addr, advertise string, log *slog.Logger) *replicaProc {
	c.t.Helper()
	srv, err := New(context.Background(), Config{Data: d, Now: c.clock.Now, NoSnapshots: true, LeaseTTL: testTTL, Logger: log, OAuth: c.oauth})
	if err != nil {
		c.t.Fatal(err)
	}
	srv.storeWaitTest, srv.afterApply = c.storeWait, c.afterApply
	hs := httptest.NewUnstartedServer(srv.Handler())
	if addr != "" {
		hs.Listener.Close()
		if hs.Listener, err = net.Listen("tcp", addr); err != nil {
			c.t.Fatal(err)
		}
	}
	hs.Start()
	rp := &replicaProc{data: d, srv: srv, http: hs}
	if advertise == "" {
		advertise = rp.http.URL
	}
	srv.rep.pause, srv.rep.roundWait = c.pause, c.roundWait
	srv.rep.start(advertise)
	c.t.Cleanup(func() {
		if !rp.dead {
			rp.http.Close()
		}
		srv.Close()
	})
	return rp
}

// kill stops a replica as SIGKILL would: no more answers, renewals or
// heartbeats, and nothing released.
func (rp *replicaProc) kill() {
	rp.dead = true
	rp.http.CloseClientConnections()
	rp.http.Close()
	rp.srv.rep.cancel()
	rp.srv.rep.wg.Wait()
}

func (c *cluster) do(rp *replicaProc, method, path string, body []byte, header ...string) answer {
	c.t.Helper()
	req, err := http.NewRequest(method, rp.http.URL+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", c.key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

func (c *cluster) create(rp *replicaProc, path, content string, header ...string) answer {
	c.t.Helper()
	body, ct := multipartBody(c.t, path, content)
	return c.do(rp, "POST", "/api/projects/team/files", body, append([]string{"Content-Type", ct}, header...)...)
}

// remoteGit runs git in the bare remote.
func (c *cluster) remoteGit(args ...string) string {
	c.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", c.bare}, args...)...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// inRemote says how many commits of the remote's branch added path.
func (c *cluster) inRemote(path string) int {
	out := c.remoteGit("log", "--format=%H", "--diff-filter=A", c.p.Branch, "--", path)
	if out == "" {
		return 0
	}
	return len(strings.Split(out, "\n"))
}

// pushAside pushes a commit to the remote as another process would (a
// former holder's late push): a scratch clone, one new note.
func (c *cluster) pushAside(path, content, message string) string {
	c.t.Helper()
	dir := filepath.Join(c.t.TempDir(), "aside")
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=x", "-c", "user.email=x@x"}, args...)...)
		cmd.Dir = filepath.Dir(dir)
		if len(args) > 0 && args[0] != "clone" {
			cmd.Dir = dir
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			c.t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("clone", "-q", "--branch", c.p.Branch, c.bare, dir)
	os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755)
	if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	run("add", path)
	run("commit", "-q", "-m", message)
	run("push", "-q", "origin", "HEAD:refs/heads/"+c.p.Branch)
	return run("rev-parse", "HEAD")
}

func (c *cluster) owner() string {
	c.t.Helper()
	l, err := c.reps[0].srv.rep.leases.Lease(context.Background(), c.p.ID)
	if err != nil {
		c.t.Fatal(err)
	}
	return l.Owner
}

// The first replica a request reaches takes the vault's lease and serves
// it; a request through another replica is forwarded to it; a write through
// any replica is in the git remote when it is answered, exactly once; reads
// through every replica agree.
func TestReplicasForwardAndPush(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	wantStatus(t, "first read, through b", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	if c.owner() != b.srv.instance {
		t.Fatalf("the lease is held by %s, want b (%s)", c.owner(), b.srv.instance)
	}
	created := c.create(a, "notes/through-a.md", "# Through a\n", "Idempotency-Key", "k-1")
	wantStatus(t, "create through a", created, 201, "")
	if n := c.inRemote("notes/through-a.md"); n != 1 {
		t.Errorf("the answered create is in the remote %d time(s), want 1", n)
	}
	if n := a.srv.met.forwards.Value("ok"); n != 1 {
		t.Errorf("a forwarded %v request(s), want 1", n)
	}
	if n := b.srv.met.forwards.Value("ok"); n != 0 {
		t.Errorf("the holder forwarded %v request(s)", n)
	}
	again := c.create(a, "notes/through-a.md", "# Through a\n", "Idempotency-Key", "k-1")
	if again.status != 201 || again.header.Get(teamapi.HeaderReplayed) != "true" {
		t.Errorf("the same create again: %d replayed=%q", again.status, again.header.Get(teamapi.HeaderReplayed))
	}
	if n := c.inRemote("notes/through-a.md"); n != 1 {
		t.Errorf("after the retry the create is in the remote %d time(s), want 1", n)
	}
	la, lb := c.do(a, "GET", "/api/projects/team/files?prefix=notes/", nil), c.do(b, "GET", "/api/projects/team/files?prefix=notes/", nil)
	if la.status != 200 || string(la.body) != string(lb.body) || !strings.Contains(string(la.body), "through-a.md") {
		t.Errorf("reads through a and b differ:\n%s\n%s", la.body, lb.body)
	}
	// MCP through a replica that does not serve the vault: the session
	// lives on the holder, and its writes are pushed like REST writes.
	s := (&env{t: t, http: a.http}).mcpSession(t, "/projects/team/mcp", c.key)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "vault_write_note", Arguments: map[string]any{"path": "notes/over-mcp.md", "content": "# Over MCP\n"}})
	if err != nil || res.IsError {
		t.Fatalf("vault_write_note through a: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "Push: yes") {
		t.Errorf("the MCP write does not say it was pushed:\n%s", text)
	}
	if n := c.inRemote("notes/over-mcp.md"); n != 1 {
		t.Errorf("the MCP write is in the remote %d time(s), want 1", n)
	}
	// A forwarded request is never forwarded again: a replica that does not
	// serve the vault says so.
	wantStatus(t, "a request marked forwarded, at a replica not serving", c.do(a, "GET", "/api/projects/team/files", nil, HeaderForwardedBy, "someone"), 503, teamapi.CodeUnavailable)
	// Health, readiness and metrics.
	wantStatus(t, "healthz", c.do(a, "GET", "/healthz", nil), 200, "")
	var h Health
	r := c.do(b, "GET", "/readyz", nil)
	r.json(t, &h)
	if r.status != 200 || h.Status != "ready" || h.Leases != 1 {
		t.Errorf("readyz of the holder: %d %+v", r.status, h)
	}
	m := c.do(b, "GET", "/metrics", nil)
	for _, want := range []string{
		`vaultmcp_http_requests_total{route="/api/projects/{p}/files",method="POST",status="201"} `,
		"vaultmcp_leases_held 1\n", `vaultmcp_git_pushes_total{result="ok"} `, `vaultmcp_writes_total{op="create",result="ok"} 1`,
		"vaultmcp_http_request_duration_seconds_bucket{", "vaultmcp_lease_takeovers_total{result=\"ok\"} 1",
	} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Lease renewal and expiry by the injected clock: renewed, the lease
// outlives its first TTL; not renewed, it expires and another replica takes
// the vault over on its next request, with the writes made before it; the
// former holder gives the vault up at its next renewal.
func TestReplicaLeaseRenewalAndExpiry(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	wantStatus(t, "write through a", c.create(a, "notes/one.md", "# One\n"), 201, "")
	first, _ := a.srv.rep.leases.Lease(context.Background(), c.p.ID)
	for i := 0; i < 3; i++ {
		c.clock.Advance(testTTL / 2)
		a.srv.rep.tick(context.Background())
	}
	l, _ := a.srv.rep.leases.Lease(context.Background(), c.p.ID)
	if l.Owner != a.srv.instance || l.Epoch != first.Epoch || !l.ExpiresAt.Equal(c.clock.Now().Add(testTTL)) {
		t.Fatalf("after renewals over 1.5 TTL: %+v, want a's, epoch %d, expiring a TTL from now", l, first.Epoch)
	}
	wantStatus(t, "read through b (forwarded to a)", c.do(b, "GET", "/api/projects/team/files?path=notes/one.md", nil), 200, "")
	if c.owner() != a.srv.instance {
		t.Fatal("the lease moved while a renewed it")
	}
	// a stops renewing (its loop is not driven); the lease runs out.
	c.clock.Advance(testTTL + time.Second)
	var list teamapi.FileList
	got := c.do(b, "GET", "/api/projects/team/files?path=notes/one.md", nil)
	got.json(t, &list)
	if got.status != 200 || len(list.Files) != 1 {
		t.Fatalf("after the expiry, through b: %d %s", got.status, got.body)
	}
	l, _ = b.srv.rep.leases.Lease(context.Background(), c.p.ID)
	if l.Owner != b.srv.instance || l.Epoch <= first.Epoch {
		t.Fatalf("after the expiry the lease is %+v, want b's with a larger epoch than %d", l, first.Epoch)
	}
	// a write through a is forwarded to b now; a gives the vault up.
	wantStatus(t, "write through a after the move", c.create(a, "notes/two.md", "# Two\n\nquokkaflint\n"), 201, "")
	a.srv.rep.tick(context.Background())
	if a.srv.rep.leasesHeld() != 0 || a.srv.met.leaseLosses.Value() != 1 {
		t.Errorf("a holds %d lease(s), lost %v, want 0 and 1", a.srv.rep.leasesHeld(), a.srv.met.leaseLosses.Value())
	}
	for _, p := range []string{"notes/one.md", "notes/two.md"} {
		if n := c.inRemote(p); n != 1 {
			t.Errorf("%s is in the remote %d time(s), want 1", p, n)
		}
	}
	// a keeps its clone as a standby: the note of b's version brings it to
	// the remote's tip, and its index along.
	tip := c.remoteGit("rev-parse", c.p.Branch)
	deadline := time.Now().Add(20 * time.Second)
	for {
		head, _ := execGit(a.data.VaultDir(c.p.ID), "rev-parse", "HEAD")
		if strings.TrimSpace(head) == tip {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's standby clone is at %s 20 s after b's push, want %s", strings.TrimSpace(head), tip)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if a.srv.met.notes.Value("received") == 0 {
		t.Error("a counted no note of a new version")
	}
	a.srv.mu.Lock()
	standby := a.srv.projects[c.p.ID]
	a.srv.mu.Unlock()
	for {
		res, err := standby.svc.Search(context.Background(), api.SearchRequest{Query: "quokkaflint"})
		if err == nil && len(res.Results) > 0 && res.Results[0].Path == "notes/two.md" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's standby index does not find b's note: %v %+v", err, res)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The holder dies: a request through another replica waits for the lease
// to expire and is then served there, after the new holder took the vault
// over (fetched, so no answered write is lost).
func TestReplicaTakeoverAfterDeath(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	for _, p := range []string{"notes/1.md", "notes/2.md"} {
		wantStatus(t, "write through b", c.create(b, p, "# "+p+"\n"), 201, "")
	}
	if c.owner() != b.srv.instance {
		t.Fatal("b does not hold the lease")
	}
	b.kill()
	got := c.afterLease("the write through a", func() answer { return c.create(a, "notes/3.md", "# 3\n", "Idempotency-Key", "after-death") })
	wantStatus(t, "the write through a once b's lease expired", got, 201, "")
	if c.owner() != a.srv.instance {
		t.Errorf("the lease is held by %s, want a", c.owner())
	}
	for _, p := range []string{"notes/1.md", "notes/2.md", "notes/3.md"} {
		if n := c.inRemote(p); n != 1 {
			t.Errorf("%s is in the remote %d time(s), want 1", p, n)
		}
		if _, ok := (&env{t: t, http: a.http, rw: c.key}).fileAt("team", p); !ok {
			t.Errorf("%s is not listed by the new holder", p)
		}
	}
}

// The holder dies and is restarted at once at the same address (a process
// supervisor): its previous life's lease is still live. A request another
// replica forwards to that address is the new life's to serve once the old
// lease expires, not refused as a second hop: the client waits, it does not
// get a 503 for the rest of the lease.
func TestReplicaRestartedAtSameAddress(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	wantStatus(t, "write through b", c.create(b, "notes/before.md", "# Before\n"), 201, "")
	if c.owner() != b.srv.instance {
		t.Fatal("b does not hold the lease")
	}
	addr := b.http.Listener.Addr().String()
	b.kill()
	b2 := c.startAt(addr)
	if b2.http.URL != b.http.URL {
		t.Fatalf("the restarted replica is at %s, want %s", b2.http.URL, b.http.URL)
	}
	got := c.afterLease("the write through a", func() answer { return c.create(a, "notes/after.md", "# After\n", "Idempotency-Key", "after-restart") })
	wantStatus(t, "the write forwarded to the restarted replica", got, 201, "")
	if c.owner() != b2.srv.instance {
		t.Errorf("the lease is held by %s, want the restarted replica %s", c.owner(), b2.srv.instance)
	}
	if n := b2.srv.met.forwards.Value("refused_second_hop"); n != 0 {
		t.Errorf("the restarted replica refused %v forwarded request(s)", n)
	}
	for _, p := range []string{"notes/before.md", "notes/after.md"} {
		if n := c.inRemote(p); n != 1 {
			t.Errorf("%s is in the remote %d time(s), want 1", p, n)
		}
	}
}

// A push refused because the remote moved (a former holder's late push)
// answers 503 with nothing applied, the clone follows the remote, and the
// retry is applied once on top of it.
func TestReplicaPushRejected(t *testing.T) {
	c := newCluster(t, 1)
	a := c.reps[0]
	wantStatus(t, "first write", c.create(a, "notes/first.md", "# First\n"), 201, "")
	late := c.pushAside("notes/late.md", "# Late\n", "a late push")
	got := c.create(a, "notes/mine.md", "# Mine\n", "Idempotency-Key", "k-rejected")
	wantStatus(t, "a write while the remote moved", got, 503, teamapi.CodeUnavailable)
	if !strings.Contains(string(got.body), "from outside the server") {
		t.Errorf("the refusal does not say the remote may have been pushed to from outside: %s", got.body)
	}
	if c.inRemote("notes/mine.md") != 0 {
		t.Fatal("the refused write is in the remote")
	}
	// Its audit row names no commit: the one it made exists nowhere.
	if rows, err := a.data.Store.Audit(context.Background(), teamstore.AuditQuery{Limit: 1}); err != nil || len(rows) != 1 || rows[0].Result != teamapi.CodeUnavailable || rows[0].Version != "" {
		t.Errorf("the refused write's audit row: %+v (%v), want unavailable without a version", rows, err)
	}
	if head, _ := execGit(a.data.VaultDir(c.p.ID), "rev-parse", "HEAD"); strings.TrimSpace(head) != late {
		t.Errorf("the clone is at %s, want the remote's %s", head, late)
	}
	if _, ok := (&env{t: t, http: a.http, rw: c.key}).fileAt("team", "notes/late.md"); !ok {
		t.Error("the late push's note is not served after the clone followed the remote")
	}
	wantStatus(t, "the retry", c.create(a, "notes/mine.md", "# Mine\n", "Idempotency-Key", "k-rejected"), 201, "")
	if n := c.inRemote("notes/mine.md"); n != 1 {
		t.Errorf("the retried write is in the remote %d time(s), want 1", n)
	}
	if n := a.srv.met.pushes.Value("rejected"); n != 1 {
		t.Errorf("%v rejected push(es) counted, want 1", n)
	}
	// Over MCP the same refusal is a tool error, not a success.
	c.pushAside("notes/later.md", "# Later\n", "another late push")
	s := (&env{t: t, http: a.http}).mcpSession(t, "/projects/team/mcp", c.key)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "vault_write_note", Arguments: map[string]any{"path": "notes/mcp.md", "content": "# MCP\n"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "not applied") {
		t.Errorf("an MCP write whose push was refused: %v %+v", err, res)
	}
	if c.inRemote("notes/mcp.md") != 0 {
		t.Error("the refused MCP write is in the remote")
	}
}

// Writes a dead replica left running are settled by the new holder from
// the remote's history: one whose commit is in the remote gets its answer
// stored (the retry replays it); one that is not is released, after a
// fencing commit that refuses any late push of the dead replica.
func TestReplicaSettlesDeadWrites(t *testing.T) {
	c := newCluster(t, 1)
	a := c.reps[0]
	ctx := context.Background()
	st := a.data.Store
	key, err := st.KeyByHash(ctx, HashKey(c.key))
	if err != nil {
		t.Fatal(err)
	}
	now := c.clock.Now()
	applied := teamstore.Idem{KeyID: key.ID, Key: "dead-applied", Fingerprint: "fp-a", Project: c.p.ID, Operation: "create", Target: "notes/dead.md",
		Token: teamstore.NewID(), Owner: "dead-replica", CreatedAt: now, ExpiresAt: now.Add(IdemTTL)}
	lost := applied
	lost.Key, lost.Fingerprint, lost.Target, lost.Token = "dead-lost", "fp-l", "notes/lost.md", teamstore.NewID()
	for _, rec := range []teamstore.Idem{applied, lost} {
		if _, created, err := st.BeginIdem(ctx, rec); err != nil || !created {
			t.Fatalf("BeginIdem: %v %v", created, err)
		}
	}
	c.pushAside("notes/dead.md", "# Dead\n", "create notes/dead.md\n\nVaultmcp-Idempotency-Key: "+applied.Token)
	before := c.remoteGit("rev-parse", c.p.Branch)
	wantStatus(t, "the first request takes the vault over", c.do(a, "GET", "/api/projects/team/files", nil), 200, "")
	running, err := st.RunningIdem(ctx)
	if err != nil || len(running) != 0 {
		t.Fatalf("records still running after the takeover: %+v (%v)", running, err)
	}
	held, _, err := st.BeginIdem(ctx, applied)
	if err != nil || held.State != teamstore.IdemDone || held.Response == nil || held.Response.Status != 201 {
		t.Errorf("the applied write's record: %+v (%v), want done with a 201", held, err)
	}
	if _, created, _ := st.BeginIdem(ctx, lost); !created {
		t.Error("the lost write's record was not released")
	}
	subject := c.remoteGit("log", "-1", "--format=%s", c.p.Branch)
	parent := c.remoteGit("rev-parse", c.p.Branch+"^")
	if !strings.HasPrefix(subject, "vaultmcp: fence") || parent != before {
		t.Errorf("the remote's tip: %q on %s, want a fence on %s", subject, parent, before)
	}
}

// Without PostgreSQL, a project with a git remote is served by the one
// server: every write pushed before its answer; the remote unreachable, a
// write answers 503 and leaves nothing behind, and works again with it.
func TestSingleServerRemote(t *testing.T) {
	ctx := context.Background()
	bare := filepath.Join(t.TempDir(), "v.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	e := newEnv(t, envOpts{})
	p, _, err := e.data.CreateProject(ctx, ProjectSpec{Name: "remote", Remote: bare, Branch: "trunk"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Branch != "trunk" {
		t.Errorf("branch %q, want trunk", p.Branch)
	}
	wantStatus(t, "create", e.create(e.rw, "remote", "a.md", "# A\n"), 201, "")
	if out, err := execGit(bare, "log", "--format=%s", "trunk"); err != nil || !strings.Contains(out, "create a.md") {
		t.Errorf("the remote's log: %q (%v)", out, err)
	}
	head := func() string {
		out, _ := execGit(e.data.VaultDir(p.ID), "rev-parse", "HEAD")
		return strings.TrimSpace(out)
	}
	was := head()
	os.Rename(bare, bare+".away")
	got := e.create(e.rw, "remote", "b.md", "# B\n", "Idempotency-Key", "k-doubt")
	wantStatus(t, "create with the remote away", got, 503, teamapi.CodeUnavailable)
	if !strings.Contains(string(got.body), "may or may not") {
		t.Errorf("the answer does not say the outcome is unknown: %s", got.body)
	}
	if head() != was {
		t.Error("the clone kept the unpushed commit")
	}
	if _, ok := e.fileAt("remote", "b.md"); ok {
		t.Error("the unpushed note is still served")
	}
	// Its record stays running (the push may have landed) until the remote
	// says: here it did not, so it is released and the retry applies once.
	wantStatus(t, "the retry while in doubt", e.create(e.rw, "remote", "b.md", "# B\n", "Idempotency-Key", "k-doubt"), 409, teamapi.CodeIdempotencyInUse)
	os.Rename(bare+".away", bare)
	pr, err := e.srv.project(ctx, "remote")
	if err != nil {
		t.Fatal(err)
	}
	e.srv.settleStale(ctx, pr)
	wantStatus(t, "the retry once settled", e.create(e.rw, "remote", "b.md", "# B\n", "Idempotency-Key", "k-doubt"), 201, "")
	if out, _ := execGit(bare, "log", "--format=%H", "--diff-filter=A", "trunk", "--", "b.md"); len(strings.Fields(out)) != 1 {
		t.Errorf("b.md added by %d commit(s) of the remote, want 1", len(strings.Fields(out)))
	}
	wantStatus(t, "readyz", e.do("GET", "/readyz", "", nil), 200, "")
}

// project add --remote: a remote with commits is cloned (and --from then
// refused); an empty one gets the new vault; a URL with a password, or one
// git cannot read, is refused naming --remote.
func TestCreateProjectRemote(t *testing.T) {
	ctx := context.Background()
	d, err := OpenData(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	bare := filepath.Join(t.TempDir(), "v.git")
	exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).Run()
	p, _, err := d.CreateProject(ctx, ProjectSpec{Name: "first", From: filepath.Join("..", "..", "examples", "vault"), Remote: bare})
	if err != nil || p.Branch != "main" || p.Remote != bare {
		t.Fatalf("into an empty remote: %+v %v", p, err)
	}
	// A second project of the same server on the same branch would mix
	// their notes: refused, naming the first; nothing is left of it.
	if _, _, err := d.CreateProject(ctx, ProjectSpec{Name: "second", Remote: bare}); err == nil || !strings.Contains(err.Error(), `project "first"`) {
		t.Fatalf("a second project on the branch: %v", err)
	}
	if _, err := d.Store.Project(ctx, "second"); err == nil {
		t.Fatal("the refused project was recorded")
	}
	// Another server's project on it (a move to a new server) clones it.
	d2, err := OpenData(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	q, _, err := d2.CreateProject(ctx, ProjectSpec{Name: "second", Remote: bare})
	if err != nil || q.Branch != "main" {
		t.Fatalf("from the remote with commits: %+v %v", q, err)
	}
	if _, err := os.Stat(filepath.Join(d2.VaultDir(q.ID), "02-wiki")); err != nil {
		t.Errorf("the clone lacks the pushed vault: %v", err)
	}
	files, _ := d2.Store.LiveFiles(ctx, q.ID)
	if len(files) == 0 {
		t.Error("the cloned notes have no ids")
	}
	// An empty remote whose HEAD names another branch (git's older
	// default, master) gets the vault on that branch, so that a clone of
	// it checks the vault out.
	master := filepath.Join(t.TempDir(), "m.git")
	exec.Command("git", "init", "-q", "--bare", "-b", "master", master).Run()
	m, _, err := d.CreateProject(ctx, ProjectSpec{Name: "third", From: filepath.Join("..", "..", "examples", "vault"), Remote: master})
	if err != nil || m.Branch != "master" {
		t.Fatalf("into an empty remote whose HEAD names master: %+v %v", m, err)
	}
	if out, err := exec.Command("git", "-C", master, "rev-parse", "--verify", "HEAD").CombinedOutput(); err != nil {
		t.Errorf("the remote's HEAD names no commit after the push: %v\n%s", err, out)
	}
	for spec, says := range map[*ProjectSpec]string{
		{Name: "x1", Remote: bare, From: "."}:                           "--from",
		{Name: "x2", Remote: "https://bob:s3cret@git.invalid/v.git"}:    "password",
		{Name: "x3", Remote: filepath.Join(t.TempDir(), "missing.git")}: "--remote",
		{Name: "x4", Branch: "main"}:                                    "--branch",
		{Name: "x5", Remote: bare, Branch: "no..pe"}:                    "--branch",
	} {
		_, _, err := d.CreateProject(ctx, *spec)
		if err == nil || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%+v: %v, want refused naming %s", *spec, err, says)
		}
	}
	if _, err := d.Store.Project(ctx, "x3"); !errors.Is(err, teamstore.ErrNotFound) {
		t.Errorf("a refused project was recorded: %v", err)
	}
}

// cutProxy relays TCP connections to a database server until it is cut:
// then every connection is closed and new ones are refused, as when the
// database is restarted or fails over; restore lets connections in again.
// While stalled, it holds every byte (a process paused, a network that
// stops answering) until resumed.
type cutProxy struct {
	t        *testing.T
	upstream string
	ln       net.Listener
	addr     string
	mu       sync.Mutex
	conns    []net.Conn
	cut      bool
	gate     sync.RWMutex
}

func (p *cutProxy) stall()  { p.gate.Lock() }
func (p *cutProxy) resume() { p.gate.Unlock() }

// relay copies src to dst, each chunk passing the gate.
func (p *cutProxy) relay(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate.RLock()
			_, werr := dst.Write(buf[:n])
			p.gate.RUnlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// newCutProxy returns the proxy and dbURL reached through it.
func newCutProxy(t *testing.T, dbURL string) (*cutProxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{t: t, upstream: u.Host}
	p.listen("127.0.0.1:0")
	t.Cleanup(p.close)
	u.Host = p.addr
	return p, u.String()
}

func (p *cutProxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr, p.cut = ln, ln.Addr().String(), false
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.cut {
				p.mu.Unlock()
				c.Close()
				up.Close()
				continue
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go p.relay(up, c)
			go p.relay(c, up)
		}
	}()
}

// close cuts every connection and stops listening.
func (p *cutProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// restore listens again at the same address.
func (p *cutProxy) restore() { p.listen(p.addr) }

// While the database cannot be reached, a request is answered 503
// unavailable with Retry-After (a client retries it), not 500: nothing was
// done, and the same request works once the database is back.
func TestStoreUnreachableIsUnavailable(t *testing.T) {
	ctx := context.Background()
	px, db := newCutProxy(t, pgtest.DB(t))
	d, err := OpenDataDB(ctx, t.TempDir(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.CreateProject(ctx, ProjectSpec{Name: "team"}); err != nil {
		t.Fatal(err)
	}
	key, _, err := d.AddKey(ctx, "alice", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(ctx, Config{Data: d, NoSnapshots: true, LeaseTTL: testTTL})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer func() {
		hs.Close()
		srv.Close()
	}()
	e := &env{t: t, http: hs}
	wantStatus(t, "with the database up", e.do("GET", "/api/projects", key, nil), 200, "")
	px.close()
	for _, a := range []answer{
		e.do("GET", "/api/projects", key, nil),
		e.do("GET", "/api/projects/team/files", key, nil),
		e.create(key, "team", "notes/a.md", "# A\n", "Idempotency-Key", "k-down"),
	} {
		wantStatus(t, "with the database unreachable", a, 503, teamapi.CodeUnavailable)
		if a.header.Get("Retry-After") == "" {
			t.Errorf("the 503 has no Retry-After: %s", a.body)
		}
	}
	px.restore()
	wantStatus(t, "with the database back", e.do("GET", "/api/projects", key, nil), 200, "")
}

// A replica pushes a write and stalls before booking it (paused, or its
// database stopped answering); its lease runs out and the vault's new
// holder settles the write from the remote: booked, its answer stored.
// When the first replica then wakes up, its own bookkeeping of the same
// write is refused: one version, one audit row, the stored answer kept.
func TestReplicaLateBookkeepingOnce(t *testing.T) {
	c := newCluster(t, 1)
	b := c.reps[0]
	px, db := newCutProxy(t, c.db)
	a := c.startWith("", db)
	wantStatus(t, "first write, through a", c.create(a, "notes/first.md", "# First\n"), 201, "")
	if c.owner() != a.srv.instance {
		t.Fatal("a does not hold the lease")
	}
	// The remote's hook holds a's push until told to go on.
	dir := t.TempDir()
	started, goOn := filepath.Join(dir, "started"), filepath.Join(dir, "go")
	hook := "#!/bin/sh\ncat >/dev/null\n: > " + started + "\ni=0\nwhile [ ! -e " + goOn + " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\nexit 0\n"
	if err := os.WriteFile(filepath.Join(c.bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan answer, 1)
	go func() { done <- c.create(a, "notes/late.md", "# Late\n", "Idempotency-Key", "k-late") }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a's push never reached the remote")
		}
	}
	px.stall()
	stalled := true
	defer func() {
		if stalled {
			px.resume()
		}
	}()
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); c.inRemote("notes/late.md") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a's push did not land")
		}
	}
	// a's lease and heartbeat run out; b takes the vault over and settles
	// the write a left running.
	c.clock.Advance(testTTL + time.Second)
	var list teamapi.FileList
	got := c.do(b, "GET", "/api/projects/team/files?path=notes/late.md", nil)
	got.json(t, &list)
	if got.status != 200 || len(list.Files) != 1 {
		t.Fatalf("through b after a's lease ran out: %d %s", got.status, got.body)
	}
	id := list.Files[0].ID
	px.resume()
	stalled = false
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("a never answered the write")
	}
	wantStatus(t, "a's answer to the write it pushed", got, 201, "")
	var vs teamapi.VersionList
	got = c.do(b, "GET", "/api/projects/team/files/"+id+"/versions", nil)
	got.json(t, &vs)
	if len(vs.Versions) != 1 {
		t.Errorf("the write has %d versions, want 1: %s", len(vs.Versions), got.body)
	}
	rows, err := b.data.Store.Audit(context.Background(), teamstore.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.IdempotencyKey == "k-late" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d audit rows for the write, want 1", n)
	}
	replayed := c.create(b, "notes/late.md", "# Late\n", "Idempotency-Key", "k-late")
	if replayed.status != 201 || replayed.header.Get(teamapi.HeaderReplayed) != "true" {
		t.Errorf("the retry: %d replayed=%q %s", replayed.status, replayed.header.Get(teamapi.HeaderReplayed), replayed.body)
	}
}

// The holder takes connections but never answers (a paused or frozen
// process): a request forwarded to it stops waiting once its lease runs
// out, instead of hanging until the client gives up. A read is then served
// by the replica it reached, which takes the vault over; a write is
// answered 503 uncertain, and its retry is applied once.
func TestReplicaForwardToFrozenHolder(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	wantStatus(t, "write through b", c.create(b, "notes/before.md", "# Before\n"), 201, "")
	if c.owner() != b.srv.instance {
		t.Fatal("b does not hold the lease")
	}
	addr := b.http.Listener.Addr().String()
	b.kill()
	// b's address takes connections and never answers.
	frozen, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := frozen.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	defer func() {
		frozen.Close()
		mu.Lock()
		for _, conn := range held {
			conn.Close()
		}
		mu.Unlock()
	}()
	read := make(chan answer, 1)
	write := make(chan answer, 1)
	go func() { read <- c.do(a, "GET", "/api/projects/team/files?path=notes/before.md", nil) }()
	go func() { write <- c.create(a, "notes/frozen.md", "# Frozen\n", "Idempotency-Key", "k-frozen") }()
	select {
	case got := <-read:
		t.Fatalf("the read was answered while the frozen holder's lease is live: %d %s", got.status, got.body)
	case got := <-write:
		t.Fatalf("the write was answered while the frozen holder's lease is live: %d %s", got.status, got.body)
	case <-time.After(1500 * time.Millisecond):
	}
	c.clock.Advance(testTTL + time.Second)
	for _, ch := range []chan answer{read, write} {
		select {
		case got := <-ch:
			if ch == read {
				var list teamapi.FileList
				got.json(t, &list)
				if got.status != 200 || len(list.Files) != 1 {
					t.Errorf("the read once the frozen holder's lease ran out: %d %s", got.status, got.body)
				}
			} else {
				wantStatus(t, "the write once the frozen holder's lease ran out", got, 503, teamapi.CodeUnavailable)
				if !strings.Contains(string(got.body), `"uncertain":true`) {
					t.Errorf("the write's 503 does not say it is uncertain: %s", got.body)
				}
			}
		case <-time.After(20 * time.Second):
			t.Fatal("still waiting for the frozen holder 20 s after its lease ran out")
		}
	}
	if c.owner() != a.srv.instance {
		t.Errorf("the lease is held by %s, want a", c.owner())
	}
	wantStatus(t, "the write's retry", c.create(a, "notes/frozen.md", "# Frozen\n", "Idempotency-Key", "k-frozen"), 201, "")
	if n := c.inRemote("notes/frozen.md"); n != 1 {
		t.Errorf("the write is in the remote %d time(s), want 1", n)
	}
}

// A replica left a write in doubt (its push's fate unknown: the record
// stays running until the remote's history settles it) and lost the
// vault's lease while staying alive. The new holder settles that record
// too, though its replica is alive: otherwise nobody ever would, and every
// retry of the write would get 409 idempotency_key_in_use for a day.
func TestReplicaSettlesWritesOfLiveFormerHolder(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	ctx := context.Background()
	wantStatus(t, "write through a", c.create(a, "notes/first.md", "# First\n"), 201, "")
	if c.owner() != a.srv.instance {
		t.Fatal("a does not hold the lease")
	}
	key, err := a.data.Store.KeyByHash(ctx, HashKey(c.key))
	if err != nil {
		t.Fatal(err)
	}
	now := c.clock.Now()
	doubt := teamstore.Idem{KeyID: key.ID, Key: "k-doubt", Fingerprint: fingerprint("create", c.p.ID, "notes/doubt.md", "# Doubt\n"), Project: c.p.ID,
		Operation: "create", Target: "notes/doubt.md", Token: teamstore.NewID(), Owner: a.srv.instance, CreatedAt: now, ExpiresAt: now.Add(IdemTTL)}
	if _, created, err := a.data.Store.BeginIdem(ctx, doubt); err != nil || !created {
		t.Fatalf("BeginIdem: %v %v", created, err)
	}
	// a's lease runs out while a lives on: it heartbeats, finds the lease
	// gone, and gives the vault up.
	c.clock.Advance(testTTL + time.Second)
	a.srv.rep.tick(ctx)
	if a.srv.rep.leasesHeld() != 0 {
		t.Fatal("a still holds the lease")
	}
	wantStatus(t, "a request through b takes the vault over", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	if c.owner() != b.srv.instance {
		t.Fatalf("the lease is held by %s, want b", c.owner())
	}
	got := c.create(b, "notes/doubt.md", "# Doubt\n", "Idempotency-Key", "k-doubt")
	wantStatus(t, "the retry of the write left in doubt", got, 201, "")
	if n := c.inRemote("notes/doubt.md"); n != 1 {
		t.Errorf("the write is in the remote %d time(s), want 1", n)
	}
}

// A forwarded answer carries the holder's headers once, not the forwarding
// replica's besides; an answer sent whole, forwarded or not, carries its
// length (the whole vault's list is past the size below which Go's server
// gives one by itself).
func TestForwardedAnswerHeadersOnce(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	wantStatus(t, "write through b", c.create(b, "notes/one.md", "# One\n"), 201, "")
	for _, path := range []string{"/api/projects/team/files?path=notes/one.md", "/api/projects/team/files/none", "/api/projects/team/files"} {
		for _, rp := range []*replicaProc{a, b} {
			got := c.do(rp, "GET", path, nil)
			if v := got.header.Values("Cache-Control"); len(v) != 1 || v[0] != "no-store" {
				t.Errorf("GET %s (%d): Cache-Control %q, want one no-store", path, got.status, v)
			}
			if v := got.header.Get("Content-Length"); v != strconv.Itoa(len(got.body)) {
				t.Errorf("GET %s (%d, %d bytes): Content-Length %q", path, got.status, len(got.body), v)
			}
		}
	}
}

// TestForwardedResultsCounted: a forwarded request is counted by what came
// of it: the holder's answer relayed (ok), or the holder's own failure
// relayed (holder_error), never a 5xx counted as ok.
func TestForwardedResultsCounted(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	wantStatus(t, "write through b", c.create(b, "notes/one.md", "# One\n"), 201, "")
	if got := c.do(a, "GET", "/api/projects/team/files?path=notes/one.md", nil); got.status != 200 {
		t.Fatalf("read through a: %d", got.status)
	}
	// The remote gone: b, holding the vault, cannot push a write.
	if err := os.Rename(c.bare, c.bare+".gone"); err != nil {
		t.Fatal(err)
	}
	if got := c.create(a, "notes/two.md", "# Two\n"); got.status < 500 {
		t.Fatalf("a write through a with the remote gone: %d %s", got.status, got.body)
	}
	metrics := string(c.do(a, "GET", "/metrics", nil).body)
	for result, want := range map[string]string{"ok": "1", "holder_error": "1"} {
		line := `vaultmcp_forwarded_requests_total{result="` + result + `"} ` + want
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("metrics lack %q:\n%s", line, grepLines(metrics, "vaultmcp_forwarded"))
		}
	}
}

// grepLines returns the lines of s that hold sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestFollowRemote: what someone pushes to a vault's remote outside the
// server (a colleague's own clone) is served and searched once the holder
// has fetched, within remotePollEvery by the server's clock, without any
// write through the server; nothing is fetched again before that.
func TestFollowRemote(t *testing.T) {
	c := newCluster(t, 1)
	a := c.reps[0]
	ctx := context.Background()
	wantStatus(t, "first write", c.create(a, "notes/first.md", "# First\n"), 201, "")
	e := &env{t: t, http: a.http, rw: c.key}
	late := c.pushAside("notes/late.md", "# Late\n\nquokkafjord travels by git.\n", "a push from a colleague's clone")
	pr := a.srv.rep.serving(c.p.ID)
	if pr == nil {
		t.Fatal("the replica does not serve the vault")
	}
	a.srv.rep.tick(ctx) // the vault was fetched when it was taken: not yet
	if _, ok := e.fileAt("team", "notes/late.md"); ok {
		t.Fatal("fetched again before remotePollEvery")
	}
	c.clock.Advance(remotePollEvery)
	a.srv.rep.tick(ctx)
	if _, ok := e.fileAt("team", "notes/late.md"); !ok {
		t.Fatal("the note pushed outside the server is not served after a round")
	}
	hits := c.do(a, "POST", "/api/projects/team/search", []byte(`{"query":"quokkafjord"}`))
	if hits.status != 200 || !strings.Contains(string(hits.body), "notes/late.md") {
		t.Errorf("the pushed note is not searched: %d %s", hits.status, hits.body)
	}
	if head, _ := execGit(a.data.VaultDir(c.p.ID), "rev-parse", "HEAD"); strings.TrimSpace(head) != late {
		t.Errorf("the clone is at %s, want the remote's %s", head, late)
	}
	// The next push waits for remotePollEvery.
	c.pushAside("notes/later.md", "# Later\n", "another push")
	c.clock.Advance(remotePollEvery / 2)
	a.srv.rep.tick(ctx)
	if _, ok := e.fileAt("team", "notes/later.md"); ok {
		t.Error("fetched again before remotePollEvery")
	}
	c.clock.Advance(remotePollEvery / 2)
	a.srv.rep.tick(ctx)
	if _, ok := e.fileAt("team", "notes/later.md"); !ok {
		t.Error("not fetched once remotePollEvery had passed")
	}
	// A write through the server still lands on top of both.
	wantStatus(t, "a write after", c.create(a, "notes/after.md", "# After\n"), 201, "")
	if n := c.inRemote("notes/after.md"); n != 1 {
		t.Errorf("the write is in the remote %d time(s)", n)
	}
}

// The temporary folder of a clone a killed server left half-made is removed
// when a server next takes the data directory; the vaults are left alone.
func TestCloneLeftoversRemovedAtStart(t *testing.T) {
	e := newEnv(t, envOpts{})
	vaults := filepath.Dir(e.vaultDir(e.ex))
	half := e.vaultDir(e.other) + ".clone-0badc0de"
	if err := os.MkdirAll(filepath.Join(half, ".git", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(half, "note.md"), []byte("# half\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.stop()
	e.start(envOpts{})
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Fatalf("the half-made clone is still there: %v", err)
	}
	ents, err := os.ReadDir(vaults)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		t.Errorf("the vaults folder holds %d entries, want the 2 vaults", len(ents))
	}
	wantStatus(t, "create", e.create(e.rw, "ex", "after.md", "# After\n"), 201, "")
}

// A project is not removed while a replica of its database is alive (it
// may hold the vault open); once the last one's heartbeat has expired it
// is, its lease row with it.
func TestRemoveProjectWaitsForReplicas(t *testing.T) {
	c := newCluster(t, 1)
	ctx := context.Background()
	wantStatus(t, "a search, so that the replica takes the vault's lease", c.do(c.reps[0], "POST", "/api/projects/team/search", []byte(`{"query":"retry"}`)), 200, "")
	c.reps[0].kill()
	admin, err := OpenDataDB(ctx, t.TempDir(), c.db, c.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, _, err := admin.RemoveProject(ctx, "team"); err == nil || !strings.Contains(err.Error(), "1 replica(s) of this database are running") {
		t.Fatalf("removal while a replica's heartbeat is live: %v", err)
	}
	c.clock.Advance(3 * testTTL)
	if _, _, err := admin.RemoveProject(ctx, "team"); err != nil {
		t.Fatalf("removal once no replica is alive: %v", err)
	}
	if _, err := admin.Store.Project(ctx, "team"); !errors.Is(err, teamstore.ErrNotFound) {
		t.Errorf("the removed project: %v", err)
	}
	if leases, err := admin.Store.(teamstore.Leases).Leases(ctx); err != nil || len(leases) != 0 {
		t.Errorf("leases after the removal: %+v %v", leases, err)
	}

	// The replica's clone of the removed vault is in its own data
	// directory: moved aside when it starts again; a folder the audit log
	// does not account for stays.
	rp := c.reps[0]
	rp.srv.Close()
	clone := rp.data.VaultDir(c.p.ID)
	if _, err := os.Stat(filepath.Join(clone, ".git")); err != nil {
		t.Fatalf("the replica had no clone of the vault: %v", err)
	}
	stray := rp.data.VaultDir(teamstore.NewID())
	if err := os.MkdirAll(stray, 0o700); err != nil {
		t.Fatal(err)
	}
	again, err := New(ctx, Config{Data: rp.data, Now: c.clock.Now, NoSnapshots: true, LeaseTTL: testTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := os.Stat(clone); !os.IsNotExist(err) {
		t.Errorf("the removed vault's clone is still in vaults/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(rp.data.Dir, "removed", c.p.ID, ".git")); err != nil {
		t.Errorf("the removed vault's clone was not moved aside: %v", err)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("a folder of no project, not removed by the audit log's account, was moved: %v", err)
	}
}
