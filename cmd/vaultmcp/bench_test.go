package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"1000,10000,100000", []int{1000, 10000, 100000}, false},
		{" 1k, 10K ,100k", []int{1000, 10000, 100000}, false},
		{"", nil, false},
		{"5", []int{5}, false},
		{"0", nil, true},
		{"-3", nil, true},
		{"ten", nil, true},
		{"20000k", nil, true},
	} {
		got, err := parseSizes(tc.in)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("parseSizes(%q) = %v, %v; want %v (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestBenchCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench", "--sizes", ""}, 2, "nothing to measure"},
		{[]string{"bench", "--sizes", "ten"}, 2, "--sizes"},
		{[]string{"bench", "--queries", "0", "--sizes", "10"}, 2, "--queries"},
		{[]string{"bench", "--lang", "fr", "--sizes", "10"}, 1, "VAULT_LANG"},
		{[]string{"bench", "--vault", "/nonexistent/vault"}, 1, "no such directory"},
		{[]string{"bench", "extra"}, 2, "unexpected argument"},
		{[]string{"bench", "--sizes", "10", "--peer", "qmd"}, 2, "--peer: needs --vault"},
		{[]string{"bench", "--vault", "../../examples/vault", "--peer", "ripgrep"}, 2, "not a peer"},
		{[]string{"bench", "--vault", "../../examples/vault", "--peer", "qmd", "--qmd", "/nonexistent/qmd"}, 2, "--qmd"},
	} {
		cmd := exec.Command(binary, tc.args...)
		cmd.Env = cleanEnv()
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != tc.code {
			t.Errorf("%v: err = %v, want exit %d", tc.args, err, tc.code)
		}
		if stdout.Len() != 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stdout=%q stderr=%q", tc.args, stdout.String(), stderr.String())
		}
	}
}

// TestBenchCommand runs the bench on the example vault through the real
// binary (which also measures itself over stdio) and reads its JSON.
func TestBenchCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	vault := copyExampleVault(t)
	cmd := exec.Command(binary, "bench", "--vault", vault, "--sizes", "", "--queries", "5", "--json")
	cmd.Env = cleanEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Queries int `json:"queries_per_vault"`
		Vaults  []struct {
			Notes int `json:"notes"`
			Stdio *struct {
				FirstSearchMs float64 `json:"first_search_ms"`
				PeakRSSBytes  int64   `json:"peak_rss_bytes"`
			} `json:"stdio"`
			Writes *struct {
				WriteCommit struct {
					P50 float64 `json:"p50_ms"`
				} `json:"write_commit"`
			} `json:"writes"`
			Problems []string `json:"problems"`
		} `json:"vaults"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	if rep.Queries != 5 || len(rep.Vaults) != 1 {
		t.Fatalf("report: %s", out)
	}
	v := rep.Vaults[0]
	if v.Notes == 0 || v.Stdio == nil || v.Stdio.FirstSearchMs <= 0 || v.Stdio.PeakRSSBytes <= 0 || v.Writes == nil || v.Writes.WriteCommit.P50 <= 0 || len(v.Problems) > 0 {
		t.Errorf("figures missing: %s", out)
	}
}
