package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/envvars"
	"github.com/vaultmcp/vaultmcp/internal/vault"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// genVersion changes whenever the generator's output changes, so a kept
// vault made by an older generator is not reused.
const genVersion = 1

// genMarker is the file in a kept generated vault that says what made it
// (a dot file: neither vaultmcp nor rg reads it).
const genMarker = ".vaultmcp-bench.json"

type marker struct {
	Version int      `json:"version"`
	Notes   int      `json:"notes"`
	Seed    uint64   `json:"seed"`
	Stats   GenStats `json:"stats"`
}

// withDefaults fills the zero fields of opts.
func (opts Options) withDefaults() Options {
	if opts.Queries <= 0 {
		opts.Queries = 200
	}
	if opts.Lang == "" {
		opts.Lang = "en"
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.FreshTrials <= 0 {
		opts.FreshTrials = 10
	}
	if opts.Writes <= 0 {
		opts.Writes = 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Rg == "" {
		if p, err := exec.LookPath("rg"); err == nil {
			opts.Rg = p
		}
	}
	return opts
}

// Run measures the vault of opts.Vault and one generated vault per size, one
// after the other (never two at once: on a small machine they would measure
// each other).
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	rep := &Report{Machine: machine(ctx, opts.Rg), Queries: opts.Queries}
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = rep.Machine.MemoryBytes / 2
	}
	var g *guard
	if opts.MemoryLimit > 0 && opts.OnMemoryLimit != nil {
		g = &guard{limit: opts.MemoryLimit, onOver: opts.OnMemoryLimit, base: *rep}
		gctx, stop := context.WithCancel(ctx)
		defer stop()
		go g.run(gctx)
	}
	if opts.Vault != "" {
		abs, err := filepath.Abs(opts.Vault)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		vr, err := measureVault(ctx, opts, g, filepath.Base(abs), abs, nil)
		if err != nil {
			return rep, err
		}
		rep.Vaults = append(rep.Vaults, *vr)
		g.finish(*vr)
	}
	if len(opts.Sizes) == 0 {
		return rep, nil
	}
	base := opts.OutDir
	if base == "" {
		tmp, err := os.MkdirTemp("", "vaultmcp-bench-")
		if err != nil {
			return rep, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(tmp)
		g.addTemp(tmp)
		base = tmp
	}
	for _, n := range opts.Sizes {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		dir := filepath.Join(base, fmt.Sprintf("generated-%d-seed%d", n, opts.Seed))
		gen, took, err := generated(ctx, opts, dir, n)
		if err != nil {
			return rep, err
		}
		vr, err := measureVault(ctx, opts, g, fmt.Sprintf("generated %s", humanCount(n)), dir, gen)
		if err != nil {
			return rep, err
		}
		vr.GenerateMs = millis(took)
		rep.Vaults = append(rep.Vaults, *vr)
		g.finish(*vr)
		if opts.OutDir == "" {
			// Free the disk before the next (bigger) vault.
			os.RemoveAll(dir)
		}
	}
	return rep, nil
}

// generated returns the generated vault of n notes in dir, reusing one a
// previous run left there when its marker matches.
func generated(ctx context.Context, opts Options, dir string, n int) (*GenStats, time.Duration, error) {
	if data, err := os.ReadFile(filepath.Join(dir, genMarker)); err == nil {
		var m marker
		if json.Unmarshal(data, &m) == nil && m.Version == genVersion && m.Notes == n && m.Seed == opts.Seed {
			opts.Logger.Info("reusing generated vault", "notes", n, "dir", dir)
			return &m.Stats, 0, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, 0, fmt.Errorf("bench: %w", err)
	}
	opts.Logger.Info("generating vault", "notes", n, "dir", dir)
	start := time.Now()
	st, err := Generate(ctx, dir, GenOptions{Notes: n, Seed: opts.Seed})
	took := time.Since(start)
	if err != nil {
		return nil, 0, err
	}
	data, _ := json.Marshal(marker{Version: genVersion, Notes: n, Seed: opts.Seed, Stats: st})
	if err := os.WriteFile(filepath.Join(dir, genMarker), data, 0o644); err != nil {
		return nil, 0, fmt.Errorf("bench: %w", err)
	}
	return &st, took, nil
}

// measureVault takes every figure of one vault. Failures of one part are
// written in Problems and the other parts still run; only a vault that
// cannot be searched at all is an error.
func measureVault(ctx context.Context, opts Options, g *guard, name, dir string, gen *GenStats) (*VaultReport, error) {
	log := opts.Logger.With("vault", name)
	vr := &VaultReport{Name: name, Path: dir, Generated: gen}
	vr.Bytes = noteBytes(dir)
	queries, err := SampleQueries(ctx, dir, opts.Lang, opts.Queries, opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}

	log.Info("measuring in process")
	// Each phase starts with this process's memory returned to the system,
	// so that the previous vault's garbage neither slows nor inflates it.
	debug.FreeOSMemory()
	g.publish(vr, "indexing in process")
	if err := measureInProcess(ctx, dir, opts.Lang, queries, vr); err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}

	if opts.Exe == "" {
		vr.StdioNote = "no vaultmcp executable given"
	} else {
		log.Info("measuring a vaultmcp process over stdio MCP")
		debug.FreeOSMemory() // the child gets the machine to itself
		g.publish(vr, "measuring over stdio MCP")
		st, problems, err := measureStdio(ctx, opts.Exe, dir, opts.Lang, queries)
		if err != nil {
			vr.Problems = append(vr.Problems, "stdio MCP: "+err.Error())
		} else {
			vr.Stdio = st
		}
		vr.Problems = append(vr.Problems, problems...)
	}

	if opts.Rg == "" {
		vr.RgNote = "rg not installed"
	} else {
		log.Info("measuring rg")
		g.publish(vr, "measuring rg")
		d, err := measureRg(ctx, opts.Rg, dir, queries)
		if err != nil {
			vr.Problems = append(vr.Problems, "rg: "+err.Error())
		} else {
			vr.Rg = &d
		}
	}

	if _, err := exec.LookPath("git"); err != nil {
		vr.Problems = append(vr.Problems, "git not installed: writes not measured")
		return vr, nil
	}
	log.Info("copying the vault into a git repository to measure writes")
	debug.FreeOSMemory()
	publish := func(phase string, w *Writes, problems []string) {
		snap := *vr
		if w != nil {
			wc := *w
			snap.Writes = &wc
		}
		snap.Problems = append(slices.Clone(vr.Problems), problems...)
		g.publish(&snap, phase)
	}
	w, problems, err := measureWrites(ctx, opts, dir, queries, log, publish, g.addTemp)
	vr.Problems = append(vr.Problems, problems...)
	if err != nil {
		vr.Problems = append(vr.Problems, "writes: "+err.Error())
	} else {
		vr.Writes = w
	}
	return vr, ctx.Err()
}

// noteBytes is the size of the notes under dir.
func noteBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".md") {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// openRead opens the vault read-only with the watcher on, as `vaultmcp
// serve --read-only` does.
func openRead(ctx context.Context, dir, lang string) (*vault.Service, error) {
	return vault.Open(ctx, vault.Options{Dir: dir, Lang: lang, Watch: true, ReadOnly: true})
}

func measureInProcess(ctx context.Context, dir, lang string, queries []string, vr *VaultReport) error {
	runtime.GC()
	start := time.Now()
	svc, err := openRead(ctx, dir, lang)
	if err != nil {
		return err
	}
	defer svc.Close()
	if err := svc.Ready(ctx); err != nil {
		return err
	}
	indexed := time.Since(start)
	if _, err := svc.Search(ctx, api.SearchRequest{Query: queries[0]}); err != nil {
		return fmt.Errorf("first search: %w", err)
	}
	cold := time.Since(start)
	// The heap below is what stays: once the work put off until the first
	// answer (trimming the lists, the notes' term lists) is done.
	if err := svc.Settled(ctx); err != nil {
		return err
	}
	st, err := svc.Stats(ctx)
	if err != nil {
		return err
	}
	vr.Notes, vr.Files, vr.Unindexed = st.Notes, st.Files, st.Unindexed
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	vr.InProcess = InProcess{
		ColdStartMs: millis(cold),
		IndexMs:     millis(indexed),
		NotesPerSec: float64(st.Notes) / indexed.Seconds(),
		HeapBytes:   ms.HeapAlloc,
	}
	times := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		t := time.Now()
		if _, err := svc.Search(ctx, api.SearchRequest{Query: q}); err != nil {
			return fmt.Errorf("search %q: %w", q, err)
		}
		times = append(times, time.Since(t))
	}
	vr.InProcess.Search = Summarize(times)
	return nil
}

// measureStdio starts `vaultmcp serve --read-only` on the vault and times,
// with the minimal client (stdioClient): the handshake, the first search
// (which waits for the index) and the queries. Then the go-sdk client takes
// the same connection over and times the queries again; its failure is a
// problem returned beside the figures, not an error.
func measureStdio(ctx context.Context, exe, dir, lang string, queries []string) (*Stdio, []string, error) {
	// A cache folder of its own: the first process finds no snapshot.
	cache, err := os.MkdirTemp("", "vaultmcp-bench-cache-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(cache)
	serve := func(cache string) *exec.Cmd {
		cmd := exec.Command(exe, "serve", "--read-only", "--vault", dir, "--lang", lang)
		cmd.Env = append(cleanEnv(), "VAULTMCP_LOG_LEVEL=error", "VAULTMCP_CACHE_DIR="+cache)
		return cmd
	}
	cmd := serve(cache)
	c, err := startStdio(ctx, cmd)
	if err != nil {
		return nil, nil, err
	}
	defer c.close()
	search := func(q string, progress bool, timeout time.Duration) (time.Duration, int, error) {
		frame, err := c.callFrame("vault_search", map[string]string{"query": q}, progress)
		if err != nil {
			return 0, 0, err
		}
		took, size, err := c.callTool(ctx, frame, timeout)
		if err != nil {
			return 0, 0, fmt.Errorf("vault_search %q: %w", q, err)
		}
		return took, size, nil
	}
	// The first search asks for progress, as the index may still be
	// building: its notifications are read and skipped.
	if _, _, err := search(queries[0], true, firstSearchTimeout); err != nil {
		return nil, nil, err
	}
	st := &Stdio{HandshakeMs: millis(c.handshake), FirstSearchMs: millis(time.Since(c.start))}
	// After its first build the server writes the index snapshot in the
	// background (about a second at 100k notes, when searches are slower):
	// the searches are timed once it is written, in the steady state.
	snapSize, snapAt, snapErr := waitSnapshot(ctx, cache, snapshotTimeout)
	times := make([]time.Duration, 0, len(queries))
	var answered int
	for _, q := range queries {
		took, size, err := search(q, false, searchTimeout)
		if err != nil {
			return nil, nil, err
		}
		times = append(times, took)
		answered += size
	}
	st.Search = Summarize(times)
	st.AnswerBytes = answered / len(queries)

	var problems []string
	sdk, err := measureGoSDK(ctx, c, queries)
	if err != nil {
		problems = append(problems, "stdio MCP via the go-sdk client: "+err.Error())
	} else {
		st.SearchGoSDK = &sdk
	}
	st.PeakRSSBytes = peakRSS(cmd.Process.Pid)
	c.close()
	if st.PeakRSSBytes == 0 {
		st.PeakRSSBytes = exitedMaxRSS(cmd.ProcessState)
	}
	// A first start again at once, with an empty cache folder of its own
	// (see Stdio.FirstSearchAgainMs).
	if again, err := os.MkdirTemp("", "vaultmcp-bench-cache-"); err != nil {
		problems = append(problems, "first start again: "+err.Error())
	} else {
		st2, err := measureStart(ctx, serve(again), queries[0])
		os.RemoveAll(again)
		if err != nil {
			problems = append(problems, "first start again: "+err.Error())
		} else {
			st.FirstSearchAgainMs = st2.FirstSearchMs
		}
	}
	if snapErr != nil {
		return st, append(problems, "index snapshot: "+snapErr.Error()), nil
	}
	warm, err := measureStart(ctx, serve(cache), queries[0])
	if err != nil {
		return st, append(problems, "warm start: "+err.Error()), nil
	}
	warm.SnapshotBytes, warm.SnapshotMs = snapSize, millis(snapAt.Sub(c.start))
	st.Warm = warm
	return st, problems, nil
}

// snapshotTimeout bounds the wait for the first process's index snapshot.
const snapshotTimeout = 5 * time.Minute

// waitSnapshot waits for the index snapshot file in cache and returns its
// size and when it was first seen.
func waitSnapshot(ctx context.Context, cache string, timeout time.Duration) (int64, time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		snaps, _ := filepath.Glob(filepath.Join(cache, "index-*.snap"))
		if len(snaps) == 1 {
			if fi, err := os.Stat(snaps[0]); err == nil {
				return fi.Size(), time.Now(), nil
			}
		}
		if time.Now().After(deadline) {
			return 0, time.Time{}, fmt.Errorf("none written within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return 0, time.Time{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// measureStart starts cmd (a server, with or without an index snapshot in
// its cache) and times its handshake and first search; it gives its peak
// RSS too.
func measureStart(ctx context.Context, cmd *exec.Cmd, query string) (*WarmStart, error) {
	c, err := startStdio(ctx, cmd)
	if err != nil {
		return nil, err
	}
	defer c.close()
	frame, err := c.callFrame("vault_search", map[string]string{"query": query}, true)
	if err != nil {
		return nil, err
	}
	if _, _, err := c.callTool(ctx, frame, firstSearchTimeout); err != nil {
		return nil, fmt.Errorf("vault_search %q: %w", query, err)
	}
	w := &WarmStart{HandshakeMs: millis(c.handshake), FirstSearchMs: millis(time.Since(c.start))}
	w.PeakRSSBytes = peakRSS(cmd.Process.Pid)
	c.close()
	if w.PeakRSSBytes == 0 {
		w.PeakRSSBytes = exitedMaxRSS(cmd.ProcessState)
	}
	return w, nil
}

// measureGoSDK times the queries through the go-sdk client on the
// connection of c, whose handshake is done: the client opens its session
// with server/discover (the SDK's default, protocol 2026-07-28), which a
// session begun with initialize still accepts. Closing the session closes
// the server's stdin.
func measureGoSDK(ctx context.Context, c *stdioClient, queries []string) (Dist, error) {
	r, w := c.sdkTransport()
	client := mcp.NewClient(&mcp.Implementation{Name: "vaultmcp-bench", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	session, err := client.Connect(cctx, &mcp.IOTransport{Reader: r, Writer: w}, nil)
	cancel()
	if err != nil {
		return Dist{}, fmt.Errorf("connect: %w%s", err, c.stderr.suffix())
	}
	defer session.Close()
	times := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		params := &mcp.CallToolParams{Name: "vault_search", Arguments: map[string]any{"query": q}}
		cctx, cancel := context.WithTimeout(ctx, searchTimeout)
		t := time.Now()
		res, err := session.CallTool(cctx, params)
		took := time.Since(t)
		cancel()
		if err != nil {
			return Dist{}, fmt.Errorf("vault_search %q: %w%s", q, err, c.stderr.suffix())
		}
		if res.IsError {
			var msg string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					msg += tc.Text
				}
			}
			return Dist{}, fmt.Errorf("vault_search %q: tool error: %s", q, msg)
		}
		times = append(times, took)
	}
	return Summarize(times), nil
}

// cleanEnv is the environment without any vault setting of the user's.
func cleanEnv() []string { return envvars.Clean(os.Environ()) }

// tailBuffer keeps the last bytes written to it (a child's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.b)); s != "" {
		return "; stderr: " + s
	}
	return ""
}

// measureRg times `rg -l -i -F -e w1 -e w2 DIR` for each query: what an
// agent without this server runs (files containing any of the words).
func measureRg(ctx context.Context, rg, dir string, queries []string) (Dist, error) {
	run := func(q string) error {
		args := []string{"-l", "-i", "-F"}
		for _, w := range strings.Fields(q) {
			args = append(args, "-e", w)
		}
		args = append(args, "--", dir)
		cmd := exec.CommandContext(ctx, rg, args...)
		cmd.Stdout = io.Discard
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return nil // no match
		}
		return err
	}
	// One run untimed, so every timed run sees the same (warm) file cache.
	if err := run(queries[0]); err != nil {
		return Dist{}, err
	}
	times := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		t := time.Now()
		if err := run(q); err != nil {
			return Dist{}, fmt.Errorf("%q: %w", q, err)
		}
		times = append(times, time.Since(t))
	}
	return Summarize(times), nil
}

// measureWrites copies the vault into a temporary git repository and
// measures, with the watcher on: freshness after external edits, write +
// commit, and the move of the most linked note.
func measureWrites(ctx context.Context, opts Options, src string, queries []string, log *slog.Logger, publish func(phase string, w *Writes, problems []string), addTemp func(string)) (*Writes, []string, error) {
	publish("copying the vault into a git repository", nil, nil)
	tmp, err := os.MkdirTemp("", "vaultmcp-bench-git-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	addTemp(tmp)
	dir := filepath.Join(tmp, "vault")
	if err := copyTree(ctx, src, dir); err != nil {
		return nil, nil, fmt.Errorf("copying the vault: %w", err)
	}
	if err := gitInit(ctx, dir); err != nil {
		return nil, nil, err
	}
	log.Info("indexing the git copy")
	publish("indexing the git copy", nil, nil)
	svc, err := vault.Open(ctx, vault.Options{Dir: dir, Lang: opts.Lang, Watch: true})
	if err != nil {
		return nil, nil, err
	}
	defer svc.Close()
	if err := svc.Ready(ctx); err != nil {
		return nil, nil, err
	}
	folder, err := writeFolder(ctx, svc)
	if err != nil {
		return nil, nil, err
	}
	var problems []string
	w := &Writes{}
	log.Info("measuring freshness after external edits", "folder", folder)
	publish("measuring freshness", w, problems)

	// Freshness: a note with a word found nowhere else, written behind the
	// service's back; poll until a search finds it.
	var lags []time.Duration
	for i := 0; i < opts.FreshTrials; i++ {
		word := freshWord(opts.Seed, i)
		rel := path.Join(folder, fmt.Sprintf("bench-fresh-%d.md", i))
		text := fmt.Sprintf("# Fresh note %d\n\nThis note was written by vaultmcp bench and carries the word %s.\n", i, word)
		start := time.Now()
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(text), 0o644); err != nil {
			return nil, problems, err
		}
		lag, err := pollUntilFound(ctx, svc, word, rel, start)
		if err != nil {
			problems = append(problems, fmt.Sprintf("freshness trial %d: %v", i, err))
			continue
		}
		lags = append(lags, lag)
	}
	w.Freshness = Summarize(lags)

	log.Info("measuring write + commit", "folder", folder)
	publish("measuring write + commit", w, problems)
	// Write + commit: new notes through the service (gatekeeper, lock,
	// atomic write, index refresh, git commit).
	var writes []time.Duration
	for i := 0; i < opts.Writes; i++ {
		rel := path.Join(folder, fmt.Sprintf("bench-write-%d.md", i))
		content := fmt.Sprintf("# Bench write %d\n\n%s\n\n## Notes\n\nWritten by vaultmcp bench: %s.\n", i, strings.Repeat(queries[i%len(queries)]+". ", 40), queries[(i+1)%len(queries)])
		start := time.Now()
		res, err := svc.WriteNote(ctx, api.WriteRequest{Path: rel, Content: content})
		if err != nil {
			problems = append(problems, fmt.Sprintf("write %s: %v", rel, err))
			continue
		}
		writes = append(writes, time.Since(start))
		if !res.Committed {
			problems = append(problems, fmt.Sprintf("write %s was not committed: %s", rel, strings.Join(res.Warnings, "; ")))
		}
	}
	w.WriteCommit = Summarize(writes)

	log.Info("measuring the move of the most linked note")
	mv, err := moveMostLinked(ctx, svc, log, func(m *Move) {
		w.Move = *m
		publish(fmt.Sprintf("moving %s (%d backlinks)", m.From, m.Backlinks), w, problems)
	})
	if err != nil {
		problems = append(problems, "move: "+err.Error())
	} else {
		w.Move = *mv
		if !mv.Committed {
			problems = append(problems, "the move was not committed: "+strings.Join(mv.Warnings, "; "))
		}
	}
	return w, problems, nil
}

// writeFolder is the writable folder holding the most notes: where the
// bench's new notes go.
func writeFolder(ctx context.Context, svc *vault.Service) (string, error) {
	list, err := svc.List(ctx, api.ListRequest{})
	if err != nil {
		return "", err
	}
	count := map[string]int{}
	for _, n := range list.Notes {
		if vaultfs.CheckPolicy(n.Path, vaultfs.Write) != nil { // 99-archive included
			continue
		}
		count[path.Dir(n.Path)]++
	}
	best, bestN := ".", -1
	for d, c := range count {
		if c > bestN || c == bestN && d < best {
			best, bestN = d, c
		}
	}
	if best == "." {
		return "", nil
	}
	return best, nil
}

// freshWord is a word no vault contains, far (in edit distance) from the
// words of the other trials: "vmfresh" and ten letters from a hash.
func freshWord(seed uint64, i int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	x := seed<<32 ^ uint64(i)
	b := []byte("vmfresh")
	for k := 0; k < 10; k++ {
		// splitmix64 step
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		b = append(b, letters[z%uint64(len(letters))])
	}
	return string(b)
}

// pollUntilFound searches for word every 2 ms until rel is among the hits.
func pollUntilFound(ctx context.Context, svc *vault.Service, word, rel string, start time.Time) (time.Duration, error) {
	deadline := start.Add(10 * time.Second)
	for {
		res, err := svc.Search(ctx, api.SearchRequest{Query: word, Limit: 1})
		if err != nil {
			return 0, err
		}
		if len(res.Results) > 0 && res.Results[0].Path == rel {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s was not searchable after 10 s", rel)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// moveMostLinked renames the note with the most backlinks (in its folder,
// "-moved" added to its name) and times the move with its link rewrites.
func moveMostLinked(ctx context.Context, svc *vault.Service, log *slog.Logger, starting func(*Move)) (*Move, error) {
	gstart := time.Now()
	g, err := svc.Graph(ctx, api.GraphRequest{MaxNodes: api.MaxGraphNodes, IncludeRaw: true})
	if err != nil {
		return nil, err
	}
	nodes := g.Nodes
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].InDegree != nodes[j].InDegree {
			return nodes[i].InDegree > nodes[j].InDegree
		}
		return nodes[i].Path < nodes[j].Path
	})
	best, bestN := "", -1
	for _, n := range nodes[:min(len(nodes), 5)] {
		if n.Broken {
			continue
		}
		bl, err := svc.Backlinks(ctx, api.BacklinksRequest{Path: n.Path})
		if err != nil {
			continue
		}
		if len(bl.Backlinks) > bestN {
			best, bestN = n.Path, len(bl.Backlinks)
		}
	}
	if best == "" {
		return nil, fmt.Errorf("no linked note to move")
	}
	ext := path.Ext(best)
	to := strings.TrimSuffix(best, ext) + "-moved" + ext
	log.Info("moving the most linked note", "note", best, "backlinks", bestN, "graph_ms", time.Since(gstart).Milliseconds())
	starting(&Move{From: best, To: to, Backlinks: bestN})
	start := time.Now()
	res, err := svc.Move(ctx, api.MoveRequest{From: best, To: to})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", best, err)
	}
	return &Move{
		From: best, To: to, Backlinks: bestN,
		LinksRewritten: res.LinksRewritten, NotesRewritten: res.NotesRewritten,
		Ms: millis(time.Since(start)), Committed: res.Committed, Warnings: res.Warnings,
	}, nil
}

// machine describes this computer.
func machine(ctx context.Context, rg string) Machine {
	m := Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						m.MemoryBytes = kb * 1024
					}
				}
			}
		}
	}
	if rg != "" {
		if out, err := exec.CommandContext(ctx, rg, "--version").Output(); err == nil {
			m.Ripgrep, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
		}
	}
	return m
}

func humanCount(n int) string {
	switch {
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	default:
		return strconv.Itoa(n)
	}
}
