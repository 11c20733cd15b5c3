package teamserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/oauth/oauthtest"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// A database that stops answering (its connections kept open) does not
// stop a replica's renewals: a round gives up within its bound, a lease
// that still has life is kept, one that runs out meanwhile is let go
// (the vault is another replica's to serve), and once the database answers
// again the replica renews and serves as before.
func TestRenewalsOutliveAHangingDatabase(t *testing.T) {
	c := newCluster(t, 1)
	px, db := newCutProxy(t, c.db)
	c.roundWait = 300 * time.Millisecond
	b := c.startWith("", db)
	held := func() bool {
		b.srv.rep.mu.Lock()
		defer b.srv.rep.mu.Unlock()
		_, ok := b.srv.rep.held[c.p.ID]
		return ok
	}
	round := func(what string) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			b.srv.rep.renew(b.srv.rep.bg)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: a round of renewals waits for the hanging database", what)
		}
	}
	wantStatus(t, "a request that takes the vault's lease", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	if !held() {
		t.Fatal("the replica that served the request holds no lease")
	}

	px.stall()
	stalled := true
	defer func() {
		if stalled { // a failure below: let the cleanup's calls through
			px.resume()
		}
	}()
	round("with the lease's life ahead")
	if !held() {
		t.Error("a lease with most of its life ahead was let go at the first failed round")
	}
	c.clock.Advance(testTTL)
	round("with the lease run out")
	if held() {
		t.Error("a lease that ran out while the database hung is still held")
	}

	px.resume()
	stalled = false
	round("once the database answers")
	wantStatus(t, "a request once the database answers", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	if !held() {
		t.Error("the replica did not take the lease again")
	}
}

// A store call that fails because the database is gone (its connections
// cut, new ones refused) is answered 503 unavailable, which clients retry,
// not 500: a key checked just before the database went away let an update
// reach its file lookup, answered "internal error" (found by restarting
// PostgreSQL under writes).
func TestStoreGoneIsUnavailable(t *testing.T) {
	c := newCluster(t, 1)
	px, db := newCutProxy(t, c.db)
	b := c.startWith("", db)
	wantStatus(t, "a request while the database answers", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")
	px.close()
	defer px.restore()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := b.srv.store.File(ctx, c.p.ID, teamstore.NewID())
	if err == nil || !teamstore.Unavailable(err) {
		t.Fatalf("a file lookup with the database gone: %v, want an unavailable store", err)
	}
	if resp := vaultError(err); resp.status != 503 || !strings.Contains(string(resp.body), `"code":"unavailable"`) || resp.header.Get("Retry-After") == "" {
		t.Errorf("its answer: %d %v %s", resp.status, resp.header, resp.body)
	}
}

// A database that stops answering once a write is applied, before its
// answer is recorded: the bookkeeping gives up within its bound and the
// client gets the write's answer (it was applied, and pushed), instead of
// a request held until the kernel gives up on the connection; the record
// stays running, the settler books the write from its commit once the
// database answers, and a retry gets the stored answer, applied once.
func TestBookkeepingOutlivesAHangingDatabase(t *testing.T) {
	c := newCluster(t, 1)
	px, db := newCutProxy(t, c.db)
	var stallNext, stalled atomic.Bool
	c.storeWait = 300 * time.Millisecond
	c.afterApply = func() {
		if stallNext.CompareAndSwap(true, false) {
			px.stall()
			stalled.Store(true)
		}
	}
	b := c.startWith("", db)
	defer func() {
		if stalled.Load() { // a failure below: let the cleanup's calls through
			px.resume()
		}
	}()
	wantStatus(t, "a request that takes the vault's lease", c.do(b, "GET", "/api/projects/team/files", nil), 200, "")

	stallNext.Store(true)
	body, ct := multipartBody(t, "hung.md", "# Written as the database hung\n")
	answered := make(chan answer, 1)
	go func() {
		answered <- c.do(b, "POST", "/api/projects/team/files", body, "Content-Type", ct, "Idempotency-Key", "hung-1")
	}()
	var first answer
	select {
	case first = <-answered:
	case <-time.After(20 * time.Second):
		t.Fatal("the write's answer waits for the hanging database")
	}
	wantStatus(t, "the write applied as the database hung", first, 201, "")
	px.resume()
	stalled.Store(false)

	b.srv.rep.upkeep(b.srv.rep.bg) // the settler's round
	retry := c.do(b, "POST", "/api/projects/team/files", body, "Content-Type", ct, "Idempotency-Key", "hung-1")
	wantStatus(t, "the retry once the database answers", retry, 201, "")
	if retry.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not answered from the record: %s", retry.body)
	}
	out, err := exec.Command("git", "-C", c.bare, "log", "--format=%H", "main", "--", "hung.md").Output()
	if err != nil || len(strings.Fields(string(out))) != 1 {
		t.Errorf("commits of hung.md in the remote: %q %v, want one", out, err)
	}
}

// beginRefused is a store whose idempotency records cannot be begun, as
// SQLite's when its disk is full.
type beginRefused struct{ teamstore.Store }

func (beginRefused) BeginIdem(context.Context, teamstore.Idem) (teamstore.Idem, bool, error) {
	return teamstore.Idem{}, false, errors.New("database or disk is full (13)")
}

// A write whose idempotency record the database refuses (its disk full)
// is 503 with nothing done, saying the database refused it, not that it
// does not answer.
func TestBeginRefusedSaysSo(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stop()
	e.data.Store = beginRefused{e.data.Store}
	e.start(envOpts{})
	a := e.create(e.rw, "ex", "full.md", "# Full\n", "Idempotency-Key", "full-1")
	wantStatus(t, "a write the database refuses to begin", a, 503, teamapi.CodeUnavailable)
	if !strings.Contains(string(a.body), "the server's database refused it") {
		t.Errorf("its message: %s", a.body)
	}
	if _, err := os.Stat(filepath.Join(e.vaultDir(e.ex), "full.md")); !os.IsNotExist(err) {
		t.Errorf("the note was written: %v", err)
	}
}

// The reads of a request whose credential is checked without the database
// (an OAuth token) are bounded too: while the database hangs, listing the
// projects or a project's files, a file and its versions are each answered
// 503 unavailable (which clients retry) within the bound, not held until
// the client gives up; once the database answers, the same reads work.
func TestReadsOutliveAHangingDatabase(t *testing.T) {
	idp := oauthtest.New(t)
	c := newCluster(t, 1)
	c.oauth = &oauth.Verifier{Issuer: idp.Issuer(), Audience: oauthAudience, Now: c.clock.Now}
	c.storeWait = 300 * time.Millisecond
	px, db := newCutProxy(t, c.db)
	b := c.startWith("", db)
	other := c.startWith("", db) // serves nothing: it looks the vault's lease up
	token := idp.Sign(t, "RS256", idp.KidRSA(), idp.Claims(oauthAudience, c.clock.Now(), "vault:read", nil))
	readAt := func(rp *replicaProc, path string) answer {
		t.Helper()
		return c.do(rp, "GET", path, nil, "X-API-Key", "", "Authorization", "Bearer "+token)
	}
	read := func(path string) answer { t.Helper(); return readAt(b, path) }
	list := read("/api/projects/team/files")
	wantStatus(t, "the files, with the lease taken", list, 200, "")
	var files teamapi.FileList
	list.json(t, &files)
	if len(files.Files) == 0 {
		t.Fatalf("no files: %s", list.body)
	}
	id := files.Files[0].ID
	wantStatus(t, "the files through the other replica", readAt(other, "/api/projects/team/files"), 200, "")
	paths := []string{"/api/projects", "/api/projects/team/files", "/api/projects/team/files/" + id, "/api/projects/team/files/" + id + "/versions"}

	px.stall()
	stalled := true
	defer func() {
		if stalled { // a failure below: let the cleanup's calls through
			px.resume()
		}
	}()
	for _, p := range paths {
		got := make(chan answer, 1)
		go func() { got <- read(p) }()
		select {
		case a := <-got:
			wantStatus(t, p+" as the database hangs", a, 503, teamapi.CodeUnavailable)
			if a.header.Get("Retry-After") == "" {
				t.Errorf("%s: no Retry-After", p)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s waits for the hanging database", p)
		}
	}
	got := make(chan answer, 1)
	go func() { got <- readAt(other, "/api/projects/team/files") }()
	select {
	case a := <-got:
		wantStatus(t, "a replica looking the vault's lease up as the database hangs", a, 503, teamapi.CodeUnavailable)
	case <-time.After(20 * time.Second):
		t.Fatal("a replica looking the vault's lease up waits for the hanging database")
	}
	px.resume()
	stalled = false
	for _, p := range paths {
		wantStatus(t, p+" once the database answers", read(p), 200, "")
	}
}

// projectGone is a store that cannot be reached for a project's lookup.
type projectGone struct{ teamstore.Store }

func (projectGone) Project(context.Context, string) (teamstore.Project, error) {
	return teamstore.Project{}, fmt.Errorf("looking up the project: %w", io.ErrUnexpectedEOF)
}

// A project that cannot be looked up because the database does not answer
// is 503 unavailable (retry), not 500 nor 404.
func TestProjectLookupUnavailable(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stop()
	e.data.Store = projectGone{e.data.Store}
	e.start(envOpts{})
	a := e.do("GET", "/api/projects/nosuch/files", e.rw, nil)
	wantStatus(t, "a project looked up as the database is gone", a, 503, teamapi.CodeUnavailable)
	if !strings.Contains(string(a.body), "does not answer") {
		t.Errorf("its message: %s", a.body)
	}
	wantStatus(t, "an open project", e.do("GET", "/api/projects/ex/files", e.rw, nil), 200, "")
}

// rowReadFails is a store whose reads of a file's row by path fail while
// fail is set, as a database going away would.
type rowReadFails struct {
	teamstore.Store
	fail *atomic.Bool
}

func (s rowReadFails) FileByPath(ctx context.Context, project, path string) (teamstore.File, error) {
	if s.fail.Load() {
		return teamstore.File{}, fmt.Errorf("reading the row: %w", io.ErrUnexpectedEOF)
	}
	return s.Store.FileByPath(ctx, project, path)
}

// A write of the same bytes again whose answer cannot be built (the
// database fails as the file's row is read) is not stored as the answer of
// its Idempotency-Key: the retry with the same key, once the database
// answers, gets the file, not the failure replayed.
func TestSameBytesAnswerNotStoredOnFailure(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stop()
	fail := new(atomic.Bool)
	e.data.Store = rowReadFails{e.data.Store, fail}
	e.start(envOpts{})
	created := e.create(e.rw, "ex", "same.md", "# Same\n\nBytes.\n")
	wantStatus(t, "create", created, 201, "")
	var fa teamapi.FileAnswer
	created.json(t, &fa)
	put := func() answer {
		return e.do("PUT", "/api/projects/ex/files/"+fa.File.ID, e.rw, []byte("# Same\n\nBytes.\n"),
			"Content-Type", "application/octet-stream", "Idempotency-Key", "same-1")
	}
	fail.Store(true)
	first := put()
	fail.Store(false)
	if first.status < 500 {
		t.Fatalf("the same bytes as the row cannot be read: %d %s, want a 5xx", first.status, first.body)
	}
	retry := put()
	wantStatus(t, "the retry once the database answers", retry, 200, "")
	if retry.header.Get("Idempotent-Replayed") == "true" {
		t.Errorf("the retry was replayed: %s", retry.body)
	}
	var got teamapi.FileAnswer
	retry.json(t, &got)
	if got.File.ID != fa.File.ID || got.File.ContentHash != fa.File.ContentHash {
		t.Errorf("the retry's file: %+v, want %+v", got.File, fa.File)
	}
	again := put()
	wantStatus(t, "the same key once more", again, 200, "")
	if again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the answer was not stored: %s", again.body)
	}
}

// A write that must confirm its vault's lease (close to its end) while the
// database hangs is answered within the bound, not held with the vault's
// write lock, which every other write would wait for; once the database
// answers, writes go on.
func TestLeaseConfirmOutlivesAHangingDatabase(t *testing.T) {
	idp := oauthtest.New(t)
	c := newCluster(t, 1)
	c.oauth = &oauth.Verifier{Issuer: idp.Issuer(), Audience: oauthAudience, Now: c.clock.Now}
	c.storeWait = 300 * time.Millisecond
	c.roundWait = 300 * time.Millisecond
	px, db := newCutProxy(t, c.db)
	b := c.startWith("", db)
	token := idp.Sign(t, "RS256", idp.KidRSA(), idp.Claims(oauthAudience, c.clock.Now(), "vault:read vault:write", map[string]any{"sub": "user-1", "name": "Ana"}))
	create := func(path string) answer {
		t.Helper()
		body, ct := multipartBody(t, path, "# Note\n\nWritten with a token.\n")
		return c.do(b, "POST", "/api/projects/team/files", body, "X-API-Key", "", "Authorization", "Bearer "+token, "Content-Type", ct)
	}
	wantStatus(t, "a write that takes the vault's lease", create("first.md"), 201, "")

	px.stall()
	stalled := true
	defer func() {
		if stalled {
			px.resume()
		}
	}()
	// Within the margin before the lease's end (renewals fail meanwhile):
	// the next write confirms it first.
	c.clock.Advance(testTTL - testTTL/8)
	got := make(chan answer, 1)
	go func() { got <- create("during.md") }()
	select {
	case a := <-got:
		// Applied with the lease still held, its bookkeeping failing:
		// the answer says so (500, or 503 with a key).
		if a.status == 0 {
			t.Fatalf("no answer: %+v", a)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the write waits for the hanging database")
	}
	px.resume()
	stalled = false
	wantStatus(t, "a write once the database answers", create("after.md"), 201, "")
}

// Database work on many notes at once gets a millisecond a note beyond the
// request's bound, so that thousands of notes are not cut short every time
// a slow database is asked.
func TestStoreBoundGrowsWithNotes(t *testing.T) {
	s := &Server{storeWaitTest: 300 * time.Millisecond}
	for _, n := range []int{0, 1, 5000} {
		before := time.Now()
		ctx, cancel := s.storeCtxFor(context.Background(), n)
		d, ok := ctx.Deadline()
		cancel()
		want := 300*time.Millisecond + time.Duration(n)*time.Millisecond
		if got := d.Sub(before); !ok || got < want || got > want+time.Second {
			t.Errorf("%d notes: bound %v, want %v", n, got, want)
		}
	}
}

// New versions wait for their announcement beside the writes, at most
// pendingVersions of them: one more (the database too slow to take them)
// is dropped and counted, never waited for; the announcer sends those that
// wait once it runs.
func TestVersionAnnouncementsBounded(t *testing.T) {
	c := newCluster(t, 1)
	d, err := OpenDataDB(context.Background(), t.TempDir(), c.db, c.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv, err := New(context.Background(), Config{Data: d, Now: c.clock.Now, NoSnapshots: true, LeaseTTL: testTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pr := &project{meta: c.p}
	for i := range pendingVersions + 1 { // not started: nothing sends them yet
		srv.notifyVersion(pr, fmt.Sprintf("%040d", i))
	}
	if got := srv.met.notes.Value("dropped"); got != 1 {
		t.Fatalf("dropped announcements = %v, want 1", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.rep.announce(ctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for srv.met.notes.Value("sent") < pendingVersions && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if got := srv.met.notes.Value("sent"); got != pendingVersions {
		t.Errorf("sent announcements = %v, want %d", got, pendingVersions)
	}
}

// A write refused for want of room (a full disk, a quota, a file size limit:
// the vault's errors keep the errno, see vaultfs's TestDiskFull and the
// vault's TestMoveDiskFullMidway) is 507 with the vault's io_error and its
// one-line message, not a 500 "internal error"; nothing was written, so it
// is not uncertain. Any other I/O failure stays 500.
func TestOutOfSpaceIs507(t *testing.T) {
	full := &vaultfs.Error{Code: vaultfs.CodeIO, Path: "notes/a.md", Reason: "the disk is full; the old content, if any, is unchanged", Err: syscall.ENOSPC}
	for _, c := range []struct {
		name   string
		err    error
		status int
		msg    string
	}{
		{"a full disk, as the vault returns it", fmt.Errorf("writing: %w", full), 507, "disk is full"},
		{"a full disk under a vault refusal", &api.Error{Code: string(vaultfs.CodeIO), Message: "the disk is full", Err: full}, 507, "disk is full"},
		{"over a quota", &vaultfs.Error{Code: vaultfs.CodeIO, Path: "notes/a.md", Reason: "file system error", Err: syscall.EDQUOT}, 507, "notes/a.md"},
		{"over the file size limit", &vaultfs.Error{Code: vaultfs.CodeIO, Path: "notes/a.md", Reason: "file system error", Err: syscall.EFBIG}, 507, "notes/a.md"},
		{"another I/O failure", &vaultfs.Error{Code: vaultfs.CodeIO, Path: "notes/a.md", Reason: "file system error", Err: syscall.EIO}, 500, "internal error"},
	} {
		resp := vaultError(c.err)
		var b teamapi.ErrorBody
		if err := json.Unmarshal(resp.body, &b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if resp.status != c.status || b.Error.Code != "io_error" || !strings.Contains(b.Error.Message, c.msg) || b.Error.Uncertain {
			t.Errorf("%s: %d %+v, want %d io_error saying %q, not uncertain", c.name, resp.status, b.Error, c.status, c.msg)
		}
	}
}
