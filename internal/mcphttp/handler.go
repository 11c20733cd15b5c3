package mcphttp

import (
	"bytes"
	"container/list"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options.
const (
	DefaultSessionIdleTimeout = 30 * time.Minute
	DefaultMaxSessions        = 1000
	DefaultBodyTimeout        = 10 * time.Second
	DefaultMaxBodyBytes       = mcp.DefaultMaxRequestBodyBytes
)

// Options configure a Handler. The zero value is usable: no key, the
// defaults above.
type Options struct {
	// AllowedOrigins are origins ("https://app.example.com",
	// "http://localhost:3000") served besides the listen address's own.
	AllowedOrigins []string
	// Verify checks the key of every request (from X-API-Key, or
	// Authorization: Bearer). It returns auth.ErrInvalidToken (wrapped) for
	// a bad key. The TokenInfo it returns may have a zero Expiration. nil:
	// no key is asked for.
	Verify auth.TokenVerifier
	// ResourceMetadataURL is announced in the WWW-Authenticate header of a
	// 401 (RFC 9728), for OAuth clients.
	ResourceMetadataURL string
	// SessionIdleTimeout closes a session with no request for this long;
	// 0 means DefaultSessionIdleTimeout, negative never.
	SessionIdleTimeout time.Duration
	// MaxSessions caps the open sessions; 0 means DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerUser caps the open sessions of one user (the UserID
	// Verify gives; sessions without one are not counted): a user at the
	// cap who opens another evicts its own session idle the longest, so
	// one key opening sessions without end cannot push out those of the
	// others. 0 means no cap per user.
	MaxSessionsPerUser int
	// BodyTimeout bounds the time a request body takes to arrive; 0 means
	// DefaultBodyTimeout.
	BodyTimeout time.Duration
	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Now is the clock of the idle expiry; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Handler serves MCP over Streamable HTTP (mount it at /mcp).
type Handler struct {
	sdk http.Handler
	// authed is the part of ServeHTTP after the Origin check, behind the
	// key check when there is one.
	authed    http.Handler
	getServer func(*http.Request) *mcp.Server
	origins   map[string]bool
	opts      Options
	log       *slog.Logger

	mu       sync.Mutex
	sessions map[string]*session
	// idle holds the sessions with no request in flight, the one idle the
	// longest at the back.
	idle    *list.List
	pending int // sessions being created
	// pendingBy counts them by user.
	pendingBy map[string]int
	// closing holds the ids of the sessions evicted or expired whose
	// close has not finished yet: the SDK still knows them until it has,
	// and a request for one must not reach it (it would be served by a
	// session the handler no longer counts). It is answered 404 here.
	closing map[string]struct{}
	closed  bool
	// closeSession closes an SDK session (its Close; tests hold it open).
	closeSession func(*mcp.ServerSession) error

	stop chan struct{}
	done chan struct{}
}

type session struct {
	id       string
	user     string // the TokenInfo's UserID, "" without one
	ss       *mcp.ServerSession
	inFlight int
	// idleSince is when the last request ended; elem is its place in
	// Handler.idle while inFlight is 0.
	idleSince time.Time
	elem      *list.Element
}

// New returns a Handler serving the servers getServer gives (as
// mcp.NewStreamableHTTPHandler). Close it to stop its expiry sweeps and
// close its sessions.
func New(getServer func(*http.Request) *mcp.Server, opts Options) (*Handler, error) {
	origins := map[string]bool{}
	for _, o := range opts.AllowedOrigins {
		n, err := normalizeOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", o, err)
		}
		origins[n] = true
	}
	if opts.SessionIdleTimeout == 0 {
		opts.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxSessions < 0 {
		return nil, fmt.Errorf("max sessions: %d is not a count", opts.MaxSessions)
	}
	if opts.MaxSessionsPerUser < 0 {
		return nil, fmt.Errorf("max sessions per user: %d is not a count", opts.MaxSessionsPerUser)
	}
	if opts.BodyTimeout == 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.BodyTimeout < 0 {
		return nil, fmt.Errorf("body timeout: %s is negative", opts.BodyTimeout)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{
		getServer: getServer,
		origins:   origins,
		opts:      opts,
		log:       log,
		sessions:  map[string]*session{},
		pendingBy: map[string]int{},
		closing:   map[string]struct{}{},
		idle:      list.New(),
		closeSession: func(ss *mcp.ServerSession) error {
			return ss.Close()
		},
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	// The SDK's DNS-rebinding protection stays on (DisableLocalhostProtection
	// is never set); its own idle timeout is not used: ours is on the
	// injected clock and the cap needs the same idle times.
	h.sdk = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:              log,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
	})
	h.authed = http.HandlerFunc(h.serveAuthed)
	if opts.Verify != nil {
		// The SDK's middleware, so that the TokenInfo lands where the SDK
		// reads it (tool handlers, the session's user check). ServeHTTP
		// has verified the key already and answered a bad one itself; the
		// middleware is handed the TokenInfo it got.
		h.authed = auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
			if ti, ok := r.Context().Value(verifiedKey{}).(*auth.TokenInfo); ok {
				return ti, nil
			}
			return nil, fmt.Errorf("%w: the key was not verified", auth.ErrInvalidToken)
		}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h.authed)
	}
	go h.sweepLoop()
	return h, nil
}

// StaticKey is a Verify that accepts one key, compared in constant time.
func StaticKey(key string) auth.TokenVerifier {
	want := []byte(key)
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if subtle.ConstantTimeCompare([]byte(token), want) != 1 {
			return nil, fmt.Errorf("%w: missing or wrong API key", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{}, nil
	}
}

// Sessions is the number of open sessions.
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Close stops the expiry sweeps and closes every session.
func (h *Handler) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	var all []*session
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.sessions = map[string]*session{}
	h.idle.Init()
	h.mu.Unlock()
	close(h.stop)
	<-h.done
	for _, s := range all {
		_ = s.ss.Close()
	}
	return nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Everything read from the client until the body is in, the discarding
	// of an unread body after a refusal included, is bounded by one
	// deadline. Errors mean the connection cannot take deadlines (not a
	// net/http server): nothing to bound then.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))

	if rebound(r) {
		// The SDK refuses it too; refused here before any session is
		// counted or evicted for it.
		writeError(w, http.StatusForbidden, "Host "+strconv.Quote(r.Host)+" is not a loopback name on a loopback address (DNS rebinding?)")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !h.originAllowed(r, origin) {
			h.log.Warn("MCP request from a foreign origin refused", "origin", origin)
			writeError(w, http.StatusForbidden, "origin "+strconv.Quote(origin)+" is not allowed: it is not this server's address nor in its allowed origins")
			return
		}
		if h.listed(origin) && allowCORS(w, r, origin) {
			return
		}
	}
	if h.opts.Verify != nil {
		var ok bool
		if r, ok = h.verify(w, r); !ok {
			return
		}
	}
	h.authed.ServeHTTP(w, r)
}

// verifiedKey carries the TokenInfo of the key ServeHTTP verified to the
// SDK's middleware.
type verifiedKey struct{}

// verify checks the request's key (X-API-Key first, else Authorization:
// Bearer) and returns the request carrying its TokenInfo; false when it
// answered. Every 401 has a WWW-Authenticate challenge (RFC 9110 asks one of
// every 401; RFC 6750's form: the error code only when a key was sent) and
// the same JSON-RPC error body as the other refusals; the key never appears
// in either.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	key := strings.TrimSpace(r.Header.Get("X-API-Key"))
	if key == "" {
		if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			key = strings.TrimSpace(a[7:])
		}
	}
	if key == "" {
		h.challenge(w, false)
		writeError(w, http.StatusUnauthorized, "missing API key: send X-API-Key or Authorization: Bearer")
		return r, false
	}
	ti, err := h.opts.Verify(r.Context(), key, r)
	switch {
	case errors.Is(err, auth.ErrInvalidToken):
		h.challenge(w, true)
		writeError(w, http.StatusUnauthorized, "the API key is not valid")
		return r, false
	case errors.Is(err, auth.ErrOAuth):
		writeError(w, http.StatusBadRequest, err.Error())
		return r, false
	case err != nil || ti == nil:
		h.log.Error("verifying an MCP request's key", "err", err)
		writeError(w, http.StatusInternalServerError, "the key could not be verified")
		return r, false
	case !ti.Expiration.IsZero() && !time.Now().Before(ti.Expiration):
		h.challenge(w, true)
		writeError(w, http.StatusUnauthorized, "the key has expired")
		return r, false
	}
	// The SDK's middleware wants a Bearer header; the key it carries is
	// not used again (the TokenInfo travels in the context).
	r = r.WithContext(context.WithValue(r.Context(), verifiedKey{}, ti))
	r.Header = r.Header.Clone()
	r.Header.Set("Authorization", "Bearer verified")
	return r, true
}

// challenge sets the WWW-Authenticate header of a 401.
func (h *Handler) challenge(w http.ResponseWriter, invalid bool) {
	v := `Bearer realm="vaultmcp"`
	if h.opts.ResourceMetadataURL != "" {
		v += ", resource_metadata=" + strconv.Quote(h.opts.ResourceMetadataURL)
	}
	if invalid {
		v += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", v)
}

// serveAuthed serves a request whose origin and key are good.
func (h *Handler) serveAuthed(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})

	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" && r.Method == http.MethodPost {
		h.serveNew(w, r, body)
		return
	}
	h.serveSession(w, r, sid)
}

// readBody reads the whole body within the deadline already set and gives
// the SDK a copy; false when the request was answered.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.opts.MaxBodyBytes+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		h.log.Warn("MCP request body too slow: cut off", "timeout", h.opts.BodyTimeout, "received", len(body))
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "the request body did not arrive within "+h.opts.BodyTimeout.String())
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		return nil, false
	case int64(len(body)) > h.opts.MaxBodyBytes:
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, "the request body is over "+strconv.FormatInt(h.opts.MaxBodyBytes, 10)+" bytes")
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return body, true
}

// serveNew serves a POST without session id: an initialize makes a
// session.
func (h *Handler) serveNew(w http.ResponseWriter, r *http.Request, body []byte) {
	// Room is reserved only for an initialize; anything else makes no
	// session the SDK keeps.
	mayInit := isInitialize(body)
	user := ""
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		user = ti.UserID
	}
	if mayInit && !h.reserve(w, user) {
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	func() {
		defer func() {
			if mayInit {
				h.mu.Lock()
				h.pending--
				if h.pendingBy[user]--; h.pendingBy[user] <= 0 {
					delete(h.pendingBy, user)
				}
				h.mu.Unlock()
			}
		}()
		h.sdk.ServeHTTP(sw, r)
	}()

	id := sw.Header().Get("Mcp-Session-Id")
	if id == "" || sw.status/100 != 2 {
		return
	}
	ss := h.findSession(r, id)
	if ss == nil {
		return // the SDK closed it: its initialize failed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		go ss.Close()
		return
	}
	// Only now, with a session made, is another evicted for it: an
	// initialize the SDK refuses evicts nobody (else any key could push
	// out every other key's sessions at the cap without ever holding one).
	// A session made without room reserved (the SDK read as initialize
	// what the test above did not) still counts: the cap holds.
	s := &session{id: id, ss: ss, user: user}
	h.sessions[id] = s
	h.idleLocked(s, h.opts.Now())
	for h.userCapped(user) {
		if !h.evictUserLocked(user, h.opts.Now(), s) {
			break
		}
	}
	for len(h.sessions) > h.opts.MaxSessions {
		if !h.evictLocked(h.opts.Now(), s) {
			break
		}
	}
}

// isInitialize reports whether body is one JSON-RPC request whose method
// is initialize. A batch is not: the SDK refuses batches from 2025-06-18
// on, and a session an older client's batch makes still counts towards
// the cap once made (serveNew).
func isInitialize(body []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// reserve admits one new session of user if there is room for it once
// idle sessions are evicted (serveNew evicts them when the session is
// made): fewer busy sessions and sessions being made than the user's cap
// and than the cap; false when it answered 503 (every session busy).
func (h *Handler) reserve(w http.ResponseWriter, user string) bool {
	now := h.opts.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expireLocked(now)
	if user != "" && h.opts.MaxSessionsPerUser > 0 && h.busyLocked(user)+h.pendingBy[user] >= h.opts.MaxSessionsPerUser {
		h.log.Warn("new MCP session refused: the user's cap is reached and none of its sessions is idle", "max_sessions_per_user", h.opts.MaxSessionsPerUser)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many MCP sessions for this key: all %d are busy; close one or retry later", h.opts.MaxSessionsPerUser))
		return false
	}
	if len(h.sessions)-h.idle.Len()+h.pending >= h.opts.MaxSessions {
		h.log.Warn("new MCP session refused: the cap is reached and no session is idle", "max_sessions", h.opts.MaxSessions)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many MCP sessions: all %d are busy; retry later", h.opts.MaxSessions))
		return false
	}
	h.pending++
	if user != "" {
		h.pendingBy[user]++
	}
	return true
}

// busyLocked counts user's sessions with a request in flight.
func (h *Handler) busyLocked(user string) int {
	n := 0
	for _, s := range h.sessions {
		if s.user == user && s.inFlight > 0 {
			n++
		}
	}
	return n
}

// evictLocked closes the session idle the longest but except; false when
// there is none.
func (h *Handler) evictLocked(now time.Time, except *session) bool {
	e := h.idle.Back()
	if e != nil && e.Value.(*session) == except {
		e = e.Prev()
	}
	if e == nil {
		return false
	}
	s := e.Value.(*session)
	h.forgetLocked(s)
	h.log.Info("MCP session evicted to make room (the cap is reached)", "session", s.id, "idle", now.Sub(s.idleSince).Round(time.Second), "max_sessions", h.opts.MaxSessions)
	h.closeLocked(s)
	return true
}

// userCapped reports whether user's sessions are over the user's cap.
func (h *Handler) userCapped(user string) bool {
	if user == "" || h.opts.MaxSessionsPerUser <= 0 {
		return false
	}
	n := 0
	for _, s := range h.sessions {
		if s.user == user {
			n++
		}
	}
	return n > h.opts.MaxSessionsPerUser
}

// evictUserLocked closes user's session idle the longest but except;
// false when there is none.
func (h *Handler) evictUserLocked(user string, now time.Time, except *session) bool {
	for e := h.idle.Back(); e != nil; e = e.Prev() {
		s := e.Value.(*session)
		if s.user != user || s == except {
			continue
		}
		h.forgetLocked(s)
		h.log.Info("MCP session evicted to make room (the key's cap is reached)", "session", s.id, "idle", now.Sub(s.idleSince).Round(time.Second), "max_sessions_per_user", h.opts.MaxSessionsPerUser)
		h.closeLocked(s)
		return true
	}
	return false
}

// findSession is the SDK's session with id, if it is open and initialized.
func (h *Handler) findSession(r *http.Request, id string) *mcp.ServerSession {
	server := h.getServer(r)
	if server == nil {
		return nil
	}
	for ss := range server.Sessions() {
		if ss.ID() == id {
			if ss.InitializeParams() == nil {
				return nil
			}
			return ss
		}
	}
	return nil
}

// serveSession serves a request of an existing session (or one the SDK
// refuses: no or unknown session id).
func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request, id string) {
	h.mu.Lock()
	h.expireLocked(h.opts.Now())
	s := h.sessions[id]
	if _, closing := h.closing[id]; s == nil && closing {
		h.mu.Unlock()
		writeError(w, http.StatusNotFound, "session not found (it was closed: idle too long, or evicted to make room)")
		return
	}
	if s != nil {
		if s.inFlight == 0 {
			h.idle.Remove(s.elem)
			s.elem = nil
		}
		s.inFlight++
	}
	h.mu.Unlock()

	sw := &statusWriter{ResponseWriter: w}
	h.sdk.ServeHTTP(sw, r)

	if s == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.inFlight--
	if h.sessions[id] != s {
		return // expired, evicted or closed meanwhile
	}
	ended := sw.status == http.StatusNotFound || r.Method == http.MethodDelete && sw.status/100 == 2
	if ended {
		delete(h.sessions, id)
		if s.elem != nil {
			h.idle.Remove(s.elem)
		}
		return
	}
	if s.inFlight == 0 {
		h.idleLocked(s, h.opts.Now())
	}
}

// idleLocked puts s, with no request in flight, at the front of idle.
func (h *Handler) idleLocked(s *session, now time.Time) {
	s.idleSince = now
	s.elem = h.idle.PushFront(s)
}

// forgetLocked drops an idle session from the table.
func (h *Handler) forgetLocked(s *session) {
	delete(h.sessions, s.id)
	if s.elem != nil {
		h.idle.Remove(s.elem)
		s.elem = nil
	}
}

// closeLocked closes a session forgotten from the table, in the
// background (h.mu is held); until the close is done, requests for it are
// answered 404 here.
func (h *Handler) closeLocked(s *session) {
	h.closing[s.id] = struct{}{}
	closeSession := h.closeSession
	go func() {
		_ = closeSession(s.ss)
		h.mu.Lock()
		delete(h.closing, s.id)
		h.mu.Unlock()
	}()
}

// expireLocked closes the sessions idle for the timeout or longer.
func (h *Handler) expireLocked(now time.Time) {
	if h.opts.SessionIdleTimeout < 0 {
		return
	}
	for e := h.idle.Back(); e != nil; e = h.idle.Back() {
		s := e.Value.(*session)
		if now.Sub(s.idleSince) < h.opts.SessionIdleTimeout {
			return
		}
		h.forgetLocked(s)
		h.log.Info("idle MCP session expired", "session", s.id, "idle", now.Sub(s.idleSince).Round(time.Second))
		h.closeLocked(s)
	}
}

// ExpireIdle closes the sessions idle for the timeout or longer now; the
// handler also does it on every request and on a timer.
func (h *Handler) ExpireIdle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expireLocked(h.opts.Now())
}

// sweepLoop expires idle sessions when no request comes to do it.
func (h *Handler) sweepLoop() {
	defer close(h.done)
	period := time.Minute
	if t := h.opts.SessionIdleTimeout / 10; t > 0 && t < period {
		period = max(t, time.Second)
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-tick.C:
			h.ExpireIdle()
		}
	}
}

// Timeouts of NewServer.
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleConnTimeout   = 2 * time.Minute
)

// NewServer is an http.Server for handler with the timeouts a server facing
// untrusted clients needs: request headers within ReadHeaderTimeout, an
// idle keep-alive connection closed after IdleConnTimeout. It sets no
// ReadTimeout or WriteTimeout, which would cut the long-lived event
// streams: a Handler bounds each request body itself.
func NewServer(handler http.Handler, log *slog.Logger) *http.Server {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleConnTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	if log != nil {
		srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	}
	return srv
}

// writeError answers with a JSON-RPC error body (the SDK's client reads it).
func writeError(w http.ResponseWriter, status int, message string) {
	msg, _ := json.Marshal(message)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%s}}`, msg)
}

// statusWriter notes the status of an answer. Unwrap lets the SDK flush
// its event streams through it (http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	status int
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

func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
