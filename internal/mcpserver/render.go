package mcpserver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Bounds of the text renderings. The structured content carries everything
// the backend returned (but for what vault_search leaves out of it, see
// search.go, and the notes of vault_list past api.MaxListNotes, see
// tools.go); only the text for the model is cut.
const (
	maxUnindexedShown = 3
	maxGraphEdgesText = 200
	maxFilesText      = 20
	maxDiffText       = 20000 // characters of diff lines, as a page of vault_get_note
)

// quote renders a client or vault string inside double quotes, escaped.
func quote(s string) string { return `"` + escape(s) + `"` }

func renderSearch(m *messages, req api.SearchRequest, res *api.SearchResult) string {
	var b strings.Builder
	t := SearchText{m}
	q := res.Query
	if q == "" {
		q = req.Query
	}
	if len(res.Results) == 0 {
		b.WriteString(t.None(q))
		b.WriteByte('\n')
		if len(res.Suggestions) > 0 {
			b.WriteString(t.Suggestions(res.Suggestions))
			b.WriteByte('\n')
		}
		if res.RawMatches {
			b.WriteString(t.RawMatches("include_raw: true"))
			b.WriteByte('\n')
		}
	} else {
		b.Grow(searchTextSize(res))
		b.WriteString(m.get(msgSearchHeader, len(res.Results), quote(q)))
		b.WriteByte('\n')
		for i := range res.Results {
			h := &res.Results[i]
			// path:line — where (score S, via graph, snippet truncated)
			b.WriteByte('\n')
			b.WriteString(escape(h.Path))
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(h.Line))
			b.WriteString(" — ")
			if len(h.Headings) > 0 {
				b.WriteString(escape(strings.Join(h.Headings, " > ")))
			} else {
				b.WriteString(escape(h.Title))
			}
			b.WriteString(" (")
			b.WriteString(t.Notes(h))
			b.WriteString(")\n")
			if req.Explain && h.Explain != nil {
				if parts := t.Why(h.Explain); len(parts) > 0 {
					b.WriteString(m.get(msgWhy, strings.Join(parts, "; ")))
					b.WriteByte('\n')
				}
			}
			quoteLines(&b, h.Snippet)
		}
	}
	if len(res.Unindexed) > 0 {
		b.WriteByte('\n')
		writeListLine(&b, m, msgUnindexed, res.Unindexed, maxUnindexedShown)
	}
	return b.String()
}

// whyFields are the fields of an explanation in the order the line names
// them, with their names.
var whyFields = []struct {
	name string
	id   msgID
}{
	{"title", msgFieldTitle}, {"heading", msgFieldHeading}, {"link_text", msgFieldLinkText},
	{"tags", msgFieldTags}, {"prose", msgFieldProse}, {"code", msgFieldCode},
}

// searchTextSize is about the length of the text renderSearch writes for
// res (a little more when nothing needs escaping), so that its builder grows
// once.
func searchTextSize(res *api.SearchResult) int {
	n := 512 + len(res.Query)
	for _, h := range res.Results {
		n += 64 + len(h.Path) + len(h.Title) + len(h.Snippet) + 2*(strings.Count(h.Snippet, "\n")+1)
		for _, s := range h.Headings {
			n += len(s) + 3
		}
	}
	return n
}

func renderNote(m *messages, n *api.Note) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n", escape(n.Path), escape(n.Title))
	if len(n.Frontmatter) > 0 || n.FrontmatterTruncated {
		b.WriteString(m.get(msgNoteFrontmatter))
		b.WriteByte('\n')
		keys := make([]string, 0, len(n.Frontmatter))
		for k := range n.Frontmatter {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", escape(k), escape(n.Frontmatter[k]))
		}
		if n.FrontmatterTruncated {
			b.WriteString("  ")
			b.WriteString(m.get(msgNoteFMTruncated))
			b.WriteByte('\n')
		}
	}
	if len(n.Problems) > 0 {
		b.WriteString(m.get(msgNoteProblems))
		b.WriteByte('\n')
		for _, p := range n.Problems {
			fmt.Fprintf(&b, "  %s\n", escape(p))
		}
	}
	if len(n.Links) > 0 || n.LinksTotal > 0 {
		b.WriteString(m.get(msgNoteLinks))
		b.WriteByte('\n')
		for _, l := range n.Links {
			b.WriteString(m.get(msgNoteLink, escape(l.Target), escape(l.Path), l.Line))
			b.WriteByte('\n')
		}
		writeMore(&b, m, msgNoteMoreLinks, n.LinksTotal-len(n.Links))
	}
	if len(n.BrokenLinks) > 0 || n.BrokenLinksTotal > 0 {
		b.WriteString(m.get(msgNoteBrokenLinks))
		b.WriteByte('\n')
		for _, l := range n.BrokenLinks {
			b.WriteString(m.get(msgNoteBrokenLink, escape(l.Target), l.Line))
			b.WriteByte('\n')
		}
		writeMore(&b, m, msgNoteMoreBroken, n.BrokenLinksTotal-len(n.BrokenLinks))
	}
	b.WriteString(m.get(msgNoteSHA, escape(n.SHA256)))
	b.WriteString("\n---\n")
	// The body goes out exactly as the backend returned it: it is what an
	// edit must match byte for byte.
	b.WriteString(n.Content)
	if n.NextOffset != 0 {
		if !strings.HasSuffix(n.Content, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(m.get(msgNotePaging, n.Offset, n.NextOffset, n.TotalChars, n.NextOffset))
		b.WriteByte('\n')
	}
	return b.String()
}

func renderList(m *messages, res *api.ListResult) string {
	if len(res.Notes) == 0 {
		return m.get(msgListNone) + "\n"
	}
	var b strings.Builder
	total := max(res.Total, len(res.Notes))
	b.WriteString(m.get(msgListHeader, total))
	b.WriteByte('\n')
	shown := res.Notes[:min(len(res.Notes), api.MaxListNotes)]
	for _, n := range shown {
		fmt.Fprintf(&b, "- %s — %s", escape(n.Path), escape(n.Title))
		var parts []string
		if n.Type != "" {
			parts = append(parts, m.get(msgListType, escape(n.Type)))
		}
		if n.Status != "" {
			parts = append(parts, m.get(msgListStatus, escape(n.Status)))
		}
		if len(n.Tags) > 0 {
			parts = append(parts, m.get(msgListTags, escapedList(n.Tags)))
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
		}
		b.WriteByte('\n')
	}
	if more := total - len(shown); more > 0 {
		b.WriteString(m.get(msgListMore, more))
		b.WriteByte('\n')
	}
	return b.String()
}

func renderBacklinks(m *messages, req api.BacklinksRequest, res *api.BacklinksResult) string {
	p := res.Path
	if p == "" {
		p = req.Path
	}
	total := max(res.Total, len(res.Backlinks)) // a backend that does not count sends none
	if total == 0 {
		return m.get(msgBacklinksNone, escape(p)) + "\n"
	}
	var b strings.Builder
	b.WriteString(m.get(msgBacklinksHeader, total, escape(p)))
	b.WriteByte('\n')
	for _, l := range res.Backlinks {
		fmt.Fprintf(&b, "- %s — %s", escape(l.Path), escape(l.Title))
		more := l.LineCount - len(l.Lines)
		switch {
		case len(l.Lines) == 0:
		case len(l.Lines) == 1 && more <= 0:
			fmt.Fprintf(&b, " (%s)", m.get(msgLineOne, l.Lines[0]))
		default:
			nums := make([]string, len(l.Lines))
			for i, n := range l.Lines {
				nums[i] = strconv.Itoa(n)
			}
			lines := m.get(msgLinesMany, strings.Join(nums, ", "))
			if more > 0 {
				lines += " " + m.get(msgAndMore, more)
			}
			fmt.Fprintf(&b, " (%s)", lines)
		}
		b.WriteByte('\n')
	}
	writeMore(&b, m, msgBacklinksMore, total-len(res.Backlinks))
	return b.String()
}

func renderGraph(m *messages, req api.GraphRequest, res *api.GraphResult) string {
	var b strings.Builder
	if req.IncludeBroken {
		// NodeCount counts the missing targets as nodes and EdgeCount the
		// broken links as edges: the text tells notes and targets apart.
		b.WriteString(m.get(msgGraphHeaderBroken, res.NodeCount-res.BrokenTargetCount, res.BrokenTargetCount, res.EdgeCount, res.BrokenCount))
	} else {
		b.WriteString(m.get(msgGraphHeader, res.NodeCount, res.EdgeCount, res.BrokenCount))
	}
	if res.Truncated {
		limit := req.MaxNodes
		if limit == 0 {
			limit = api.DefaultGraphNodes
		}
		b.WriteString(m.get(msgGraphTruncated, limit))
	}
	b.WriteByte('\n')
	shown := res.Edges[:min(len(res.Edges), maxGraphEdgesText)]
	for _, e := range shown {
		if e.Broken {
			b.WriteString(m.get(msgGraphBrokenEdge, escape(e.From), escape(e.To)))
		} else {
			fmt.Fprintf(&b, "- %s -> %s", escape(e.From), escape(e.To))
		}
		b.WriteByte('\n')
	}
	// KeptEdgeCount counts the edges between the nodes kept, of which the
	// backend sent the first api.MaxGraphEdges.
	writeMore(&b, m, msgGraphMoreEdges, max(res.KeptEdgeCount, len(res.Edges))-len(shown))
	return b.String()
}

// writeMore writes the line of id saying how many more items there are
// than were shown, when there are any.
func writeMore(b *strings.Builder, m *messages, id msgID, more int) {
	if more > 0 {
		b.WriteString(m.get(id, more))
		b.WriteByte('\n')
	}
}

func renderHistory(m *messages, req api.HistoryRequest, res *api.HistoryResult) string {
	p := res.Path
	if p == "" {
		p = req.Path
	}
	if len(res.Versions) == 0 {
		return m.get(msgHistoryNone, escape(p)) + "\n"
	}
	var b strings.Builder
	b.WriteString(m.get(msgHistoryHeader, len(res.Versions), escape(p)))
	b.WriteByte('\n')
	for _, v := range res.Versions {
		msg, _, _ := strings.Cut(v.Message, "\n")
		fmt.Fprintf(&b, "- %s %s %s\n", escape(v.ID), escape(v.Date),
			escape(strings.TrimSuffix(msg, "\r")))
	}
	return b.String()
}

// writeListLine writes the line of id naming the first limit of items,
// escaped, and how many more there are.
func writeListLine(b *strings.Builder, m *messages, id msgID, items []string, limit int) {
	shown := items[:min(len(items), limit)]
	b.WriteString(m.get(id, escapedList(shown)))
	if more := len(items) - len(shown); more > 0 {
		b.WriteByte(' ')
		b.WriteString(m.get(msgAndMore, more))
	}
	b.WriteByte('\n')
}

func escapedList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = escape(s)
	}
	return strings.Join(out, ", ")
}

// renderWrite renders the answer of a write tool: what it did, the files,
// the new hash, whether it was committed and pushed, its warnings, how to
// undo it, and the diff. reverted is the commit vault_undo was asked to
// revert (empty for the other tools).
func renderWrite(m *messages, res *api.WriteResult, reverted string) string {
	var b strings.Builder
	b.WriteString(writeHeadline(m, res, reverted))
	b.WriteByte('\n')
	// The headline names the path; the files are worth a line when there
	// are more of them, or when the headline names a commit instead.
	writeDetails(&b, m, res, len(res.Files) > 1 || (res.Action == api.ActionReverted && len(res.Files) > 0))
	return b.String()
}

// writeDetails renders what every write answers after its headline: the
// files (when showFiles), the new hash, the commit and push, the warnings,
// the undo and the diff.
func writeDetails(b *strings.Builder, m *messages, res *api.WriteResult, showFiles bool) {
	if showFiles {
		writeListLine(b, m, msgWriteFiles, res.Files, maxFilesText)
	}
	if res.SHA256 != "" {
		b.WriteString(m.get(msgWriteSHA, escape(res.SHA256)))
		b.WriteByte('\n')
	}
	switch {
	case !res.Committed:
		b.WriteString(m.get(msgWriteCommitNo))
	case res.Version == "":
		b.WriteString(m.get(msgWriteCommitYes))
	default:
		b.WriteString(m.get(msgWriteCommitHash, escape(res.Version)))
	}
	b.WriteByte('\n')
	if res.Pushed != nil {
		if *res.Pushed {
			b.WriteString(m.get(msgWritePushYes))
		} else {
			b.WriteString(m.get(msgWritePushNo))
		}
		b.WriteByte('\n')
	}
	for _, w := range res.Warnings {
		b.WriteString(m.get(msgWriteWarning, escape(w)))
		b.WriteByte('\n')
	}
	if res.Committed && res.Version != "" {
		undo := fmt.Sprintf("vault_undo {\"commit\": %q}", res.Version)
		if res.UndoHint != "" {
			undo = m.get(msgWriteUndoOr, res.UndoHint, undo)
		}
		b.WriteString(m.get(msgWriteUndo, escape(undo)))
		b.WriteByte('\n')
	}
	if res.Diff != "" {
		b.WriteByte('\n')
		writeDiff(b, m, res.Diff)
	}
}

func writeHeadline(m *messages, res *api.WriteResult, reverted string) string {
	p := escape(res.Path)
	switch res.Action {
	case api.ActionCreated:
		return m.get(msgWriteCreated, p)
	case api.ActionReplaced:
		return m.get(msgWriteReplaced, p)
	case api.ActionEdited:
		return m.get(msgWriteEdited, p)
	case api.ActionMoved:
		if res.LinksRewritten > 0 && res.NotesRewritten == 0 {
			// Only the moved note's own links (NotesRewritten counts the
			// other notes): "rewritten in 0 note(s)" read as a contradiction.
			return m.get(msgWriteMovedOwn, escape(res.From), p, res.LinksRewritten)
		}
		if res.LinksRewritten > 0 {
			return m.get(msgWriteMovedLinks, escape(res.From), p, res.LinksRewritten, res.NotesRewritten)
		}
		return m.get(msgWriteMoved, escape(res.From), p)
	case api.ActionDeleted:
		return m.get(msgWriteDeleted, p)
	case api.ActionReverted:
		if reverted == "" {
			reverted = res.Path
		}
		return m.get(msgWriteReverted, escape(reverted))
	case api.ActionAppended:
		if len(res.Files) == 0 {
			// A retried learning whose insight the note already holds.
			return m.get(msgWriteRecorded, p)
		}
		return m.get(msgWriteAppended, p)
	}
	return m.get(msgWriteOther, p, escape(res.Action))
}

// writeDiff renders a diff, which is vault content, as a fenced block that
// nothing inside can close: the fence is longer than the longest run of
// backticks in the diff. Each line is escaped as a snippet line is (tabs
// kept, a CR before the line feed dropped), and the text is cut at a line
// boundary after maxDiffText characters; the structured content keeps the
// whole diff.
func writeDiff(b *strings.Builder, m *messages, diff string) {
	diff = strings.TrimSuffix(diff, "\n")
	var (
		lines []string
		chars int
		total int
		full  bool
	)
	for line := range strings.SplitSeq(diff, "\n") {
		total++
		if full {
			continue
		}
		line = escape(strings.TrimSuffix(line, "\r"))
		n := utf8.RuneCountInString(line)
		if chars+n > maxDiffText {
			full = true
			if len(lines) == 0 { // one huge line: show its start
				lines = append(lines, string([]rune(line)[:maxDiffText])+"…")
			}
			continue
		}
		chars += n
		lines = append(lines, line)
	}
	fence := strings.Repeat("`", max(3, longestRun(lines, '`')+1))
	b.WriteString(fence)
	b.WriteString("diff\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	b.WriteByte('\n')
	if more := total - len(lines); more > 0 {
		b.WriteString(m.get(msgWriteDiffCut, maxDiffText, more))
		b.WriteByte('\n')
	}
}

// longestRun is the length of the longest run of c in any of lines.
func longestRun(lines []string, c byte) int {
	best := 0
	for _, l := range lines {
		run := 0
		for i := range len(l) {
			if l[i] != c {
				run = 0
				continue
			}
			run++
			best = max(best, run)
		}
	}
	return best
}
