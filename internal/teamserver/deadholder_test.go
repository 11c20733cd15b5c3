package teamserver

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// The holder dies with a forwarded read in flight (it took the request and
// its connection broke before any answer): the read waits for the dead
// holder's lease to run out and is served by the replica it reached, as
// one sent after the death is, a slower answer and not a 503.
func TestReadInFlightWhenHolderDies(t *testing.T) {
	c := newCluster(t, 2)
	a, b := c.reps[0], c.reps[1]
	wantStatus(t, "write through b", c.create(b, "notes/before.md", "# Before\n"), 201, "")
	if c.owner() != b.srv.instance {
		t.Fatal("b does not hold the lease")
	}
	addr := b.http.Listener.Addr().String()
	b.kill()
	// b's address takes a request and drops its connection, as a process
	// killed while serving it does.
	dying, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	took := make(chan struct{}, 16)
	var wg sync.WaitGroup
	go func() {
		for {
			conn, err := dying.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
					took <- struct{}{}
				}
			}()
		}
	}()
	defer func() {
		dying.Close()
		wg.Wait()
	}()
	read := make(chan answer, 1)
	go func() { read <- c.do(a, "GET", "/api/projects/team/files?path=notes/before.md", nil) }()
	select {
	case <-took:
	case got := <-read:
		t.Fatalf("the read was answered before the holder took it: %d %s", got.status, got.body)
	case <-time.After(20 * time.Second):
		t.Fatal("the read never reached the holder")
	}
	select {
	case got := <-read:
		t.Fatalf("the read was answered while the dead holder's lease is live: %d %s", got.status, got.body)
	case <-time.After(1500 * time.Millisecond):
	}
	c.clock.Advance(testTTL + time.Second)
	select {
	case got := <-read:
		var list teamapi.FileList
		got.json(t, &list)
		if got.status != 200 || len(list.Files) != 1 {
			t.Errorf("the read once the dead holder's lease ran out: %d %s", got.status, got.body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still waiting for the dead holder 20 s after its lease ran out")
	}
	if c.owner() != a.srv.instance {
		t.Errorf("the lease is held by %s, want a", c.owner())
	}
}
