package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore/pgstore"
)

// Several team-server replicas (the real binary, on loopback) sharing one
// PostgreSQL database, with many vaults each kept in a bare git remote:
// for each replica count, the vaults are spread over the replicas (vault i
// is first asked for through replica i mod R, which takes its lease), and N
// clients send searches, then creates, each to a random vault through a
// random replica (so most requests are forwarded once when R > 1). With
// more than one replica, the holder of the first vault is then killed with
// SIGKILL and the time until a write to that vault is answered again
// through another replica is measured (the failover: the lease TTL, then
// the takeover).

// ReplicaOptions configure RunReplicas.
type ReplicaOptions struct {
	Exe   string // the vaultmcp binary
	Vault string // imported as every project
	Lang  string
	// DB is the PostgreSQL database the replicas share (projects and keys
	// named after the run are added to it and left there).
	DB       string
	Replicas []int // replica counts, e.g. 1, 3
	Vaults   int
	Clients  int
	For      time.Duration // how long searches, then writes, run
	LeaseTTL time.Duration
	Seed     uint64
	Logger   *slog.Logger
}

// ReplicaLevel is the figures of one replica count.
type ReplicaLevel struct {
	Replicas       int     `json:"replicas"`
	Vaults         int     `json:"vaults"`
	Clients        int     `json:"clients"`
	LeasesHeld     []int   `json:"leases_held"` // per replica, after the warm-up
	Searches       int     `json:"searches"`
	SearchesPerSec float64 `json:"searches_per_s"`
	Search         Dist    `json:"search_ms"`
	SearchErrors   int     `json:"search_errors"`
	Writes         int     `json:"writes"`
	WritesPerSec   float64 `json:"writes_per_s"`
	Write          Dist    `json:"write_ms"`
	WriteErrors    int     `json:"write_errors"`
	// FailoverMS is from the SIGKILL of a vault's holder to the first write
	// to that vault answered through another replica (0: not measured).
	FailoverMS float64 `json:"failover_ms,omitempty"`
	PeakRSS    int64   `json:"peak_rss_bytes"` // summed over the replicas
}

// ReplicaReport is what RunReplicas measured.
type ReplicaReport struct {
	Vault    string         `json:"vault"`
	LeaseTTL string         `json:"lease_ttl"`
	Levels   []ReplicaLevel `json:"levels"`
	Problems []string       `json:"problems,omitempty"`
}

// RunReplicas runs the load for each replica count.
func RunReplicas(ctx context.Context, o ReplicaOptions) (*ReplicaReport, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 3 * time.Second
	}
	rep := &ReplicaReport{Vault: filepath.Base(o.Vault), LeaseTTL: o.LeaseTTL.String()}
	run := fmt.Sprintf("b%x", rand.Uint32())
	for _, n := range o.Replicas {
		lv, problems, err := runReplicaLevel(ctx, o, run, n)
		if err != nil {
			return nil, err
		}
		rep.Levels = append(rep.Levels, *lv)
		rep.Problems = append(rep.Problems, problems...)
	}
	return rep, nil
}

type replicaProc struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
}

func runReplicaLevel(ctx context.Context, o ReplicaOptions, run string, n int) (*ReplicaLevel, []string, error) {
	tmp, err := os.MkdirTemp("", "vaultmcp-replicas-bench-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	cli := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, o.Exe, args...)
		cmd.Env = append(os.Environ(), "VAULTMCP_CACHE_DIR=off")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("vaultmcp %s: %w: %s", strings.Join(args[:min(len(args), 3)], " "), err, strings.TrimSpace(errb.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	admin := filepath.Join(tmp, "admin")
	prefix := fmt.Sprintf("%s-r%d", run, n)
	o.Logger.Info("replicas: adding the vaults", "replicas", n, "vaults", o.Vaults)
	var names []string
	for i := 0; i < o.Vaults; i++ {
		bare := filepath.Join(tmp, fmt.Sprintf("v%d.git", i))
		if out, err := exec.CommandContext(ctx, "git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
			return nil, nil, fmt.Errorf("git init --bare: %v %s", err, out)
		}
		name := fmt.Sprintf("%s-v%d", prefix, i)
		if _, err := cli("team-server", "project", "add", "--data", admin, "--db", o.DB, "--from", o.Vault, "--remote", bare, name); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
	}
	keyOut, err := cli("team-server", "key", "add", "--data", admin, "--db", o.DB, prefix)
	if err != nil {
		return nil, nil, err
	}
	key := lastField(keyOut, "tv_")

	var procs []*replicaProc
	defer func() {
		for _, p := range procs {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
	}()
	for i := 0; i < n; i++ {
		cmd := exec.CommandContext(ctx, o.Exe, "team-server", "--data", filepath.Join(tmp, fmt.Sprintf("r%d", i)), "--db", o.DB, "--listen", "127.0.0.1:0",
			"--lang", langOr(o.Lang), "--rate-limit", "0", "--lease-ttl", o.LeaseTTL.String())
		cmd.Env = append(os.Environ(), "VAULTMCP_CACHE_DIR=off", "VAULTMCP_LOG_LEVEL=info")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		p := &replicaProc{cmd: cmd, done: make(chan struct{})}
		procs = append(procs, p)
		u, err := waitURL(stderr, 60*time.Second)
		if err != nil {
			return nil, nil, err
		}
		p.url = u
		go func() { _ = cmd.Wait(); close(p.done) }()
	}
	c := &replicaClient{http: &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 256}, Timeout: 60 * time.Second}, key: key}
	queries, err := SampleQueries(ctx, o.Vault, o.Lang, 200, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	// Warm-up: vault i is first asked for through replica i mod n.
	for i, name := range names {
		if err := c.search(ctx, procs[i%n].url, name, queries[0]); err != nil {
			return nil, nil, fmt.Errorf("first search of %s: %w", name, err)
		}
	}
	lv := &ReplicaLevel{Replicas: n, Vaults: o.Vaults, Clients: o.Clients}
	for _, p := range procs {
		lv.LeasesHeld = append(lv.LeasesHeld, c.leases(ctx, p.url))
	}
	pick := func(r *rand.Rand) (string, string) { return procs[r.IntN(n)].url, names[r.IntN(len(names))] }
	o.Logger.Info("replicas: searches", "replicas", n, "clients", o.Clients, "for", o.For)
	lv.Searches, lv.SearchErrors, lv.Search, lv.SearchesPerSec = c.load(ctx, o.Clients, o.For, o.Seed, func(ctx context.Context, r *rand.Rand, w, i int) error {
		base, name := pick(r)
		return c.search(ctx, base, name, queries[(w*7919+i)%len(queries)])
	})
	o.Logger.Info("replicas: writes", "replicas", n, "clients", o.Clients, "for", o.For)
	lv.Writes, lv.WriteErrors, lv.Write, lv.WritesPerSec = c.load(ctx, o.Clients, o.For, o.Seed+1, func(ctx context.Context, r *rand.Rand, w, i int) error {
		base, name := pick(r)
		return c.create(ctx, base, name, fmt.Sprintf("bench/w%d-%d.md", w, i), fmt.Sprintf("# Load %d %d\n\nwritten by client %d\n", w, i, w), fmt.Sprintf("%s-%d-%d", prefix, w, i))
	})
	for _, p := range procs {
		lv.PeakRSS += peakRSS(p.cmd.Process.Pid)
	}
	if n > 1 {
		fo, err := failover(ctx, o, c, procs, names[0])
		if err != nil {
			c.fail(err.Error())
		}
		lv.FailoverMS = fo
	}
	return lv, c.failures, nil
}

// failover kills the holder of project's lease and measures until a write
// to it is answered through another replica.
func failover(ctx context.Context, o ReplicaOptions, c *replicaClient, procs []*replicaProc, project string) (float64, error) {
	st, err := pgstore.Open(ctx, o.DB, time.Now())
	if err != nil {
		return 0, err
	}
	defer st.Close()
	p, err := st.Project(ctx, project)
	if err != nil {
		return 0, err
	}
	l, err := st.Lease(ctx, p.ID)
	if err != nil {
		return 0, err
	}
	victim := -1
	for i, pr := range procs {
		if pr.url == l.Advertise {
			victim = i
		}
	}
	if victim < 0 {
		return 0, fmt.Errorf("failover: the lease of %s is held at %s, no replica of the run", project, l.Advertise)
	}
	o.Logger.Info("replicas: killing the holder of a vault", "replica", victim)
	if err := procs[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, err
	}
	killed := time.Now()
	other := procs[(victim+1)%len(procs)].url
	for i := 0; time.Since(killed) < 2*time.Minute; i++ {
		err := c.create(ctx, other, project, fmt.Sprintf("bench/failover-%d.md", i), "# After the failover\n", fmt.Sprintf("failover-%d-%d", killed.UnixNano(), i))
		if err == nil {
			return float64(time.Since(killed).Microseconds()) / 1000, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("failover: no write to %s answered within 2 minutes of the kill", project)
}

type replicaClient struct {
	http     *http.Client
	key      string
	mu       sync.Mutex
	failures []string
}

func (c *replicaClient) fail(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.failures) < 5 {
		c.failures = append(c.failures, msg)
	}
}

func (c *replicaClient) do(ctx context.Context, method, url, ctype string, body []byte, hdr ...string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", c.key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (c *replicaClient) search(ctx context.Context, base, project, q string) error {
	body, _ := json.Marshal(map[string]any{"query": q})
	status, b, err := c.do(ctx, http.MethodPost, base+"/api/projects/"+project+"/search", "application/json", body)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("search %s: %d %s", project, status, firstBytes(b))
	}
	return err
}

func (c *replicaClient) create(ctx context.Context, base, project, path, content, idem string) error {
	var buf bytes.Buffer
	boundary := fmt.Sprintf("b%x", rand.Uint64())
	fmt.Fprintf(&buf, "--%s\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n%s\r\n", boundary, path)
	fmt.Fprintf(&buf, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=%q\r\nContent-Type: text/markdown\r\n\r\n%s\r\n--%s--\r\n", boundary, filepath.Base(path), content, boundary)
	status, b, err := c.do(ctx, http.MethodPost, base+"/api/projects/"+project+"/files", "multipart/form-data; boundary="+boundary, buf.Bytes(), "Idempotency-Key", idem)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("create %s in %s: %d %s", path, project, status, firstBytes(b))
	}
	return err
}

// leases is how many leases a replica says it holds (/readyz).
func (c *replicaClient) leases(ctx context.Context, base string) int {
	_, b, err := c.do(ctx, http.MethodGet, base+"/readyz", "", nil)
	if err != nil {
		return -1
	}
	var h struct {
		Leases int `json:"leases"`
	}
	if json.Unmarshal(b, &h) != nil {
		return -1
	}
	return h.Leases
}

// load runs f from n workers for d (runLoad), each worker with its own
// random numbers from seed.
func (c *replicaClient) load(ctx context.Context, n int, d time.Duration, seed uint64, f func(ctx context.Context, r *rand.Rand, worker, i int) error) (int, int, Dist, float64) {
	rs := make([]*rand.Rand, n)
	for w := range rs {
		rs[w] = rand.New(rand.NewPCG(seed, uint64(w)))
	}
	return runLoad(ctx, n, d, func(ctx context.Context, w, i int) error { return f(ctx, rs[w], w, i) },
		func(err error) { c.fail(err.Error()) })
}

// WriteTable prints the report for a person.
func (r *ReplicaReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "team-server replicas on %s, loopback, one PostgreSQL, a bare git remote per vault (lease TTL %s)\n", r.Vault, r.LeaseTTL)
	rows := [][]string{{"replicas", "vaults", "clients", "leases", "searches/s", "search p50 / p99", "errors", "writes/s", "write p50 / p99", "errors", "failover", "peak RSS"}}
	for _, l := range r.Levels {
		held := make([]string, len(l.LeasesHeld))
		for i, h := range l.LeasesHeld {
			held[i] = fmt.Sprint(h)
		}
		fo := "-"
		if l.FailoverMS > 0 {
			fo = fmt.Sprintf("%.0f ms", l.FailoverMS)
		}
		rows = append(rows, []string{fmt.Sprint(l.Replicas), fmt.Sprint(l.Vaults), fmt.Sprint(l.Clients), strings.Join(held, "/"),
			fmt.Sprintf("%.0f", l.SearchesPerSec), fmtPair(l.Search), fmt.Sprint(l.SearchErrors),
			fmt.Sprintf("%.1f", l.WritesPerSec), fmtPair(l.Write), fmt.Sprint(l.WriteErrors), fo, fmtBytes(l.PeakRSS)})
	}
	if err := writeRows(w, rows); err != nil {
		return err
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	return nil
}
