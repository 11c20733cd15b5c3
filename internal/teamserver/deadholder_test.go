package teamserver

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// standIn listens at addr (a killed holder's) and, for every request it
// takes, signals took and then does answer with the connection, which it
// closes after. Everything it opened is closed when the test ends, which
// also ends an answer blocked on its connection.
func standIn(t *testing.T, addr string, answer func(net.Conn)) (took <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() {
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
					return
				}
				select {
				case ch <- struct{}{}:
				default:
				}
				answer(conn)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, conn := range conns {
			conn.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ch
}

// killedHolder writes a note through b so that it holds the vault's
// lease, kills it, and returns its address.
func killedHolder(t *testing.T, c *cluster) string {
	t.Helper()
	b := c.reps[1]
	wantStatus(t, "write through b", c.create(b, "notes/before.md", "# Before\n"), 201, "")
	if c.owner() != b.srv.instance {
		t.Fatal("b does not hold the lease")
	}
	addr := b.http.Listener.Addr().String()
	b.kill()
	return addr
}

// readServedAfterLease checks that a read through a, forwarded to the
// stand-in at the dead holder's address, is not answered while that
// holder's lease is live, and is served by a once it runs out: the answer
// of a holder that failed with a read in flight is never relayed.
func readServedAfterLease(t *testing.T, c *cluster, took <-chan struct{}) {
	t.Helper()
	a := c.reps[0]
	read := make(chan answer, 1)
	go func() { read <- c.do(a, "GET", "/api/projects/team/files?path=notes/before.md", nil) }()
	select {
	case <-took:
	case got := <-read:
		t.Fatalf("the read was answered before the holder took it: %d %s", got.status, got.body)
	case <-time.After(20 * time.Second):
		t.Fatal("the read never reached the holder")
	}
	got := afterLease(t, c, "the read", read)
	var list teamapi.FileList
	got.json(t, &list)
	if got.status != 200 || len(list.Files) != 1 {
		t.Errorf("the read once the dead holder's lease ran out: %d %s", got.status, got.body)
	}
	if c.owner() != a.srv.instance {
		t.Errorf("the lease is held by %s, want a", c.owner())
	}
}

// afterLease checks that what's answer (on ch) does not come while the
// dead holder's lease is live, then runs the lease out and returns it.
func afterLease(t *testing.T, c *cluster, what string, ch <-chan answer) answer {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("%s was answered while the dead holder's lease is live: %d %s", what, got.status, got.body)
	case <-time.After(1500 * time.Millisecond):
	}
	c.clock.Advance(testTTL + time.Second)
	select {
	case got := <-ch:
		return got
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still waiting for the dead holder 20 s after its lease ran out", what)
	}
	return answer{}
}

// wantUncertain checks that a write's answer is 503 unavailable, saying
// the change may or may not have been applied.
func wantUncertain(t *testing.T, what string, got answer) {
	t.Helper()
	wantStatus(t, what, got, 503, teamapi.CodeUnavailable)
	if !strings.Contains(string(got.body), `"uncertain":true`) {
		t.Errorf("%s: the 503 does not say it is uncertain: %s", what, got.body)
	}
}

// The holder dies with a forwarded read in flight (it took the request and
// its connection broke before any answer): the read waits for the dead
// holder's lease to run out and is served by the replica it reached, as
// one sent after the death is, a slower answer and not a 503.
func TestReadInFlightWhenHolderDies(t *testing.T) {
	c := newCluster(t, 2)
	took := standIn(t, killedHolder(t, c), func(net.Conn) {})
	readServedAfterLease(t, c, took)
}

// The holder dies half-way through its answer: its status and headers
// sent, its body cut short. The replica that forwarded the request reads
// the answer whole before relaying any of it, so a write's client gets 503
// uncertain, not the holder's 201 with half a body, and a read waits for
// the lease and is served as if the holder had died before answering.
func TestAnswerCutWhenHolderDies(t *testing.T) {
	c := newCluster(t, 2)
	a := c.reps[0]
	took := standIn(t, killedHolder(t, c), func(conn net.Conn) {
		io.WriteString(conn, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n"+`{"path":"notes/cut.md",`)
	})
	write := make(chan answer, 1)
	go func() { write <- c.create(a, "notes/cut.md", "# Cut\n", "Idempotency-Key", "k-cut") }()
	select {
	case got := <-write:
		wantUncertain(t, "a write whose answer the holder cut", got)
	case <-time.After(20 * time.Second):
		t.Fatal("a write whose answer the holder cut is unanswered after 20 s")
	}
	select {
	case <-took:
	default:
		t.Fatal("the write's 503 came without the holder taking it")
	}
	readServedAfterLease(t, c, took)
}

// The holder freezes half-way through its answer, its connection open:
// the write waits for its lease to run out, then gets 503 uncertain.
func TestAnswerFrozenMidBody(t *testing.T) {
	c := newCluster(t, 2)
	a := c.reps[0]
	standIn(t, killedHolder(t, c), func(conn net.Conn) {
		io.WriteString(conn, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n17\r\n"+`{"path":"notes/cut.md",`+"\r\n")
		io.Copy(io.Discard, conn) // until the test ends
	})
	write := make(chan answer, 1)
	go func() { write <- c.create(a, "notes/frozen.md", "# Frozen\n", "Idempotency-Key", "k-frozen") }()
	wantUncertain(t, "the write once the frozen holder's lease ran out", afterLease(t, c, "the write", write))
	wantStatus(t, "the write's retry", c.create(a, "notes/frozen.md", "# Frozen\n", "Idempotency-Key", "k-frozen"), 201, "")
	if n := c.inRemote("notes/frozen.md"); n != 1 {
		t.Errorf("the write is in the remote %d time(s), want 1", n)
	}
}
