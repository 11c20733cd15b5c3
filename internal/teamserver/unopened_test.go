package teamserver

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// A project whose vault folder is missing at the start does not stop the
// server: the other projects are served, its requests are answered 503
// (without a new attempt at each) until it opens, tried again by the
// server's upkeep or by a request once openRetry has passed; a write a
// crash left running in it is settled when it opens.
func TestUnopenedProjectDoesNotStopTheServer(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	e.crashedCreate(t, "applied", "notes/crash.md", "# Crash\n")
	e.stop()
	exDir, otherDir := e.vaultDir(e.ex), e.vaultDir(e.other)
	for _, d := range []string{exDir, otherDir} {
		if err := os.Rename(d, d+".aside"); err != nil {
			t.Fatal(err)
		}
	}
	e.start(envOpts{}) // fails the test when the start fails
	a := e.do("GET", "/api/projects/ex/files", e.rw, nil)
	wantStatus(t, "a project without its folder", a, 503, teamapi.CodeUnavailable)
	if strings.Contains(string(a.body), exDir) {
		t.Errorf("the refusal names the server's folder: %s", a.body)
	}
	wantStatus(t, "a retry of the write left running, meanwhile", e.create(e.rw, "ex", "notes/crash.md", "# Crash\n", "Idempotency-Key", "applied"), 503, teamapi.CodeUnavailable)
	wantStatus(t, "a search in another project without its folder", e.do("POST", "/api/projects/other/search", e.rw, []byte(`{"query":"x"}`)), 503, teamapi.CodeUnavailable)
	wantMetric(t, e, "vaultmcp_projects_unopened 2")
	if running, _ := e.data.Store.RunningIdem(ctx); len(running) != 1 {
		t.Fatalf("running records = %+v, want the one left by the crash", running)
	}

	// Back, before openRetry has passed: still refused, no new attempt.
	for _, d := range []string{exDir, otherDir} {
		if err := os.Rename(d+".aside", d); err != nil {
			t.Fatal(err)
		}
	}
	wantStatus(t, "a request before the retry is due", e.do("GET", "/api/projects/ex/files", e.rw, nil), 503, teamapi.CodeUnavailable)
	e.clock.Advance(openRetry / 2)
	e.srv.upkeep(ctx)
	wantMetric(t, e, "vaultmcp_projects_unopened 2")

	// Due: a request opens "other"; the upkeep opens "ex" and settles its write.
	e.clock.Advance(openRetry / 2)
	wantStatus(t, "a request once the retry is due", e.do("POST", "/api/projects/other/search", e.rw, []byte(`{"query":"x"}`)), 200, "")
	wantMetric(t, e, "vaultmcp_projects_unopened 1")
	e.srv.upkeep(ctx)
	wantMetric(t, e, "vaultmcp_projects_unopened 0")
	if running, _ := e.data.Store.RunningIdem(ctx); len(running) != 0 {
		t.Errorf("records still running once the project opened: %+v", running)
	}
	commits := len(e.gitLog(e.ex, "%H"))
	retry := e.create(e.rw, "ex", "notes/crash.md", "# Crash\n", "Idempotency-Key", "applied")
	wantStatus(t, "the retry once the project opened", retry, 201, "")
	if retry.header.Get("Idempotent-Replayed") != "true" {
		t.Error("the retry was not answered from the settled record")
	}
	if n := len(e.gitLog(e.ex, "%H")); n != commits {
		t.Errorf("%d commits after the retry, want %d (nothing applied twice)", n, commits)
	}
}

func wantMetric(t *testing.T, e *env, line string) {
	t.Helper()
	a := e.do("GET", "/metrics", "", nil)
	for _, l := range strings.Split(string(a.body), "\n") {
		if l == line {
			return
		}
	}
	t.Errorf("no line %q in /metrics", line)
}
