package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/bench"
)

// runBenchTeam is `vaultmcp bench team`: the team server under load on
// loopback (the real binary, one project imported from --vault); with
// --replicas, several replicas sharing the PostgreSQL database --db, over
// --vaults projects kept in bare git remotes, and the failover time.
func runBenchTeam(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c Config
	fs := newFlagSet("bench team", stderr)
	c.common(fs)
	clients := fs.String("clients", "1,16,64", "concurrent clients of each level, comma-separated")
	dur := fs.Duration("for", 10*time.Second, "how long each level sends searches, then writes (at most 5m)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	replicas := fs.String("replicas", "", "replica counts to compare, comma-separated (e.g. 1,3); needs --db; uses the last --clients level")
	vaults := fs.Int("vaults", 12, "with --replicas: how many vaults (each imported from --vault, kept in a bare git remote)")
	db := new(string)
	secretFlag(fs, db, "db", "VAULTMCP_DB", "with --replicas: the PostgreSQL database the replicas share, a scratch one: the run's projects and keys stay in it (default $VAULTMCP_DB)")
	soak := fs.Duration("soak", 0, "after the levels, send searches with one write in ten for this long (at most 30m), sampling the server's memory: does it stay flat")
	soakClients := fs.Int("soak-clients", 0, "clients of the soak (default the last --clients level)")
	leaseTTL := fs.Duration("lease-ttl", 3*time.Second, "with --replicas: the replicas' --lease-ttl (the failover waits for it)")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return &exitError{2, err}
	}
	if len(pos) > 0 {
		return &exitError{2, fmt.Errorf("bench team: unexpected argument %q", pos[0])}
	}
	if err := c.check(); err != nil {
		return err
	}
	if *dur <= 0 || *dur > 5*time.Minute {
		return &exitError{2, fmt.Errorf("--for: must be between 1s and 5m")}
	}
	if *soak < 0 || *soak > 30*time.Minute {
		return &exitError{2, fmt.Errorf("--soak: must be between 0 (none) and 30m")}
	}
	if *soakClients < 0 || *soakClients > 256 {
		return &exitError{2, fmt.Errorf("--soak-clients: must be between 1 and 256")}
	}
	var levels []int
	for _, f := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 256 {
			return &exitError{2, fmt.Errorf("--clients: %q is not a number from 1 to 256", f)}
		}
		levels = append(levels, n)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if *replicas != "" {
		var counts []int
		for _, f := range strings.Split(*replicas, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 16 {
				return &exitError{2, fmt.Errorf("--replicas: %q is not a number from 1 to 16", f)}
			}
			counts = append(counts, n)
		}
		switch {
		case *db == "":
			return &exitError{2, fmt.Errorf("--replicas needs --db postgres://... (or VAULTMCP_DB): the replicas share it")}
		case *vaults < 1 || *vaults > 500:
			return &exitError{2, fmt.Errorf("--vaults: must be between 1 and 500")}
		case *leaseTTL < time.Second || *leaseTTL > time.Minute:
			return &exitError{2, fmt.Errorf("--lease-ttl: must be between 1s and 1m")}
		}
		rep, err := bench.RunReplicas(ctx, bench.ReplicaOptions{Exe: exe, Vault: c.Vault, Lang: c.Lang, DB: *db, Replicas: counts, Vaults: *vaults,
			Clients: levels[len(levels)-1], For: *dur, LeaseTTL: *leaseTTL, Seed: 1, Logger: logger(stderr, c.LogLevel)})
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		return rep.WriteTable(stdout)
	}
	rep, err := bench.RunTeam(ctx, bench.TeamOptions{Exe: exe, Vault: c.Vault, Lang: c.Lang, Clients: levels, For: *dur, Soak: *soak, SoakClients: *soakClients, Seed: 1, Logger: logger(stderr, c.LogLevel)})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteTable(stdout)
}
