package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/bench"
)

// runBench measures speed and memory on the given vault and on generated
// vaults (DESIGN.md section 9) and prints the figures.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "team" {
		return runBenchTeam(ctx, args[1:], stdout, stderr)
	}
	var c Config
	fs := newFlagSet("bench", stderr)
	c.common(fs)
	sizes := fs.String("sizes", "1000,10000,100000", "note counts of the generated vaults, comma-separated (empty for none)")
	queries := fs.Int("queries", 200, "search queries per vault")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	out := fs.String("out", "", "keep the generated vaults in DIR (reused by the next run) and write DIR/report.json")
	seed := fs.Uint64("seed", 1, "seed of the generated vaults and of the queries")
	peer := fs.String("peer", "", "also measure this other server on --vault with the same queries, side by side: qmd (npm @tobilu/qmd, needs Node 22)")
	qmdExe := fs.String("qmd", "qmd", "with --peer qmd: the qmd executable")
	maxMem := fs.Int64("max-memory-mb", 0, "stop, showing the figures so far, when this process passes this much resident memory (default half of the machine's; -1 for no limit)")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return &exitError{2, err}
	}
	if len(pos) > 0 {
		return &exitError{2, fmt.Errorf("bench: unexpected argument %q", pos[0])}
	}
	opts := bench.Options{Queries: *queries, Seed: *seed, OutDir: *out, MemoryLimit: *maxMem << 20}
	if opts.Sizes, err = parseSizes(*sizes); err != nil {
		return &exitError{2, err}
	}
	if *queries < 1 {
		return &exitError{2, fmt.Errorf("--queries: must be at least 1")}
	}
	// The vault is optional here; the rest of the config is checked as usual.
	checked := c
	if checked.Vault == "" {
		checked.Vault = "."
	}
	if err := checked.check(); err != nil {
		return err
	}
	opts.Vault, opts.Lang = c.Vault, checked.Lang
	if opts.Vault == "" && len(opts.Sizes) == 0 {
		return &exitError{2, fmt.Errorf("bench: nothing to measure: give --vault DIR or --sizes")}
	}
	var qmdPath string
	switch *peer {
	case "":
	case "qmd":
		if opts.Vault == "" {
			return &exitError{2, fmt.Errorf("--peer: needs --vault (the peer is measured on that vault)")}
		}
		if qmdPath, err = exec.LookPath(*qmdExe); err != nil {
			return &exitError{2, fmt.Errorf("--qmd: %q not found (npm install @tobilu/qmd@2.8.3; it needs Node 22): %w", *qmdExe, err)}
		}
	default:
		return &exitError{2, fmt.Errorf("--peer: %q is not a peer this bench knows (qmd)", *peer)}
	}
	if exe, err := os.Executable(); err == nil {
		opts.Exe = exe
	}
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	opts.Logger = logger(stderr, checked.LogLevel)
	opts.OnMemoryLimit = func(partial *bench.Report, err error) {
		// A vault operation ran away with memory and cannot be stopped:
		// show what was measured, say why, and end the process.
		if *asJSON {
			_ = partial.WriteJSON(stdout)
		} else {
			_ = partial.WriteTable(stdout)
		}
		fmt.Fprintln(stderr, "vaultmcp: "+err.Error())
		os.Exit(1)
	}
	rep, err := bench.Run(ctx, opts)
	if err != nil {
		return err
	}
	if qmdPath != "" && len(rep.Vaults) > 0 && rep.Vaults[0].Generated == nil {
		// The same queries as vaultmcp's on that vault.
		opts.Logger.Info("measuring the peer", "peer", "qmd", "vault", rep.Vaults[0].Name)
		lang := opts.Lang
		if lang == "" {
			lang = "en" // as bench.Run
		}
		queries, err := bench.SampleQueries(ctx, opts.Vault, lang, opts.Queries, opts.Seed)
		if err != nil {
			return err
		}
		p, err := bench.RunPeerQMD(ctx, qmdPath, opts.Vault, queries)
		if err != nil {
			rep.Vaults[0].Problems = append(rep.Vaults[0].Problems, "peer qmd: "+err.Error())
		} else {
			rep.Vaults[0].Peer = p
		}
	}
	if opts.OutDir != "" {
		f, err := os.Create(filepath.Join(opts.OutDir, "report.json"))
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		werr := rep.WriteJSON(f)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("--out: %w", werr)
		}
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// parseSizes reads "1000,10000,100000" (k suffix allowed: "1k,10k").
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		if p == "" {
			continue
		}
		mult := 1
		if strings.HasSuffix(p, "k") {
			p, mult = strings.TrimSuffix(p, "k"), 1000
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n*mult > 10_000_000 {
			return nil, fmt.Errorf("--sizes: %q is not a note count (1 to 10,000,000)", p)
		}
		out = append(out, n*mult)
	}
	return out, nil
}
