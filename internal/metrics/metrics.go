// Package metrics keeps a process's counters, gauges and histograms and
// writes them in the Prometheus text exposition format (version 0.0.4), so
// that any Prometheus-compatible scraper reads /metrics.
//
// # Guarantees
//
//   - Every method is safe for concurrent use; an observation is never lost
//     or counted twice, and a scrape sees each series whole.
//   - The output is deterministic: families in registration order, series
//     sorted by their label values, histogram buckets in increasing order
//     and cumulative, ending with le="+Inf" equal to _count.
//   - Label values and help texts are escaped as the format requires
//     (backslash, double quote, newline), so no value can break a line.
//
// A series exists from its first observation; label values are the
// caller's to keep few (routes and status codes, not paths or key names).
package metrics

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ContentType is the type of the text format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Registry holds metric families.
type Registry struct {
	mu       sync.Mutex
	families []family
	names    map[string]bool
}

type family interface {
	write(w *strings.Builder)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{names: make(map[string]bool)} }

func (r *Registry) add(name string, f family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names[name] {
		panic("metrics: " + name + " registered twice")
	}
	r.names[name] = true
	r.families = append(r.families, f)
}

// WriteText writes every family in the text format.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	fs := append([]family(nil), r.families...)
	r.mu.Unlock()
	var b strings.Builder
	for _, f := range fs {
		f.write(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Handler serves the registry (GET or HEAD).
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		if req.Method == http.MethodHead {
			return
		}
		_ = r.WriteText(w)
	})
}

// desc is what every family has: a name, a help line and label names.
type desc struct {
	name, help, kind string
	labels           []string
}

func (d desc) header(b *strings.Builder) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", d.name, escapeHelp(d.help), d.name, d.kind)
}

// labelText renders {a="x",b="y"} (with extra pairs appended), or "".
func (d desc) labelText(values []string, extra ...string) string {
	if len(d.labels) == 0 && len(extra) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range d.labels {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=\"%s\"", l, escapeValue(values[i]))
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=\"%s\"", extra[i], escapeValue(extra[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}

func (d desc) key(values []string) string {
	if len(values) != len(d.labels) {
		panic(fmt.Sprintf("metrics: %s takes %d label value(s), got %d", d.name, len(d.labels), len(values)))
	}
	return strings.Join(values, "\xff")
}

func escapeValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// sortedKeys returns the map's keys sorted (series order).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CounterVec is a counter family: values that only go up.
type CounterVec struct {
	desc
	mu     sync.Mutex
	series map[string]*counterSeries
}

type counterSeries struct {
	values []string
	v      float64
}

// Counter registers a counter family with the label names.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	c := &CounterVec{desc: desc{name, help, "counter", labels}, series: make(map[string]*counterSeries)}
	r.add(name, c)
	return c
}

// Add adds v (>= 0) to the series of the label values.
func (c *CounterVec) Add(v float64, values ...string) {
	if v < 0 {
		panic("metrics: a counter cannot go down")
	}
	k := c.key(values)
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.series[k]
	if !ok {
		s = &counterSeries{values: append([]string(nil), values...)}
		c.series[k] = s
	}
	s.v += v
}

// Inc adds 1.
func (c *CounterVec) Inc(values ...string) { c.Add(1, values...) }

// Value is the series' current value (0 when it has none).
func (c *CounterVec) Value(values ...string) float64 {
	k := c.key(values)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.series[k]; ok {
		return s.v
	}
	return 0
}

func (c *CounterVec) write(b *strings.Builder) {
	c.header(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range sortedKeys(c.series) {
		s := c.series[k]
		fmt.Fprintf(b, "%s%s %s\n", c.name, c.labelText(s.values), formatFloat(s.v))
	}
}

// gaugeFunc is a gauge read at each scrape.
type gaugeFunc struct {
	desc
	fn func() float64
}

// GaugeFunc registers a gauge without labels whose value fn gives at each
// scrape.
func (r *Registry) GaugeFunc(name, help string, fn func() float64) {
	r.add(name, &gaugeFunc{desc{name, help, "gauge", nil}, fn})
}

func (g *gaugeFunc) write(b *strings.Builder) {
	g.header(b)
	fmt.Fprintf(b, "%s %s\n", g.name, formatFloat(g.fn()))
}

// HistogramVec is a histogram family: observations counted in cumulative
// buckets, with their sum and count.
type HistogramVec struct {
	desc
	bounds []float64
	mu     sync.Mutex
	series map[string]*histSeries
}

type histSeries struct {
	values []string
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

// DefaultBuckets suit request latencies in seconds: 1 ms to 10 s.
var DefaultBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Histogram registers a histogram family with the bucket upper bounds
// (increasing; +Inf is added) and label names ("le" is reserved).
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	for i := 1; i < len(buckets); i++ {
		if buckets[i] <= buckets[i-1] {
			panic("metrics: buckets of " + name + " must increase")
		}
	}
	for _, l := range labels {
		if l == "le" {
			panic("metrics: the label le is reserved for histogram buckets")
		}
	}
	h := &HistogramVec{desc: desc{name, help, "histogram", labels}, bounds: append([]float64(nil), buckets...), series: make(map[string]*histSeries)}
	r.add(name, h)
	return h
}

// Observe records one value in the series of the label values.
func (h *HistogramVec) Observe(v float64, values ...string) {
	k := h.key(values)
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.series[k]
	if !ok {
		s = &histSeries{values: append([]string(nil), values...), counts: make([]uint64, len(h.bounds)+1)}
		h.series[k] = s
	}
	s.counts[i]++
	s.sum += v
	s.n++
}

// Count is how many values the series observed.
func (h *HistogramVec) Count(values ...string) uint64 {
	k := h.key(values)
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.series[k]; ok {
		return s.n
	}
	return 0
}

func (h *HistogramVec) write(b *strings.Builder) {
	h.header(b)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range sortedKeys(h.series) {
		s := h.series[k]
		var cum uint64
		for i, bound := range h.bounds {
			cum += s.counts[i]
			fmt.Fprintf(b, "%s_bucket%s %d\n", h.name, h.labelText(s.values, "le", formatFloat(bound)), cum)
		}
		cum += s.counts[len(h.bounds)]
		fmt.Fprintf(b, "%s_bucket%s %d\n", h.name, h.labelText(s.values, "le", "+Inf"), cum)
		fmt.Fprintf(b, "%s_sum%s %s\n", h.name, h.labelText(s.values), formatFloat(s.sum))
		fmt.Fprintf(b, "%s_count%s %d\n", h.name, h.labelText(s.values), s.n)
	}
}
