package api

import (
	"context"
	"slices"
	"strings"
)

// ChangeNotifier is the optional side of a backend that tells when its
// notes change, whoever changes them (an edit in Obsidian, a git pull, a
// write of this server). The MCP server turns the changes into resource
// update notifications for the clients that subscribed to a note.
type ChangeNotifier interface {
	// Subscribe calls fn with the vault path of every note that changed,
	// appeared or vanished, until ctx is done. fn is called on the
	// backend's own goroutine and must return quickly.
	Subscribe(ctx context.Context, fn func(path string))
}

// PathCompleter is the optional side of a backend that completes note
// paths without listing every note (completion of a note's path as a
// person types it). A backend without it is completed from List.
type PathCompleter interface {
	// CompletePaths returns the first limit note paths that match prefix
	// (see MatchPaths) and how many match in all.
	CompletePaths(ctx context.Context, prefix string, limit int) ([]string, int, error)
}

// MatchPaths is the rule of path completion every backend follows: the
// note paths that start with prefix, then those with a folder or file name
// that starts with it (so "retry" finds 02-wiki/go/retry-backoff.md),
// letter case ignored, each group sorted; the first limit of them, and how
// many match in all. A prefix spelled with "\" or "./" means the same as
// with "/" or nothing.
func MatchPaths(paths []string, prefix string, limit int) ([]string, int) {
	p := strings.ReplaceAll(prefix, `\`, "/")
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	p = strings.TrimLeft(p, "/")
	byName := p != "" && !strings.Contains(p, "/")
	var whole, named []string
	for _, np := range paths {
		switch {
		case hasPrefixFold(np, p):
			whole = append(whole, np)
		case byName && nameStarts(np, p):
			named = append(named, np)
		}
	}
	slices.Sort(whole)
	slices.Sort(named)
	all := append(whole, named...)
	total := len(all)
	if limit >= 0 && len(all) > limit {
		all = all[:limit]
	}
	return all, total
}

// hasPrefixFold is strings.HasPrefix with letter case ignored.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// nameStarts reports whether a folder or file name of p after the first
// starts with prefix (not empty), letter case ignored. The first byte is
// compared before the rest: most names fail there.
func nameStarts(p, prefix string) bool {
	lo, up := prefix[0], prefix[0]
	if 'a' <= lo && lo <= 'z' {
		up -= 'a' - 'A'
	} else if 'A' <= lo && lo <= 'Z' {
		lo += 'a' - 'A'
	}
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 || i+1 == len(p) {
			return false
		}
		p = p[i+1:]
		if c := p[0]; (c == lo || c == up || c >= 0x80) && hasPrefixFold(p, prefix) {
			return true
		}
	}
}
