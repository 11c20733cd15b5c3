package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Notes as MCP resources: vault://note/{+path} names the note at a vault
// path ("+": reserved expansion, so the path keeps its slashes:
// vault://note/02-wiki/go/retry-backoff.md; the %2F-escaped form a client
// makes from a simple {path} expansion names the same note). A read goes
// to the backend's GetNote, so through the gatekeeper like every tool; a
// subscription to a note is told of its changes when the backend reports
// them (api.ChangeNotifier).

const (
	noteScheme   = "vault://note/"
	noteTemplate = noteScheme + "{+path}"
	noteMIME     = "text/markdown"
	// maxResourceChars bounds the text of one resource read: a note
	// longer than this is refused (read it in pages with vault_get_note).
	maxResourceChars = 1_000_000
	// maxSubscribedURIs bounds the note URIs with subscribers, whatever
	// clients send.
	maxSubscribedURIs = 10_000
)

// notePathOf returns the path a vault://note/ URI names, as the client
// spelled it (percent-decoded): the gatekeeper judges it when the note is
// read. ok is false for a URI of another scheme.
func notePathOf(uri string) (p string, ok bool, err error) {
	rest, found := strings.CutPrefix(uri, noteScheme)
	if !found {
		return "", false, nil
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	p, err = url.PathUnescape(rest)
	if err == nil && p == "" {
		err = errors.New("no path")
	}
	if err != nil {
		return "", true, api.Invalid("uri", "%q is not a note URI (%v); want %s<vault path of the note>", uri, err, noteScheme)
	}
	return p, true, nil
}

// subscriptionKey normalises a note path lexically as the gatekeeper does
// ("\" is "/", empty and "." segments dropped, ".." taken back), so that
// two spellings of one note share their subscribers and a change the
// backend reports under the clean path reaches both.
func subscriptionKey(uri string) (key string, ok bool, err error) {
	p, ok, err := notePathOf(uri)
	if err != nil || !ok {
		return "", ok, err
	}
	key = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if key == "." || key == ".." || strings.HasPrefix(key, "../") || strings.HasPrefix(key, "/") {
		return "", true, api.Invalid("uri", "%q does not name a note inside the vault", uri)
	}
	return key, true, nil
}

// protocolError turns a failure into the JSON-RPC error of a resource or
// prompt request: the one line a tool error would have, as invalid
// params unless the server itself failed.
func protocolError(err error) error {
	code := int64(jsonrpc.CodeInvalidParams)
	switch api.CodeOf(err) {
	case api.CodeInternal, api.CodeUnavailable:
		code = jsonrpc.CodeInternalError
	}
	return &jsonrpc.Error{Code: code, Message: errorLine(err)}
}

// addNoteResources registers the note template.
func addNoteResources(s *mcp.Server, e *env) {
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "note",
		Title:       e.msg.get(msgResourceTitle),
		Description: expand(e.msg.get(msgResourceDescription), nil),
		MIMEType:    noteMIME,
		URITemplate: noteTemplate,
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return readNote(ctx, e, req.Params.URI)
	})
}

// readNote reads a whole note through the backend, page after page, and
// makes sure every page came from the same version of the file.
func readNote(ctx context.Context, e *env, uri string) (*mcp.ReadResourceResult, error) {
	p, _, err := notePathOf(uri)
	if err != nil {
		return nil, protocolError(err)
	}
	var text strings.Builder
	req := api.NoteRequest{Path: p}
	first := ""
	for attempt := 0; ; {
		n, err := e.backend.GetNote(ctx, req)
		if err != nil {
			if api.CodeOf(err) == api.CodeNotFound {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			e.log.Debug("resource read failed", "uri", uri, "error", err)
			return nil, protocolError(err)
		}
		if n.TotalChars > maxResourceChars {
			return nil, protocolError(&api.Error{Code: "TOO_LARGE", Field: "uri",
				Message: e.msg.get(msgErrResourceTooLarge, escape(p), n.TotalChars, maxResourceChars)})
		}
		switch {
		case req.Offset == 0:
			first = n.SHA256
		case n.SHA256 != first:
			// The note changed between two pages: read it again.
			if attempt++; attempt == 3 {
				return nil, protocolError(&api.Error{Code: api.CodeConflict, Field: "uri", Message: e.msg.get(msgErrResourceChanging, escape(p))})
			}
			text.Reset()
			req.Offset = 0
			continue
		}
		text.WriteString(n.Content)
		if n.NextOffset == 0 {
			break
		}
		req.Offset = n.NextOffset
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: noteMIME, Text: text.String()}}}, nil
}

// subscriptions keeps the note URIs clients subscribed to, by vault path,
// and turns the backend's changes into notifications/resources/updated.
// The SDK keeps which session subscribed to which URI; this keeps which
// URIs spell each note, so that a change is sent under every spelling a
// client used.
type subscriptions struct {
	notifier api.ChangeNotifier
	ctx      context.Context
	log      *slog.Logger
	server   *mcp.Server // set once the server exists

	mu      sync.Mutex
	started bool
	uris    map[string]map[string]int // vault path -> URI -> subscribe requests
	count   int                       // URIs in uris
	pending map[string]bool           // paths changed, not yet sent
	wake    chan struct{}
}

func newSubscriptions(ctx context.Context, n api.ChangeNotifier, log *slog.Logger) *subscriptions {
	return &subscriptions{notifier: n, ctx: ctx, log: log, uris: map[string]map[string]int{},
		pending: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// subscribe is the server's SubscribeHandler. A URI of another scheme is
// accepted and never changes (the conformance suite subscribes to
// test://watched-resource).
func (s *subscriptions) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	p, ok, err := subscriptionKey(req.Params.URI)
	if err != nil {
		return protocolError(err)
	}
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byURI := s.uris[p]
	if byURI[req.Params.URI] == 0 {
		if s.count >= maxSubscribedURIs {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "too many subscribed notes"}
		}
		if byURI == nil {
			byURI = map[string]int{}
			s.uris[p] = byURI
		}
		s.count++
	}
	byURI[req.Params.URI]++
	if !s.started {
		s.started = true
		s.notifier.Subscribe(s.ctx, s.changed)
		go s.deliver()
	}
	return nil
}

// unsubscribe is the server's UnsubscribeHandler.
func (s *subscriptions) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	p, ok, err := subscriptionKey(req.Params.URI)
	if err != nil || !ok {
		return nil // nothing to forget
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byURI := s.uris[p]
	if byURI[req.Params.URI] == 0 {
		return nil
	}
	if byURI[req.Params.URI]--; byURI[req.Params.URI] == 0 {
		delete(byURI, req.Params.URI)
		s.count--
		if len(byURI) == 0 {
			delete(s.uris, p)
		}
	}
	return nil
}

// changed is called by the backend for each changed note: it only records
// the path, so the backend's watcher never waits for a client.
func (s *subscriptions) changed(p string) {
	s.mu.Lock()
	if _, ok := s.uris[p]; ok {
		s.pending[p] = true
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// deliver sends the notifications of the changes recorded, until the
// server's context ends.
func (s *subscriptions) deliver() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		}
		s.mu.Lock()
		var uris []string
		for p := range s.pending {
			for u := range s.uris[p] {
				uris = append(uris, u)
			}
		}
		clear(s.pending)
		s.mu.Unlock()
		for _, u := range uris {
			if err := s.server.ResourceUpdated(s.ctx, &mcp.ResourceUpdatedNotificationParams{URI: u}); err != nil {
				s.log.Debug("resource update not sent", "uri", u, "error", err)
			}
		}
	}
}
