package vault

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// Bounds of the frontmatter shown by GetNote.
const (
	fmMaxKeys  = 32
	fmMaxValue = 512
	fmMaxTotal = 4000
)

// GetNote returns a note's metadata, links and raw text, paged by characters.
func (s *Service) GetNote(ctx context.Context, req api.NoteRequest) (*api.Note, error) {
	if req.Offset < 0 {
		return nil, api.Invalid("offset", "%s", s.texts(ctx).Get(eOffsetMin))
	}
	rel, err := s.resolveNote(ctx, "path", req.Path)
	if err != nil {
		return nil, err
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	data, _, err := s.fs.ReadNote(rel)
	if err != nil {
		return nil, fieldErr("path", err)
	}
	n := markdown.Parse(path.Base(rel), data)
	out := &api.Note{Path: rel, Title: n.Title, SHA256: sha256Hex(data)}
	out.Frontmatter, out.FrontmatterTruncated = boundFrontmatter(n.Frontmatter)
	// Without them a note whose frontmatter was refused reads as a note
	// without one, and the reader cannot tell why its type or tags are gone.
	out.Problems = n.Diagnostics[:min(len(n.Diagnostics), api.MaxNoteProblems)]

	// Every link is resolved to count it, only the first of each kind is
	// kept (api.MaxNoteLinks): a note of a million links is answered in a
	// few kilobytes.
	s.mu.RLock()
	res := s.graph.Resolver()
	for _, l := range n.Links {
		to, ok := res.ResolveLink(rel, l)
		list, total := &out.BrokenLinks, &out.BrokenLinksTotal
		if ok {
			list, total = &out.Links, &out.LinksTotal
		}
		if *total++; len(*list) == api.MaxNoteLinks {
			continue
		}
		// The target as written, anchor included: [[a#Setup]] and
		// [[a#^b1]] reach different places of a.md.
		target := l.Target
		if l.Anchor != "" {
			target += "#" + l.Anchor
		}
		*list = append(*list, api.NoteLink{Target: target, Path: to, Line: l.Line})
	}
	s.mu.RUnlock()

	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	total := utf8.RuneCountInString(text)
	out.TotalChars = total
	if req.Offset > total {
		return nil, api.Invalid("offset", "%s", s.texts(ctx).Get(eOffsetPast, req.Offset, total))
	}
	start := runeOffset(text, req.Offset)
	end := runeOffset(text[start:], api.NotePageChars) + start
	out.Content = text[start:end]
	out.Offset = req.Offset
	if end < len(text) {
		out.NextOffset = req.Offset + utf8.RuneCountInString(out.Content)
	}
	return out, nil
}

// runeOffset returns the byte offset of the n-th character of s (len(s) when
// s is shorter).
func runeOffset(s string, n int) int {
	i := 0
	for b := range s {
		if i == n {
			return b
		}
		i++
	}
	return len(s)
}

func boundFrontmatter(fm map[string]any) (map[string]string, bool) {
	if len(fm) == 0 {
		return nil, false
	}
	out := make(map[string]string)
	truncated := false
	total := 0
	for _, k := range sortedKeys(fm) {
		if len(out) == fmMaxKeys {
			truncated = true
			break
		}
		v := formatValue(fm[k])
		if utf8.RuneCountInString(v) > fmMaxValue {
			v = cutRunes(v, fmMaxValue-1) + "…"
			truncated = true
		}
		n := utf8.RuneCountInString(k) + utf8.RuneCountInString(v)
		if total+n > fmMaxTotal {
			truncated = true
			break
		}
		total += n
		out[k] = v
	}
	return out, truncated
}

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		keys := sortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + formatValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprint(x)
	}
}

// List returns the notes that pass the filters, sorted by path.
func (s *Service) List(ctx context.Context, req api.ListRequest) (*api.ListResult, error) {
	f, err := s.filterOf("folder", req.Type, req.Folder, req.Status, req.Tags, true)
	if err != nil {
		return nil, err
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := &api.ListResult{Notes: []api.NoteSummary{}}
	// Only the matching paths are sorted, and a folder's notes are found
	// through the folders that hold them: sorting every path was 35 ms a
	// call at 100,000 notes, however few the folder held. Without a
	// folder, the index passes its notes' records in order (EachMatch).
	var paths []string
	if folder := strings.TrimSuffix(f.Folder, "/"); folder != "" {
		matches := s.ix.Matcher(f)
		s.graph.Resolver().EachFolder(folder, func(_ string, files []string) {
			for _, p := range files {
				if s.notes[p] != nil && matches(p) {
					paths = append(paths, p)
				}
			}
		})
	} else {
		s.ix.EachMatch(f, func(p string) {
			if s.notes[p] != nil {
				paths = append(paths, p)
			}
		})
	}
	out.Total = len(paths)
	paths = firstSorted(paths, req.Limit)
	out.Notes = slices.Grow(out.Notes, len(paths))
	for _, p := range paths {
		ni := s.notes[p]
		out.Notes = append(out.Notes, api.NoteSummary{Path: p, Title: ni.title, Type: ni.typ, Status: ni.status, Tags: ni.tags})
	}
	if len(out.Notes) == 0 {
		if err := s.checkFolderLocked(s.texts(ctx), "folder", f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// firstSorted returns the k smallest of paths, sorted (all of them when k
// is 0 or more than there are), reordering paths. The tool lists 1,000
// notes: choosing them with a bounded heap instead of sorting every
// path (and describing every note) took a list of the whole 100,000-note
// vault from 250-300 ms to a few.
func firstSorted(paths []string, k int) []string {
	if k <= 0 || len(paths) <= k {
		slices.Sort(paths)
		return paths
	}
	// h = paths[:k], a max-heap of the k smallest so far.
	h := paths[:k]
	down := func(i int) {
		for {
			big, l := i, 2*i+1
			if l < k && h[l] > h[big] {
				big = l
			}
			if r := l + 1; r < k && h[r] > h[big] {
				big = r
			}
			if big == i {
				return
			}
			h[i], h[big] = h[big], h[i]
			i = big
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, p := range paths[k:] {
		if p < h[0] {
			h[0] = p
			down(0)
		}
	}
	slices.Sort(h)
	return h
}

// Backlinks returns the notes linking to a note, each once: how many, and
// the first api.MaxBacklinkNotes by path with the first api.MaxBacklinkLines
// lines of each. Its work and answer stay bounded however many links the
// note receives (links.Graph.BacklinkPage).
func (s *Service) Backlinks(ctx context.Context, req api.BacklinksRequest) (*api.BacklinksResult, error) {
	rel, err := s.resolveNote(ctx, "path", req.Path)
	if err != nil {
		return nil, err
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.notes[rel]; !ok {
		return nil, &api.Error{Code: api.CodeNotFound, Field: "path", Message: s.texts(ctx).Get(eNotIndexed, rel)}
	}
	page := s.graph.BacklinkPage(rel, api.MaxBacklinkNotes, api.MaxBacklinkLines)
	out := &api.BacklinksResult{Path: rel, Total: page.Notes, Links: page.Links, Backlinks: make([]api.Backlink, len(page.Sources))}
	for i, src := range page.Sources {
		title := path.Base(src.Path)
		if ni := s.notes[src.Path]; ni != nil {
			title = ni.title
		}
		out.Backlinks[i] = api.Backlink{Path: src.Path, Title: title, Lines: src.Lines, LineCount: src.LineCount}
	}
	return out, nil
}

// Graph returns the link graph of the notes that pass the filters: the
// counts of the whole graph, the req.MaxNodes best connected nodes and the
// first api.MaxGraphEdges edges between them. The graph is walked twice
// (degrees, then the edges of the nodes kept) without keeping an edge of
// the whole graph, so memory stays with the answer's size.
func (s *Service) Graph(ctx context.Context, req api.GraphRequest) (*api.GraphResult, error) {
	if req.MaxNodes == 0 {
		req.MaxNodes = api.DefaultGraphNodes
	}
	if req.MaxNodes < 1 || req.MaxNodes > api.MaxGraphNodes {
		return nil, api.Invalid("max_nodes", "must be between 1 and %d", api.MaxGraphNodes)
	}
	f, err := s.filterOf("folder", req.Type, req.Folder, req.Status, req.Tags, req.IncludeRaw)
	if err != nil {
		return nil, err
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	// A node is found by its key once an edge (notes by path, broken
	// targets by "\x00"+target), and an edge is told from one seen before
	// by its node's mark (the index of the source being walked): at 100,000
	// notes and a million links, hashing each edge's paths into maps five
	// times and clearing them per source was half a second a call.
	type gnode struct {
		api.GraphNode
		mark int
		kept bool
	}
	nodes := make(map[string]*gnode)
	s.ix.EachMatch(f, func(p string) { // the index's records in order (see List)
		if ni := s.notes[p]; ni != nil {
			nodes[p] = &gnode{GraphNode: api.GraphNode{Path: p, Title: ni.title, Type: ni.typ}, mark: -1}
		}
	})
	if len(nodes) == 0 {
		if err := s.checkFolderLocked(s.texts(ctx), "folder", f); err != nil {
			return nil, err
		}
	}
	sources := sortedKeys(nodes)
	srcNodes := make([]*gnode, len(sources))
	for i, p := range sources {
		srcNodes[i] = nodes[p]
	}
	// eachEdge calls fn with every edge of the source i, once per ordered
	// pair: to is the node at its other end (nil for a broken target that
	// is not a node), target the path shown. Each call of eachEdge marks
	// the nodes it reaches with mark.
	var seenBroken map[string]struct{}
	eachEdge := func(i, mark int, fn func(to *gnode, target string, broken bool)) {
		if len(seenBroken) > 0 {
			clear(seenBroken)
		}
		from := sources[i]
		s.graph.EachOutTarget(from, func(to, target string) {
			if to == "" {
				if target == "" {
					return
				}
				if seenBroken == nil {
					seenBroken = make(map[string]struct{})
				}
				if _, ok := seenBroken[target]; !ok {
					seenBroken[target] = struct{}{}
					fn(nodes["\x00"+target], target, true)
				}
				return
			}
			if to == from {
				return
			}
			n := nodes[to]
			if n == nil || n.mark == mark {
				return
			}
			n.mark = mark
			fn(n, to, false)
		})
	}
	out := &api.GraphResult{}
	for i, from := range srcNodes {
		eachEdge(i, i, func(to *gnode, target string, broken bool) {
			if broken {
				out.BrokenCount++
				if !req.IncludeBroken {
					return
				}
				if to == nil {
					to = &gnode{GraphNode: api.GraphNode{Path: target, Broken: true}, mark: -1}
					nodes["\x00"+target] = to
					out.BrokenTargetCount++
				}
			}
			out.EdgeCount++
			from.OutDegree++
			to.InDegree++
		})
	}
	all := make([]*gnode, 0, len(nodes))
	for _, n := range nodes {
		all = append(all, n)
	}
	out.NodeCount = len(all)
	if len(all) > req.MaxNodes {
		// Keep the best connected nodes.
		sort.Slice(all, func(i, j int) bool {
			a, b := all[i], all[j]
			if da, db := a.InDegree+a.OutDegree, b.InDegree+b.OutDegree; da != db {
				return da > db
			}
			return a.Path < b.Path
		})
		all = all[:req.MaxNodes]
		out.Truncated = true
	}
	for _, n := range all {
		n.kept = true
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	out.Nodes = make([]api.GraphNode, len(all))
	for i, n := range all {
		out.Nodes[i] = n.GraphNode
	}
	out.Edges = []api.GraphEdge{}
	for i, from := range srcNodes {
		if !from.kept {
			continue
		}
		eachEdge(i, len(sources)+i, func(to *gnode, target string, broken bool) {
			if to == nil || !to.kept || broken && !req.IncludeBroken {
				return
			}
			out.KeptEdgeCount++
			if len(out.Edges) < api.MaxGraphEdges {
				out.Edges = append(out.Edges, api.GraphEdge{From: sources[i], To: target, Broken: broken})
			}
		})
	}
	out.EdgesTruncated = out.KeptEdgeCount > len(out.Edges)
	return out, nil
}

// maxMoveHops bounds how many vault_move commits History follows back.
const maxMoveHops = 32

// History returns the git history of a note, newest first. A note that no
// longer exists still has its history.
func (s *Service) History(ctx context.Context, req api.HistoryRequest) (*api.HistoryResult, error) {
	if req.Limit == 0 {
		req.Limit = api.DefaultHistory
	}
	if req.Limit < 1 || req.Limit > api.MaxHistory {
		return nil, api.Invalid("limit", "must be between 1 and %d", api.MaxHistory)
	}
	rel, err := s.fs.CheckPath(req.Path, vaultfs.Read)
	if err != nil {
		return nil, fieldErr("path", err)
	}
	// A note that no longer exists still has its history, but a path that
	// exists must be a note the gatekeeper would read: git's pathspec also
	// matches a folder ("notes.md/"), whose history would list the commits
	// of every file in it, hidden ones included.
	if _, err := s.fs.Stat(rel); err != nil && vaultfs.CodeOf(err) != vaultfs.CodeNotFound {
		return nil, fieldErr("path", err)
	}
	out := &api.HistoryResult{Path: rel, Versions: []api.Version{}}
	if s.git == nil {
		return out, nil
	}
	commits, err := s.git.Log(ctx, rel, req.Limit)
	if err != nil {
		return nil, s.errorf("reading history of %s: %w", rel, err)
	}
	// git follows a rename only when the contents stayed at least half the
	// same, and a move rewrites the note's own relative links: a short
	// note moved to another folder lost all the history before its move.
	// When the oldest commit found is a vault_move of this note, its
	// history goes on under the old name, before that commit.
	cur := rel
	for hop := 0; hop < maxMoveHops && len(commits) > 0 && len(commits) < req.Limit; hop++ {
		last := commits[len(commits)-1]
		from, ok := movedFrom(last.Subject, cur)
		if !ok {
			break
		}
		more, err := s.git.LogBefore(ctx, last.Hash, from, req.Limit-len(commits))
		if err != nil {
			return nil, s.errorf("reading history of %s: %w", from, err)
		}
		commits = append(commits, more...)
		cur = from
	}
	for _, c := range commits {
		out.Versions = append(out.Versions, api.Version{ID: c.Hash, Date: c.Date.Format("2006-01-02T15:04:05Z07:00"), Author: c.Author, Message: c.Subject})
	}
	return out, nil
}

// NoteTexts returns the text of every indexed note (for the grep baseline of
// the retrieval evaluation).
func (s *Service) NoteTexts(ctx context.Context) (map[string]string, error) {
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	paths := sortedKeys(s.notes)
	s.mu.RUnlock()
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		data, _, err := s.fs.ReadNote(p)
		if err == nil {
			out[p] = string(data)
		}
	}
	return out, nil
}
