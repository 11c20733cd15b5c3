package teamserver

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/mcphttp"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// MCP over Streamable HTTP, one endpoint per project: /projects/{p}/mcp
// (and /mcp?project=P; /mcp alone when the key may use exactly one
// project). The same API keys authenticate it (withKey: 401 naming the
// protected-resource metadata, rate limit, scope); a read-only key gets only
// the read tools. Every write a tool makes goes through the same
// bookkeeping as the REST API (author, ids, versions, audit).
//
// Each project's endpoint is an internal/mcphttp handler: Origin checked,
// the SDK's DNS-rebinding protection on, bodies bounded in size and time,
// idle sessions closed after mcphttp's idle timeout and sessions capped
// (the idle one evicted first). A session belongs to the key that opened it:
// the key is the session's user, so another key presenting its id is
// refused by the SDK.

// mcpSessionsPerKey caps the MCP sessions of one key on a project: a key
// opening more evicts its own session idle the longest, so that no key can
// push the others' sessions out by reaching the project's cap.
const mcpSessionsPerKey = 100

// mcpStreamRecheck is how often the key of an open MCP event stream is
// checked again.
var mcpStreamRecheck = 30 * time.Second

// mcpKeyCtx carries the authenticated key to the MCP handler.
type mcpKeyCtx struct{}

// mcpHandlers holds each project's MCP handler and each (project, key)'s
// MCP server.
type mcpHandlers struct {
	mu       sync.Mutex
	handlers map[string]*mcphttp.Handler // by project id
	servers  map[string]*cachedServer    // by project id + mcpUser
}

// cachedServer is an MCP server kept for the sessions of a (project, key)
// and the next ones. One costs about a third of a megabyte, and with OAuth
// every user is a key of its own: a server without a session for
// mcpServerKeep is dropped (when another is made), so the cache follows the
// users of the moment, not all users ever seen.
type cachedServer struct {
	srv  *mcp.Server
	used time.Time // when it was last handed out
}

// mcpServerKeep is how long a server with no session is kept.
const mcpServerKeep = 10 * time.Minute

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
	ctx, cancel := s.storeCtx(ctx)
	defer cancel()
	ps, err := s.store.Projects(ctx)
	if err != nil || len(ps) != 1 || !k.Allows(ps[0].ID) {
		return ""
	}
	return ps[0].ID
}

func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project) {
	h, err := s.mcpHandler(pr)
	if err != nil {
		s.log.Error("MCP handler", "err", err)
		errorf(http.StatusInternalServerError, teamapi.CodeInternal, "internal error").write(w)
		return
	}
	ctx := context.WithValue(r.Context(), mcpKeyCtx{}, k)
	if r.Method == http.MethodGet {
		// A standalone event stream never ends by itself: it is exempt from
		// the server's write timeout, and ended when the server shuts down so
		// that the shutdown does not wait for it.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		// Its key is checked again while it lasts: a key revoked (or a
		// token expired) ends it, as it would refuse any other request.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		// A copy of the request's credentials: the MCP handler rewrites
		// the headers of the request it serves.
		again := r.Clone(ctx)
		go func() {
			tick := time.NewTicker(mcpStreamRecheck)
			defer tick.Stop()
			for {
				select {
				case <-s.stopping:
					cancel()
					return
				case <-ctx.Done():
					return
				case <-tick.C:
					if _, fail := s.authenticate(again); fail != nil && (fail.status == http.StatusUnauthorized || fail.status == http.StatusForbidden) {
						s.log.Info("MCP event stream ended: its key is no longer accepted", "key", k.Name, "status", fail.status)
						cancel()
						return
					}
				}
			}
		}()
	}
	h.ServeHTTP(w, r.WithContext(ctx))
}

// mcpVerify gives mcphttp the key withKey already checked, as the
// session's user (so a session is bound to its key).
func mcpVerify(_ context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	k, _ := r.Context().Value(mcpKeyCtx{}).(*teamstore.Key)
	if k == nil || subtle.ConstantTimeCompare(HashKey(token), k.Hash) != 1 {
		return nil, fmt.Errorf("%w: not the request's API key", auth.ErrInvalidToken)
	}
	scopes := []string{"vault:read"}
	if !k.ReadOnly {
		scopes = append(scopes, "vault:write")
	}
	return &auth.TokenInfo{UserID: mcpUser(k), Scopes: scopes}, nil
}

// mcpUser is who a session belongs to: the key and its access. An OAuth
// subject's key is made from each token, so the same subject may come with
// vault:write once and with vault:read only the next time: a session opened
// with one access is not continued with the other, and each access has its
// own MCP server (its tools and its write check), so the tools always
// follow the token of the request.
func mcpUser(k *teamstore.Key) string {
	access := "rw"
	if k.ReadOnly {
		access = "ro"
	}
	return k.ID + "\x00" + access + "\x00" + k.Name
}

// publicOrigins are the origins a browser-based client may send besides the
// server's own listening address: that of --public-url (the address behind
// a proxy).
func (s *Server) publicOrigins() []string {
	u, err := url.Parse(s.cfg.PublicURL)
	if s.cfg.PublicURL == "" || err != nil || u.Host == "" {
		return nil
	}
	return []string{u.Scheme + "://" + u.Host}
}

// mcpHandler is the project's MCP handler (made once).
func (s *Server) mcpHandler(pr *project) (*mcphttp.Handler, error) {
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	if h, ok := s.mcp.handlers[pr.meta.ID]; ok {
		return h, nil
	}
	h, err := mcphttp.New(func(r *http.Request) *mcp.Server {
		k, _ := r.Context().Value(mcpKeyCtx{}).(*teamstore.Key)
		if k == nil {
			return nil
		}
		return s.mcpServer(pr, k)
	}, mcphttp.Options{Verify: mcpVerify, MaxBodyBytes: maxJSONBody, MaxSessionsPerUser: mcpSessionsPerKey, AllowedOrigins: s.publicOrigins(), Logger: s.log.With("project", pr.meta.Name)})
	if err != nil {
		return nil, err
	}
	if s.mcp.handlers == nil {
		s.mcp.handlers = make(map[string]*mcphttp.Handler)
	}
	s.mcp.handlers[pr.meta.ID] = h
	return h, nil
}

// mcpServer is the MCP server of a (project, key): the project's vault
// with the key's rights and authorship.
func (s *Server) mcpServer(pr *project, k *teamstore.Key) *mcp.Server {
	id := pr.meta.ID + "\x00" + mcpUser(k)
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	now := s.now()
	if c, ok := s.mcp.servers[id]; ok {
		c.used = now
		return c.srv
	}
	for other, c := range s.mcp.servers {
		// A server handed out just now may be about to get its first
		// session: only one unused for mcpServerKeep is dropped.
		if now.Sub(c.used) >= mcpServerKeep && !hasSessions(c.srv) {
			delete(s.mcp.servers, other)
		}
	}
	key := *k
	srv := mcpserver.New(&projectBackend{s: s, pr: pr, key: &key}, mcpserver.Options{Lang: s.cfg.Lang, ReadOnly: k.ReadOnly, Version: mcpVersion, Logger: s.log.With("project", pr.meta.Name, "key", k.Name)})
	if s.mcp.servers == nil {
		s.mcp.servers = make(map[string]*cachedServer)
	}
	s.mcp.servers[id] = &cachedServer{srv: srv, used: now}
	return srv
}

// hasSessions reports whether srv has a session open.
func hasSessions(srv *mcp.Server) bool {
	for range srv.Sessions() {
		return true
	}
	return false
}

// dropMCP closes the MCP sessions of a project (its vault is served by
// another replica from now on: their clients reconnect there).
func (s *Server) dropMCP(projectID string) {
	s.mcp.mu.Lock()
	h := s.mcp.handlers[projectID]
	delete(s.mcp.handlers, projectID)
	for id := range s.mcp.servers {
		if strings.HasPrefix(id, projectID+"\x00") {
			delete(s.mcp.servers, id)
		}
	}
	s.mcp.mu.Unlock()
	if h != nil {
		h.Close()
	}
}

// closeMCP closes every MCP session.
func (s *Server) closeMCP() {
	s.mcp.mu.Lock()
	hs := s.mcp.handlers
	s.mcp.handlers = nil
	s.mcp.mu.Unlock()
	for _, h := range hs {
		h.Close()
	}
}

// projectBackend is a project's vault as the MCP tools see it: reads go to
// the vault service, writes through the server's write path.
type projectBackend struct {
	s   *Server
	pr  *project
	key *teamstore.Key
}

var (
	_ api.WriteBackend   = (*projectBackend)(nil)
	_ api.Learner        = (*projectBackend)(nil)
	_ api.ChangeNotifier = (*projectBackend)(nil)
	_ api.PathCompleter  = (*projectBackend)(nil)
)

// Subscribe passes the vault's change notifications on (resources/subscribe
// of the project's notes).
func (b *projectBackend) Subscribe(ctx context.Context, fn func(path string)) {
	b.pr.svc.Subscribe(ctx, fn)
}

// CompletePaths completes note paths from the vault's index.
func (b *projectBackend) CompletePaths(ctx context.Context, prefix string, limit int) ([]string, int, error) {
	return b.pr.svc.CompletePaths(ctx, prefix, limit)
}

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
	b.s.inflightWrites.Add(1)
	defer b.s.inflightWrites.Add(-1)
	b.pr.book.RLock()
	out := b.s.applyOp(ctx, b.key, wop, "")
	if err := b.s.finish(context.WithoutCancel(ctx), b.key, wop, out, "", nil); err != nil {
		b.s.log.Error("recording an MCP write", "err", err)
	}
	b.pr.book.RUnlock()
	if failure == nil && out.resp.status >= 400 {
		// The vault wrote, but the write did not stand: it was not pushed
		// to the vault's git remote, or this replica no longer serves it.
		var body teamapi.ErrorBody
		_ = jsonUnmarshal(out.resp.body, &body)
		failure = &api.Error{Code: api.CodeUnavailable, Message: body.Error.Message, Uncertain: out.uncertain}
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
