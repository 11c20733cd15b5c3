package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
)

// The team server under load: the real binary (`vaultmcp team-server`) on
// a loopback port, one project imported from a vault, and N concurrent
// clients sending searches (POST /api/projects/{p}/search) and writes
// (multipart creates and raw replacements of their own notes) for a bounded
// time. Every request is counted; an error is any answer other than the
// expected status or a transport failure.

// TeamOptions configure RunTeam.
type TeamOptions struct {
	Exe     string // the vaultmcp binary
	Vault   string // the vault to import as the project
	Lang    string
	Clients []int         // concurrency levels, e.g. 1, 16, 64
	For     time.Duration // how long each level runs (searches, then writes)
	// Soak, when positive, runs after the levels: SoakClients clients
	// (default the last level's count) sending searches with one write in
	// ten, for Soak, the server's RSS sampled every SoakEvery (default
	// 10 s), to show whether its memory stays flat.
	Soak        time.Duration
	SoakClients int
	SoakEvery   time.Duration
	Seed        uint64
	Logger      *slog.Logger
}

// SoakReport is what a soak measured.
type SoakReport struct {
	Seconds  float64 `json:"seconds"`
	Clients  int     `json:"clients"`
	Searches int     `json:"searches"`
	Writes   int     `json:"writes"`
	Errors   int     `json:"errors"`
	Search   Dist    `json:"search_ms"`
	Write    Dist    `json:"write_ms"`
	// RSS is the server's resident memory at each sample, in bytes, and
	// SampleSeconds when each was taken (since the soak began).
	RSS           []int64   `json:"rss_bytes"`
	SampleSeconds []float64 `json:"sample_s"`
	// Growth compares the last quarter's mean RSS with the second
	// quarter's (the first is the warm-up): 0.05 is 5% more at the end.
	Growth float64 `json:"rss_growth"`
}

// TeamLevel is the figures of one concurrency level.
type TeamLevel struct {
	Clients        int     `json:"clients"`
	Searches       int     `json:"searches"`
	SearchesPerSec float64 `json:"searches_per_s"`
	Search         Dist    `json:"search_ms"`
	SearchErrors   int     `json:"search_errors"`
	Writes         int     `json:"writes"`
	WritesPerSec   float64 `json:"writes_per_s"`
	Write          Dist    `json:"write_ms"`
	WriteErrors    int     `json:"write_errors"`
	// The server's CPU time (user and system, every core) over the level's
	// searches and writes, divided by their number: what one costs the
	// server whatever the load generator takes of the same machine.
	ServerCPUPerSearch float64 `json:"server_cpu_ms_per_search,omitempty"`
	ServerCPUPerWrite  float64 `json:"server_cpu_ms_per_write,omitempty"`
}

// TeamReport is what RunTeam measured.
type TeamReport struct {
	Vault      string      `json:"vault"`
	Notes      int         `json:"notes"`
	Levels     []TeamLevel `json:"levels"`
	ServerPeak int64       `json:"server_peak_rss_bytes"`
	ServerRSS  int64       `json:"server_rss_bytes_end"`
	Soak       *SoakReport `json:"soak,omitempty"`
	Problems   []string    `json:"problems,omitempty"`
}

// Compiled on first use: a process start does not pay for it.
var listenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`url=(https?://\S+)`) })

// RunTeam runs the load.
func RunTeam(ctx context.Context, o TeamOptions) (*TeamReport, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.For <= 0 {
		o.For = 10 * time.Second
	}
	tmp, err := os.MkdirTemp("", "vaultmcp-team-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "data")
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, o.Exe, args...)
		cmd.Env = append(os.Environ(), "VAULTMCP_CACHE_DIR=off")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("vaultmcp %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	o.Logger.Info("importing the vault as a team project", "vault", filepath.Base(o.Vault))
	if _, err := run("team-server", "project", "add", "--data", data, "--from", o.Vault, "bench"); err != nil {
		return nil, err
	}
	keyOut, err := run("team-server", "key", "add", "--data", data, "bench")
	if err != nil {
		return nil, err
	}
	key := lastField(keyOut, "tv_")
	if key == "" {
		return nil, fmt.Errorf("no key in the output of key add: %q", keyOut)
	}
	// No rate limit: the load is one key's, on purpose.
	srv := exec.CommandContext(ctx, o.Exe, "team-server", "--data", data, "--listen", "127.0.0.1:0", "--lang", langOr(o.Lang), "--rate-limit", "0")
	srv.Env = append(os.Environ(), "VAULTMCP_CACHE_DIR=off", "VAULTMCP_LOG_LEVEL=info")
	stderr, err := srv.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
			<-done
		}
	}()
	base, err := waitURL(stderr, 60*time.Second)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}
	c := &teamClient{http: client, base: base, key: key}
	var projects struct {
		Projects []struct {
			ID string `json:"id"`
		} `json:"projects"`
	}
	if err := c.getJSON(ctx, "/api/projects", &projects); err != nil || len(projects.Projects) == 0 {
		return nil, fmt.Errorf("listing the projects: %v", err)
	}
	c.project = projects.Projects[0].ID
	var files struct {
		Files []json.RawMessage `json:"files"`
	}
	if err := c.getJSON(ctx, "/api/projects/"+c.project+"/files?prefix=", &files); err != nil {
		return nil, fmt.Errorf("listing the files: %w", err)
	}
	queries, err := SampleQueries(ctx, o.Vault, o.Lang, 200, o.Seed)
	if err != nil {
		return nil, err
	}
	// Warm the index: the first search waits for the build. Its answer is
	// decoded whole; under load, an answer is checked by its status and
	// type, as a load generator does, so that decoding does not take the
	// server's CPU.
	if n, err := c.searchDecoded(ctx, queries[0]); err != nil {
		return nil, fmt.Errorf("first search: %w", err)
	} else if n == 0 {
		return nil, fmt.Errorf("first search: no result for %q", queries[0])
	}
	rep := &TeamReport{Vault: filepath.Base(o.Vault), Notes: len(files.Files)}
	// The load generator shares the machine with the server: its own
	// collector runs seldom (it keeps little), so that what it costs
	// takes as little as it can from the server measured.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	perOp := func(cpu time.Duration, ops int) float64 {
		if cpu <= 0 || ops == 0 {
			return 0
		}
		return float64(cpu) / float64(time.Millisecond) / float64(ops)
	}
	pid := srv.Process.Pid
	for _, n := range o.Clients {
		o.Logger.Info("team load", "clients", n, "for", o.For)
		lv := TeamLevel{Clients: n}
		cpu0 := cpuTime(pid)
		lv.Searches, lv.SearchErrors, lv.Search, lv.SearchesPerSec = c.load(ctx, n, o.For, func(ctx context.Context, w, i int) error {
			_, err := c.search(ctx, queries[(w*7919+i)%len(queries)])
			return err
		})
		cpu1 := cpuTime(pid)
		lv.Writes, lv.WriteErrors, lv.Write, lv.WritesPerSec = c.load(ctx, n, o.For, func(ctx context.Context, w, i int) error {
			return c.write(ctx, fmt.Sprintf("bench/c%d-%d/n%d.md", n, w, i%20), fmt.Sprintf("# Load %d %d %d\n\nwritten by client %d\n", n, w, i, w))
		})
		lv.ServerCPUPerSearch, lv.ServerCPUPerWrite = perOp(cpu1-cpu0, lv.Searches+lv.SearchErrors), perOp(cpuTime(pid)-cpu1, lv.Writes+lv.WriteErrors)
		rep.Levels = append(rep.Levels, lv)
	}
	if o.Soak > 0 {
		n := o.SoakClients
		if n <= 0 {
			n = 16
			if len(o.Clients) > 0 {
				n = o.Clients[len(o.Clients)-1]
			}
		}
		every := o.SoakEvery
		if every <= 0 {
			every = 10 * time.Second
		}
		o.Logger.Info("team soak", "clients", n, "for", o.Soak, "rss_every", every)
		rep.Soak = c.soak(ctx, srv.Process.Pid, n, o.Soak, every, queries)
	}
	rep.Problems = c.Failures()
	rep.ServerPeak = peakRSS(srv.Process.Pid)
	rep.ServerRSS = currentRSS(srv.Process.Pid)
	return rep, nil
}

func langOr(l string) string {
	if l == "" {
		return "en"
	}
	return l
}

func lastField(s, prefix string) string {
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, prefix) {
			return f
		}
	}
	return ""
}

func waitURL(r io.Reader, limit time.Duration) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			if m := listenRE().FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
	}()
	select {
	case u := <-found:
		return strings.TrimSuffix(u, "/"), nil
	case <-time.After(limit):
		return "", errors.New("the team server did not say where it listens")
	}
}

type teamClient struct {
	http          *http.Client
	base, key     string
	project       string
	mu            sync.Mutex
	ids           map[string]string // path -> file id of the notes written
	hashes        map[string]string // path -> content hash
	uniq          int
	writeFailures []string
}

// send sends one request with the key; the caller reads and closes the body.
func (c *teamClient) send(ctx context.Context, method, path, ctype string, body io.Reader, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", c.key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return c.http.Do(req)
}

func (c *teamClient) do(ctx context.Context, method, path, ctype string, body io.Reader, hdr map[string]string) (*http.Response, []byte, error) {
	resp, err := c.send(ctx, method, path, ctype, body, hdr)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func (c *teamClient) getJSON(ctx context.Context, path string, into any) error {
	resp, b, err := c.do(ctx, http.MethodGet, path, "", nil, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.Unmarshal(b, into)
}

// search sends one search and checks its answer: 200, JSON, the whole body
// read (into a pooled buffer).
func (c *teamClient) search(ctx context.Context, q string) (int, error) {
	body, _ := json.Marshal(map[string]any{"query": q})
	resp, err := c.send(ctx, http.MethodPost, "/api/projects/"+c.project+"/search", "application/json", bytes.NewReader(body), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	buf := answerBufs.Get().(*bytes.Buffer)
	defer answerBufs.Put(buf)
	buf.Reset()
	n, err := buf.ReadFrom(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("search: %s: %s", resp.Status, firstBytes(buf.Bytes()))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || n == 0 || buf.Bytes()[0] != '{' {
		return 0, fmt.Errorf("search: an answer of type %q: %s", ct, firstBytes(buf.Bytes()))
	}
	return int(n), nil
}

var answerBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// searchDecoded sends one search and returns how many results its answer,
// decoded whole, holds.
func (c *teamClient) searchDecoded(ctx context.Context, q string) (int, error) {
	body, _ := json.Marshal(map[string]any{"query": q})
	resp, b, err := c.do(ctx, http.MethodPost, "/api/projects/"+c.project+"/search", "application/json", bytes.NewReader(body), nil)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("search: %s", resp.Status)
	}
	var res struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return 0, err
	}
	return len(res.Results), nil
}

// write creates the note at path, or replaces it with If-Match when this
// client wrote it before.
func (c *teamClient) write(ctx context.Context, path, content string) error {
	c.mu.Lock()
	if c.ids == nil {
		c.ids, c.hashes = map[string]string{}, map[string]string{}
	}
	id, hash := c.ids[path], c.hashes[path]
	c.uniq++
	key := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), c.uniq)
	c.mu.Unlock()
	var resp *http.Response
	var b []byte
	var err error
	if id == "" {
		var buf bytes.Buffer
		boundary := fmt.Sprintf("b%x", rand.Uint64())
		fmt.Fprintf(&buf, "--%s\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n%s\r\n", boundary, path)
		fmt.Fprintf(&buf, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=%q\r\nContent-Type: text/markdown\r\n\r\n%s\r\n--%s--\r\n", boundary, filepath.Base(path), content, boundary)
		resp, b, err = c.do(ctx, http.MethodPost, "/api/projects/"+c.project+"/files", "multipart/form-data; boundary="+boundary, &buf, map[string]string{"Idempotency-Key": key})
		if err == nil && resp.StatusCode != http.StatusCreated {
			err = fmt.Errorf("create %s: %s: %s", path, resp.Status, firstBytes(b))
		}
	} else {
		resp, b, err = c.do(ctx, http.MethodPut, "/api/projects/"+c.project+"/files/"+id, "application/octet-stream", strings.NewReader(content), map[string]string{"Idempotency-Key": key, "If-Match": `"` + hash + `"`})
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("replace %s: %s: %s", path, resp.Status, firstBytes(b))
		}
	}
	if err != nil {
		return err
	}
	var res struct {
		File struct {
			ID          string `json:"id"`
			ContentHash string `json:"contentHash"`
		} `json:"file"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return err
	}
	c.mu.Lock()
	c.ids[path], c.hashes[path] = res.File.ID, res.File.ContentHash
	c.mu.Unlock()
	return nil
}

func firstBytes(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return strings.TrimSpace(string(b))
}

// load runs f from n workers for d (runLoad); the first write failures
// are kept for the report.
func (c *teamClient) load(ctx context.Context, n int, d time.Duration, f func(ctx context.Context, worker, i int) error) (int, int, Dist, float64) {
	return runLoad(ctx, n, d, f, func(err error) {
		c.mu.Lock()
		if len(c.writeFailures) < 5 {
			c.writeFailures = append(c.writeFailures, err.Error())
		}
		c.mu.Unlock()
	})
}

// soak runs searches with one write in ten from n clients for d, sampling
// the server's RSS every `every`.
func (c *teamClient) soak(ctx context.Context, pid, n int, d, every time.Duration, queries []string) *SoakReport {
	rep := &SoakReport{Clients: n}
	start := time.Now()
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			rep.RSS = append(rep.RSS, currentRSS(pid))
			rep.SampleSeconds = append(rep.SampleSeconds, time.Since(start).Seconds())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var mu sync.Mutex
	var searches, writes []time.Duration
	_, errs, _, _ := c.load(ctx, n, d, func(ctx context.Context, w, i int) error {
		t := time.Now()
		var err error
		isWrite := i%10 == 9
		if isWrite {
			err = c.write(ctx, fmt.Sprintf("bench/soak-%d/n%d.md", w, (i/10)%20), fmt.Sprintf("# Soak %d %d\n\nwritten by client %d\n", w, i, w))
		} else {
			_, err = c.search(ctx, queries[(w*7919+i)%len(queries)])
		}
		if err == nil {
			mu.Lock()
			if isWrite {
				writes = append(writes, time.Since(t))
			} else {
				searches = append(searches, time.Since(t))
			}
			mu.Unlock()
		}
		return err
	})
	close(stop)
	<-sampled
	rep.RSS = append(rep.RSS, currentRSS(pid))
	rep.SampleSeconds = append(rep.SampleSeconds, time.Since(start).Seconds())
	rep.Seconds = time.Since(start).Seconds()
	rep.Errors = errs
	rep.Searches, rep.Writes = len(searches), len(writes)
	sort.Slice(searches, func(i, j int) bool { return searches[i] < searches[j] })
	sort.Slice(writes, func(i, j int) bool { return writes[i] < writes[j] })
	rep.Search, rep.Write = Summarize(searches), Summarize(writes)
	rep.Growth = rssGrowth(rep.RSS)
	return rep
}

// rssGrowth is the mean of the last quarter of samples over the mean of
// the second quarter, less 1 (0 with fewer than 4 samples).
func rssGrowth(rss []int64) float64 {
	q := len(rss) / 4
	if q == 0 {
		return 0
	}
	mean := func(v []int64) float64 {
		var t float64
		for _, x := range v {
			t += float64(x)
		}
		return t / float64(len(v))
	}
	second, last := mean(rss[q:2*q]), mean(rss[len(rss)-q:])
	if second == 0 {
		return 0
	}
	return last/second - 1
}

// Failures returns the first errors seen (for the report's problems).
func (c *teamClient) Failures() []string { return c.writeFailures }

// WriteTeamTable prints the report for a person.
func (r *TeamReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "team server on %s (%s notes), loopback\n", r.Vault, fmtCount(r.Notes))
	rows := [][]string{{"clients", "searches/s", "search p50 / p99", "errors", "server CPU", "writes/s", "write p50 / p99", "errors", "server CPU"}}
	cpu := func(ms float64) string {
		if ms <= 0 {
			return "-"
		}
		return fmtMs(ms)
	}
	for _, l := range r.Levels {
		rows = append(rows, []string{fmt.Sprint(l.Clients), fmt.Sprintf("%.0f", l.SearchesPerSec), fmtPair(l.Search), fmt.Sprint(l.SearchErrors), cpu(l.ServerCPUPerSearch),
			fmt.Sprintf("%.1f", l.WritesPerSec), fmtPair(l.Write), fmt.Sprint(l.WriteErrors), cpu(l.ServerCPUPerWrite)})
	}
	if err := writeRows(w, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "server peak RSS %s, at the end %s; server CPU: its CPU time (all cores) over a level's searches or writes, per operation\n", fmtBytes(r.ServerPeak), fmtBytes(r.ServerRSS))
	if s := r.Soak; s != nil {
		fmt.Fprintf(w, "soak: %d clients for %.0f s, %d searches (%.0f/s, p50 / p99 %s) and %d writes (%.1f/s, p50 / p99 %s), %d errors\n",
			s.Clients, s.Seconds, s.Searches, float64(s.Searches)/s.Seconds, fmtPair(s.Search), s.Writes, float64(s.Writes)/s.Seconds, fmtPair(s.Write), s.Errors)
		if len(s.RSS) > 0 {
			lo, hi := s.RSS[0], s.RSS[0]
			for _, v := range s.RSS {
				lo, hi = min(lo, v), max(hi, v)
			}
			fmt.Fprintf(w, "soak RSS: %s at the start, %s at the end, %s to %s over %d samples, last quarter %+.1f%% on the second\n",
				fmtBytes(s.RSS[0]), fmtBytes(s.RSS[len(s.RSS)-1]), fmtBytes(lo), fmtBytes(hi), len(s.RSS), 100*s.Growth)
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	return nil
}
