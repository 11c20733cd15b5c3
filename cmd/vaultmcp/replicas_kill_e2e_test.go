package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/pgtest"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// Two replicas of the binary on one PostgreSQL, one project in a bare git
// remote. Writers create notes, replace each twice and move it, every
// request with its own Idempotency-Key and retried through either replica
// until answered, while the replicas are killed with SIGKILL at random
// moments (a fixed seed) and started again on their own data directories,
// as a supervisor restarts them. Afterwards the remote holds one commit for
// every answered write and none other, every note as its last write left
// it, at the path its move gave it. (Killed mid-commit, a replica used to
// leave git's lock files in its clone, and once started again could never
// serve the vault.)
func TestReplicasKilledAndRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts processes for about half a minute")
	}
	db := pgtest.DB(t)
	admin := t.TempDir()
	remote := filepath.Join(t.TempDir(), "team.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	if _, stderr, err := pgCLI(t, nil, "project", "add", "--data", admin, "--db", db, "--remote", remote, "--from", filepath.Join("..", "..", "examples", "vault"), "team"); err != nil {
		t.Fatalf("project add: %v\n%s", err, stderr)
	}
	out, stderr, err := pgCLI(t, nil, "key", "add", "--data", admin, "--db", db, "writer")
	if err != nil {
		t.Fatalf("key add: %v\n%s", err, stderr)
	}
	key := strings.TrimSpace(out)

	dirs := []string{t.TempDir(), t.TempDir()}
	args := []string{"--db", db, "--lease-ttl", "2s", "--rate-limit", "0"}
	var mu sync.Mutex
	procs := []*teamProc{startTeam(t, dirs[0], nil, args...), startTeam(t, dirs[1], nil, args...)}
	pick := func(rnd *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		return procs[rnd.IntN(len(procs))].url
	}
	client := &http.Client{Timeout: 30 * time.Second}
	// call sends one write until it is answered (2xx), retrying what a
	// client retries; it returns the answer's body, or fails the test.
	call := func(rnd *rand.Rand, method, path string, body []byte, header ...string) []byte {
		idem := fmt.Sprintf("kill-%d", rnd.Uint64())
		deadline := time.Now().Add(60 * time.Second)
		last := "" // what the last attempt got, for the failure's message
		for time.Now().Before(deadline) {
			req, _ := http.NewRequest(method, pick(rnd)+"/api/projects/team"+path, bytes.NewReader(body))
			req.Header.Set("X-API-Key", key)
			req.Header.Set("Idempotency-Key", idem)
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			resp, err := client.Do(req)
			last = fmt.Sprint(err)
			if err == nil {
				a := teamAnswer{status: resp.StatusCode}
				a.body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				last = fmt.Sprintf("%d %q %v", a.status, a.body, err)
				switch {
				case err != nil:
					// The answer cut short: the replica was killed as it
					// answered. No answer, as a client takes it (the
					// remote client does the same): sent again.
				case a.status/100 == 2:
					return a.body
				case a.status == 409 && a.code() != teamapi.CodeIdempotencyInUse, a.status/100 == 4 && a.status != 409 && a.status != 429:
					t.Errorf("%s %s: %d %s, not retried", method, path, a.status, a.body)
					return nil
				}
			}
			time.Sleep(time.Duration(50+rnd.IntN(150)) * time.Millisecond)
		}
		t.Errorf("%s %s: no answer within 60 s (the last attempt: %s)", method, path, last)
		return nil
	}

	const writers, notes = 3, 5
	type note struct{ path, content string }
	finals := make([][]note, writers)
	answered := make([]int, writers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 11))
			for i := range notes {
				path := fmt.Sprintf("notes/w%d-%d.md", w, i)
				body, ct := createBody(t, path, fmt.Sprintf("# Note %d of writer %d\n", i, w))
				b := call(rnd, "POST", "/files", body, "Content-Type", ct)
				var created struct{ File wireFile }
				if b == nil {
					return
				}
				if err := json.Unmarshal(b, &created); err != nil || created.File.ID == "" {
					t.Errorf("POST /files %s answered %q (%v)", path, b, err)
					return
				}
				answered[w]++
				content := ""
				for v := 1; v <= 2; v++ {
					content = fmt.Sprintf("# Note %d of writer %d\n\nversion %d\n", i, w, v)
					if call(rnd, "PUT", "/files/"+created.File.ID, []byte(content), "Content-Type", "text/markdown") == nil {
						return
					}
					answered[w]++
				}
				moved := fmt.Sprintf("notes/moved/w%d-%d.md", w, i)
				if call(rnd, "PATCH", "/files/"+created.File.ID, []byte(`{"newPath":"`+moved+`"}`), "Content-Type", "application/json") == nil {
					return
				}
				answered[w]++
				finals[w] = append(finals[w], note{moved, content})
			}
		}()
	}
	killed := make(chan int, 1)
	go func() {
		rnd := rand.New(rand.NewPCG(3, 5))
		n := 0
		defer func() { killed <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(300+rnd.IntN(900)) * time.Millisecond):
			}
			i := rnd.IntN(len(dirs))
			mu.Lock()
			p := procs[i]
			mu.Unlock()
			p.cmd.Process.Kill()
			p.waitDead(t)
			n++
			np := startTeam(t, dirs[i], nil, args...)
			mu.Lock()
			procs[i] = np
			mu.Unlock()
		}
	}()
	wg.Wait()
	close(stop)
	kills := <-killed

	total := 0
	for _, n := range answered {
		total += n
	}
	if total != writers*notes*4 {
		t.Fatalf("%d writes answered of %d", total, writers*notes*4)
	}
	log, err := exec.Command("git", "-C", remote, "log", "main", "--format=%H", "--", "notes").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(log))); n != total {
		t.Errorf("%d commits under notes/ in the remote for %d answered writes (%d kills)", n, total, kills)
	}
	for w := range finals {
		for _, n := range finals[w] {
			got, err := exec.Command("git", "-C", remote, "show", "main:"+n.path).Output()
			if err != nil || string(got) != n.content {
				t.Errorf("%s in the remote: %q %v, want %q", n.path, got, err, n.content)
			}
		}
	}
	if ls, _ := exec.Command("git", "-C", remote, "ls-tree", "-r", "--name-only", "main", "notes").Output(); len(strings.Fields(string(ls))) != writers*notes {
		t.Errorf("notes in the remote:\n%s", ls)
	}
	t.Logf("%d writes answered across %d kills", total, kills)
}
