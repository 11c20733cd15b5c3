package teamserver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// MCP over Streamable HTTP, one endpoint per project: /projects/{p}/mcp
// (and /mcp?project=P; /mcp alone when the key may use exactly one
// project). The same API keys authenticate it; a read-only key gets only
// the read tools. Every write a tool makes goes through the same
// bookkeeping as the REST API (author, ids, versions, audit).
//
// This is a minimal handler over the go-sdk's: its DNS-rebinding
// protection stays on, cross-origin requests from browsers are refused
// (http.CrossOriginProtection), idle sessions are closed after
// MCPSessionIdle, and a key holds at most MCPMaxSessions sessions per
// project. Each (project, key) pair has its own handler, so a session id
// is worthless with another key.
const (
	MCPSessionIdle = 30 * time.Minute
	MCPMaxSessions = 32
)

// mcpHandlers caches one handler per (project, key).
type mcpHandlers struct {
	mu sync.Mutex
	m  map[string]*mcpEndpoint
}

type mcpEndpoint struct {
	h http.Handler
	// sessions seen in answers, with their last request, to cap them.
	mu       sync.Mutex
	sessions map[string]time.Time
}

// mcpVersion is reported in the MCP handshake.
var mcpVersion = "dev"

// SetVersion sets the version the MCP endpoint reports.
func SetVersion(v string) { mcpVersion = v }

func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request, k *teamstore.Key) {
	ref := r.PathValue("p")
	if ref == "" {
		ref = r.URL.Query().Get("project")
	}
	if ref == "" {
		ref = s.onlyProject(r.Context(), k)
		if ref == "" {
			errorf(http.StatusBadRequest, teamapi.CodeInvalidArgument, "which project? use /projects/{project}/mcp (or /mcp?project=NAME)").write(w)
			return
		}
	}
	s.withProjectRef(ref, w, r, k, s.serveMCP)
}

// onlyProject is the one project a key may use, or "".
func (s *Server) onlyProject(ctx context.Context, k *teamstore.Key) string {
	if len(k.Projects) == 1 {
		return k.Projects[0]
	}
	ps, err := s.store.Projects(ctx)
	if err != nil || len(ps) != 1 || !k.Allows(ps[0].ID) {
		return ""
	}
	return ps[0].ID
}

func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project) {
	ep := s.mcpEndpoint(k, pr)
	sid := r.Header.Get("Mcp-Session-Id")
	now := time.Now()
	ep.mu.Lock()
	for id, seen := range ep.sessions {
		if now.Sub(seen) > MCPSessionIdle {
			delete(ep.sessions, id)
		}
	}
	if sid == "" && r.Method == http.MethodPost && len(ep.sessions) >= MCPMaxSessions {
		ep.mu.Unlock()
		resp := errorf(http.StatusTooManyRequests, teamapi.CodeRateLimited, "the key %q has %d open MCP sessions on %s; close one (DELETE) or wait for idle ones to expire", k.Name, MCPMaxSessions, pr.meta.Name)
		resp.header.Set("Retry-After", "60")
		resp.write(w)
		return
	}
	if sid != "" {
		if _, ok := ep.sessions[sid]; ok {
			ep.sessions[sid] = now
		}
	}
	ep.mu.Unlock()
	if r.Method == http.MethodGet {
		// A standalone event stream never ends by itself: it is exempt from
		// the server's write timeout, and ended when the server shuts down so
		// that the shutdown does not wait for it.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-s.stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
		r = r.WithContext(ctx)
	}
	sw := &sessionWriter{ResponseWriter: w}
	ep.h.ServeHTTP(sw, r)
	ep.mu.Lock()
	switch {
	case r.Method == http.MethodDelete && sid != "":
		delete(ep.sessions, sid)
	case sw.session != "":
		ep.sessions[sw.session] = now
	}
	ep.mu.Unlock()
}

// sessionWriter notes the session id an answer hands out.
type sessionWriter struct {
	http.ResponseWriter
	session string
}

func (w *sessionWriter) WriteHeader(code int) {
	if code < 300 {
		w.session = w.Header().Get("Mcp-Session-Id")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWriter) Write(b []byte) (int, error) {
	if w.session == "" {
		w.session = w.Header().Get("Mcp-Session-Id")
	}
	return w.ResponseWriter.Write(b)
}

func (w *sessionWriter) Flush() {
	if w.session == "" {
		w.session = w.Header().Get("Mcp-Session-Id")
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *sessionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) mcpEndpoint(k *teamstore.Key, pr *project) *mcpEndpoint {
	id := pr.meta.ID + "\x00" + k.ID
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	if s.mcp.m == nil {
		s.mcp.m = make(map[string]*mcpEndpoint)
	}
	if ep, ok := s.mcp.m[id]; ok {
		return ep
	}
	key := *k
	b := &projectBackend{s: s, pr: pr, key: &key}
	var backend api.Backend = b
	server := mcpserver.New(backend, mcpserver.Options{Lang: s.cfg.Lang, ReadOnly: k.ReadOnly, Version: mcpVersion, Logger: s.log.With("project", pr.meta.Name, "key", k.Name)})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Logger: s.log, SessionTimeout: MCPSessionIdle, MaxRequestBodyBytes: maxBody,
	})
	ep := &mcpEndpoint{h: http.NewCrossOriginProtection().Handler(h), sessions: make(map[string]time.Time)}
	s.mcp.m[id] = ep
	return ep
}

// projectBackend is a project's vault as the MCP tools see it: reads go to
// the vault service, writes through the server's write path.
type projectBackend struct {
	s   *Server
	pr  *project
	key *teamstore.Key
}

var (
	_ api.WriteBackend = (*projectBackend)(nil)
	_ api.Learner      = (*projectBackend)(nil)
)

func (b *projectBackend) Search(ctx context.Context, req api.SearchRequest) (*api.SearchResult, error) {
	return b.pr.svc.Search(ctx, req)
}

func (b *projectBackend) GetNote(ctx context.Context, req api.NoteRequest) (*api.Note, error) {
	return b.pr.svc.GetNote(ctx, req)
}

func (b *projectBackend) List(ctx context.Context, req api.ListRequest) (*api.ListResult, error) {
	return b.pr.svc.List(ctx, req)
}

func (b *projectBackend) Backlinks(ctx context.Context, req api.BacklinksRequest) (*api.BacklinksResult, error) {
	return b.pr.svc.Backlinks(ctx, req)
}

func (b *projectBackend) Graph(ctx context.Context, req api.GraphRequest) (*api.GraphResult, error) {
	return b.pr.svc.Graph(ctx, req)
}

func (b *projectBackend) History(ctx context.Context, req api.HistoryRequest) (*api.HistoryResult, error) {
	return b.pr.svc.History(ctx, req)
}

// write runs one tool write as the REST writes run: under the project's
// lock, authored by the key, reconciled, audited.
func (b *projectBackend) write(ctx context.Context, op string, fn func(ctx context.Context) (*api.WriteResult, error)) error {
	if b.key.ReadOnly {
		return &api.Error{Code: api.CodeReadOnly, Message: "the key is read-only"}
	}
	var failure error
	wop := writeOp{pr: b.pr, op: "mcp " + op, apply: func(ctx context.Context) *outcome {
		res, err := fn(ctx)
		if err != nil {
			failure = err
			out := failed(vaultError(err))
			return out
		}
		return b.s.written(ctx, b.pr, res, op+" "+res.Path, func(time.Time, map[string]teamstore.File) *response { return &response{status: http.StatusOK} })
	}}
	b.s.writes.Add(1)
	defer b.s.writes.Done()
	out := b.s.applyOp(ctx, b.key, wop, "")
	if err := b.s.finish(context.WithoutCancel(ctx), b.key, wop, out, "", nil); err != nil {
		b.s.log.Error("recording an MCP write", "err", err)
	}
	return failure
}

func (b *projectBackend) WriteNote(ctx context.Context, req api.WriteRequest) (res *api.WriteResult, err error) {
	err = b.write(ctx, "write", func(ctx context.Context) (*api.WriteResult, error) {
		res, err = b.pr.svc.WriteNote(ctx, req)
		return res, err
	})
	return res, err
}

func (b *projectBackend) EditNote(ctx context.Context, req api.EditRequest) (res *api.WriteResult, err error) {
	err = b.write(ctx, "edit", func(ctx context.Context) (*api.WriteResult, error) {
		res, err = b.pr.svc.EditNote(ctx, req)
		return res, err
	})
	return res, err
}

func (b *projectBackend) Move(ctx context.Context, req api.MoveRequest) (res *api.WriteResult, err error) {
	err = b.write(ctx, "move", func(ctx context.Context) (*api.WriteResult, error) {
		res, err = b.pr.svc.Move(ctx, req)
		return res, err
	})
	return res, err
}

func (b *projectBackend) Delete(ctx context.Context, req api.DeleteRequest) (res *api.WriteResult, err error) {
	err = b.write(ctx, "delete", func(ctx context.Context) (*api.WriteResult, error) {
		res, err = b.pr.svc.Delete(ctx, req)
		return res, err
	})
	return res, err
}

func (b *projectBackend) Undo(ctx context.Context, req api.UndoRequest) (res *api.WriteResult, err error) {
	err = b.write(ctx, "undo", func(ctx context.Context) (*api.WriteResult, error) {
		res, err = b.pr.svc.Undo(ctx, req)
		return res, err
	})
	return res, err
}

func (b *projectBackend) Learn(ctx context.Context, req api.LearnRequest) (res *api.LearnResult, err error) {
	err = b.write(ctx, "learn", func(ctx context.Context) (*api.WriteResult, error) {
		res, err = b.pr.svc.Learn(ctx, req)
		if err != nil {
			return nil, err
		}
		return &res.WriteResult, nil
	})
	return res, err
}
