package vault

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
)

// verdict is the outcome of the duplicate decision.
type verdict struct {
	code, reason, candidate string
	ratio                   float64
}

// candidateInfo tells the tags (lowercase) of an indexed note and whether it
// is a map of content.
func (s *Service) candidateInfo(p string) (tags []string, moc bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ni := s.notes[p]
	if ni == nil {
		return nil, false
	}
	return ni.tags, ni.typ == "moc" || strings.HasSuffix(path.Base(p), "-moc.md")
}

// decide applies DESIGN.md section 6 steps 2-3 to the ranked results of the
// search for title + insight: the top result is the note the insight belongs
// to when it lies under 02-wiki/, was matched directly (not reached through
// the graph), is not a map of content (a learning is never appended to a
// MOC), scores at least LearnDuplicateRatio times the best chunk of any other
// note (no other note counts as infinitely far), and shares a tag with the
// learning or lies in its domain, and holds at least minSharedWords of the
// learning's words (see sharedWords). The kind tags (gotcha, pattern, decision,
// state) are used across domains, so sharing one is no sign of the same
// subject: they do not count as a shared tag. limit is the number of results asked for:
// when every one of them is a chunk of the top note, the runner-up lies
// beyond the cut and scores at most the last result, which bounds the ratio
// from below.
func decide(hits []api.SearchHit, limit int, in *learning, info func(string) ([]string, bool)) verdict {
	if len(hits) == 0 {
		return verdict{code: api.LearnNoMatch, reason: "no match: no note is like it"}
	}
	top := hits[0]
	v := verdict{candidate: top.Path}
	switch {
	case !vpath.Below(top.Path, wikiFolder):
		v.code, v.reason = api.LearnOutsideWiki, fmt.Sprintf("top result %s is outside %s", top.Path, wikiFolder)
		return v
	case top.ViaGraph:
		v.code, v.reason = api.LearnViaGraph, fmt.Sprintf("top result %s was found via graph, not matched", top.Path)
		return v
	case top.Fuzzy:
		// A hit through misspelling expansion shares no word with the
		// learning as written: it is not a duplicate.
		v.code, v.reason = api.LearnNoMatch, fmt.Sprintf("no match: top result %s matched only through similar spellings", top.Path)
		return v
	}
	if words := sharedWords(top.Explain); top.Explain != nil && len(words) < minSharedWords {
		// One word in common (the helper's `[[link]]` in a code comment,
		// say) is no sign of the same subject, however far the other notes
		// are: with nothing else matching, the ratio alone would call it a
		// duplicate.
		v.code, v.reason = api.LearnNoMatch, fmt.Sprintf("no match: top result %s shares only %q with the learning", top.Path, strings.Join(words, " "))
		return v
	}
	tags, moc := info(top.Path)
	if moc {
		v.code, v.reason = api.LearnStructural, fmt.Sprintf("top result %s is a map of content", top.Path)
		return v
	}
	runnerUp, other := 0.0, ""
	for _, h := range hits[1:] {
		if h.Path != top.Path && !h.ViaGraph {
			// The best chunk of any other note, however it matched.
			runnerUp, other = h.Score, h.Path
			break
		}
	}
	if other == "" && len(hits) >= limit {
		runnerUp = hits[len(hits)-1].Score
	}
	ratio := math.Inf(1)
	if runnerUp > 0 {
		ratio = top.Score / runnerUp
		v.ratio = math.Floor(ratio*100) / 100
	}
	if ratio < api.LearnDuplicateRatio {
		v.code = api.LearnRatioLow
		v.reason = fmt.Sprintf("top result %s does not stand out: ratio %.2f below %.1f over the runner-up %s", top.Path, v.ratio, api.LearnDuplicateRatio, other)
		if other == "" {
			v.reason = fmt.Sprintf("top result %s does not stand out: ratio %.2f below %.1f over the results after it", top.Path, v.ratio, api.LearnDuplicateRatio)
		}
		return v
	}
	shared := ""
	for _, want := range in.tags {
		if kindTag(want) {
			continue
		}
		for _, have := range tags {
			if strings.EqualFold(want, have) && shared == "" {
				shared = want
			}
		}
	}
	inDomain := domainOf(top.Path) == in.domain
	if shared == "" && !inDomain {
		v.code = api.LearnNoOverlap
		v.reason = fmt.Sprintf("top result %s shares no tag and lies outside %s/%s", top.Path, wikiFolder, in.domain)
		return v
	}
	v.code = api.LearnDuplicate
	why := "in the same domain"
	if shared != "" {
		why = "shares the tag " + shared
	}
	if v.ratio > 0 {
		v.reason = fmt.Sprintf("duplicate of %s (ratio %.2f over the runner-up, %s)", top.Path, v.ratio, why)
	} else {
		v.reason = fmt.Sprintf("duplicate of %s (no other note matched, %s)", top.Path, why)
	}
	return v
}

// minSharedWords is how many of the learning's words (as analyzed, matched
// as written or through their stem) the top result must hold to be its
// note.
const minSharedWords = 2

// sharedWords lists the query terms an explained hit matched other than as
// a misspelling.
func sharedWords(e *api.HitExplanation) []string {
	if e == nil {
		return nil
	}
	var out []string
	for _, m := range e.Terms {
		if m.Match != "fuzzy" && !slices.Contains(out, m.Term) {
			out = append(out, m.Term)
		}
	}
	return out
}

// kindTags say what kind of capture a learning is, across domains; they
// say nothing of its subject.
var kindTags = []string{"gotcha", "pattern", "decision", "state"}

func kindTag(tag string) bool {
	return slices.ContainsFunc(kindTags, func(k string) bool { return strings.EqualFold(k, tag) })
}
