package pgtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// The programs are found on the PATH first, else in the newest of Debian's
// versioned folders that has both.
func TestFindBinaries(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9.6", "15", "16", "17"} {
		bin := filepath.Join(root, v, "bin")
		os.MkdirAll(bin, 0o755)
		for _, p := range []string{"initdb", "pg_ctl"} {
			if v == "17" && p == "pg_ctl" {
				continue // incomplete: skipped
			}
			os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	old := debianBins
	t.Cleanup(func() { debianBins = old })
	debianBins = filepath.Join(root, "*", "bin")
	t.Setenv("PATH", t.TempDir())
	b, err := findBinaries()
	if err != nil || b.pgctl != filepath.Join(root, "16", "bin", "pg_ctl") || b.initdb != filepath.Join(root, "16", "bin", "initdb") {
		t.Errorf("findBinaries = %+v (%v), want version 16's", b, err)
	}
	onPath := t.TempDir()
	for _, p := range []string{"initdb", "pg_ctl"} {
		os.WriteFile(filepath.Join(onPath, p), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("PATH", onPath)
	if b, err := findBinaries(); err != nil || b.pgctl != filepath.Join(onPath, "pg_ctl") {
		t.Errorf("with pg_ctl on the PATH: %+v (%v)", b, err)
	}
	t.Setenv("PATH", t.TempDir())
	debianBins = filepath.Join(t.TempDir(), "*", "bin")
	if _, err := findBinaries(); err == nil {
		t.Error("findBinaries found programs where there are none")
	}
}

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "FALSE": false, "true": true, "1": true, "yes": true} {
		t.Setenv("CI", v)
		if inCI() != want {
			t.Errorf("CI=%q: inCI() = %v", v, !want)
		}
	}
}

// helperEnv makes this test binary, run again, call DB with no PostgreSQL
// to be found.
const helperEnv = "VAULTMCP_PGTEST_NO_PG"

func TestNoPostgresHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestNoPostgres")
	}
	debianBins = "/nonexistent/*/bin"
	DB(t)
	t.Error("DB returned without PostgreSQL")
}

// Without any PostgreSQL a test is skipped, saying why and what to do; with
// CI set it fails.
func TestNoPostgres(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoPostgresHelper$", "-test.v")
		cmd.Env = []string{helperEnv + "=1", "PATH=" + t.TempDir(), "CI=" + ci, "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		text := string(out)
		if !strings.Contains(text, "no initdb and pg_ctl") || !strings.Contains(text, EnvURL) && ci == "" {
			t.Errorf("CI=%q: the message does not say why or what to do:\n%s", ci, text)
		}
		switch {
		case ci == "" && (err != nil || !strings.Contains(text, "--- SKIP")):
			t.Errorf("without CI: %v, want a skip:\n%s", err, text)
		case ci != "" && (err == nil || !strings.Contains(text, "--- FAIL")):
			t.Errorf("with CI=true: %v, want a failure:\n%s", err, text)
		}
	}
}

// A test's database is a real, empty PostgreSQL database with ICU's en-US
// collation when the server has ICU, and the proxy of WithLatency delays
// each round trip by at least twice its delay.
func TestDBAndLatency(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := DB(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tables int
	var provider string
	if err := conn.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'),
		(SELECT datlocprovider::text FROM pg_database WHERE datname = current_database())`).Scan(&tables, &provider); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	wantICU := icu
	mu.Unlock()
	if tables != 0 || (wantICU && provider != "i") {
		t.Errorf("new database: %d table(s), locale provider %q", tables, provider)
	}
	const oneWay = 20 * time.Millisecond
	slow, err := pgx.Connect(ctx, WithLatency(t, u, oneWay))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close(ctx)
	start := time.Now()
	var one int
	if err := slow.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("through the proxy: %d (%v)", one, err)
	}
	if d := time.Since(start); d < 2*oneWay {
		t.Errorf("a round trip through the proxy took %v, less than %v", d, 2*oneWay)
	}
}
