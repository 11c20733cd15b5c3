package teamserver

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// BenchmarkSearchOverHTTP: POST /api/projects/ex/search over loopback with
// a key (authentication, rate limiter off, JSON both ways), from parallel
// clients.
func BenchmarkSearchOverHTTP(b *testing.B) {
	e := newEnv(b, envOpts{})

	body := []byte(`{"query":"retry backoff jitter","limit":6}`)
	url := e.http.URL + "/api/projects/ex/search"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("X-API-Key", e.rw)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkAuthenticate: the key lookup of every request.
func BenchmarkAuthenticate(b *testing.B) {
	e := newEnv(b, envOpts{})

	req, _ := http.NewRequest("GET", "/api/auth/me", nil)
	req.Header.Set("X-API-Key", e.rw)
	b.ResetTimer()
	for range b.N {
		if _, fail := e.srv.authenticate(req); fail != nil {
			b.Fatal(fail.status)
		}
	}
}
