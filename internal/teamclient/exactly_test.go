package teamclient

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Every write is applied exactly once over 1,000 writes under random
// faults: connections dropped before and after the server applied the
// write, answers slower than the attempt timeout, 429, 502, 503, and
// requests whose client vanished while the server still applies them (so
// that the retry meets 409 idempotency_key_in_use). A call that ends
// uncertain is settled as an agent would: read the note, write it again
// (a new call) only if it is not there. Four workers write to four
// projects at once; the test stops at its time bound whatever happens.
func TestExactlyOnceUnderRandomFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 writes")
	}
	const workers, perWorker = 4, 250
	bound := 4 * time.Minute
	s := newServer(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	type stats struct{ calls, uncertain, rewritten int }
	results := make([]stats, workers)
	var wg sync.WaitGroup
	for w := range workers {
		name := fmt.Sprintf("p%d", w)
		if _, _, err := s.data.AddProject(context.Background(), name, ""); err != nil {
			t.Fatal(err)
		}
		clk := newFakeClock()
		p := newProxy(t, s.http.Config.Handler, clk)
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		var rmu sync.Mutex
		p.setPlan(func(_ int, r *http.Request) (fault, *canned) {
			if r.Header.Get("Idempotency-Key") == "" {
				return pass, nil
			}
			rmu.Lock()
			x := rng.IntN(100)
			rmu.Unlock()
			switch {
			case x < 50:
				return pass, nil
			case x < 62:
				return dropAfter, nil
			case x < 70:
				return dropBefore, nil
			case x < 75:
				return slow, nil
			case x < 80:
				return vanish, nil
			case x < 88:
				return status, apiError(503, "unavailable", "restarting", "Retry-After", "1")
			case x < 94:
				return status, apiError(429, "rate_limited", "slow down", "Retry-After", "2")
			default:
				return status, &canned{status: 502, body: "bad gateway"}
			}
		})
		c := newClient(t, p.http.URL, s.rw, name, clk, jitter)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			st := &results[w]
			for i := range perWorker {
				path := fmt.Sprintf("notes/n%03d.md", i)
				content := fmt.Sprintf("# Note %d of worker %d\n", i, w)
				for attempt := 0; ; attempt++ {
					if ctx.Err() != nil {
						return
					}
					st.calls++
					_, err := c.WriteNote(ctx, api.WriteRequest{Path: path, Content: content})
					if err == nil {
						break
					}
					if code := api.CodeOf(err); attempt > 0 && (code == api.CodeConflict || code == api.CodeAlreadyExists) {
						// Written again after an uncertain call whose
						// write was still being applied: it is there now.
						if n, err := c.GetNote(ctx, api.NoteRequest{Path: path}); err != nil || !strings.Contains(n.Content, content) {
							t.Errorf("worker %d, %s: refused as existing, but reads %v %v", w, path, n, err)
						}
						break
					}
					if !api.IsUncertain(err) && api.CodeOf(err) != api.CodeUnavailable {
						t.Errorf("worker %d, %s: %v", w, path, err)
						return
					}
					if api.IsUncertain(err) {
						st.uncertain++
					}
					// Read before trying again.
					if n, err := c.GetNote(ctx, api.NoteRequest{Path: path}); err == nil && strings.Contains(n.Content, content) {
						break
					}
					st.rewritten++
				}
			}
		}(w)
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("not done within %v", bound)
	}
	total := stats{}
	for _, r := range results {
		total.calls += r.calls
		total.uncertain += r.uncertain
		total.rewritten += r.rewritten
	}
	t.Logf("%d writes in %d calls: %d uncertain, %d written again after a read", workers*perWorker, total.calls, total.uncertain, total.rewritten)
	// Every request finished before the history is read: a write whose
	// client vanished is still applied after the worker read its note back
	// (the note is in place before its commit), and on a loaded machine its
	// commit came after this check (notes/n249.md written 0 times, the
	// last note of a worker, once in a full run under -race).
	s.http.Close()

	for w := range workers {
		pr, err := s.data.Store.Project(context.Background(), fmt.Sprintf("p%d", w))
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "-C", s.data.VaultDir(pr.ID), "log", "--format=", "--name-only").Output()
		if err != nil {
			t.Fatal(err)
		}
		touched := map[string]int{}
		for _, f := range strings.Fields(string(out)) {
			touched[f]++
		}
		for i := range perWorker {
			path := fmt.Sprintf("notes/n%03d.md", i)
			if touched[path] != 1 {
				t.Errorf("project p%d: %s written %d times", w, path, touched[path])
			}
		}
	}
}
