package teamserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The advertised URL checked: once a replica listens, it asks its own
// --advertise URL for /healthz, the way the other replicas will reach it
// when they forward a request. The answer names the replica that gave it:
//   - this one: the URL is right;
//   - another (a unit file copied from another machine with its address
//     left in): every request forwarded to this replica would land on that
//     one instead. The error is logged and /readyz says not ready, so that
//     a balancer sends no client here (a replica takes vaults over when it
//     serves their requests), until the replica is started with its own
//     address;
//   - none (refused, timed out, not a vaultmcp server): the error is
//     logged; readiness is left alone, as a network may route the URL for
//     the others and not for the replica itself.

// advertiseAttempts and advertisePause bound the check: a replica that has
// just started answers at once, but its listener may lag behind a proxy or
// a port mapping in front of it.
const (
	advertiseAttempts = 5
	advertisePause    = time.Second
)

// errNotVaultmcp: the advertised URL answered, not as a vaultmcp server.
var errNotVaultmcp = errors.New("the answer to /healthz is not a vaultmcp server's")

// checkAdvertise runs the check and logs its outcome.
func (r *replication) checkAdvertise(ctx context.Context, advertise string) {
	s := r.s
	var other string
	var err error
	for i := range advertiseAttempts {
		if i > 0 && !r.wait(ctx, advertisePause) {
			return
		}
		if other, err = r.whoAnswers(ctx, advertise); err == nil {
			break
		}
	}
	switch {
	case ctx.Err() != nil:
	case err != nil:
		s.log.Error("the --advertise URL does not reach this replica: the other replicas cannot forward requests to it", "advertise", advertise, "err", err)
	case other != s.instance:
		r.wrongAdvertise.Store(&other)
		s.log.Error("the --advertise URL reaches another replica, not this one: requests forwarded to this replica would land there; /readyz says not ready until this replica is started with its own address", "advertise", advertise, "answered_by", other, "replica", s.instance)
	default:
		s.log.Debug("the --advertise URL reaches this replica", "advertise", advertise)
	}
}

// wait pauses for d, false when ctx ends first; through r.pause when set
// (the tests' clock).
func (r *replication) wait(ctx context.Context, d time.Duration) bool {
	if r.pause != nil {
		return r.pause(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// whoAnswers asks advertise's /healthz which replica answers it.
func (r *replication) whoAnswers(ctx context.Context, advertise string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(advertise, "/")+"/healthz", nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: r.fwd.transport}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var h Health
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: status %d", errNotVaultmcp, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&h); err != nil || h.Replica == "" {
		return "", errNotVaultmcp
	}
	return h.Replica, nil
}

// advertiseProblem is the readiness problem of a wrong --advertise URL,
// "" when there is none (or not yet known).
func (r *replication) advertiseProblem() string {
	if other := r.wrongAdvertise.Load(); other != nil {
		return fmt.Sprintf("the --advertise URL %s reaches another replica (%s), not this one", r.advertised(), *other)
	}
	return ""
}
