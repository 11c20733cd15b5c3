package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/pgtest"
)

// TestBenchTeam runs the team load benchmark briefly on the example vault:
// the real team server answers every search and write, and the report
// carries the figures.
func TestBenchTeam(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a team server")
	}
	cmd := exec.Command(binary, "bench", "team", "--vault", filepath.Join("..", "..", "examples", "vault"), "--clients", "1,3", "--for", "1s", "--soak", "2s", "--json")
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
		Soak       *struct {
			Clients, Searches, Writes, Errors int
			RSS                               []int64 `json:"rss_bytes"`
		} `json:"soak"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	// The soak: the last level's 3 clients, searches and writes answered,
	// the server's memory sampled at the start and the end at least.
	if s := rep.Soak; s == nil || s.Clients != 3 || s.Searches == 0 || s.Writes == 0 || s.Errors != 0 || len(s.RSS) < 2 || s.RSS[0] == 0 {
		t.Errorf("soak %+v", rep.Soak)
	}
	if rep.Notes == 0 || len(rep.Levels) != 2 || rep.ServerPeak == 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, l := range rep.Levels {
		if l.Searches == 0 || l.Writes == 0 || l.SearchErrors != 0 || l.WriteErrors != 0 {
			t.Errorf("level %+v", l)
		}
	}
	for _, bad := range []string{"--clients 0", "--for 10m", "--soak 31m", "--soak-clients 300"} {
		args := append([]string{"bench", "team", "--vault", filepath.Join("..", "..", "examples", "vault")}, strings.Fields(bad)...)
		if err := exec.Command(binary, args...).Run(); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestBenchTeamReplicas runs the replica benchmark briefly: one and two
// replicas on a real PostgreSQL, two vaults in bare remotes; every request
// is answered, the leases are spread, and the failover is measured.
func TestBenchTeamReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts team-server replicas")
	}
	db := pgtest.DB(t)
	cmd := exec.Command(binary, "bench", "team", "--vault", filepath.Join("..", "..", "examples", "vault"), "--db", db,
		"--replicas", "1,2", "--vaults", "2", "--clients", "2", "--for", "1s", "--lease-ttl", "1s", "--json")
	cmd.Env = cleanEnv()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep struct {
		Levels []struct {
			Replicas, Searches, SearchErrors, Writes, WriteErrors int
			LeasesHeld                                            []int   `json:"leases_held"`
			FailoverMS                                            float64 `json:"failover_ms"`
		} `json:"levels"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if len(rep.Levels) != 2 || len(rep.Problems) != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, l := range rep.Levels {
		if l.Searches == 0 || l.Writes == 0 || l.SearchErrors != 0 || l.WriteErrors != 0 || len(l.LeasesHeld) != l.Replicas {
			t.Errorf("level %+v", l)
		}
		for _, h := range l.LeasesHeld {
			if h != 2/l.Replicas {
				t.Errorf("%d replica(s): leases held %v, want the 2 vaults spread", l.Replicas, l.LeasesHeld)
			}
		}
	}
	if rep.Levels[0].FailoverMS != 0 || rep.Levels[1].FailoverMS <= 0 {
		t.Errorf("failover %v / %v ms, want none with one replica, measured with two", rep.Levels[0].FailoverMS, rep.Levels[1].FailoverMS)
	}
	noDB := exec.Command(binary, "bench", "team", "--vault", filepath.Join("..", "..", "examples", "vault"), "--replicas", "2")
	noDB.Env = cleanEnv()
	if out, err := noDB.CombinedOutput(); err == nil || !strings.Contains(string(out), "--db") {
		t.Errorf("--replicas without --db: %v %s, want refused naming --db", err, out)
	}
}
