package vault

import (
	"cmp"
	"context"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/index"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
)

// Graph expansion parameters (DESIGN.md section 4).
const (
	graphSeeds  = 8
	graphFactor = 0.4
)

// maxRevalidations bounds how often one search re-runs because a hit changed
// on disk under it.
const maxRevalidations = 3

// validateSearch checks and normalises a search request.
func validateSearch(req *api.SearchRequest) error {
	req.Query = strings.TrimSpace(req.Query)
	if req.Query == "" {
		return api.Invalid("query", "must not be empty")
	}
	if !utf8.ValidString(req.Query) {
		return api.Invalid("query", "must be valid UTF-8")
	}
	if req.Limit == 0 {
		req.Limit = api.DefaultSearchLimit
	}
	if req.Limit < 1 || req.Limit > api.MaxSearchLimit {
		return api.Invalid("limit", "must be between 1 and %d", api.MaxSearchLimit)
	}
	if r := []rune(req.Query); len(r) > api.MaxQueryChars {
		req.Query = string(r[:api.MaxQueryChars])
	}
	return nil
}

func (s *Service) filterOf(field string, typ, folder, status string, tags []string, includeRaw bool) (index.Filter, error) {
	f := index.Filter{Type: typ, Status: status, Tags: tags, IncludeRaw: includeRaw}
	if folder = strings.TrimSpace(folder); folder != "" && folder != "/" && folder != "." {
		clean, err := vaultfs.Clean(folder)
		if err != nil {
			return f, fieldErr(field, err)
		}
		f.Folder = clean
	}
	return f, nil
}

// checkFolder refuses a folder filter under which no note lies (a
// misspelling answered "no results" before), naming up to three folders
// that hold notes and differ from it only in letter case or contain it.
// It reads every note's path: the callers ask only when they found
// nothing. The caller has waited for the first build.
func (s *Service) checkFolder(m *texts, field string, f index.Filter) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.checkFolderLocked(m, field, f)
}

// checkFolderLocked is checkFolder for a caller holding s.mu.
func (s *Service) checkFolderLocked(m *texts, field string, f index.Filter) error {
	if f.Folder == "" {
		return nil
	}
	for p := range s.notes {
		if vpath.Below(p, f.Folder) {
			return nil
		}
	}
	var like []string
	lower := strings.ToLower(f.Folder)
	for p := range s.notes {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if ld := strings.ToLower(dir); (ld == lower || strings.HasSuffix(ld, "/"+lower) || strings.Contains(path.Base(ld), lower)) && !slices.Contains(like, dir) {
				like = append(like, dir)
			}
		}
	}
	slices.Sort(like)
	msg := m.Get(eNoNoteUnder, f.Folder)
	if len(like) > 0 {
		msg = m.Get(eNoNoteUnderAs, f.Folder, strings.Join(like[:min(3, len(like))], ", "))
	}
	return api.Invalid(field, "%s", msg)
}

// Search runs a ranked search (DESIGN.md section 4).
func (s *Service) Search(ctx context.Context, req api.SearchRequest) (*api.SearchResult, error) {
	if err := validateSearch(&req); err != nil {
		return nil, err
	}
	f, err := s.filterOf("folder", req.Type, req.Folder, req.Status, req.Tags, req.IncludeRaw)
	if err != nil {
		return nil, err
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	s.markSnapshotUsed()
	if err := s.opts.SearchGate.Enter(ctx); err != nil {
		return nil, err
	}
	defer s.opts.SearchGate.Leave()
	var hits []scored
	var files map[string]string
	for attempt := 0; ; attempt++ {
		hits = s.rank(req.Query, f, req.Limit, req.Explain)
		if len(hits) == 0 {
			if err := s.checkFolder(s.texts(ctx), "folder", f); err != nil {
				return nil, err
			}
		}
		// Re-validate every hit against the disk before quoting it: a deleted
		// or changed note is never served stale. The text read is the one
		// quoted.
		files = make(map[string]string, len(hits))
		changed := false
		for _, p := range uniquePaths(hits) {
			text, ok, ch := s.readHit(p)
			changed = changed || ch
			if ok {
				files[p] = text
			}
		}
		if !changed || attempt == maxRevalidations {
			break
		}
	}
	res := &api.SearchResult{Query: req.Query, Results: []api.SearchHit{}}
	if len(hits) == 0 {
		s.mu.RLock()
		res.Suggestions = s.findable(s.ix.Suggest(req.Query, maxSuggestCandidates), f, maxSuggestions)
		if !f.IncludeRaw {
			// A capture the user made under 01-raw/ is left out of a
			// search by default (DESIGN.md section 2): "no results" alone
			// would say the vault does not know what it holds there.
			raw := f
			raw.IncludeRaw = true
			res.RawMatches = len(s.ix.Search(req.Query, raw, 1)) > 0
		}
		s.mu.RUnlock()
	}
	res.Results = s.snippets(req.Query, hits, files)
	s.mu.RLock()
	res.Unindexed = sortedKeys(s.unindexed)
	s.mu.RUnlock()
	return res, nil
}

// Suggestions of a search that found nothing: at most maxSuggestions, taken
// in order from the first maxSuggestCandidates vocabulary terms near the
// query (DESIGN.md section 4).
const (
	maxSuggestions       = 5
	maxSuggestCandidates = 50
)

// findable keeps, in order, up to max of terms that a search with filter f
// finds: a term of the vocabulary that only notes the search leaves out
// hold (raw captures under 01-raw/ without include_raw, notes outside the
// folder or of another type) would send the caller to a second search that
// finds nothing. The caller holds s.mu.
func (s *Service) findable(terms []string, f index.Filter, max int) []string {
	var out []string
	for _, t := range terms {
		if len(out) == max {
			break
		}
		if len(s.ix.Search(t, f, 1)) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// scored is one ranked chunk before quoting.
type scored struct {
	path     string
	chunk    int
	score    float64
	viaGraph bool
	fuzzy    bool
	explain  *api.HitExplanation
	// why: a direct hit's explanation, or from: the note a graph hit
	// inherited its score from
	why  *index.Explanation
	from string
}

// rank returns the final ranking: direct hits plus one hop of graph
// expansion, cut at limit; with explain, each hit's explanation.
func (s *Service) rank(query string, f index.Filter, limit int, explain bool) []scored {
	s.mu.RLock()
	defer s.mu.RUnlock()
	want := limit
	if want < graphSeeds {
		want = graphSeeds
	}
	search := s.ix.Search
	if explain {
		search = s.ix.SearchExplained
	}
	direct := search(query, f, want)
	best := make(map[string]float64, len(direct)) // best direct score per note
	top := topHits{limit: limit}
	for _, h := range direct {
		top.offer(scored{path: h.Path, chunk: h.Chunk, score: h.Score, fuzzy: h.Fuzzy, why: h.Explain})
		if h.Score > best[h.Path] {
			best[h.Path] = h.Score
		}
	}
	// One hop: every neighbour of a note among the top seeds inherits 0.4 x
	// the best score of its source note; notes found directly keep their own.
	// The seeds come best first, so the first source to reach a neighbour
	// gives it its best inherited score (a later one can only tie, and a
	// tie goes to the first). Hub notes have thousands of neighbours, and
	// only limit hits are kept: a neighbour that could not beat the worst
	// kept hit, even before its note factor, is passed over unlooked-at, and
	// so is a whole source whose inherited score could not.
	var nbrs []string
	matches := s.ix.Matcher(f)
	for i, h := range direct {
		if i == graphSeeds {
			break
		}
		inheritMax := graphFactor * best[h.Path]
		if !top.mayTake(inheritMax, "") {
			continue
		}
		nbrs = s.graph.AppendNeighbors(nbrs[:0], h.Path)
		for _, n := range nbrs {
			if _, isDirect := best[n]; isDirect || !top.mayTake(inheritMax, n) || top.holds(n) {
				continue
			}
			ni, ok := s.notes[n]
			if !ok || !matches(n) {
				continue
			}
			top.offer(scored{path: n, chunk: 0, score: inheritMax * noteFactor(n, ni), viaGraph: true, from: h.Path})
		}
	}
	out := top.sorted()
	if explain {
		s.explainHits(out)
	}
	return out
}

// topHits keeps the best limit hits offered (cmpScored order) in a heap
// whose root is the worst kept.
type topHits struct {
	limit int
	h     []scored
}

// mayTake reports whether a hit of score for path (chunk 0; "" for any
// path) could be kept now.
func (t *topHits) mayTake(score float64, path string) bool {
	if len(t.h) < t.limit {
		return true
	}
	w := t.h[0]
	if score != w.score {
		return score > w.score
	}
	return path != "" && (path < w.path || path == w.path && w.chunk > 0)
}

// holds reports whether a graph hit for path is kept (a linear scan: limit
// is at most api.MaxSearchLimit).
func (t *topHits) holds(path string) bool {
	for i := range t.h {
		if t.h[i].viaGraph && t.h[i].path == path {
			return true
		}
	}
	return false
}

func (t *topHits) offer(x scored) {
	if len(t.h) < t.limit {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if cmpScored(t.h[i], t.h[p]) <= 0 {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if cmpScored(x, t.h[0]) >= 0 {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, w := 2*i+1, i
		if l < len(t.h) && cmpScored(t.h[l], t.h[w]) > 0 {
			w = l
		}
		if r := l + 1; r < len(t.h) && cmpScored(t.h[r], t.h[w]) > 0 {
			w = r
		}
		if w == i {
			return
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// sorted returns the kept hits best first.
func (t *topHits) sorted() []scored {
	slices.SortFunc(t.h, cmpScored)
	return t.h
}

// cmpScored orders hits best first: score descending, then path and chunk.
func cmpScored(a, b scored) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	if c := strings.Compare(a.path, b.path); c != 0 {
		return c
	}
	return cmp.Compare(a.chunk, b.chunk)
}

// explainHits fills in each hit's explanation: a direct hit's from the
// index, a graph hit's from the note it inherited its score from. Caller
// holds s.mu (read).
func (s *Service) explainHits(hits []scored) {
	n := 0 // fields of all term matches, given one backing array
	for _, h := range hits {
		if h.why != nil {
			for _, t := range h.why.Terms {
				n += len(t.Fields)
			}
		}
	}
	fields := make([]string, 0, n)
	for i := range hits {
		h := &hits[i]
		e := &api.HitExplanation{}
		if h.viaGraph {
			e.GraphFrom = h.from
			switch out, in := s.graph.LinksTo(h.from, h.path), s.graph.LinksTo(h.path, h.from); {
			case out && in:
				e.GraphLink = "both"
			case in:
				e.GraphLink = "in"
			default:
				e.GraphLink = "out"
			}
		}
		if h.why != nil {
			e.TitlePhrase = h.why.TitlePhrase
			e.FullTitle = h.why.FullTitle
			e.Terms = make([]api.TermMatch, len(h.why.Terms))
			for k, t := range h.why.Terms {
				lo := len(fields)
				fields = append(fields, t.Fields...)
				e.Terms[k] = api.TermMatch{Term: t.Term, Fields: fields[lo:len(fields):len(fields)], Match: t.Match, As: t.As}
			}
		}
		h.explain = e
	}
}

// noteFactor is the type and archive weight of a note; a note reached through
// the graph gets it too, so a MOC linked from everything does not flood the
// results.
func noteFactor(p string, ni *noteInfo) float64 {
	f := 1.0
	if ni.typ == "moc" || ni.typ == "daily" {
		f *= index.TypeFactor
	}
	if vpath.Below(p, index.ArchiveFolder) {
		f *= index.ArchiveFactor
	}
	return f
}

func uniquePaths(hits []scored) []string {
	seen := make(map[string]bool, len(hits))
	var out []string
	for _, h := range hits {
		if !seen[h.path] {
			seen[h.path] = true
			out = append(out, h.path)
		}
	}
	return out
}
