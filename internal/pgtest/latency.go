package pgtest

import (
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// WithLatency returns dbURL reached through a proxy on 127.0.0.1 that
// delays every byte by oneWay in each direction, as a database on another
// machine would (a round trip costs 2*oneWay more); the proxy closes when
// the test ends.
func WithLatency(t testing.TB, dbURL string, oneWay time.Duration) string {
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
			go func() { defer wg.Done(); delayCopy(up, c, oneWay) }()
			go func() { defer wg.Done(); delayCopy(c, up, oneWay) }()
		}
	}()
	u.Host = ln.Addr().String()
	return u.String()
}

// delayCopy copies src to dst, each chunk written oneWay after it was read;
// chunks read meanwhile queue behind it, so the delay does not add up.
func delayCopy(dst, src net.Conn, oneWay time.Duration) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{b[:n], time.Now().Add(oneWay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	// Half-close when the other side ended, then release the reader.
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	src.Close()
	for range q {
	}
}
