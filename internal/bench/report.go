package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for a person: one column per vault, one row
// per figure, then what could not be measured.
func (r *Report) WriteTable(w io.Writer) error {
	m := r.Machine
	fmt.Fprintf(w, "vaultmcp bench — %s/%s, %d CPUs", m.OS, m.Arch, m.CPUs)
	if m.CPU != "" {
		fmt.Fprintf(w, " (%s)", m.CPU)
	}
	if m.MemoryBytes > 0 {
		fmt.Fprintf(w, ", %s RAM", fmtBytes(m.MemoryBytes))
	}
	fmt.Fprintf(w, ", %s", m.Go)
	if m.Ripgrep != "" {
		fmt.Fprintf(w, ", %s", m.Ripgrep)
	}
	fmt.Fprintf(w, "\n%d queries per vault (1-3 words from the vault's own notes, 1 in 10 misspelled); OS file cache warm.\n\n", r.Queries)
	if len(r.Vaults) == 0 {
		_, err := fmt.Fprintln(w, "No vault measured.")
		return err
	}

	head := []string{""}
	for _, v := range r.Vaults {
		head = append(head, v.Name)
	}
	rows := [][]string{head}
	section := func(title string) { rows = append(rows, []string{title}) }
	row := func(label string, cell func(v *VaultReport) string) {
		out := []string{"  " + label}
		for i := range r.Vaults {
			out = append(out, cell(&r.Vaults[i]))
		}
		rows = append(rows, out)
	}

	section("vault")
	row("notes indexed (files)", func(v *VaultReport) string {
		s := fmtCount(v.Notes) + " (" + fmtCount(v.Files) + ")"
		if v.Unindexed > 0 {
			s += ", " + fmtCount(v.Unindexed) + " unindexed"
		}
		return s
	})
	row("notes on disk", func(v *VaultReport) string { return fmtBytes(v.Bytes) })
	row("links (generated)", func(v *VaultReport) string {
		if v.Generated == nil {
			return "-"
		}
		return fmtCount(v.Generated.Links)
	})
	row("generated in", func(v *VaultReport) string {
		switch {
		case v.Generated == nil:
			return "-"
		case v.GenerateMs == 0:
			return "reused (--out)"
		}
		return fmtMs(v.GenerateMs)
	})

	section("in process (vault.Service)")
	row("cold start to first search", func(v *VaultReport) string { return fmtMs(v.InProcess.ColdStartMs) })
	row("index build", func(v *VaultReport) string { return fmtMs(v.InProcess.IndexMs) })
	row("notes/s indexed", func(v *VaultReport) string { return fmtCount(int(v.InProcess.NotesPerSec)) + "/s" })
	row("Go heap after indexing", func(v *VaultReport) string { return fmtBytes(int64(v.InProcess.HeapBytes)) })
	row("search p50 / p99", func(v *VaultReport) string { return fmtPair(v.InProcess.Search) })

	section("vaultmcp process over stdio MCP")
	stdio := func(f func(s *Stdio) string) func(v *VaultReport) string {
		return func(v *VaultReport) string {
			if v.Stdio == nil {
				if v.StdioNote != "" {
					return v.StdioNote
				}
				return "failed"
			}
			return f(v.Stdio)
		}
	}
	row("exec to handshake answered", stdio(func(s *Stdio) string { return fmtMs(s.HandshakeMs) }))
	row("exec to first search answered", stdio(func(s *Stdio) string { return fmtMs(s.FirstSearchMs) }))
	row("the same again at once (4)", stdio(func(s *Stdio) string {
		if s.FirstSearchAgainMs == 0 {
			return "failed"
		}
		return fmtMs(s.FirstSearchAgainMs)
	}))
	row("search p50 / p99, minimal client (1)", stdio(func(s *Stdio) string { return fmtPair(s.Search) }))
	row("search p50 / p99 via go-sdk client (2)", stdio(func(s *Stdio) string {
		if s.SearchGoSDK == nil {
			return "failed"
		}
		return fmtPair(*s.SearchGoSDK)
	}))
	row("search answer size (mean)", stdio(func(s *Stdio) string { return fmtSize(s.AnswerBytes) }))
	row("peak RSS", stdio(func(s *Stdio) string { return fmtBytes(s.PeakRSSBytes) }))
	warm := func(f func(w *WarmStart) string) func(v *VaultReport) string {
		return stdio(func(s *Stdio) string {
			if s.Warm == nil {
				return "failed"
			}
			return f(s.Warm)
		})
	}
	row("index snapshot written (size, after)", warm(func(w *WarmStart) string {
		return fmtBytes(w.SnapshotBytes) + ", " + fmtMs(w.SnapshotMs)
	}))
	row("from the snapshot: exec to first search (3)", warm(func(w *WarmStart) string { return fmtMs(w.FirstSearchMs) }))
	row("from the snapshot: peak RSS", warm(func(w *WarmStart) string { return fmtBytes(w.PeakRSSBytes) }))

	section("baseline: rg -l -i -F -e w1 -e w2 DIR")
	row("per query p50 / p99", func(v *VaultReport) string {
		if v.Rg == nil {
			if v.RgNote != "" {
				return v.RgNote
			}
			return "failed"
		}
		return fmtPair(*v.Rg)
	})

	section("writes (on a git copy, watcher on)")
	writes := func(f func(w *Writes) string) func(v *VaultReport) string {
		return func(v *VaultReport) string {
			if v.Writes == nil {
				return "failed"
			}
			return f(v.Writes)
		}
	}
	row("external edit to searchable p50", writes(func(w *Writes) string { return fmtMs(w.Freshness.P50) }))
	row("write + commit p50", writes(func(w *Writes) string { return fmtMs(w.WriteCommit.P50) }))
	unfinished := func(w *Writes) bool { return w.Move.Ms == 0 }
	row("move most-linked note", writes(func(w *Writes) string {
		if unfinished(w) {
			return "did not finish"
		}
		return fmtMs(w.Move.Ms)
	}))
	row("  backlinks / links rewritten", writes(func(w *Writes) string {
		if unfinished(w) {
			return fmtCount(w.Move.Backlinks) + " / -"
		}
		return fmtCount(w.Move.Backlinks) + " / " + fmtCount(w.Move.LinksRewritten)
	}))
	row("  notes rewritten", writes(func(w *Writes) string {
		if unfinished(w) {
			return "-"
		}
		return fmtCount(w.Move.NotesRewritten)
	}))

	if err := writeRows(w, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if slices.ContainsFunc(r.Vaults, func(v VaultReport) bool { return v.Stdio != nil }) {
		fmt.Fprint(w, stdioLegend)
	}
	for _, v := range r.Vaults {
		if m := v.Writes; m != nil && m.Move.From != "" {
			verb := "moved"
			if m.Move.Ms == 0 {
				verb = "did not finish moving"
			}
			fmt.Fprintf(w, "%s: %s %s\n", v.Name, verb, m.Move.From)
		}
	}
	for _, v := range r.Vaults {
		for _, p := range v.Problems {
			fmt.Fprintf(w, "%s: %s\n", v.Name, p)
		}
	}
	return writePeers(w, r)
}

// writeRows aligns the table: the first column left, the others right.
func writeRows(w io.Writer, rows [][]string) error {
	var widths []int
	for _, r := range rows {
		if len(r) == 1 {
			continue // a section title spans the row
		}
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		if len(r) == 1 {
			b.WriteString(r[0] + "\n")
			continue
		}
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtMs(ms float64) string {
	switch {
	case ms < 1:
		return strconv.FormatFloat(ms, 'f', 3, 64) + " ms"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	default:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	}
}

// stdioLegend says what the two stdio search figures include.
const stdioLegend = `(1) minimal client: from writing the tools/call frame on the server's stdin to having read the whole
    answer frame from its stdout and decoded the JSON-RPC envelope (id, error, isError): what the server
    costs a client such as Claude Code, before that client parses the answer. Timed once the server has
    written its index snapshot, which it does in the background after the first build.
(2) go-sdk client: the same queries on the same process through session.CallTool of the Go MCP SDK, which
    also decodes the whole answer into Go values.
(3) a second process on the same vault, started after the first wrote its index snapshot (no note changed):
    it loads the snapshot, checks every note's size and modification time, and reads none.
(4) a second first start (an empty cache folder again) right after the first process exited. On a small virtual
    machine fresh memory costs far more when no process freed memory just before (the host took it back): the
    first line is that cold case, this one finds the memory the first process freed.

`

func fmtPair(d Dist) string { return fmtMs(d.P50) + " / " + fmtMs(d.P99) }

// fmtSize writes a size of a few bytes to a few megabytes.
func fmtSize(n int) string {
	switch {
	case n < 10000:
		return fmtCount(n) + " B"
	case n < 10_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " kB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}

func fmtBytes(n int64) string {
	const mib = 1 << 20
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 2, 64) + " GiB"
	case n >= 10*mib:
		return strconv.FormatFloat(float64(n)/mib, 'f', 0, 64) + " MiB"
	default:
		return strconv.FormatFloat(float64(n)/mib, 'f', 1, 64) + " MiB"
	}
}

// fmtCount writes n with thousands separators.
func fmtCount(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
