package teamclient

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

const jitter = 100 * time.Millisecond

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// setup is a real team server behind the fault proxy, and a client of the
// proxy on a fake clock that has already asked the server's kind.
func setup(t *testing.T) (*server, *proxy, *fakeClock, *Client) {
	t.Helper()
	s := newServer(t)
	clk := newFakeClock()
	p := newProxy(t, s.http.Config.Handler, clk)
	c := newClient(t, p.http.URL, s.rw, "ex", clk, jitter)
	if _, err := c.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return s, p, clk, c
}

// onWrites applies faults, in order, to the requests that carry an
// Idempotency-Key (the writes); everything else passes. A status fault
// answers with the next canned answer.
func onWrites(faults []fault, answers ...*canned) func(int, *http.Request) (fault, *canned) {
	i, j := 0, 0
	return func(_ int, r *http.Request) (fault, *canned) {
		if r.Header.Get("Idempotency-Key") == "" || i >= len(faults) {
			return pass, nil
		}
		f := faults[i]
		i++
		if f == status {
			c := answers[j]
			j++
			return f, c
		}
		return f, nil
	}
}

// onAll applies faults, in order, to every request.
func onAll(faults []fault, answers ...*canned) func(int, *http.Request) (fault, *canned) {
	j := 0
	return func(n int, _ *http.Request) (fault, *canned) {
		if n >= len(faults) {
			return pass, nil
		}
		if faults[n] == status {
			c := answers[j]
			j++
			return status, c
		}
		return faults[n], nil
	}
}

func writesSeen(p *proxy) []seen {
	var out []seen
	for _, s := range p.seen() {
		if s.idemKey != "" {
			out = append(out, s)
		}
	}
	return out
}

func apiError(status int, code, msg string, header ...string) *canned {
	c := &canned{status: status, header: map[string]string{"Content-Type": "application/json"},
		body: `{"error":{"code":"` + code + `","message":"` + msg + `"}}`}
	for i := 0; i+1 < len(header); i += 2 {
		c.header[header[i]] = header[i+1]
	}
	return c
}

var inUse = apiError(409, "idempotency_key_in_use", "a request with this key is still being applied", "Retry-After", "1")

func sleepsAre(t *testing.T, clk *fakeClock, want ...time.Duration) {
	t.Helper()
	if got := clk.Sleeps(); !slices.Equal(got, want) {
		t.Errorf("pauses %v, want %v", got, want)
	}
}

// The connection dropped after the server applied a write: the write is
// sent again with the same key, the server replays its answer, and the
// note is written once.
func TestDropAfterApplyRetriedWithSameKey(t *testing.T) {
	s, p, clk, c := setup(t)
	before := s.commits()
	p.setPlan(onWrites([]fault{dropAfter}))
	res, err := c.WriteNote(ctxT(t), api.WriteRequest{Path: "notes/once.md", Content: "# Once\n"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != api.ActionCreated || res.Path != "notes/once.md" || !res.Committed {
		t.Errorf("result %+v", res)
	}
	w := writesSeen(p)
	if len(w) != 2 || w[0].idemKey != w[1].idemKey || !uuidShape.MatchString(w[0].idemKey) {
		t.Fatalf("write requests %+v, want two with one UUID key", w)
	}
	if n := s.commits() - before; n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	if n := s.commitsTouching("notes/once.md"); n != 1 {
		t.Errorf("%d commits touch the note, want 1", n)
	}
	sleepsAre(t, clk, time.Second+jitter)
}

// 503, then the answer: one pause of 1 s plus jitter.
func TestUnavailableThenSuccess(t *testing.T) {
	_, p, clk, c := setup(t)
	p.setPlan(onAll([]fault{status}, apiError(503, "unavailable", "restarting")))
	res, err := c.Search(ctxT(t), api.SearchRequest{Query: "retry backoff"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || res.Results[0].Path != "02-wiki/go/retry-backoff.md" {
		t.Errorf("results %+v", res.Results)
	}
	if n := len(p.seen()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	sleepsAre(t, clk, time.Second+jitter)
}

// Retry-After is honoured when longer than the pause, up to 10 s.
func TestRetryAfter(t *testing.T) {
	_, p, clk, c := setup(t)
	p.setPlan(onAll([]fault{status, status}, apiError(429, "rate_limited", "slow down", "Retry-After", "2"),
		apiError(429, "rate_limited", "slow down", "Retry-After", "30")))
	if _, err := c.List(ctxT(t), api.ListRequest{Folder: "02-wiki"}); err != nil {
		t.Fatal(err)
	}
	// 2 s instead of 1.1 s; then 10 s (30 capped) instead of 3.1 s.
	sleepsAre(t, clk, 2*time.Second, MaxRetryAfter)
	if n := len(p.seen()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// An answer slower than the attempt timeout: the attempt is abandoned at
// 20 s and the write sent again, applied once.
func TestSlowerThanAttemptTimeout(t *testing.T) {
	s, p, clk, c := setup(t)
	before := s.commits()
	start := clk.Now()
	p.setPlan(onWrites([]fault{slow}))
	res, err := c.EditNote(ctxT(t), api.EditRequest{Path: "02-wiki/go/context.md", OldText: "# Context", NewText: "# Context (edited)"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != api.ActionEdited {
		t.Errorf("result %+v", res)
	}
	if n := s.commits() - before; n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	if w := writesSeen(p); len(w) != 2 || w[0].idemKey != w[1].idemKey {
		t.Errorf("write requests %+v", w)
	}
	if el := clk.Now().Sub(start); el != AttemptTimeout+time.Second+jitter {
		t.Errorf("%v passed, want the attempt timeout and one pause", el)
	}
}

// Cancelling the call (notifications/cancelled) aborts the request in
// flight: no further attempt, and a write's outcome is uncertain.
func TestCancelMidRequest(t *testing.T) {
	s, p, _, c := setup(t)
	before := s.commits()
	for _, write := range []bool{false, true} {
		p.setPlan(func(int, *http.Request) (fault, *canned) { return hang, nil })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			var err error
			if write {
				_, err = c.WriteNote(ctx, api.WriteRequest{Path: "notes/cancelled.md", Content: "x"})
			} else {
				_, err = c.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/context.md"})
			}
			done <- err
		}()
		<-p.arrived
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not end after its cancellation")
		}
		e := wantCode(t, "cancelled call", err, api.CodeCancelled)
		if e.Uncertain != write {
			t.Errorf("write %v: uncertain %v", write, e.Uncertain)
		}
		time.Sleep(50 * time.Millisecond)
		if n := len(p.seen()); n != 1 {
			t.Errorf("write %v: %d requests after the cancellation, want 1", write, n)
		}
	}
	if s.commits() != before {
		t.Error("a cancelled write was applied")
	}
}

// A 500 is an answer: not retried, reported with its status and code.
func TestInternalErrorNotRetried(t *testing.T) {
	_, p, clk, c := setup(t)
	p.setPlan(onWrites([]fault{status}, apiError(500, "internal", "internal error")))
	_, err := c.WriteNote(ctxT(t), api.WriteRequest{Path: "notes/x.md", Content: "x"})
	e := wantCode(t, "500", err, api.CodeInternal)
	if e.Error() != "INTERNAL: internal error (HTTP 500 internal)" || e.Uncertain {
		t.Errorf("error %q uncertain %v", e.Error(), e.Uncertain)
	}
	if n := len(writesSeen(p)); n != 1 {
		t.Errorf("%d write requests, want 1", n)
	}
	sleepsAre(t, clk)
}

// 409 idempotency_key_in_use is asked again (after its Retry-After) until
// the first request is done, without counting as an attempt.
func TestInUseThenDone(t *testing.T) {
	s, p, clk, c := setup(t)
	before := s.commits()
	// Two dropped attempts and three 409s: with the 409s counted, the
	// third attempt would be the last.
	p.setPlan(onWrites([]fault{dropAfter, status, dropAfter, status, status}, inUse, inUse, inUse))
	res, err := c.WriteNote(ctxT(t), api.WriteRequest{Path: "notes/busy.md", Content: "# Busy\n"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != api.ActionCreated {
		t.Errorf("result %+v", res)
	}
	w := writesSeen(p)
	if len(w) != 6 {
		t.Fatalf("%d write requests, want 6", len(w))
	}
	for _, x := range w {
		if x.idemKey != w[0].idemKey {
			t.Fatalf("keys differ: %+v", w)
		}
	}
	if n := s.commits() - before; n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	sleepsAre(t, clk, time.Second+jitter, time.Second, 3*time.Second+jitter, time.Second, time.Second)
}

// Retries end after 3 attempts with pauses of 1 s and 3 s. Only a failure
// that may have reached the server makes a write uncertain.
func TestAttemptsExhausted(t *testing.T) {
	for _, tc := range []struct {
		name      string
		f         fault
		answer    *canned
		write     bool
		uncertain bool
	}{
		{"read, 503", status, apiError(503, "unavailable", "down"), false, false},
		{"write, 503", status, apiError(503, "unavailable", "down"), true, false},
		{"write, 429", status, apiError(429, "rate_limited", "slow down"), true, false},
		{"write, 502", status, &canned{status: 502, body: "<html>bad gateway</html>"}, true, true},
		{"write, 504", status, &canned{status: 504, body: "gateway timeout"}, true, true},
		{"write, connection dropped", dropBefore, nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, p, clk, c := setup(t)
			before := s.commits()
			p.setPlan(func(int, *http.Request) (fault, *canned) { return tc.f, tc.answer })
			var err error
			if tc.write {
				_, err = c.Move(ctxT(t), api.MoveRequest{From: "02-wiki/go/context.md", To: "02-wiki/go/ctx.md"})
			} else {
				_, err = c.Graph(ctxT(t), api.GraphRequest{})
			}
			e := wantCode(t, tc.name, err, api.CodeUnavailable)
			if e.Uncertain != tc.uncertain {
				t.Errorf("uncertain %v, want %v (%v)", e.Uncertain, tc.uncertain, e)
			}
			if !strings.Contains(e.Message, "after 3 attempts") || strings.Contains(e.Message, "html") {
				t.Errorf("message %q", e.Message)
			}
			if n := len(p.seen()); n != MaxAttempts {
				t.Errorf("%d requests, want %d", n, MaxAttempts)
			}
			sleepsAre(t, clk, time.Second+jitter, 3*time.Second+jitter)
			if s.commits() != before {
				t.Error("the write was applied")
			}
		})
	}
}

// A server that cannot be reached: three attempts, and a write that never
// left is not uncertain.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	clk := newFakeClock()
	c := newClient(t, url, "tv_x", "ex", clk, jitter)
	_, err = c.WriteNote(ctxT(t), api.WriteRequest{Path: "a.md", Content: "x"})
	e := wantCode(t, "unreachable", err, api.CodeUnavailable)
	if e.Uncertain {
		t.Errorf("uncertain: %v", e)
	}
	sleepsAre(t, clk, time.Second+jitter, 3*time.Second+jitter)
}

// The 45 s budget: two attempts that time out use 41 s; a third would
// start with less than 2 s left after its pause, so none starts.
func TestBudget(t *testing.T) {
	_, p, clk, c := setup(t)
	start := clk.Now()
	p.setPlan(func(int, *http.Request) (fault, *canned) { return slow, nil })
	_, err := c.Search(ctxT(t), api.SearchRequest{Query: "context"})
	e := wantCode(t, "budget", err, api.CodeUnavailable)
	if !strings.Contains(e.Message, "45 s budget") || !strings.Contains(e.Message, "within the 20 s of an attempt") {
		t.Errorf("message %q", e.Message)
	}
	if n := len(p.seen()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if el := clk.Now().Sub(start); el != 2*AttemptTimeout+time.Second+jitter {
		t.Errorf("%v passed", el)
	}
}

// A write whose first request stays in use past the budget ends uncertain,
// without an attempt past 45 s.
func TestInUseUntilBudget(t *testing.T) {
	_, p, clk, c := setup(t)
	start := clk.Now()
	p.setPlan(func(_ int, r *http.Request) (fault, *canned) {
		if r.Header.Get("Idempotency-Key") != "" {
			return status, inUse
		}
		return pass, nil
	})
	_, err := c.Delete(ctxT(t), api.DeleteRequest{Path: "02-wiki/go/context.md", Confirm: true})
	e := wantCode(t, "in use", err, api.CodeUnavailable)
	if !e.Uncertain {
		t.Errorf("not uncertain: %v", e)
	}
	if el := clk.Now().Sub(start); el > CallBudget-MinAttempt {
		t.Errorf("%v passed: an attempt started with less than 2 s left", el)
	}
	// One a second, from 0 s to 43 s.
	if n := len(writesSeen(p)); n != 44 {
		t.Errorf("%d write requests, want 44", n)
	}
}

// Every write call has a key of its own; reads send none.
func TestKeyPerCall(t *testing.T) {
	_, p, _, c := setup(t)
	p.setPlan(nil)
	ctx := ctxT(t)
	for _, path := range []string{"notes/k1.md", "notes/k2.md"} {
		if _, err := c.WriteNote(ctx, api.WriteRequest{Path: path, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.GetNote(ctx, api.NoteRequest{Path: "notes/k1.md"}); err != nil {
		t.Fatal(err)
	}
	w := writesSeen(p)
	if len(w) != 2 || w[0].idemKey == w[1].idemKey {
		t.Errorf("write requests %+v", w)
	}
	if n := len(p.seen()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// 422 idempotency_key_mismatch is this client's bug, said so.
func TestKeyMismatchIsABug(t *testing.T) {
	_, p, _, c := setup(t)
	p.setPlan(onWrites([]fault{status}, apiError(422, "idempotency_key_mismatch", "Idempotency-Key was used for a different request")))
	_, err := c.WriteNote(ctxT(t), api.WriteRequest{Path: "notes/x.md", Content: "x"})
	e := wantCode(t, "422", err, api.CodeInternal)
	if !strings.Contains(e.Message, "bug in vaultmcp") || !strings.Contains(e.Message, "(HTTP 422 idempotency_key_mismatch)") {
		t.Errorf("message %q", e.Message)
	}
	if n := len(writesSeen(p)); n != 1 {
		t.Errorf("%d write requests, want 1", n)
	}
}

// A call whose caller's deadline passes (Connect at start, bounded to a
// few seconds) is not a cancellation by the agent: it ends as a server
// that did not answer in time (UNAVAILABLE), not "the tool call was
// cancelled"; a write's outcome is still uncertain.
func TestCallersDeadlineIsNoCancellation(t *testing.T) {
	_, p, _, c := setup(t)
	for _, write := range []bool{false, true} {
		p.setPlan(func(int, *http.Request) (fault, *canned) { return hang, nil })
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() {
			var err error
			if write {
				_, err = c.WriteNote(ctx, api.WriteRequest{Path: "notes/late.md", Content: "x"})
			} else {
				_, err = c.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/context.md"})
			}
			done <- err
		}()
		<-p.arrived
		// What a context.WithTimeout says when its time is up.
		cancel(context.DeadlineExceeded)
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not end after its deadline")
		}
		e := wantCode(t, "call past its caller's deadline", err, api.CodeUnavailable)
		if e.Uncertain != write || strings.Contains(e.Message, "cancelled") || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("write %v: %v (uncertain %v)", write, e, e.Uncertain)
		}
	}
}

// A server whose TLS certificate this machine does not trust answered (with
// its certificate): that is no network failure, and a retry gets the same
// answer. One attempt, no pause, an error that names the certificate and
// wraps the *tls.CertificateVerificationError; nothing was sent.
func TestUntrustedCertificateNotRetried(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	t.Cleanup(srv.Close)
	clk := newFakeClock()
	c := newClient(t, srv.URL, "tv_x", "ex", clk, jitter)
	_, err := c.WriteNote(ctxT(t), api.WriteRequest{Path: "a.md", Content: "x"})
	e := wantCode(t, "untrusted certificate", err, api.CodeUnavailable)
	var ce *tls.CertificateVerificationError
	if e.Uncertain || !errors.As(err, &ce) || !strings.Contains(e.Message, "certificate") {
		t.Errorf("error %v (uncertain %v)", e, e.Uncertain)
	}
	sleepsAre(t, clk)
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}
