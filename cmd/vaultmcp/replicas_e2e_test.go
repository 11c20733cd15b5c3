package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/pgtest"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/pgstore"
)

// Three team-server replicas of the binary on loopback share one
// PostgreSQL; three projects keep their vaults in bare git remotes. Writes
// go through random replicas (each with an Idempotency-Key, retried as the
// remote client retries); the replica holding the first project's lease is
// killed with SIGKILL mid-stream. Afterwards every answered write is in its
// remote's history exactly once, and every live replica lists the same
// notes, with the same hashes, as the remote holds.
func TestThreeReplicas(t *testing.T) {
	db := pgtest.DB(t)
	admin := t.TempDir()
	names := []string{"alpha", "beta", "gamma"}
	remotes := map[string]string{}
	for _, n := range names {
		remotes[n] = filepath.Join(t.TempDir(), n+".git")
		if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remotes[n]).CombinedOutput(); err != nil {
			t.Fatalf("git init --bare: %v %s", err, out)
		}
		args := []string{"project", "add", "--data", admin, "--db", db, "--remote", remotes[n], n}
		if n == "alpha" {
			args = append(args, "--from", filepath.Join("..", "..", "examples", "vault"))
		}
		if _, stderr, err := pgCLI(t, nil, args...); err != nil {
			t.Fatalf("project add %s: %v\n%s", n, err, stderr)
		}
	}
	out, stderr, err := pgCLI(t, nil, "key", "add", "--data", admin, "--db", db, "writer")
	if err != nil {
		t.Fatalf("key add: %v\n%s", err, stderr)
	}
	key := strings.TrimSpace(out)

	var procs []*teamProc
	for i := 0; i < 3; i++ {
		procs = append(procs, startTeam(t, t.TempDir(), nil, "--db", db, "--lease-ttl", "2s", "--rate-limit", "0"))
	}
	var dead atomic.Int32
	dead.Store(-1)
	client := &http.Client{Timeout: 20 * time.Second}

	type write struct {
		project, path, content string
		answered               bool
		at                     time.Time
	}
	const writers, perWriter = 4, 15
	writes := make([][]write, writers)
	var killedAt, retries atomic.Int64
	var firstAfterKill atomic.Int64 // when the killed replica's first vault answered again
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < perWriter; i++ {
				wr := write{project: names[rnd.IntN(len(names))], path: fmt.Sprintf("notes/w%d-%02d.md", w, i)}
				wr.content = fmt.Sprintf("# Write %d of writer %d\n\nIn %s.\n", i, w, wr.project)
				idem := fmt.Sprintf("e2e-%d-%d", w, i)
				deadline := time.Now().Add(40 * time.Second)
				for attempt := 0; time.Now().Before(deadline); attempt++ {
					p := procs[rnd.IntN(len(procs))]
					if int(dead.Load()) >= 0 && p == procs[dead.Load()] {
						continue // a load balancer stops sending to it
					}
					status, err := createNote(client, p.url, key, wr.project, wr.path, wr.content, idem)
					if err == nil && status == 201 {
						wr.answered, wr.at = true, time.Now()
						break
					}
					if err == nil && status != 503 && status != 502 && status != 409 && status != 429 {
						t.Errorf("%s %s: status %d, not retried", wr.project, wr.path, status)
						break
					}
					retries.Add(1)
					time.Sleep(time.Duration(100+rnd.IntN(200)) * time.Millisecond)
				}
				if !wr.answered {
					t.Errorf("%s %s: no answer within 40 s", wr.project, wr.path)
				}
				if wr.answered && killedAt.Load() != 0 && wr.project == "alpha" {
					firstAfterKill.CompareAndSwap(0, wr.at.UnixNano())
				}
				writes[w] = append(writes[w], wr)
				mu.Lock()
				done++
				mu.Unlock()
			}
		}(w)
	}
	// Mid-stream: kill the holder of alpha's lease.
	for {
		mu.Lock()
		n := done
		mu.Unlock()
		if n >= writers*perWriter/3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	victim := holderOf(t, db, "alpha", procs)
	if err := procs[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt.Store(time.Now().UnixNano())
	dead.Store(int32(victim))
	wg.Wait()
	if f := firstAfterKill.Load(); f != 0 {
		t.Logf("alpha answered a write again %v after its holder was killed (lease TTL 2 s); %d attempt(s) retried in all", time.Duration(f-killedAt.Load()).Round(time.Millisecond), retries.Load())
	} else {
		t.Error("no write to alpha was answered after its holder was killed")
	}
	if now := holderOf(t, db, "alpha", procs); now == victim {
		t.Errorf("alpha's lease is still the killed replica's")
	}

	answered := 0
	for _, ws := range writes {
		for _, wr := range ws {
			if !wr.answered {
				continue
			}
			answered++
			log, err := exec.Command("git", "-C", remotes[wr.project], "log", "--format=%H", "--diff-filter=A", "main", "--", wr.path).Output()
			if n := len(strings.Fields(string(log))); err != nil || n != 1 {
				t.Errorf("%s %s: added by %d commit(s) of the remote (%v), want 1", wr.project, wr.path, n, err)
			}
			content, err := exec.Command("git", "-C", remotes[wr.project], "show", "main:"+wr.path).Output()
			if err != nil || string(content) != wr.content {
				t.Errorf("%s %s: the remote holds %q (%v)", wr.project, wr.path, content, err)
			}
		}
	}
	if answered != writers*perWriter {
		t.Errorf("%d of %d writes answered", answered, writers*perWriter)
	}

	// Every live replica is ready; together they hold the three leases.
	leases := 0
	for i, p := range procs {
		if i == victim {
			continue
		}
		resp, err := client.Get(p.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Status string
			Leases int
		}
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if resp.StatusCode != 200 || h.Status != "ready" {
			t.Errorf("replica %d: readyz %d %+v", i, resp.StatusCode, h)
		}
		leases += h.Leases
		resp, err = client.Get(p.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(m), fmt.Sprintf("vaultmcp_leases_held %d\n", h.Leases)) || !strings.Contains(string(m), "# TYPE vaultmcp_http_request_duration_seconds histogram") {
			t.Errorf("replica %d: metrics without its leases or latency histogram", i)
		}
	}
	if leases != len(names) {
		t.Errorf("the live replicas hold %d lease(s), want %d", leases, len(names))
	}

	// Reads agree: every live replica lists what each remote holds.
	for _, n := range names {
		want := remoteNotes(t, remotes[n])
		for i, p := range procs {
			if i == victim {
				continue
			}
			got := listNotes(t, client, p.url, key, n)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("replica %d lists for %s:\n%s\nthe remote holds:\n%s", i, n, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// holderOf finds which process holds a project's lease.
func holderOf(t *testing.T, db, project string, procs []*teamProc) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pgstore.Open(ctx, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.Project(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Lease(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, pr := range procs {
		if pr.url == l.Advertise {
			return i
		}
	}
	t.Fatalf("the lease of %s is held at %s, none of the replicas", project, l.Advertise)
	return -1
}

func createNote(c *http.Client, base, key, project, path, content, idem string) (int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("path", path)
	fw, _ := mw.CreateFormFile("file", filepath.Base(path))
	io.WriteString(fw, content)
	mw.Close()
	req, err := http.NewRequest("POST", base+"/api/projects/"+project+"/files", &body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Idempotency-Key", idem)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err // the answer cut short: no answer, sent again
	}
	if resp.StatusCode == 409 {
		var e teamapi.ErrorBody
		if json.Unmarshal(b, &e) == nil && e.Error.Code != teamapi.CodeIdempotencyInUse {
			return 0, errors.New(string(b)) // a real conflict: not retried
		}
	}
	return resp.StatusCode, nil
}

// listNotes is "path hash" of every note a replica lists for a project.
func listNotes(t *testing.T, c *http.Client, base, key, project string) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/projects/"+project+"/files", nil)
	req.Header.Set("X-API-Key", key)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l teamapi.FileList
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != 200 {
		t.Fatalf("listing %s at %s: %d %v", project, base, resp.StatusCode, err)
	}
	var out []string
	for _, f := range l.Files {
		out = append(out, f.Path+" "+f.ContentHash)
	}
	sort.Strings(out)
	return out
}

// remoteNotes is "path hash" of every note at the tip of a remote's main.
func remoteNotes(t *testing.T, remote string) []string {
	t.Helper()
	ls, err := exec.Command("git", "-C", remote, "ls-tree", "-r", "--name-only", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range strings.Split(strings.TrimSpace(string(ls)), "\n") {
		if !strings.HasSuffix(p, ".md") || strings.HasPrefix(p, "_templates/") || strings.Contains(p, "/.") || strings.HasPrefix(p, ".") {
			continue
		}
		b, err := exec.Command("git", "-C", remote, "show", "main:"+p).Output()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		out = append(out, p+" "+hex.EncodeToString(h[:]))
	}
	sort.Strings(out)
	return out
}

// A replica holding a vault dies in the middle of a write (the crash test
// hook SIGKILLs it after its push, or before it applies the write); the
// client's retry with the same Idempotency-Key reaches another replica,
// which takes the vault over and settles the dead write from the remote's
// history: applied once either way, the answer replayed when it had been
// pushed.
func TestReplicaCrashMidWrite(t *testing.T) {
	for _, point := range []string{"after-apply", "before-apply"} {
		t.Run(point, func(t *testing.T) {
			db := pgtest.DB(t)
			admin := t.TempDir()
			remote := filepath.Join(t.TempDir(), "v.git")
			if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			if _, stderr, err := pgCLI(t, nil, "project", "add", "--data", admin, "--db", db, "--remote", remote, "v"); err != nil {
				t.Fatalf("project add: %v\n%s", err, stderr)
			}
			out, stderr, err := pgCLI(t, nil, "key", "add", "--data", admin, "--db", db, "w")
			if err != nil {
				t.Fatalf("key add: %v\n%s", err, stderr)
			}
			key := strings.TrimSpace(out)
			doomed := startTeam(t, t.TempDir(), []string{"VAULTMCP_TEST_CRASH=" + point}, "--db", db, "--lease-ttl", "1s")
			other := startTeam(t, t.TempDir(), nil, "--db", db, "--lease-ttl", "1s")
			client := &http.Client{Timeout: 30 * time.Second}
			if got := listNotes(t, client, doomed.url, key, "v"); got != nil {
				t.Fatalf("a new vault lists %v", got)
			}
			status, err := createNote(client, other.url, key, "v", "notes/once.md", "# Once\n", "crash-1")
			if err == nil && status == 201 {
				t.Fatalf("the write was answered although its replica died in it")
			}
			select {
			case err := <-doomed.done:
				doomed.done <- err // for its cleanup
			case <-time.After(30 * time.Second):
				t.Fatal("the crash hook did not kill the replica")
			}
			var replayed string
			deadline := time.Now().Add(40 * time.Second)
			for time.Now().Before(deadline) {
				status, replayed, err = createNoteReplayed(client, other.url, key, "v", "notes/once.md", "# Once\n", "crash-1")
				if err == nil && status == 201 {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if status != 201 {
				t.Fatalf("the retry: %d %v", status, err)
			}
			if want := map[string]string{"after-apply": "true", "before-apply": ""}[point]; replayed != want {
				t.Errorf("Idempotent-Replayed %q, want %q", replayed, want)
			}
			log, _ := exec.Command("git", "-C", remote, "log", "--format=%H", "--diff-filter=A", "main", "--", "notes/once.md").Output()
			if n := len(strings.Fields(string(log))); n != 1 {
				t.Errorf("the write is in the remote %d time(s), want 1", n)
			}
			subjects, _ := exec.Command("git", "-C", remote, "log", "--format=%s", "main").Output()
			if fence := strings.Contains(string(subjects), "vaultmcp: fence"); fence != (point == "before-apply") {
				t.Errorf("fencing commit in the remote: %v, want %v\n%s", fence, point == "before-apply", subjects)
			}
		})
	}
}

// createNoteReplayed is createNote that also returns Idempotent-Replayed.
func createNoteReplayed(c *http.Client, base, key, project, path, content, idem string) (int, string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("path", path)
	fw, _ := mw.CreateFormFile("file", filepath.Base(path))
	io.WriteString(fw, content)
	mw.Close()
	req, err := http.NewRequest("POST", base+"/api/projects/"+project+"/files", &body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Idempotency-Key", idem)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get(teamapi.HeaderReplayed), nil
}

// Bad replica flags are refused with exit status 2 naming the flag, and a
// remote with a password in its URL is refused without showing it.
func TestReplicaFlags(t *testing.T) {
	data := t.TempDir()
	for args, says := range map[string]string{
		"--advertise http://10.0.0.5:8787":                  "--advertise goes with --db",
		"--db postgres://127.0.0.1:1/x --advertise ftp://x": "--advertise",
		"--db postgres://127.0.0.1:1/x --lease-ttl 0s":      "--lease-ttl",
		"--lease-ttl 5s": "--lease-ttl goes with --db",
		"--db postgres://127.0.0.1:1/x --advertise http://h:1/path":           "--advertise",
		"--db postgres://127.0.0.1:1/x --listen 0.0.0.0:8787 --insecure-http": "--advertise is required with --db when --listen 0.0.0.0:8787",
		"--db postgres://127.0.0.1:1/x --listen :8787 --insecure-http":        "--advertise is required",
	} {
		cmd := exec.Command(binary, append([]string{"team-server", "--data", data}, strings.Fields(args)...)...)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), says) {
			t.Errorf("team-server %s: %v %s, want exit 2 naming %s", args, err, out, says)
		}
	}
	_, stderr, err := pgCLI(t, nil, "project", "add", "--data", data, "--remote", "https://bob:s3cret@git.invalid/v.git", "p")
	if err == nil || !strings.Contains(stderr, "--remote") || strings.Contains(stderr, "s3cret") {
		t.Errorf("project add with a password in --remote: %v %q", err, stderr)
	}
}
