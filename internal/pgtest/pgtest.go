// Package pgtest gives tests a real PostgreSQL database.
//
// The server is the one named by VAULTMCP_TEST_PG (a postgres:// URL whose
// user may create databases), or else one this package starts from the
// PostgreSQL binaries (initdb and pg_ctl, on the PATH or in Debian's
// /usr/lib/postgresql/<version>/bin): a cluster in a temporary folder,
// listening on 127.0.0.1 on a free port, run as the user "postgres" when
// the tests run as root (PostgreSQL refuses to run as root), without fsync
// (a test cluster is thrown away). Each test gets a database of its own,
// dropped when it ends.
//
// When neither exists the test is skipped with a message saying so, unless
// CI is set: then a missing PostgreSQL is a failure.
//
// A package running its tests through Main stops the server it started as
// soon as they end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Otherwise a watchdog process stops it within a second of the test
// process's exit.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the server to use instead of starting one.
const EnvURL = "VAULTMCP_TEST_PG"

var (
	mu      sync.Mutex
	started *cluster // the server this process started, if any
	admin   string   // URL of the server's maintenance database
	setup   error    // why there is no server (sticky)
	icu     = true   // whether the server can create ICU databases
	noPG    bool     // no PostgreSQL binary exists (a skip outside CI)
	// Under Main, a test's database is emptied when it ends and given to
	// the next test (CREATE DATABASE costs a few hundred milliseconds);
	// Main drops them all at the end.
	reuse bool
	free  []string
)

// Main runs the tests, stops the server started for them and returns the
// exit code.
func Main(m *testing.M) int {
	mu.Lock()
	reuse = true
	mu.Unlock()
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range free {
		exec1(ctx, admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	}
	free = nil
	if started != nil {
		started.stop()
		started = nil
	}
	return code
}

// inCI says the tests run under CI (CI set to anything but false or 0).
func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

// server returns the maintenance URL of the server, starting it the first
// time.
func server() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if admin != "" || setup != nil {
		return admin, setup
	}
	if u := os.Getenv(EnvURL); u != "" {
		if _, err := withDatabase(u, "postgres"); err != nil {
			setup = fmt.Errorf("%s: %w", EnvURL, err)
			return "", setup
		}
		admin = u
		return admin, nil
	}
	bin, err := findBinaries()
	if err != nil {
		noPG = true
		setup = err
		return "", err
	}
	c, err := startCluster(bin)
	if err != nil {
		setup = err
		return "", err
	}
	started = c
	admin = c.url
	return admin, nil
}

// DB returns the URL of a new, empty database on the server, dropped when
// the test ends. Its default collation is ICU's en-US when the server has
// ICU, so that code relying on byte order is caught.
func DB(t testing.TB) string {
	t.Helper()
	srv, err := server()
	if err != nil {
		mu.Lock()
		missing := noPG
		mu.Unlock()
		if missing && !inCI() {
			t.Skipf("no PostgreSQL: %v (set %s=postgres://... or install PostgreSQL; with CI set this fails)", err, EnvURL)
		}
		if missing {
			t.Fatalf("no PostgreSQL, and CI is set: %v (install PostgreSQL or set %s=postgres://...)", err, EnvURL)
		}
		t.Fatalf("PostgreSQL for the tests: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := takeFree()
	if name == "" {
		var b [6]byte
		rand.Read(b[:])
		name = "vaultmcp_test_" + hex.EncodeToString(b[:])
		if err := exec1(ctx, srv, createStatement(name)); err != nil {
			t.Fatalf("creating database %s: %v", name, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		mu.Lock()
		keep := reuse
		mu.Unlock()
		if keep && empty(ctx, srv, name) == nil {
			mu.Lock()
			free = append(free, name)
			mu.Unlock()
			return
		}
		if err := exec1(ctx, srv, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	u, err := withDatabase(srv, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func takeFree() string {
	mu.Lock()
	defer mu.Unlock()
	if len(free) == 0 {
		return ""
	}
	name := free[len(free)-1]
	free = free[:len(free)-1]
	return name
}

// empty ends every session on a database and drops everything in it (its
// schema public, which holds all vaultmcp creates).
func empty(ctx context.Context, srv, name string) error {
	if err := exec1(ctx, srv, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '`+name+`' AND pid <> pg_backend_pid()`); err != nil {
		return err
	}
	u, err := withDatabase(srv, name)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`)
	return err
}

// createStatement creates a database, with ICU's en-US collation while the
// server accepts it.
func createStatement(name string) string {
	mu.Lock()
	defer mu.Unlock()
	if icu {
		return `CREATE DATABASE ` + name + ` TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`
	}
	return `CREATE DATABASE ` + name + ` TEMPLATE template0 ENCODING 'UTF8'`
}

// exec1 runs one statement on its own connection; a CREATE DATABASE the
// server refuses for ICU is retried without it.
func exec1(ctx context.Context, srv, sql string) error {
	conn, err := pgx.Connect(ctx, srv)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	if err != nil && strings.Contains(sql, "LOCALE_PROVIDER icu") {
		mu.Lock()
		icu = false
		mu.Unlock()
		_, err = conn.Exec(ctx, strings.SplitN(sql, " LOCALE_PROVIDER", 2)[0])
	}
	return err
}

// withDatabase returns the URL u naming another database.
func withDatabase(u, db string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") {
		return "", fmt.Errorf("%q is not a postgres:// URL", redact(u))
	}
	p.Path = "/" + db
	return p.String(), nil
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable)"
	}
	return p.Redacted()
}

// binaries are the PostgreSQL programs used.
type binaries struct{ initdb, pgctl string }

// debianBins are Debian's folders of PostgreSQL programs, one per version.
var debianBins = "/usr/lib/postgresql/*/bin"

// findBinaries looks on the PATH, then in Debian's versioned folders (the
// newest version first).
func findBinaries() (binaries, error) {
	initdb, err1 := exec.LookPath("initdb")
	pgctl, err2 := exec.LookPath("pg_ctl")
	if err1 == nil && err2 == nil {
		return binaries{initdb, pgctl}, nil
	}
	dirs, _ := filepath.Glob(debianBins)
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		b := binaries{filepath.Join(d, "initdb"), filepath.Join(d, "pg_ctl")}
		if isExec(b.initdb) && isExec(b.pgctl) {
			return b, nil
		}
	}
	return binaries{}, fmt.Errorf("no initdb and pg_ctl on the PATH or in %s", debianBins)
}

func version(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// cluster is a server this package started.
type cluster struct {
	bin  binaries
	dir  string // holds data/, the socket and the log
	asPG bool   // run as the user postgres
	url  string
}

// startCluster creates a cluster in a new temporary folder and starts it on
// a free loopback port (trying again on another port if that one was taken
// meanwhile).
func startCluster(bin binaries) (*cluster, error) {
	dir, err := os.MkdirTemp("", "vaultmcp-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, asPG: os.Geteuid() == 0}
	if c.asPG {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL needs another user, and there is no user postgres: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(c.bin.initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			last = err
			continue
		}
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300", port, dir)
		out, err := c.run(c.bin.pgctl, "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o", opts, "start")
		if err == nil {
			c.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			if err := c.watch(); err != nil {
				c.stop()
				return nil, fmt.Errorf("starting the watchdog of the test cluster: %w", err)
			}
			return c, nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		last = fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, tail(string(log), 2000))
	}
	os.RemoveAll(dir)
	return nil, last
}

// run runs a PostgreSQL program, as postgres when running as root.
func (c *cluster) run(prog string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if c.asPG {
		if runuser, err := exec.LookPath("runuser"); err == nil {
			cmd = exec.Command(runuser, append([]string{"-u", "postgres", "--", prog}, args...)...)
		} else {
			quoted := []string{shellQuote(prog)}
			for _, a := range args {
				quoted = append(quoted, shellQuote(a))
			}
			cmd = exec.Command("su", "postgres", "-s", "/bin/sh", "-c", strings.Join(quoted, " "))
		}
	} else {
		cmd = exec.Command(prog, args...)
	}
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

func (c *cluster) stop() {
	c.run(c.bin.pgctl, "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	os.RemoveAll(c.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
