package vault

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// The vault's own habits, which what vault_learn writes follows where
// DESIGN.md leaves the form open: a note it creates is tagged with its
// domain when the vault's notes are, a new domain's map of content is
// titled as the other maps are, and its line in the knowledge index links
// it the way the index's other domain lines do. A learning should read as
// if the vault's owner had filed it.

// domainTagged reports whether a new note of domain should carry the
// domain as a tag: whether most of the notes already filed in the domain's
// folder carry it (letter case ignored; maps of content not counted), or,
// for a domain with no notes yet, whether most of the notes under 02-wiki/
// carry the name of the domain folder they are in. (At 100,000 notes the
// domain's own notes take a fraction of a millisecond; the pass over every
// domain's notes, for a new domain alone, about 70 ms.)
func (s *Service) domainTagged(domain string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.graph.Resolver()
	var notes, tagged int
	count := func(p, d string) {
		ni := s.notes[p]
		if ni == nil || ni.typ == "moc" || strings.HasSuffix(p, "-moc.md") {
			return
		}
		notes++
		for _, t := range ni.tags {
			if strings.EqualFold(t, d) {
				tagged++
				return
			}
		}
	}
	r.EachFolder(wikiFolder+"/"+domain, func(_ string, files []string) {
		for _, p := range files {
			count(p, domain)
		}
	})
	if notes == 0 {
		r.EachFolder(wikiFolder, func(dir string, files []string) {
			if d := domainOf(dir + "/"); d != "" {
				for _, p := range files {
					count(p, d)
				}
			}
		})
	}
	return 2*tagged > notes
}

// dailyTags is the tags key of a new daily note made without a template, as
// the vault's daily notes have it: none when the latest of them (by name:
// they are named by date) has no tags key; else the tags most of them
// carry (what a daily note is, "daily" or "journal", not the day's topics),
// which may be none; and, in a vault with no daily note yet (or whose latest
// cannot be read), an empty list, as the example vault's template gives.
func (s *Service) dailyTags() ([]any, bool) {
	s.mu.RLock()
	var latest string
	notes := 0
	counts := map[string]int{}
	s.graph.Resolver().EachFolder(dailyFolder, func(_ string, files []string) {
		for _, p := range files {
			ni := s.notes[p]
			if ni == nil {
				continue
			}
			notes++
			for _, t := range ni.tags {
				counts[strings.ToLower(t)]++
			}
			if latest == "" || path.Base(p) > path.Base(latest) || path.Base(p) == path.Base(latest) && p > latest {
				latest = p
			}
		}
	})
	s.mu.RUnlock()
	tags := []any{}
	if latest == "" {
		return tags, true
	}
	data, _, err := s.fs.ReadNote(latest)
	if err != nil {
		return tags, true
	}
	block, _ := markdown.SplitFrontmatter(string(data))
	fm, _ := markdown.ParseFrontmatter(block)
	if !hasKey(fm, "tags") {
		return nil, false
	}
	common := make([]string, 0, len(counts))
	for t, n := range counts {
		if 2*n > notes {
			common = append(common, t)
		}
	}
	slices.SortFunc(common, func(a, b string) int {
		if c := counts[b] - counts[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, t := range common {
		tags = append(tags, t)
	}
	return tags, true
}

// indexLine is the knowledge index's line for the map of content of a new
// domain, given the index's content src and a resolver that knows the new
// map. It links the map in the form of the index's first line that lists
// another domain's map: "- [[../02-wiki/go/go-moc|go]] — …" gives
// "- [[../02-wiki/k8s/k8s-moc|k8s]] — k8s". An index without such a
// line, one whose line links the map by a name the domain is not in (an
// alias, a markdown link), or a form that would not lead to the new map,
// gets the map's shortest name that does: "- [[k8s-moc]] — k8s".
func (s *Service) indexLine(src []byte, domain string, r *links.Resolver) string {
	moc := mocPath(domain)
	form := "[[" + linkName(r, knowledgeIndex, moc) + "]]"
	if l, d, ok := s.domainEntry(src, domain, r); ok {
		if target, ok := likeEntry(l.Target, d, domain); ok {
			if got, ok := r.Resolve(knowledgeIndex, target); ok && got == moc {
				form = "[[" + target
				if l.HasAlias {
					form += "|" + domain
				}
				form += "]]"
			}
		}
	}
	return "- " + form + " — " + domain
}

// domainEntry finds the first list line of the knowledge index (content
// src) whose first link is a wiki-link to the map of content of a domain
// other than skip, and returns that link and its domain.
func (s *Service) domainEntry(src []byte, skip string, r *links.Resolver) (markdown.Link, string, bool) {
	mocs := map[string]string{}
	for _, d := range s.domains() {
		if d != skip {
			mocs[mocPath(d)] = d
		}
	}
	if len(mocs) == 0 {
		return markdown.Link{}, "", false
	}
	text := string(src)
	starts := lineStarts(text)
	seen := map[int]bool{}
	for _, l := range markdown.Parse(path.Base(knowledgeIndex), src).Links {
		idx := l.Line - 1
		if l.InProperty() || idx < 0 || idx >= len(starts) || seen[idx] {
			continue
		}
		seen[idx] = true // only the first link of a line counts
		if !isEntry(text, starts[idx], l) || l.Kind != markdown.WikiLink {
			continue
		}
		if to, ok := r.ResolveLink(knowledgeIndex, l); ok {
			if d, ok := mocs[to]; ok {
				return l, d, true
			}
		}
	}
	return markdown.Link{}, "", false
}

// likeEntry rewrites target, a link to the map of content of domain d as
// the index writes it ("go-moc", "02-wiki/go/go-moc",
// "../02-wiki/go/go-moc.md"), into the same link to domain's map.
func likeEntry(target, d, domain string) (string, bool) {
	ext := ""
	if len(target) > 3 && strings.EqualFold(target[len(target)-3:], ".md") {
		target, ext = target[:len(target)-3], target[len(target)-3:]
	}
	prefix, ok := strings.CutSuffix(target, d+"-moc")
	if !ok {
		return "", false
	}
	switch parent, ok := strings.CutSuffix(prefix, "/"+d+"/"); {
	case prefix == "":
	case prefix == d+"/":
		prefix = domain + "/"
	case ok:
		prefix = parent + "/" + domain + "/"
	default:
		return "", false
	}
	return prefix + domain + "-moc" + ext, true
}

// mocSeparators are what may stand between a map of content's domain and
// the rest of its title ("Go — map of content").
var mocSeparators = []string{" — ", " – ", " - ", ": "}

// mocTitle is the title of a new domain's map of content, in the form of
// the vault's other maps: where they are titled "Go — map of content" and
// "Postgres — map of content", kafka's is "Kafka — map of content" (the
// rest of the title most of them share after their domain's name, the name
// capitalised when more of them capitalise it than not); a vault whose maps
// have no such form gets the domain's name.
func (s *Service) mocTitle(domain string) string {
	domains := s.domains()
	s.mu.RLock()
	tails := map[string]int{}
	var capital, plain int
	for _, d := range domains {
		ni := s.notes[mocPath(d)]
		if d == domain || ni == nil || len(ni.title) <= len(d) || !strings.EqualFold(ni.title[:len(d)], d) {
			continue
		}
		rest := ni.title[len(d):]
		if !slices.ContainsFunc(mocSeparators, func(sep string) bool { return len(rest) > len(sep) && strings.HasPrefix(rest, sep) }) {
			continue
		}
		tails[rest]++
		switch ni.title[:len(d)] {
		case d:
			plain++
		case capitalised(d):
			capital++
		}
	}
	s.mu.RUnlock()
	tail, votes := "", 0
	for t, n := range tails {
		if n > votes || n == votes && t < tail {
			tail, votes = t, n
		}
	}
	if tail == "" {
		return domain
	}
	if capital > plain {
		return capitalised(domain) + tail
	}
	return domain + tail
}

// capitalised is s with its first letter upper case.
func capitalised(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
