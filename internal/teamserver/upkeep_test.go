package teamserver

import (
	"context"
	"net"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// A vault whose remote hangs (a fetch waits for git's timeout) does not
// hold up the renewal of the replica's leases: they are renewed on their
// own loop while the fetch waits, so the replica does not lose every vault
// it serves because one remote stopped answering.
func TestHangingRemoteDoesNotStopRenewals(t *testing.T) {
	c := newCluster(t, 1)
	// A replica whose loops tick every second (a 3 s lease), on the
	// cluster's injected clock.
	const ttl = 3 * time.Second
	d, err := OpenDataDB(context.Background(), t.TempDir(), c.db, c.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Data: d, Now: c.clock.Now, NoSnapshots: true, LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	f := &replicaProc{data: d, srv: srv, http: hs}
	srv.rep.start(hs.URL)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		d.Close()
	})
	wantStatus(t, "a read through the replica", c.do(f, "GET", "/api/projects/team/files?path=notes/none.md", nil), 200, "")
	pr := srv.rep.serving(c.p.ID)
	if pr == nil {
		t.Fatal("the replica does not serve the vault")
	}

	// The remote now accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{})
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		var once sync.Once
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			once.Do(func() { close(accepted) })
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range conns {
			conn.Close()
		}
	})
	if out, err := execGit(d.VaultDir(c.p.ID), "remote", "set-url", "origin", "git://"+ln.Addr().String()+"/team.git"); err != nil {
		t.Fatalf("git remote set-url: %v %s", err, out)
	}
	pr.polled.Store(1) // fetched long ago: the next upkeep fetches
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("the replica never fetched the vault's remote")
	}

	// The fetch hangs; the lease is still renewed at the next tick.
	c.clock.Advance(time.Second)
	want := c.clock.Now().Add(ttl)
	deadline := time.Now().Add(20 * time.Second) // git's own timeout is 30 s
	for {
		l, err := srv.rep.leases.Lease(context.Background(), c.p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if l.Owner == srv.instance && !l.ExpiresAt.Before(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease was not renewed while the remote's fetch hung: %+v, want it to expire at %v", l, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if srv.rep.serving(c.p.ID) == nil {
		t.Error("the replica stopped serving the vault while its remote hung")
	}
}
