package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// These benchmarks are for profiling (go test -bench . -cpuprofile ...):
// they run on $VAULTMCP_CORPUS (a vault folder) or on a generated vault of
// $VAULTMCP_BENCH_NOTES notes, and are skipped when neither is set.
func profileVault(b *testing.B) string {
	if dir := os.Getenv("VAULTMCP_CORPUS"); dir != "" {
		return dir
	}
	n, _ := strconv.Atoi(os.Getenv("VAULTMCP_BENCH_NOTES"))
	if n <= 0 {
		b.Skip("set VAULTMCP_CORPUS=DIR or VAULTMCP_BENCH_NOTES=N")
	}
	dir := filepath.Join(b.TempDir(), "vault")
	if _, err := Generate(context.Background(), dir, GenOptions{Notes: n, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	return dir
}

func openReady(b *testing.B, dir string) *vault.Service {
	svc, err := openRead(context.Background(), dir, "en")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	if err := svc.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	return svc
}

func profileQueries(b *testing.B, dir string) []string {
	q, err := SampleQueries(context.Background(), dir, "en", 200, 1)
	if err != nil {
		b.Fatal(err)
	}
	return q
}

// BenchmarkColdOpen: vault.Open to Ready, the in-process cold start.
func BenchmarkColdOpen(b *testing.B) {
	dir := profileVault(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		svc, err := openRead(context.Background(), dir, "en")
		if err != nil {
			b.Fatal(err)
		}
		if err := svc.Ready(context.Background()); err != nil {
			b.Fatal(err)
		}
		if i == b.N-1 {
			b.StopTimer()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
			b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
		}
		svc.Close()
	}
}

// BenchmarkRefreshNote: re-indexing one note after an edit (what every
// write and every watcher event does) on a warm index, for a note of median
// size and for the longest one. Use -memprofile to see what one edit
// allocates.
func BenchmarkRefreshNote(b *testing.B) {
	dir := profileVault(b)
	svc := openReady(b, dir)
	type file struct {
		rel  string
		size int64
	}
	var files []file
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && filepath.Ext(p) == ".md" {
			if fi, err := d.Info(); err == nil {
				rel, _ := filepath.Rel(dir, p)
				files = append(files, file{filepath.ToSlash(rel), fi.Size()})
			}
		}
		return nil
	})
	if len(files) == 0 {
		b.Skip("no note")
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(a.size, b.size) })
	for _, tc := range []struct {
		name string
		f    file
	}{{"median", files[len(files)/2]}, {"longest", files[len(files)-1]}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportMetric(float64(tc.f.size), "note-bytes")
			for i := 0; i < b.N; i++ {
				svc.Refresh(tc.f.rel)
			}
		})
	}
}

// BenchmarkSearchInProcess: Service.Search over the sampled queries.
func BenchmarkSearchInProcess(b *testing.B) {
	dir := profileVault(b)
	svc := openReady(b, dir)
	qs := profileQueries(b, dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := svc.Search(context.Background(), api.SearchRequest{Query: qs[i%len(qs)]}); err != nil {
			b.Fatal(err)
		}
	}
}

// pipeServer runs the MCP server of the profile vault over OS pipes until
// ctx ends and returns the queries and the client's ends of the pipes.
func pipeServer(b *testing.B, ctx context.Context) ([]string, *os.File, *os.File) {
	dir := profileVault(b)
	svc := openReady(b, dir)
	qs := profileQueries(b, dir)
	cr, sw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	sr, cw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	server := mcpserver.New(svc, mcpserver.Options{ReadOnly: true})
	go server.Run(ctx, &jsonrpcio.Transport{Reader: sr, Writer: sw})
	return qs, cr, cw
}

// BenchmarkSearchMCPPipe: vault_search through the MCP server and the go-sdk
// client over OS pipes, as over stdio but in one process (so one profile
// shows both sides, the client's decoding of the answer included; compare
// BenchmarkSearchMCPRaw). answer-bytes is the JSON size of an answer.
func BenchmarkSearchMCPPipe(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	qs, cr, cw := pipeServer(b, ctx)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer session.Close()
	var answered int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "vault_search", Arguments: map[string]any{"query": qs[i%len(qs)]}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		if i < len(qs) {
			data, _ := json.Marshal(res)
			answered += len(data)
		}
	}
	b.ReportMetric(float64(answered)/float64(min(b.N, len(qs))), "answer-bytes")
}

// BenchmarkSearchMCPRaw: vault_search through the MCP server over OS pipes
// with the bench's minimal client (stdioClient), which reads the answer
// frame and decodes only its envelope: the profile shows what the server
// costs per call (compare BenchmarkSearchMCPPipe for the go-sdk client's
// share). answer-bytes is the size of an answer frame.
func BenchmarkSearchMCPRaw(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	qs, cr, cw := pipeServer(b, ctx)
	c := newPipeClient(cw, cr)
	defer c.close()
	if err := c.initialize(ctx); err != nil {
		b.Fatal(err)
	}
	searchFrames(ctx, b, c, qs)
}

// BenchmarkMoveMostLinked: the move of the note with the most backlinks
// (with every link rewrite, re-index and the commit when the vault is a git
// repository), each time on a fresh copy of the vault. Profile with
// -cpuprofile and focus on vault.(*Service).Move.
func BenchmarkMoveMostLinked(b *testing.B) {
	src := profileVault(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "vault")
		if err := copyTree(context.Background(), src, dir); err != nil {
			b.Fatal(err)
		}
		svc, err := vault.Open(context.Background(), vault.Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if err := svc.Ready(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		mv, err := moveMostLinked(context.Background(), svc, slog.New(slog.DiscardHandler), func(*Move) {})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(mv.LinksRewritten), "links")
		svc.Close()
	}
}

// cannedBackend answers each search with the result the vault gave for
// the same request once before, so that a benchmark through it times the
// MCP path alone (arguments, rendering, encoding, the pipes).
type cannedBackend struct {
	api.Backend
	results map[string]*api.SearchResult
}

func (c *cannedBackend) Search(_ context.Context, req api.SearchRequest) (*api.SearchResult, error) {
	return c.results[req.Query], nil
}

// BenchmarkSearchMCPWire: BenchmarkSearchMCPRaw with every answer of the
// vault computed beforehand: what remains is the cost of the MCP path
// between a search result and a client having read it (compare
// BenchmarkSearchInProcess for the search itself).
func BenchmarkSearchMCPWire(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := profileVault(b)
	svc := openReady(b, dir)
	qs := profileQueries(b, dir)
	canned := &cannedBackend{Backend: svc, results: map[string]*api.SearchResult{}}
	for _, q := range qs {
		res, err := svc.Search(ctx, api.SearchRequest{Query: q})
		if err != nil {
			b.Fatal(err)
		}
		canned.results[q] = res
	}
	cr, sw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	sr, cw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	server := mcpserver.New(canned, mcpserver.Options{ReadOnly: true})
	go server.Run(ctx, &jsonrpcio.Transport{Reader: sr, Writer: sw})
	c := newPipeClient(cw, cr)
	defer c.close()
	if err := c.initialize(ctx); err != nil {
		b.Fatal(err)
	}
	searchFrames(ctx, b, c, qs)
}

// searchFrames times vault_search of each query in turn through c, the
// request frames made beforehand (an id each, reused once answered), and
// reports the mean answer size.
func searchFrames(ctx context.Context, b *testing.B, c *stdioClient, qs []string) {
	frames := make([][]byte, len(qs))
	ids := make([]int64, len(qs))
	for i, q := range qs {
		frame, err := c.callFrame("vault_search", map[string]string{"query": q}, false)
		if err != nil {
			b.Fatal(err)
		}
		frames[i], ids[i] = frame, c.nextID
	}
	var answered int
	cpu0 := processCPU()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(qs)
		answer, _, err := c.roundTrip(ctx, frames[k], ids[k], searchTimeout)
		if err != nil {
			b.Fatal(err)
		}
		if i < len(qs) {
			answered += len(answer)
		}
	}
	b.ReportMetric(float64(answered)/float64(min(b.N, len(qs))), "answer-bytes")
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
