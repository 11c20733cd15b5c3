package teamserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// HeaderForwardedBy marks a request one replica forwarded to another (its
// value is the forwarding replica's id). A replica never forwards such a
// request again: when it does not serve the vault itself it answers 503,
// and the client's retry starts from the top.
const HeaderForwardedBy = "X-Vaultmcp-Forwarded-By"

// errOwnerDown: the replica holding the lease could not be reached at all
// (nothing was sent to it).
var errOwnerDown = errors.New("the replica serving the vault cannot be reached")

// forwarder sends requests to the replica holding a vault's lease.
type forwarder struct {
	s         *Server
	transport *http.Transport
}

func newForwarder(s *Server) *forwarder {
	return &forwarder{s: s, transport: &http.Transport{
		Proxy:                 nil, // replicas talk directly
		DialContext:           (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
}

// serveReplicated serves a request for a project among replicas: here when
// this replica holds (or takes) the vault's lease, else forwarded to the
// replica that holds it. When that replica is down, the request waits
// (bounded: two lease TTLs) for its lease to expire, and this replica takes
// the vault over and serves it.
func (s *Server) serveReplicated(w http.ResponseWriter, r *http.Request, k *teamstore.Key, meta teamstore.Project, h projectHandler) {
	rep := s.rep
	forwarded := r.Header.Get(HeaderForwardedBy) != ""
	ctx := r.Context()
	deadline := time.Now().Add(2*rep.ttl + 5*time.Second)
	var body []byte
	haveBody := false
	down := "" // the lease (owner and epoch) whose replica did not answer
	for {
		pr, owner, err := rep.route(ctx, meta)
		switch {
		case err == nil && pr != nil:
			if haveBody {
				r.Body = io.NopCloser(bytes.NewReader(body))
				r.ContentLength = int64(len(body))
			}
			h(w, r, k, pr)
			return
		case ctx.Err() != nil:
			return
		case errors.Is(err, errCannotHost):
			errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "no replica serves project %s now, and this one cannot: %v", meta.Name, err).write(w)
			return
		case err != nil:
			s.log.Error("routing a request", "project", meta.Name, "err", err)
			errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "project %s cannot be served right now; retry", meta.Name).write(w)
			return
		}
		key := owner.Owner + "/" + strconv.FormatInt(owner.Epoch, 10)
		// The holder is dead when it did not answer, or when it is an
		// earlier life of this replica (a restart at the same address): a
		// request forwarded here by another replica is one for the vault's
		// next holder, which this replica becomes once that lease expires.
		dead := key == down || owner.Advertise == rep.advertised()
		if forwarded && !dead {
			s.met.forwards.Inc("refused_second_hop")
			errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "this replica does not serve project %s (another one took it over); retry", meta.Name).write(w)
			return
		}
		if dead {
			// Wait for its lease to expire or change hands.
			if time.Now().After(deadline) {
				s.met.forwards.Inc("owner_down")
				errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "the replica serving project %s does not answer and its lease has not expired yet; retry", meta.Name).write(w)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if !haveBody {
			// The largest body any endpoint takes; the replica serving the
			// vault applies the endpoint's own limit.
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					errorf(http.StatusRequestEntityTooLarge, teamapi.CodeTooLarge, "the request body is over %d bytes", int64(maxJSONBody)).write(w)
					return
				}
				errorf(http.StatusBadRequest, teamapi.CodeBadRequest, "reading the request body: %v", err).write(w)
				return
			}
			haveBody = true
		}
		status, err := rep.fwd.forward(w, r, owner, body)
		switch {
		case err == nil && status >= 500:
			s.met.forwards.Inc("holder_error") // the holder's own failure, relayed
			return
		case err == nil && status > 0:
			s.met.forwards.Inc("ok")
			return
		case !errors.Is(err, errOwnerDown):
			s.met.forwards.Inc("error") // answered here: the holder stopped answering
			return
		}
		s.log.Warn("the replica serving a vault cannot be reached; waiting for its lease to expire", "project", meta.Name, "replica", owner.Owner, "advertise", owner.Advertise, "expires", owner.ExpiresAt)
		down = key
	}
}

// How a forwarded request that waits for the holder's answer watches the
// lease: from leaseWatchAfter on, every leaseWatchEvery. A holder that
// took the connection but does not answer (a paused or frozen process)
// loses its lease; the request then stops waiting for it (watchLease).
const (
	leaseWatchAfter = time.Second
	leaseWatchEvery = 500 * time.Millisecond
	leaseWatchGrace = time.Second
)

// States of a forwarded request while the holder's answer is awaited.
const (
	fwdWaiting int32 = iota
	fwdReading       // the answer's status and headers came; its body is being read
	fwdAnswered
	fwdAbandoned
)

// maxHeldAnswer is the largest answer body of the lease holder that a
// forwarding replica reads whole before relaying it (see holdAnswer).
// Larger ones (a big attachment) are relayed as they come, as event
// streams are.
const maxHeldAnswer = 16 << 20

// forward sends the request (its body already read) to the lease holder
// and relays its answer. errOwnerDown means nothing was answered: the
// holder could not be reached, or (a GET or HEAD) it failed before
// answering or did not answer before its lease ran out; the caller may
// serve the request otherwise. status is
// that of the holder's answer, relayed; 0 with a nil error when this
// replica answered (the holder stopped answering, the client went away).
func (f *forwarder) forward(w http.ResponseWriter, r *http.Request, owner teamstore.Lease, body []byte) (status int, err error) {
	s := f.s
	target, err := url.Parse(owner.Advertise)
	if err != nil || target.Host == "" {
		errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "the replica serving this project advertises no usable URL").write(w)
		return 0, errors.New("bad advertise URL")
	}
	var down bool
	var state atomic.Int32
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	proxy := &httputil.ReverseProxy{
		Rewrite: func(p *httputil.ProxyRequest) {
			p.SetURL(target)
			p.Out.Host = p.In.Host // the holder checks the Host the client sent
			p.Out.Header.Set(HeaderForwardedBy, s.instance)
			p.Out.Body = io.NopCloser(bytes.NewReader(body))
			p.Out.ContentLength = int64(len(body))
			// A request on a pooled connection the holder closed is sent
			// again on a new one.
			p.Out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		},
		Transport:     f.transport,
		FlushInterval: -1, // MCP event streams
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ModifyResponse: func(resp *http.Response) error {
			if !state.CompareAndSwap(fwdWaiting, fwdReading) {
				return errors.New("the holder answered after its lease ran out")
			}
			if err := holdAnswer(resp, r.Method); err != nil {
				return fmt.Errorf("reading the answer of the replica serving the vault: %w", err)
			}
			if !state.CompareAndSwap(fwdReading, fwdAnswered) {
				return errors.New("the holder's lease ran out while its answer was read")
			}
			status = resp.StatusCode
			// The holder's answer carries its own Cache-Control: the one this
			// replica set on every answer would be sent twice.
			w.Header().Del("Cache-Control")
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if isDialError(err) {
				down = true
				return
			}
			if state.Load() == fwdAbandoned {
				s.log.Warn("the replica serving a vault took a forwarded request and its lease ran out before it answered", "replica", owner.Owner, "advertise", owner.Advertise)
				if read {
					down = true
					return
				}
				errResponse(http.StatusServiceUnavailable, teamapi.ErrorDetail{Code: teamapi.CodeUnavailable, Uncertain: true,
					Message: "the replica serving this project stopped answering and its lease ran out: the change may or may not have been applied; read the note before trying again (a retry with the same Idempotency-Key is safe)"}).write(w)
				return
			}
			if req.Context().Err() != nil {
				return // the client went away
			}
			s.log.Warn("forwarding a request to the replica serving the vault", "replica", owner.Owner, "err", err)
			if read {
				// Nothing of the holder's answer was relayed, and a read
				// may be sent again: the holder is treated as down (it
				// died with the request in flight), so the request waits
				// for its lease to run out and is served here, as one sent
				// after it died: a slower answer, not an error.
				down = true
				return
			}
			errResponse(http.StatusServiceUnavailable, teamapi.ErrorDetail{Code: teamapi.CodeUnavailable, Uncertain: true,
				Message: "the replica serving this project stopped answering: the change may or may not have been applied; read the note before trying again (a retry with the same Idempotency-Key is safe)"}).write(w)
		},
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/mcp") {
		// A forwarded MCP event stream lives as long as the holder's does,
		// and ends when this replica shuts down.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		go func() {
			select {
			case <-s.stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
	} else {
		go f.watchLease(ctx, owner, func() {
			if state.CompareAndSwap(fwdWaiting, fwdAbandoned) || state.CompareAndSwap(fwdReading, fwdAbandoned) {
				cancel()
			}
		})
	}
	proxy.ServeHTTP(w, r.WithContext(ctx))
	if down {
		return 0, errOwnerDown
	}
	return status, nil
}

// holdAnswer reads the body of the holder's answer whole (up to
// maxHeldAnswer) before any of it is relayed, and gives it a
// Content-Length. Relayed as it came, an answer the holder stopped sending
// half-way (killed, its connection cut) reached the client as a 2xx status
// with a body cut short: a write's client could not tell whether it had
// been applied from a status that said it had. Read first, such an answer
// is a failure of the holder like one before its status (for a write, 503
// uncertain; a read is served here once the lease runs out). A cut answer
// is still possible where the forwarding replica itself dies while
// relaying, which its Content-Length lets a client detect; event streams
// (MCP's) and answers over maxHeldAnswer are relayed as they come.
func holdAnswer(resp *http.Response, method string) error {
	if method == http.MethodHead || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
		resp.ContentLength > maxHeldAnswer {
		return nil
	}
	var body []byte
	var err error
	if resp.ContentLength >= 0 {
		// Announced (the holder's JSON answers are): read in one piece.
		body = make([]byte, resp.ContentLength)
		_, err = io.ReadFull(resp.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(resp.Body, maxHeldAnswer+1))
	}
	if err != nil {
		return err
	}
	if len(body) > maxHeldAnswer {
		// Of no announced length, and longer: the rest is relayed as it
		// comes.
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		return nil
	}
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified {
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	return nil
}

// watchLease calls abandon, until ctx ends, when the holder the request
// was forwarded to will not answer it: the lease is held by a replica at
// another address, or has been expired (or released) for leaseWatchGrace
// without a replica at that address taking it again (one restarted there
// serves the request once it holds the lease).
func (f *forwarder) watchLease(ctx context.Context, owner teamstore.Lease, abandon func()) {
	t := time.NewTimer(leaseWatchAfter)
	defer t.Stop()
	var lapsed time.Time // when the lease was first seen not live
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l, err := f.s.rep.leases.Lease(ctx, owner.Project)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && l.Live(f.s.now()):
			if l.Advertise != owner.Advertise {
				abandon()
				return
			}
			lapsed = time.Time{}
		case err == nil || errors.Is(err, teamstore.ErrNotFound):
			if lapsed.IsZero() {
				lapsed = time.Now()
			} else if time.Since(lapsed) >= leaseWatchGrace {
				abandon()
				return
			}
		}
		t.Reset(leaseWatchEvery)
	}
}

// isDialError says the connection was never made.
func isDialError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}
