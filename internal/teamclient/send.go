package teamclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// request is one HTTP request of a call, sent with retries by send.
type request struct {
	method string
	// segs are the path segments under the base URL, unescaped
	// ("api", "projects", ref, "files").
	segs    []string
	query   url.Values
	body    []byte
	ctype   string
	ifMatch string
	// write marks a request that changes the vault: it carries the call's
	// Idempotency-Key, and its failures may be uncertain.
	write bool
}

// answer is a definite answer of the server.
type answer struct {
	status   int
	header   http.Header
	body     []byte
	replayed bool
	write    bool
	// uncertain says an earlier attempt of this write may have been
	// applied and this answer is not a success nor the replay of the
	// first attempt's answer.
	uncertain bool
}

func (a *answer) ok() bool { return a.status >= 200 && a.status < 300 }

// decode reads a success's JSON body into v.
func (a *answer) decode(v any) error {
	if err := json.Unmarshal(a.body, v); err != nil {
		return &api.Error{Code: api.CodeInternal, Message: fmt.Sprintf("the server's answer (HTTP %d) is not the JSON expected: %v", a.status, err), Uncertain: a.write}
	}
	return nil
}

// outcome is what one attempt got.
type outcome struct {
	answer *answer
	err    error // no answer: network error or timeout
	// wrote says the request's headers went out (the server may have
	// started on it).
	wrote    bool
	timedOut bool
}

func (c *Client) endpoint(segs []string, q url.Values) string {
	var b strings.Builder
	b.WriteString(c.base)
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	if len(q) > 0 {
		b.WriteByte('?')
		b.WriteString(q.Encode())
	}
	return b.String()
}

// attempt sends r once, for at most timeout.
func (cl *call) attempt(r request, timeout time.Duration) outcome {
	actx, cancel := context.WithCancelCause(cl.ctx)
	stop := cl.c.clock.AfterFunc(timeout, func() { cancel(errAttemptTimeout) })
	defer func() {
		stop()
		cancel(nil)
	}()
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(actx, trace), r.method, cl.c.endpoint(r.segs, r.query), nil)
	if err != nil {
		return outcome{err: err}
	}
	// A body without GetBody makes the request one that net/http never
	// sends again by itself (it would, on a reused connection, for a GET
	// or a request with an Idempotency-Key): every attempt is this
	// package's, counted and paused. An empty body is sent as none.
	req.Body, req.GetBody, req.ContentLength = io.NopCloser(bytes.NewReader(r.body)), nil, int64(len(r.body))
	req.Header.Set(teamapi.HeaderAPIKey, cl.c.key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "vaultmcp-remote")
	// The server words its warnings and refusals in the language of this
	// client's tool output.
	req.Header.Set("Accept-Language", cl.c.lang)
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	if r.ifMatch != "" {
		req.Header.Set("If-Match", `"`+r.ifMatch+`"`)
	}
	if r.write {
		req.Header.Set(teamapi.HeaderIdempotencyKey, cl.key)
	}
	resp, err := cl.c.http.Do(req)
	if err != nil {
		return outcome{err: err, wrote: wrote.Load(), timedOut: errors.Is(context.Cause(actx), errAttemptTimeout)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return outcome{err: err, wrote: true, timedOut: errors.Is(context.Cause(actx), errAttemptTimeout)}
	}
	if len(body) > maxAnswer {
		return outcome{err: fmt.Errorf("the answer is over %d MiB", maxAnswer>>20), wrote: true}
	}
	return outcome{wrote: true, answer: &answer{status: resp.StatusCode, header: resp.Header, body: body,
		replayed: strings.EqualFold(resp.Header.Get(teamapi.HeaderReplayed), "true"), write: r.write}}
}

// send sends r under the call's budget with the retry rules of the
// package comment, and returns the definite answer (a success or a
// refusal), or an *api.Error when there was none.
func (cl *call) send(r request) (*answer, error) {
	c := cl.c
	if r.write && cl.key == "" {
		cl.key = newKey()
	}
	counted := 0   // attempts that count towards MaxAttempts
	maybe := false // a write attempt may have been applied without a definite answer
	last := ""     // what the last attempt without an answer got
	for {
		if cl.parent.Err() != nil {
			return nil, cl.cancelled(r, maybe)
		}
		remaining := cl.deadline.Sub(c.clock.Now())
		if remaining < MinAttempt || cl.ctx.Err() != nil {
			return nil, cl.outOfBudget(r, maybe, last)
		}
		o := cl.attempt(r, min(AttemptTimeout, remaining))
		inUse := false
		var retryAfter time.Duration
		switch {
		case o.answer != nil:
			a := o.answer
			switch st := a.status; {
			case st == http.StatusConflict && serverCode(a.body) == teamapi.CodeIdempotencyInUse:
				// The first request with this key (ours) is still being
				// applied: ask again until it is done.
				inUse, maybe = true, true
				last = "HTTP 409 " + teamapi.CodeIdempotencyInUse
			case st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable:
				counted++
				last = statusLine(a)
			case st == http.StatusBadGateway || st == http.StatusGatewayTimeout:
				// A gateway may have passed the request on.
				counted++
				maybe = maybe || (r.write && o.wrote)
				last = statusLine(a)
			default:
				a.uncertain = r.write && maybe && !a.ok() && !a.replayed
				return a, nil
			}
			retryAfter = parseRetryAfter(a.header.Get("Retry-After"), c.clock.Now())
		default:
			if cl.parent.Err() != nil {
				return nil, cl.cancelled(r, maybe || (r.write && o.wrote))
			}
			var cve *tls.CertificateVerificationError
			if errors.As(o.err, &cve) {
				// The server answered, with a certificate this machine does
				// not trust (or not for this host): every attempt would get
				// the same, and no request was sent.
				return nil, &api.Error{Code: api.CodeUnavailable, Message: "the team server's TLS certificate was refused, so nothing was sent (" + describe(o) + ")", Err: o.err}
			}
			maybe = maybe || (r.write && o.wrote)
			if cl.ctx.Err() != nil && !o.timedOut {
				return nil, cl.outOfBudget(r, maybe, "no answer before the budget ran out")
			}
			counted++
			last = describe(o)
		}
		var pause time.Duration
		if inUse {
			pause = inUsePause
			if retryAfter > 0 {
				pause = min(retryAfter, MaxRetryAfter)
			}
		} else {
			if counted >= MaxAttempts {
				return nil, cl.exhausted(r, maybe, last)
			}
			pause = pauses[counted-1] + c.jitter()
			if retryAfter > pause {
				pause = min(retryAfter, MaxRetryAfter)
			}
		}
		if cl.deadline.Sub(c.clock.Now())-pause < MinAttempt {
			return nil, cl.outOfBudget(r, maybe, last)
		}
		c.log.Debug("team server: retrying", "method", r.method, "path", "/"+strings.Join(r.segs, "/"), "after", last, "pause", pause)
		if err := c.clock.Sleep(cl.ctx, pause); err != nil {
			if cl.parent.Err() != nil {
				return nil, cl.cancelled(r, maybe)
			}
			return nil, cl.outOfBudget(r, maybe, last)
		}
	}
}

// serverCode is the error code of an error answer's body, or "".
func serverCode(body []byte) string {
	var e teamapi.ErrorBody
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

func statusLine(a *answer) string {
	if code := serverCode(a.body); code != "" {
		return fmt.Sprintf("HTTP %d %s", a.status, code)
	}
	return fmt.Sprintf("HTTP %d", a.status)
}

// describe says what an attempt without an answer got, in a few words
// (the URL left out: it is in the log, and the error names the tool).
func describe(o outcome) string {
	if o.timedOut {
		return fmt.Sprintf("no answer within the %d s of an attempt", int(AttemptTimeout/time.Second))
	}
	err := o.err
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the connection closed before the answer"
	}
	return oneLine(err.Error(), 200)
}

// parseRetryAfter reads Retry-After: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		if n > int(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, MaxRetryAfter)
		}
	}
	return 0
}

func (cl *call) cancelled(r request, maybe bool) error {
	if errors.Is(context.Cause(cl.parent), context.DeadlineExceeded) {
		// The caller's own deadline passed (Connect's few seconds at
		// start): the server did not answer in time, nobody cancelled.
		return &api.Error{Code: api.CodeUnavailable, Message: "no answer from the team server within the time its caller allowed",
			Uncertain: r.write && maybe, Err: context.DeadlineExceeded}
	}
	e := &api.Error{Code: api.CodeCancelled, Message: "the tool call was cancelled; the request to the team server was aborted", Err: context.Canceled}
	if r.write && maybe {
		e.Message = "the tool call was cancelled while the write was on its way to the team server"
		e.Uncertain = true
	}
	return e
}

func (cl *call) outOfBudget(r request, maybe bool, last string) error {
	msg := fmt.Sprintf("no answer from the team server within the %d s budget of a tool call", int(CallBudget/time.Second))
	if last != "" {
		msg += " (last: " + last + ")"
	}
	return &api.Error{Code: api.CodeUnavailable, Message: msg, Uncertain: r.write && maybe, Err: context.DeadlineExceeded}
}

func (cl *call) exhausted(r request, maybe bool, last string) error {
	return &api.Error{Code: api.CodeUnavailable, Message: fmt.Sprintf("the team server did not answer after %d attempts (last: %s)", MaxAttempts, last), Uncertain: r.write && maybe}
}
