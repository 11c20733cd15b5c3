package bench

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		{"empty", nil, 50, 0},
		{"one value", []float64{7}, 50, 7},
		{"one value p99", []float64{7}, 99, 7},
		{"two values p50", []float64{1, 2}, 50, 1},
		{"ten p50", ten, 50, 5},
		{"ten p90", ten, 90, 9},
		{"ten p99", ten, 99, 10},
		{"ten p100", ten, 100, 10},
		{"ten p1", ten, 1, 1},
		{"hundred p50", hundred, 50, 50},
		{"hundred p99", hundred, 99, 99},
		{"hundred p99.5", hundred, 99.5, 100},
	} {
		if got := Percentile(tc.values, tc.p); got != tc.want {
			t.Errorf("%s: Percentile(p%v) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	var samples []time.Duration
	for _, i := range rand.New(rand.NewPCG(1, 1)).Perm(200) {
		samples = append(samples, time.Duration(i+1)*time.Millisecond)
	}
	d := Summarize(samples)
	if d.N != 200 || d.P50 != 100 || d.P99 != 198 || d.Max != 200 {
		t.Errorf("Summarize = %+v, want n 200, p50 100, p99 198, max 200", d)
	}
	if z := Summarize(nil); z != (Dist{}) {
		t.Errorf("Summarize(nil) = %+v", z)
	}
	if d := Summarize([]time.Duration{1500 * time.Microsecond}); d.P50 != 1.5 || d.P99 != 1.5 {
		t.Errorf("1.5 ms summarised as %+v", d)
	}
}

func TestSampleQueries(t *testing.T) {
	dir, _ := generate(t, 200, 5)
	a, err := SampleQueries(context.Background(), dir, "en", 100, 9)
	if err != nil {
		t.Fatal(err)
	}
	b, err := SampleQueries(context.Background(), dir, "en", 100, 9)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 100 || strings.Join(a, "|") != strings.Join(b, "|") {
		t.Fatalf("queries not deterministic or not 100: %d", len(a))
	}
	words := map[int]int{}
	for _, q := range a {
		n := len(strings.Fields(q))
		words[n]++
		if n < 1 || n > 3 {
			t.Errorf("query %q has %d words", q, n)
		}
		for _, w := range strings.Fields(q) {
			if w == "the" || w == "and" || len([]rune(w)) < 3 {
				t.Errorf("query %q keeps a stopword or a short word %q", q, w)
			}
		}
	}
	if words[1] == 0 || words[2] == 0 || words[3] == 0 {
		t.Errorf("query lengths %v: want 1, 2 and 3 words", words)
	}
	if _, err := SampleQueries(context.Background(), t.TempDir(), "en", 10, 1); err == nil {
		t.Error("an empty folder gave queries")
	}
}

func TestMisspell(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	changed := 0
	for i := 0; i < 50; i++ {
		w := misspell(r, "postgres")
		if w != "postgres" {
			changed++
		}
		if d := len(w) - len("postgres"); d < -1 || d > 1 {
			t.Errorf("misspell made %q: more than one edit", w)
		}
	}
	if changed < 40 {
		t.Errorf("only %d of 50 misspellings changed the word", changed)
	}
	if misspell(r, "go") != "go" {
		t.Error("a short word was misspelled")
	}
}

func TestFreshWord(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		w := freshWord(1, i)
		if seen[w] || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Fatalf("fresh word %q repeated or not all letters", w)
		}
		seen[w] = true
	}
	if freshWord(1, 3) != freshWord(1, 3) || freshWord(1, 3) == freshWord(2, 3) {
		t.Error("fresh words must depend on seed and trial only")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtMs(0.1234), "0.123 ms"},
		{fmtMs(4.567), "4.57 ms"},
		{fmtMs(123.4), "123 ms"},
		{fmtMs(2345), "2.35 s"},
		{fmtBytes(1536 * 1024), "1.5 MiB"},
		{fmtBytes(200 << 20), "200 MiB"},
		{fmtBytes(3 << 30), "3.00 GiB"},
		{fmtSize(850), "850 B"},
		{fmtSize(9999), "9,999 B"},
		{fmtSize(11234), "11.2 kB"},
		{fmtSize(12_345_678), "12.3 MB"},
		{fmtCount(0), "0"},
		{fmtCount(999), "999"},
		{fmtCount(1000), "1,000"},
		{fmtCount(1234567), "1,234,567"},
		{fmtCount(-4500), "-4,500"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestRSSGrowth(t *testing.T) {
	for _, c := range []struct {
		rss  []int64
		want float64
	}{
		{nil, 0},
		{[]int64{5, 6, 7}, 0},
		{[]int64{50, 100, 100, 100, 100, 100, 110, 110}, 0.1},  // warm-up ignored, +10% at the end
		{[]int64{10, 10, 200, 200, 200, 200, 200, 200}, 0},     // flat after the first quarter
		{[]int64{100, 100, 100, 100, 100, 100, 200, 200}, 1.0}, // doubled
	} {
		if got := rssGrowth(c.rss); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("rssGrowth(%v) = %v, want %v", c.rss, got, c.want)
		}
	}
}
