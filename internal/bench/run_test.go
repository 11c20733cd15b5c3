package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/gittest"
)

// built is the vaultmcp command built once for the tests that run it.
var built struct {
	once sync.Once
	dir  string
	exe  string
	err  error
}

func TestMain(m *testing.M) {
	// git reads none of the machine's configuration.
	cleanup, err := gittest.Isolate()
	if err != nil {
		panic(err)
	}
	code := m.Run()
	cleanup()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildVaultmcp builds the vaultmcp command for the stdio measurements
// (once per test run).
func buildVaultmcp(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "vaultmcp-bench-test-")
		if built.err != nil {
			return
		}
		built.exe = filepath.Join(built.dir, "vaultmcp")
		if runtime.GOOS == "windows" {
			built.exe += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", built.exe, "../../cmd/vaultmcp")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatalf("building vaultmcp: %v", built.err)
	}
	return built.exe
}

// TestRunEndToEnd runs the whole bench on a small given vault and a
// generated one of 200 notes, and checks that every figure was taken (never
// how fast it is).
func TestRunEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if testing.Short() {
		t.Skip("builds vaultmcp")
	}
	exe := buildVaultmcp(t)
	given, _ := generate(t, 120, 11)
	before := treeHash(t, given)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := Options{Vault: given, Sizes: []int{200}, Queries: 20, Exe: exe, OutDir: out, FreshTrials: 3, Writes: 3}
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if treeHash(t, given) != before {
		t.Error("the bench changed the vault it was given (writes belong on a copy)")
	}
	if len(rep.Vaults) != 2 || rep.Queries != 20 || rep.Machine.CPUs < 1 || rep.Machine.Go == "" {
		t.Fatalf("report: %+v", rep)
	}
	_, rgErr := exec.LookPath("rg")
	for _, v := range rep.Vaults {
		if len(v.Problems) > 0 {
			t.Errorf("%s: problems: %q", v.Name, v.Problems)
		}
		positive := map[string]float64{
			"notes":                 float64(v.Notes),
			"files":                 float64(v.Files),
			"bytes":                 float64(v.Bytes),
			"in-process cold start": v.InProcess.ColdStartMs,
			"in-process index":      v.InProcess.IndexMs,
			"notes/s":               v.InProcess.NotesPerSec,
			"heap":                  float64(v.InProcess.HeapBytes),
			"in-process search p50": v.InProcess.Search.P50,
			"in-process search p99": v.InProcess.Search.P99,
		}
		if v.Stdio == nil {
			t.Errorf("%s: no stdio figures (%s)", v.Name, v.StdioNote)
		} else {
			positive["handshake"] = v.Stdio.HandshakeMs
			positive["stdio first search"] = v.Stdio.FirstSearchMs
			positive["stdio first search again"] = v.Stdio.FirstSearchAgainMs
			positive["stdio search p50"] = v.Stdio.Search.P50
			positive["stdio search p99"] = v.Stdio.Search.P99
			positive["stdio answer bytes"] = float64(v.Stdio.AnswerBytes)
			if v.Stdio.SearchGoSDK == nil {
				t.Errorf("%s: no go-sdk client figures", v.Name)
			} else {
				positive["go-sdk search p50"] = v.Stdio.SearchGoSDK.P50
				positive["go-sdk search p99"] = v.Stdio.SearchGoSDK.P99
			}
			if v.Stdio.Search.N != 20 {
				t.Errorf("%s: %d stdio searches timed, want 20", v.Name, v.Stdio.Search.N)
			}
			positive["peak RSS"] = float64(v.Stdio.PeakRSSBytes)
			if w := v.Stdio.Warm; w == nil {
				t.Errorf("%s: no warm start figures (%v)", v.Name, v.Problems)
			} else {
				positive["snapshot bytes"] = float64(w.SnapshotBytes)
				positive["snapshot written after"] = w.SnapshotMs
				positive["warm handshake"] = w.HandshakeMs
				positive["warm first search"] = w.FirstSearchMs
				positive["warm peak RSS"] = float64(w.PeakRSSBytes)
			}
		}
		if rgErr != nil {
			if v.Rg != nil || v.RgNote != "rg not installed" {
				t.Errorf("%s: rg absent but rg figures %+v, note %q", v.Name, v.Rg, v.RgNote)
			}
		} else if v.Rg == nil {
			t.Errorf("%s: no rg figures (%s)", v.Name, v.RgNote)
		} else {
			positive["rg p50"] = v.Rg.P50
			positive["rg p99"] = v.Rg.P99
		}
		if v.Writes == nil {
			t.Errorf("%s: no write figures", v.Name)
		} else {
			w := v.Writes
			positive["freshness p50"] = w.Freshness.P50
			positive["write+commit p50"] = w.WriteCommit.P50
			positive["move"] = w.Move.Ms
			positive["move backlinks"] = float64(w.Move.Backlinks)
			positive["links rewritten"] = float64(w.Move.LinksRewritten)
			positive["notes rewritten"] = float64(w.Move.NotesRewritten)
			if w.Freshness.N != 3 || w.WriteCommit.N != 3 || !w.Move.Committed {
				t.Errorf("%s: writes %+v", v.Name, w)
			}
		}
		if v.Generated != nil {
			positive["links generated"] = float64(v.Generated.Links)
		}
		for name, x := range positive {
			if !(x > 0) {
				t.Errorf("%s: %s = %v, want > 0", v.Name, name, x)
			}
		}
		if v.InProcess.Search.N != 20 {
			t.Errorf("%s: %d searches timed, want 20", v.Name, v.InProcess.Search.N)
		}
	}
	if rep.Vaults[1].Generated == nil || rep.Vaults[1].Notes != 200 || rep.Vaults[1].GenerateMs <= 0 {
		t.Errorf("generated vault: %+v", rep.Vaults[1])
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{rep.Vaults[0].Name, "generated 200", "cold start to first search", "exec to first search answered", "minimal client (1)", "via go-sdk client (2)", "(2) go-sdk client:", "from the snapshot: exec to first search (3)", "(3) a second process", "peak RSS", "external edit to searchable p50", "write + commit p50", "move most-linked note", "rg -l -i -F"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Vaults) != 2 || back.Vaults[0].InProcess.Search.P50 != rep.Vaults[0].InProcess.Search.P50 {
		t.Errorf("JSON does not round-trip: %v", err)
	}

	// With --out the generated vault is kept and reused by the next run.
	kept := filepath.Join(out, "generated-200-seed1")
	if _, err := os.Stat(filepath.Join(kept, genMarker)); err != nil {
		t.Fatalf("generated vault not kept: %v", err)
	}
	hash := treeHash(t, kept)
	gen, took, err := generated(ctx, Options{Seed: 1, Logger: opts.Logger}.withDefaults(), kept, 200)
	if err != nil || took != 0 || gen.Notes != 200 || treeHash(t, kept) != hash {
		t.Errorf("kept vault not reused: %v, took %v, %+v", err, took, gen)
	}
}
