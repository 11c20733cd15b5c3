package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchTeam runs the team load benchmark briefly on the example vault:
// the real team server answers every search and write, and the report
// carries the figures.
func TestBenchTeam(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a team server")
	}
	cmd := exec.Command(binary, "bench", "team", "--vault", filepath.Join("..", "..", "examples", "vault"), "--clients", "1,3", "--for", "1s", "--json")
	cmd.Env = cleanEnv()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep struct {
		Notes  int `json:"notes"`
		Levels []struct {
			Clients, Searches, SearchErrors, Writes, WriteErrors int
		} `json:"levels"`
		ServerPeak int64 `json:"server_peak_rss_bytes"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if rep.Notes == 0 || len(rep.Levels) != 2 || rep.ServerPeak == 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, l := range rep.Levels {
		if l.Searches == 0 || l.Writes == 0 || l.SearchErrors != 0 || l.WriteErrors != 0 {
			t.Errorf("level %+v", l)
		}
	}
	for _, bad := range []string{"--clients 0", "--for 10m"} {
		args := append([]string{"bench", "team", "--vault", filepath.Join("..", "..", "examples", "vault")}, strings.Fields(bad)...)
		if err := exec.Command(binary, args...).Run(); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
