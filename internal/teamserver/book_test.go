package teamserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/sqlitestore"
)

// gateStore holds a write's bookkeeping until released, at one of two
// moments between its change on disk and its stored record: the first id
// given to a path (EnsureFiles, while the write is applied) or the
// recording of the first write of an operation (Record, after it).
type gateStore struct {
	teamstore.Store
	path, op string
	once     sync.Once
	held     chan struct{}
	release  chan struct{}
}

func (g *gateStore) hold() {
	g.once.Do(func() {
		close(g.held)
		<-g.release
	})
}

func (g *gateStore) EnsureFiles(ctx context.Context, project string, paths []string, at time.Time) ([]teamstore.File, error) {
	if g.path != "" && slices.Contains(paths, g.path) {
		g.hold()
	}
	return g.Store.EnsureFiles(ctx, project, paths, at)
}

func (g *gateStore) Record(ctx context.Context, r teamstore.Record) error {
	if g.op != "" && r.Audit != nil && r.Audit.Operation == g.op {
		g.hold()
	}
	return g.Store.Record(ctx, r)
}

// gate restarts the env's server over a store that holds the first id
// given to path, or the recording of the next write of op.
func (e *env) gate(path, op string) *gateStore {
	e.stop()
	inner := e.data.Store
	if g, ok := inner.(*gateStore); ok {
		inner = g.Store
	}
	g := &gateStore{Store: inner, path: path, op: op, held: make(chan struct{}), release: make(chan struct{})}
	e.data.Store = g
	e.start(envOpts{})
	return g
}

// get is a GET that reports its answer on a channel (for use in a
// goroutine: it never stops the test).
func (e *env) get(path string) chan answer {
	ch := make(chan answer, 1)
	url, key := e.http.URL+path, e.rw
	go func() {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- answer{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		ch <- answer{resp.StatusCode, resp.Header, b}
	}()
	return ch
}

// whileHeld runs the reads while g holds a write's bookkeeping, lets the
// write finish once they are answered (or after a while, when they wait for
// it), and returns the reads' answers.
func whileHeld(t *testing.T, g *gateStore, write func() answer, reads ...func() chan answer) (answer, []answer) {
	t.Helper()
	wrote := make(chan answer, 1)
	go func() { wrote <- write() }()
	select {
	case <-g.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the write never reached its bookkeeping")
	}
	var chans []chan answer
	for _, r := range reads {
		chans = append(chans, r())
	}
	got := make([]answer, len(chans))
	done := make([]bool, len(chans))
	wait := time.NewTimer(time.Second) // reads that wait for the write are let through then
	defer wait.Stop()
	waited := false
	for i, ch := range chans {
		if waited {
			break
		}
		select {
		case got[i] = <-ch:
			done[i] = true
		case <-wait.C:
			waited = true
		}
	}
	close(g.release)
	for i, ch := range chans {
		if !done[i] {
			got[i] = <-ch
		}
	}
	return <-wrote, got
}

// A read that comes while a write's bookkeeping is not stored yet never
// takes the note the write made for one found on disk: the created note has
// its create as only version (no "found in the vault" one), and a moved
// note keeps its id, whatever listing or lookup ran meanwhile.
func TestReadsDuringBookkeeping(t *testing.T) {
	e := newEnv(t, envOpts{})
	prefix, lookup := "/api/projects/ex/files?prefix=notes/", "/api/projects/ex/files?path="

	g := e.gate("notes/raced.md", "")
	created, reads := whileHeld(t, g, func() answer { return e.createAsync("notes/raced.md", "# Raced\n") },
		func() chan answer { return e.get(prefix) }, func() chan answer { return e.get(lookup + "notes/raced.md") })
	wantStatus(t, "the create", created, 201, "")
	var fa teamapi.FileAnswer
	created.json(t, &fa)
	for i, r := range reads {
		var l teamapi.FileList
		r.json(t, &l)
		for _, f := range l.Files {
			if f.Path == "notes/raced.md" && f.ID != fa.File.ID {
				t.Errorf("read %d during the create listed the note as %s, the create answered %s", i, f.ID, fa.File.ID)
			}
		}
	}
	var vl teamapi.VersionList
	e.do("GET", "/api/projects/ex/files/"+fa.File.ID+"/versions", e.rw, nil).json(t, &vl)
	if len(vl.Versions) != 1 || vl.Versions[0].Message != "create notes/raced.md" {
		t.Errorf("versions of a note created during reads = %+v, want its create only", vl.Versions)
	}

	g = e.gate("", "move")
	moved, reads := whileHeld(t, g, func() answer {
		return e.doAsync("PATCH", "/api/projects/ex/files/"+fa.File.ID, []byte(`{"newPath":"notes/moved.md"}`))
	}, func() chan answer { return e.get(lookup + "notes/moved.md") }, func() chan answer { return e.get(prefix) })
	wantStatus(t, "the move", moved, 200, "")
	for i, r := range reads {
		var l teamapi.FileList
		r.json(t, &l)
		for _, f := range l.Files {
			if f.Path == "notes/moved.md" && f.ID != fa.File.ID {
				t.Errorf("read %d during the move gave the moved note the id %s, want its own %s", i, f.ID, fa.File.ID)
			}
		}
	}
	if f, ok := e.fileAt("ex", "notes/moved.md"); !ok || f.ID != fa.File.ID {
		t.Errorf("after the move notes/moved.md is %+v, want id %s", f, fa.File.ID)
	}
	e.do("GET", "/api/projects/ex/files/"+fa.File.ID+"/versions", e.rw, nil).json(t, &vl)
	for _, v := range vl.Versions {
		if v.Message == foundMessage {
			t.Errorf("a version says the moved note was found on disk: %+v", vl.Versions)
		}
	}
}

// createAsync and doAsync are create and do for a goroutine: a failure
// to send is an answer with status -1.
func (e *env) createAsync(path, content string) answer {
	body, ct := multipartBody(e.t, path, content)
	return e.send("POST", "/api/projects/ex/files", body, "Content-Type", ct)
}

func (e *env) doAsync(method, path string, body []byte) answer {
	return e.send(method, path, body)
}

func (e *env) send(method, path string, body []byte, header ...string) answer {
	req, err := http.NewRequest(method, e.http.URL+path, bytes.NewReader(body))
	if err != nil {
		return answer{status: -1, body: []byte(err.Error())}
	}
	req.Header.Set("X-API-Key", e.rw)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{status: -1, body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

// failStore fails the first recording of a write's answer: the write is
// applied (in git) and its bookkeeping is not stored.
type failStore struct {
	teamstore.Store
	once sync.Once
}

func (f *failStore) Record(ctx context.Context, r teamstore.Record) error {
	failed := false
	if r.Answer != nil {
		f.once.Do(func() { failed = true })
	}
	if failed {
		return errors.New("the disk is full")
	}
	return f.Store.Record(ctx, r)
}

// A write applied whose answer could not be stored is settled from git by
// the running server: its retry gets the answer (not 409
// idempotency_key_in_use until a restart), and the write is in git once.
func TestUnrecordedWriteSettledWhileRunning(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stop()
	e.data.Store = &failStore{Store: e.data.Store}
	e.start(envOpts{})
	commits := len(e.gitLog(e.ex, "%H"))
	first := e.create(e.rw, "ex", "notes/unrecorded.md", "# Unrecorded\n", "Idempotency-Key", "unrec-1")
	wantStatus(t, "the create", first, 201, "")
	var got answer
	deadline := time.Now().Add(3 * settleEvery)
	for {
		got = e.create(e.rw, "ex", "notes/unrecorded.md", "# Unrecorded\n", "Idempotency-Key", "unrec-1")
		if got.status != http.StatusConflict || got.code() != teamapi.CodeIdempotencyInUse || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	wantStatus(t, "the retry", got, 201, "")
	if got.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not answered from the record: %v %s", got.header, got.body)
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits+1 {
		t.Errorf("%d commits for one create, want 1", n-commits)
	}
	var fa teamapi.FileAnswer
	got.json(t, &fa)
	var vl teamapi.VersionList
	e.do("GET", "/api/projects/ex/files/"+fa.File.ID+"/versions", e.rw, nil).json(t, &vl)
	if len(vl.Versions) != 1 {
		t.Errorf("versions of the settled create = %+v, want one", vl.Versions)
	}
}

// An idempotency record is dropped once its 24 hours are over by the
// running server, not only at its next start: a server up for months
// would otherwise keep every write's stored answer (its diff included) in
// its database.
func TestExpiredIdempotencyRecordsPurgedWhileRunning(t *testing.T) {
	e := newEnv(t, envOpts{})
	wantStatus(t, "create", e.create(e.rw, "ex", "notes/kept-a-day.md", "# Kept a day\n", "Idempotency-Key", "day-1"), 201, "")
	db := e.data.Store.(*sqlitestore.Store).DB()
	count := func() int {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM idempotency`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ctx := context.Background()
	e.srv.upkeep(ctx)
	if n := count(); n != 1 {
		t.Fatalf("%d idempotency records within the day, want 1", n)
	}
	e.clock.Advance(IdemTTL + time.Minute)
	e.srv.upkeep(ctx)
	if n := count(); n != 0 {
		t.Errorf("%d idempotency records a day after the write, want 0", n)
	}
}
