package teamserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/bench"
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

// BenchmarkCorpusSearchOverHTTP: the load of `vaultmcp bench team` in one
// process, to profile: the vault in $VAULTMCP_CORPUS (skipped when unset)
// imported as a project, 200 queries sampled from its notes, sent from 64
// parallel clients (-cpu sets GOMAXPROCS; the clients are 32 a proc).
func BenchmarkCorpusSearchOverHTTP(b *testing.B) {
	dir := os.Getenv("VAULTMCP_CORPUS")
	if dir == "" {
		b.Skip("VAULTMCP_CORPUS is not set")
	}
	ctx := context.Background()
	d, err := OpenData(ctx, b.TempDir(), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.AddProject(ctx, "corpus", dir); err != nil {
		b.Fatal(err)
	}
	key, _, err := d.AddKey(ctx, "bench", nil, true)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(ctx, Config{Data: d, NoSnapshots: true})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	queries, err := bench.SampleQueries(ctx, dir, "en", 200, 1)
	if err != nil {
		b.Fatal(err)
	}
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		bodies[i], _ = json.Marshal(map[string]any{"query": q})
	}
	url := hs.URL + "/api/projects/corpus/search"
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	post := func(body []byte) error {
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return err
	}
	if err := post(bodies[0]); err != nil { // waits for the index
		b.Fatal(err)
	}
	var next atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := post(bodies[next.Add(1)%int64(len(bodies))]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
