package metrics

import (
	"bufio"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func sample() *Registry {
	r := NewRegistry()
	req := r.Counter("app_requests_total", "Requests answered,\nby route and status.", "route", "status")
	req.Inc("/b", "200")
	req.Add(2, "/a", "404")
	req.Inc("/a", "200")
	req.Inc(`we"ird\route`+"\n", "500")
	r.GaugeFunc("app_leases_held", "Leases held now.", func() float64 { return 3 })
	h := r.Histogram("app_latency_seconds", "Latency.", []float64{0.1, 1}, "route")
	h.Observe(0.05, "/a")
	h.Observe(0.1, "/a") // on a bound: counted in that bucket
	h.Observe(0.5, "/a")
	h.Observe(7, "/a")
	h.Observe(0.2, "/b")
	plain := r.Counter("app_writes_total", "Writes.")
	plain.Inc()
	return r
}

// The exposition of a registry, byte for byte (testdata/sample.golden):
// families in registration order, series sorted, buckets cumulative up to
// +Inf, values and help escaped.
func TestGolden(t *testing.T) {
	var b strings.Builder
	if err := sample().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "sample.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("exposition:\n%s\nwant:\n%s", b.String(), want)
	}
}

var (
	commentLine = regexp.MustCompile(`^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*$`)
	sampleLine  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [^ ]+$`)
)

// Every line is a comment or a sample the format allows, and the sample's
// value parses as a number.
func TestLinesParse(t *testing.T) {
	var b strings.Builder
	sample().WriteText(&b)
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if !commentLine.MatchString(line) {
				t.Errorf("bad comment line %q", line)
			}
			continue
		}
		if !sampleLine.MatchString(line) {
			t.Errorf("bad sample line %q", line)
			continue
		}
		v := line[strings.LastIndexByte(line, ' ')+1:]
		if _, err := strconv.ParseFloat(v, 64); err != nil && v != "+Inf" {
			t.Errorf("value %q of %q: %v", v, line, err)
		}
	}
}

// Observations from many goroutines are all counted.
func TestConcurrent(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("c_total", "c", "k")
	h := r.Histogram("h_seconds", "h", DefaultBuckets, "k")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				c.Inc("x")
				h.Observe(float64(i)/1000, "x")
				if i%100 == 0 {
					r.WriteText(&strings.Builder{})
				}
			}
		}()
	}
	wg.Wait()
	if c.Value("x") != 8000 || h.Count("x") != 8000 {
		t.Errorf("counter %v, histogram count %d, want 8000 each", c.Value("x"), h.Count("x"))
	}
}

func TestHandler(t *testing.T) {
	ts := httptest.NewServer(sample().Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ContentType {
		t.Errorf("GET: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, err = http.Post(ts.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}

func TestMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"twice":     func() { r := NewRegistry(); r.Counter("a", "a"); r.Counter("a", "a") },
		"labels":    func() { NewRegistry().Counter("a", "a", "x").Inc() },
		"down":      func() { NewRegistry().Counter("a", "a").Add(-1) },
		"le":        func() { NewRegistry().Histogram("h", "h", DefaultBuckets, "le") },
		"unordered": func() { NewRegistry().Histogram("h", "h", []float64{2, 1}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
