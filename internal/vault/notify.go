package vault

import (
	"context"
	"sync"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
)

var (
	_ api.ChangeNotifier = (*Service)(nil)
	_ api.PathCompleter  = (*Service)(nil)
)

// subscribers are the functions Subscribe registered, told of every note
// the watcher found changed.
type subscribers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(string)
}

// Subscribe calls fn with the vault path of every note the file watcher
// sees change, appear or vanish (whoever changed it: an editor, git, a
// write of this service), until ctx is done. fn runs on the watcher's
// goroutine and must return quickly. Without Options.Watch nothing is
// ever reported.
func (s *Service) Subscribe(ctx context.Context, fn func(path string)) {
	s.subs.mu.Lock()
	id := s.subs.next
	s.subs.next++
	if s.subs.fns == nil {
		s.subs.fns = make(map[int]func(string))
	}
	s.subs.fns[id] = fn
	s.subs.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.subs.mu.Lock()
		delete(s.subs.fns, id)
		s.subs.mu.Unlock()
	})
}

// subscribed reports whether anyone listens to changes.
func (s *Service) subscribed() bool {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	return len(s.subs.fns) > 0
}

// notify tells the subscribers of the notes among paths, each once.
func (s *Service) notify(paths []string) {
	if len(paths) == 0 {
		return
	}
	s.subs.mu.Lock()
	fns := make([]func(string), 0, len(s.subs.fns))
	for _, fn := range s.subs.fns {
		fns = append(fns, fn)
	}
	s.subs.mu.Unlock()
	if len(fns) == 0 {
		return
	}
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if seen[p] || !vaultfs.IsNoteName(p) {
			continue
		}
		seen[p] = true
		for _, fn := range fns {
			fn(p)
		}
	}
}

// notesUnder lists the indexed notes under the folder rel (what vanishes
// with it), for the subscribers; nil when there are none.
func (s *Service) notesUnder(rel string) []string {
	if !s.subscribed() {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for p := range s.notes {
		if vpath.Below(p, rel) {
			out = append(out, p)
		}
	}
	return out
}

// CompletePaths returns the indexed note paths that match prefix (see
// api.MatchPaths), the first limit of them, and how many match in all.
func (s *Service) CompletePaths(ctx context.Context, prefix string, limit int) ([]string, int, error) {
	if err := s.Ready(ctx); err != nil {
		return nil, 0, err
	}
	s.mu.RLock()
	paths := make([]string, 0, len(s.notes))
	for p := range s.notes {
		paths = append(paths, p)
	}
	s.mu.RUnlock()
	out, total := api.MatchPaths(paths, prefix, limit)
	return out, total, nil
}
