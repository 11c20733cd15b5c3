package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Stall is a proxy on 127.0.0.1 in front of a database that can stop
// answering, as a database whose server hangs (stuck on a lock or a disk)
// or a network that drops everything: while stalled, what clients send is
// taken and thrown away, nothing comes back, and no connection closes.
type Stall struct {
	URL string // the database's URL through the proxy

	mu      sync.Mutex
	stalled bool
	stuck   []net.Conn // connections that lost bytes while stalled
}

// WithStall returns a Stall in front of dbURL; it closes when the test ends.
func WithStall(t testing.TB, dbURL string) *Stall {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	upstream := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Stall{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); s.copy(up, c, c) }()
			go func() { defer wg.Done(); s.copy(c, up, c) }()
		}
	}()
	u.Host = ln.Addr().String()
	s.URL = u.String()
	return s
}

// copy copies src to dst but, while stalled, throws what it reads away
// (client is the connection's client side, marked stuck).
func (s *Stall) copy(dst, src, client net.Conn) {
	b := make([]byte, 32<<10)
	for {
		n, err := src.Read(b)
		if n > 0 {
			s.mu.Lock()
			stalled := s.stalled
			if stalled {
				s.stuck = append(s.stuck, client)
			}
			s.mu.Unlock()
			if !stalled {
				if _, werr := dst.Write(b[:n]); werr != nil {
					break
				}
			}
		}
		if err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	src.Close()
	_, _ = io.Copy(io.Discard, src)
}

// Set stalls the database (true) or lets it answer again (false). The
// connections that lost bytes while it was stalled are closed when it
// answers again (their sessions are broken); new ones are served.
func (s *Stall) Set(stalled bool) {
	s.mu.Lock()
	s.stalled = stalled
	var stuck []net.Conn
	if !stalled {
		stuck, s.stuck = s.stuck, nil
	}
	s.mu.Unlock()
	for _, c := range stuck {
		c.Close()
	}
}
