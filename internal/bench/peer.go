package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A peer is another local markdown search server measured on the same
// vault and queries as vaultmcp, for a side-by-side row. The one supported
// is qmd (npm @tobilu/qmd): its index build (`qmd collection add`, the
// full-text index; no embeddings, which need models this run does not
// download) and its keyword search over its own stdio MCP server (tool
// "query" with one "lex" sub-query, reranking off: BM25 only, the search
// it runs without a language model). Its index lives in a temporary HOME
// and cache, removed at the end, so a user's own qmd index is not touched.

// PeerReport is a peer's figures on one vault.
type PeerReport struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// IndexMs is the index build, process start to exit.
	IndexMs float64 `json:"index_ms"`
	// Search is over the peer's stdio MCP server, as vaultmcp's stdio row.
	Search      Dist   `json:"search"`
	AnswerBytes int    `json:"answer_bytes"`
	Errors      int    `json:"errors"`
	Note        string `json:"note,omitempty"`
}

// PeerLimit is the number of results asked of a peer (vaultmcp's default).
const PeerLimit = 6

// RunPeerQMD measures qmd (the executable qmd) on vault with queries.
func RunPeerQMD(ctx context.Context, qmd, vault string, queries []string) (*PeerReport, error) {
	rep := &PeerReport{Name: "qmd"}
	home, err := os.MkdirTemp("", "vaultmcp-peer-qmd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "NO_COLOR=1")
	if out, err := exec.CommandContext(ctx, qmd, "--version").Output(); err == nil {
		rep.Version = strings.TrimSpace(string(out))
	}
	abs, err := filepath.Abs(vault)
	if err != nil {
		return nil, err
	}
	add := exec.CommandContext(ctx, qmd, "collection", "add", abs, "--name", "bench")
	add.Env = env
	start := time.Now()
	if out, err := add.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("qmd collection add: %w: %s", err, lastLines(string(out), 3))
	}
	rep.IndexMs = millis(time.Since(start))
	mcp := exec.CommandContext(ctx, qmd, "mcp")
	mcp.Env = env
	c, err := startStdio(ctx, mcp)
	if err != nil {
		return nil, fmt.Errorf("qmd mcp: %w", err)
	}
	defer c.close()
	var lat []time.Duration
	total := 0
	for _, q := range queries {
		frame, err := c.callFrame("query", map[string]any{
			"searches": []map[string]string{{"type": "lex", "query": q}},
			"limit":    PeerLimit,
			"rerank":   false,
		}, false)
		if err != nil {
			return nil, err
		}
		took, size, err := c.callTool(ctx, frame, searchTimeout)
		if err != nil {
			if ctx.Err() != nil || c.timedOut.Load() {
				return nil, fmt.Errorf("qmd search %q: %w", q, err)
			}
			rep.Errors++
			if rep.Note == "" {
				rep.Note = fmt.Sprintf("first error: %v", err)
			}
			continue
		}
		lat = append(lat, took)
		total += size
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	rep.Search = Summarize(lat)
	if len(lat) > 0 {
		rep.AnswerBytes = total / len(lat)
	}
	return rep, nil
}

// lastLines is the last n lines of s, for an error message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// writePeers prints, for each vault measured with a peer, vaultmcp and the
// peer side by side: the index build (vaultmcp: process start to the first
// search answered, no snapshot; the peer: its index command) and search
// over stdio MCP.
func writePeers(w io.Writer, r *Report) error {
	for _, v := range r.Vaults {
		p := v.Peer
		if p == nil {
			continue
		}
		name := p.Name
		if p.Version != "" {
			name = p.Version
		}
		rows := [][]string{{"side by side on " + v.Name, "vaultmcp", name}}
		ours := func(f func(s *Stdio) string) string {
			if v.Stdio == nil {
				return "-"
			}
			return f(v.Stdio)
		}
		rows = append(rows,
			[]string{"  index built (vaultmcp: start to first answer; " + p.Name + ": collection add)", ours(func(s *Stdio) string { return fmtMs(s.FirstSearchMs) }), fmtMs(p.IndexMs)},
			[]string{"  search p50 / p99 over stdio MCP", ours(func(s *Stdio) string { return fmtPair(s.Search) }), fmtPair(p.Search)},
			[]string{"  mean answer", ours(func(s *Stdio) string { return fmtKB(s.AnswerBytes) }), fmtKB(p.AnswerBytes)},
		)
		fmt.Fprintln(w)
		if err := writeRows(w, rows); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: keyword search (one lex sub-query, no rerank, limit %d); no embeddings.", p.Name, PeerLimit)
		if p.Errors > 0 {
			fmt.Fprintf(w, " %d searches failed (%s).", p.Errors, p.Note)
		}
		fmt.Fprintln(w)
	}
	return nil
}

func fmtKB(n int) string { return fmt.Sprintf("%.1f kB", float64(n)/1000) }
