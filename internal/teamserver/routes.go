package teamserver

import (
	"context"
	"errors"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/msgcat"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

type keyHandler func(w http.ResponseWriter, r *http.Request, k *teamstore.Key)
type projectHandler func(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/auth/me", s.withKey(s.handleMe))
	mux.HandleFunc("/api/projects", s.withKey(s.handleProjects))
	mux.HandleFunc("/api/projects/{p}/files", s.withProject(s.handleFiles))
	mux.HandleFunc("/api/projects/{p}/files/{id}", s.withProject(s.handleFile))
	mux.HandleFunc("/api/projects/{p}/files/{id}/versions", s.withProject(s.handleVersions))
	mux.HandleFunc("/api/projects/{p}/{op}", s.withProject(s.handleExt))
	mux.HandleFunc("/projects/{p}/mcp", s.withKey(s.handleMCP))
	mux.HandleFunc("/mcp", s.withKey(s.handleMCP))
	mux.HandleFunc("/.well-known/oauth-protected-resource", s.handleResourceMetadata)
	mux.HandleFunc("/.well-known/oauth-protected-resource/", s.handleResourceMetadata)
	mux.HandleFunc("/healthz", s.handleHealth)
	mux.HandleFunc("/readyz", s.handleReady)
	mux.Handle("/metrics", s.met.reg.Handler())
	mux.HandleFunc("/api/", s.withKey(func(w http.ResponseWriter, r *http.Request, _ *teamstore.Key) {
		errorf(http.StatusNotFound, teamapi.CodeNotFound, "no such endpoint: %s", r.URL.Path).write(w)
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		errorf(http.StatusNotFound, teamapi.CodeNotFound, "no such endpoint: %s (the API is under /api/)", r.URL.Path).write(w)
	})
	return s.logged(cleanPaths(mux))
}

// cleanPaths answers a request whose URL path is not clean ("//", "/./",
// "/../", as curl --path-as-is sends them) with the API's JSON 404 instead
// of the ServeMux's redirect, whose body is HTML: every answer of the API
// is JSON, and a client that follows the redirect would send its key to a
// path it did not name.
func cleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p != "" && p != "/" && path.Clean(p) != strings.TrimSuffix(p, "/") {
			errorf(http.StatusNotFound, teamapi.CodeNotFound, "no such endpoint: %q is not a clean path (no //, /./ or /../)", p).write(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withKey authenticates the request and applies the key's rate limit.
func (s *Server) withKey(h keyHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		k, fail := s.authenticate(r)
		if fail != nil {
			fail.write(w)
			return
		}
		if ok, wait := s.limiter.take(k.ID); !ok {
			resp := errorf(http.StatusTooManyRequests, teamapi.CodeRateLimited, "the key %q is over its rate limit; retry after the Retry-After seconds", k.Name)
			resp.header.Set("Retry-After", retryAfter(wait))
			resp.write(w)
			return
		}
		setKeyName(r, k.Name)
		h(w, r, k)
	}
}

// withProject also resolves {p} (id or name) within the key's scope, and
// has the vault word its warnings and refusals in the request's
// Accept-Language when it can (the MCP endpoint does not: its tool output
// is in the server's --lang, and so are they).
func (s *Server) withProject(h projectHandler) http.HandlerFunc {
	return s.withKey(func(w http.ResponseWriter, r *http.Request, k *teamstore.Key) {
		if lang := acceptedLang(r.Header.Get("Accept-Language"), vault.Languages()); lang != "" {
			r = r.WithContext(api.WithLang(r.Context(), lang))
		}
		s.withProjectRef(r.PathValue("p"), w, r, k, h)
	})
}

// withProjectRef runs h on the project ref names, within the key's scope.
func (s *Server) withProjectRef(ref string, w http.ResponseWriter, r *http.Request, k *teamstore.Key, h projectHandler) {
	if s.rep != nil {
		meta, err := s.rep.projectMeta(r.Context(), ref)
		if err != nil {
			if errors.Is(err, teamstore.ErrNotFound) {
				noProject(w, k, ref)
				return
			}
			s.log.Error("finding a project", "project", ref, "err", err)
			errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "project %q cannot be looked up right now; retry", ref).write(w)
			return
		}
		if !k.Allows(meta.ID) {
			errorf(http.StatusForbidden, teamapi.CodeForbidden, "the key %q may not use project %q", k.Name, ref).write(w)
			return
		}
		s.serveReplicated(w, r, k, meta, h)
		return
	}
	pr, err := s.project(r.Context(), ref)
	if err != nil {
		if errors.Is(err, teamstore.ErrNotFound) {
			noProject(w, k, ref)
			return
		}
		if uerr := (*UnopenedError)(nil); errors.As(err, &uerr) {
			errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "project %q cannot be opened on the server now (its vault folder is missing or cannot be read: the server's log says why); it is tried again every %s", ref, openRetry).write(w)
			return
		}
		s.log.Error("opening a project", "project", ref, "err", err)
		if teamstore.Unavailable(err) {
			errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "project %q cannot be looked up right now (the server's database does not answer); retry", ref).write(w)
			return
		}
		errorf(http.StatusInternalServerError, teamapi.CodeInternal, "project %q cannot be opened", ref).write(w)
		return
	}
	if !k.Allows(pr.meta.ID) {
		errorf(http.StatusForbidden, teamapi.CodeForbidden, "the key %q may not use project %q", k.Name, ref).write(w)
		return
	}
	h(w, r, k, pr)
}

// acceptedLang is the language of an Accept-Language header that the
// vault's texts have, the one of the highest weight (the first of those
// weighing the same); "" when none.
func acceptedLang(header string, have []string) string {
	best, bestQ := "", 0.0
	for _, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				continue
			}
			q = f
		}
		base := msgcat.Base(tag)
		if q > bestQ && slices.Contains(have, base) {
			best, bestQ = base, q
		}
	}
	return best
}

// noProject answers a request for a project that does not exist: 404 for
// a key to every project, and for a key limited to some the 403 of a
// project outside its scope, so that such a key cannot tell which names
// the server's other projects have.
func noProject(w http.ResponseWriter, k *teamstore.Key, ref string) {
	if len(k.Projects) > 0 {
		errorf(http.StatusForbidden, teamapi.CodeForbidden, "the key %q may not use project %q", k.Name, ref).write(w)
		return
	}
	errorf(http.StatusNotFound, teamapi.CodeNotFound, "no project %q", ref).write(w)
}

func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, k *teamstore.Key) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	projects := k.Projects
	if projects == nil {
		projects = []string{}
	}
	jsonResponse(http.StatusOK, teamapi.Me{Key: teamapi.KeyInfo{ID: k.ID, Name: k.Name, ReadOnly: k.ReadOnly, Projects: projects, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt}}).write(w)
}

func (s *Server) handleProjects(w http.ResponseWriter, r *http.Request, k *teamstore.Key) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	ctx, cancel := s.storeCtx(r.Context())
	ps, err := s.store.Projects(ctx)
	cancel()
	if err != nil {
		vaultError(err).write(w)
		return
	}
	out := teamapi.ProjectList{Projects: []teamapi.Project{}}
	for _, p := range ps {
		if k.Allows(p.ID) {
			out.Projects = append(out.Projects, teamapi.Project{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt})
		}
	}
	jsonResponse(http.StatusOK, out).write(w)
}

// statusWriter remembers the status of an answer, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	key    string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes flushes on (MCP event streams need them).
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type keyNameSetter interface{ setKey(string) }

func (w *statusWriter) setKey(name string) { w.key = name }

// setKeyName tells the request log which key a request used.
func setKeyName(r *http.Request, name string) {
	if s, ok := r.Context().Value(logKey{}).(keyNameSetter); ok {
		s.setKey(name)
	}
}

type logKey struct{}

// logged logs every request at debug level (never its query string, which
// may hold a key someone put there by mistake).
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), logKey{}, sw))
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(sw, r)
		took := time.Since(start)
		route := r.Pattern // set by the mux on r
		if route == "" {
			route = "none"
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		s.met.requests.Inc(route, methodLabel(r.Method), strconv.Itoa(status))
		s.met.latency.Observe(took.Seconds(), route)
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "key", sw.key, "ms", float64(took.Microseconds())/1000)
	})
}
