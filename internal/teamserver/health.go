package teamserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/metrics"
)

// Health, readiness and metrics, for load balancers and monitoring. None
// needs a key and none says anything a key protects: no project, path or
// key name appears in them.
//
//   - GET /healthz: 200 while the process serves HTTP (liveness).
//   - GET /readyz: 200 when the metadata store answers and every vault this
//     replica holds the lease of is open (none is being taken over); 503
//     with the reasons otherwise, and from the start of a shutdown, so a
//     load balancer stops sending requests before the replica leaves.
//   - GET /metrics: the Prometheus text format (serverMetrics).

// Health is the body of /healthz and /readyz.
type Health struct {
	Status  string `json:"status"` // ok, ready or not ready
	Replica string `json:"replica"`
	// Leases is how many vault leases the replica holds (replicas only).
	Leases   int      `json:"leases"`
	Problems []string `json:"problems,omitempty"`
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET")
		return
	}
	jsonResponse(http.StatusOK, Health{Status: "ok", Replica: s.instance, Leases: s.leasesHeld()}).write(w)
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET")
		return
	}
	h := Health{Status: "ready", Replica: s.instance, Leases: s.leasesHeld()}
	select {
	case <-s.stopping:
		h.Problems = append(h.Problems, "shutting down")
	default:
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if _, err := s.store.Projects(ctx); err != nil {
		h.Problems = append(h.Problems, "the metadata store does not answer")
	}
	if s.rep != nil {
		if n := s.rep.taking(); n > 0 {
			h.Problems = append(h.Problems, fmt.Sprintf("%d vault(s) being taken over", n))
		}
		if p := s.rep.advertiseProblem(); p != "" {
			h.Problems = append(h.Problems, p)
		}
	}
	status := http.StatusOK
	if len(h.Problems) > 0 {
		h.Status, status = "not ready", http.StatusServiceUnavailable
	}
	resp := jsonResponse(status, h)
	resp.header.Del("Retry-After")
	resp.write(w)
}

func (s *Server) leasesHeld() int {
	if s.rep == nil {
		return 0
	}
	return s.rep.leasesHeld()
}

// serverMetrics are the server's metrics.
type serverMetrics struct {
	reg *metrics.Registry
	// requests and latency, by route (the pattern that matched), method
	// and status.
	requests *metrics.CounterVec
	latency  *metrics.HistogramVec
	// writes by operation and result (ok or the error code), and how long
	// they held their vault (push included).
	writes       *metrics.CounterVec
	writeSeconds *metrics.HistogramVec
	// pushes to a vault's git remote by result: ok, rejected, failed.
	pushes      *metrics.CounterVec
	pushSeconds *metrics.HistogramVec
	// forwards to the replica holding a vault's lease, by result.
	forwards *metrics.CounterVec
	// takeovers of a vault's lease, by result, and how long they took.
	takeovers       *metrics.CounterVec
	takeoverSeconds *metrics.HistogramVec
	leaseLosses     *metrics.CounterVec
	// notes of new versions: sent, dropped (too many waiting), received,
	// missed.
	notes *metrics.CounterVec
}

func newServerMetrics(s *Server) *serverMetrics {
	reg := metrics.NewRegistry()
	m := &serverMetrics{
		reg:             reg,
		requests:        reg.Counter("vaultmcp_http_requests_total", "HTTP requests answered, by route, method and status.", "route", "method", "status"),
		latency:         reg.Histogram("vaultmcp_http_request_duration_seconds", "Time to answer an HTTP request, by route.", metrics.DefaultBuckets, "route"),
		writes:          reg.Counter("vaultmcp_writes_total", "Vault writes, by operation and result (ok or the error code).", "op", "result"),
		writeSeconds:    reg.Histogram("vaultmcp_write_duration_seconds", "Time a write holds its vault: the change, its commit and its push.", metrics.DefaultBuckets),
		pushes:          reg.Counter("vaultmcp_git_pushes_total", "Pushes of writes to a vault's git remote, by result (ok, rejected, failed).", "result"),
		pushSeconds:     reg.Histogram("vaultmcp_git_push_duration_seconds", "Time of a push to a vault's git remote.", metrics.DefaultBuckets),
		forwards:        reg.Counter("vaultmcp_forwarded_requests_total", "Requests forwarded to the replica holding the vault's lease, by result: ok (its answer relayed), holder_error (its 5xx answer relayed), error (it stopped answering), owner_down, refused_second_hop.", "result"),
		takeovers:       reg.Counter("vaultmcp_lease_takeovers_total", "Vault leases taken (the vault opened to serve it), by result.", "result"),
		takeoverSeconds: reg.Histogram("vaultmcp_lease_takeover_duration_seconds", "Time to take a vault over: the lease, the clone or fetch, the index.", []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}),
		leaseLosses:     reg.Counter("vaultmcp_lease_losses_total", "Vault leases given up because they could not be renewed."),
		notes:           reg.Counter("vaultmcp_version_notes_total", "Notes of new versions between replicas: sent, dropped, received, missed.", "kind"),
	}
	reg.GaugeFunc("vaultmcp_leases_held", "Vault leases this replica holds.", func() float64 { return float64(s.leasesHeld()) })
	reg.GaugeFunc("vaultmcp_projects_open", "Vaults open on this replica (served or kept as a standby).", func() float64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return float64(len(s.projects))
	})
	reg.GaugeFunc("vaultmcp_projects_unopened", "Projects whose vault cannot be opened (their requests answered 503; tried again every "+openRetry.String()+").", func() float64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return float64(len(s.unopened))
	})
	reg.GaugeFunc("vaultmcp_writes_in_flight", "Writes being applied now.", func() float64 { return float64(s.inflightWrites.Load()) })
	return m
}

// methodLabel keeps the method label to the methods the API has.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}
