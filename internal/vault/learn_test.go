package vault

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// learnNow is the clock of every learning test: 29 Nov 2026, 10:30 UTC.
var learnNow = time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)

// learnVault is a numbered vault with two domains and notes built so that
// each decision of vault_learn has a query that leads to it.
var learnVault = map[string]string{
	"00-index/index-knowledge.md": "---\ntype: moc\n---\n# Knowledge index\n\n- [[go-moc]] — Go\n- [[db-moc]] — Databases\n",
	"02-wiki/go/go-moc.md": "---\ntype: moc\nupdated: 2026-01-01\n---\n# Go\n\n## Notes\n\n- [[retry-backoff]] — retries\n- [[context-cancel]] — cancellation\n\n" +
		"## See also\n\n- [[db-moc]]\n\nZymurgy fermentation brewing.\n",
	"02-wiki/go/retry-backoff.md":  "---\ntype: wiki\ntags: [go, resilience]\nupdated: 2026-01-01\n---\n# Retry with exponential backoff\n\nRetry transient failures with exponential backoff and jitter.\n\n## Jitter\n\nFull jitter spreads the retries of many clients.\n",
	"02-wiki/go/context-cancel.md": "---\ntype: wiki\ntags: [go]\n---\n# Context cancellation\n\nPass ctx first; check ctx.Done in loops.\n",
	"02-wiki/go/gc.md":             "---\ntype: wiki\ntags: [go]\n---\n# GC tuning\n\nQuokka wallaby thresholds need tuning.\n",
	"02-wiki/db/db-moc.md":         "---\ntype: moc\n---\n# Databases\n\n## Notes\n\n- [[pool]] — pool sizing\n- [[vacuum]] — vacuum\n",
	"02-wiki/db/pool.md":           "---\ntype: wiki\ntags: [postgres]\n---\n# Connection pool sizing\n\nSize the pool from the number of cores.\n",
	"02-wiki/db/vacuum.md":         "---\ntype: wiki\ntags: [postgres]\n---\n# Vacuum\n\nQuokka wallaby thresholds need tuning.\n",
	"03-projects/billing.md":       "---\ntype: project\n---\n# Billing\n\nThe ledger reconciler invoices customers nightly.\n",
	"01-raw/inbox/idea.md":         "# Idea\n\nA raw idea.\n",
	"99-archive/old.md":            "# Old\n\nOld advice.\n",
	"_templates/wiki.md":           "---\ntype: wiki\ntags: [draft]\nstatus: draft\ncreated: \"{{date}}\"\n---\n# {{title}}\n\n## Details\n\n## Links\n",
}

// with returns a copy of files with changes applied ("" removes a file).
func with(files map[string]string, changes map[string]string) map[string]string {
	out := make(map[string]string, len(files)+len(changes))
	for k, v := range files {
		out[k] = v
	}
	for k, v := range changes {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// learnOpts configure a test vault.
type learnOpts struct {
	lang  string
	noGit bool
	setup func(dir string) // runs before the first commit and the open
}

// openLearn writes files into a git repository (one commit) and opens it
// with the learning clock.
func openLearn(t *testing.T, files map[string]string, o learnOpts) (string, *Service) {
	t.Helper()
	dir := writeVault(t, files)
	if o.setup != nil {
		o.setup(dir)
	}
	if o.noGit {
		t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	} else {
		gitInit(t, dir)
	}
	s, err := Open(context.Background(), Options{Dir: dir, Lang: o.lang, Now: func() time.Time { return learnNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, s
}

func learn(t *testing.T, s *Service, req api.LearnRequest) *api.LearnResult {
	t.Helper()
	res, err := s.Learn(context.Background(), req)
	if err != nil {
		t.Fatalf("Learn(%q): %v", req.Title, err)
	}
	return res
}

func headCommit(t *testing.T, dir string) string {
	return strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
}

func exists(dir, rel string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil
}

func hasWarning(res *api.LearnResult, parts ...string) bool {
	for _, w := range res.Warnings {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w, p)
		}
		if all {
			return true
		}
	}
	return false
}

func TestLearnNewDomain(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	head := headCommit(t, dir)
	req := api.LearnRequest{Title: "Liveness probes", Insight: "Liveness probes must not check dependencies. Readiness probes may.", Context: "outage", Domain: "k8s"}
	_, err := s.Learn(context.Background(), req)
	if api.CodeOf(err) != api.CodeNeedsConfirm || !strings.Contains(err.Error(), "existing: db, go") || !strings.Contains(err.Error(), "confirm_new_domain") {
		t.Fatalf("new domain without confirmation: %v", err)
	}
	if headCommit(t, dir) != head || exists(dir, "02-wiki/k8s") {
		t.Fatal("refusal wrote something")
	}
	req.ConfirmNewDomain = true
	res := learn(t, s, req)
	if res.Path != "02-wiki/k8s/liveness-probes.md" || res.Mode != api.LearnCreated || res.Domain != "k8s" {
		t.Fatalf("result %+v", res)
	}
	wantMOC := "---\ntype: moc\ntags: [k8s]\ncreated: 2026-11-29\nupdated: 2026-11-29\n---\n# k8s\n\n## Notes\n\n- [[liveness-probes]] — Liveness probes must not check dependencies.\n"
	if got := read(t, dir, "02-wiki/k8s/k8s-moc.md"); got != wantMOC {
		t.Errorf("MOC:\n%s\nwant:\n%s", got, wantMOC)
	}
	if got := read(t, dir, knowledgeIndex); got != learnVault[knowledgeIndex]+"- [[k8s-moc]] — k8s\n" {
		t.Errorf("index:\n%s", got)
	}
	want := []string{"00-index/index-knowledge.md", "02-wiki/k8s/k8s-moc.md", "02-wiki/k8s/liveness-probes.md", "04-daily/2026-11-29.md"}
	if !slices.Equal(res.Files, want) || !slices.Equal(lastCommitFiles(t, dir), want) {
		t.Errorf("files %v, commit %v", res.Files, lastCommitFiles(t, dir))
	}
	if !slices.Equal(res.Propagated, []string{"02-wiki/k8s/k8s-moc.md", knowledgeIndex, "04-daily/2026-11-29.md"}) {
		t.Errorf("propagated %v", res.Propagated)
	}
	if n := strings.Count(gitRun(t, dir, "log", "--format=%s", head+"..HEAD"), "\n"); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	// The domain exists now: another learning needs no confirmation, and a
	// different letter case files it under the same folder.
	res = learn(t, s, api.LearnRequest{Title: "Zeppelin timeouts", Insight: "Quixotic zeppelin timeouts.", Domain: "K8S"})
	if res.Path != "02-wiki/k8s/zeppelin-timeouts.md" || res.Domain != "k8s" || slices.Contains(res.Propagated, knowledgeIndex) {
		t.Errorf("second learning %+v", res)
	}
	if strings.Count(read(t, dir, knowledgeIndex), "k8s-moc") != 1 {
		t.Error("index line duplicated")
	}
}

// A MOC and a knowledge index that vault_learn creates carry their updated
// date from the start, so that a later learning bumps it (bumpUpdated only
// changes a key that is there: without one the date never moved).
func TestNewMOCUpdatedLater(t *testing.T) {
	dir := writeVault(t, map[string]string{"02-wiki/go/retry.md": "# Retry\n\nBackoff.\n"})
	gitInit(t, dir)
	now := learnNow
	s, err := Open(context.Background(), Options{Dir: dir, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	learn(t, s, api.LearnRequest{Title: "Liveness probes", Insight: "Quixotic liveness probes.", Domain: "k8s", ConfirmNewDomain: true})
	for _, p := range []string{"02-wiki/k8s/k8s-moc.md", knowledgeIndex} {
		if got := read(t, dir, p); !strings.Contains(got, "created: 2026-11-29\nupdated: 2026-11-29\n---\n") {
			t.Errorf("new %s:\n%s", p, got)
		}
	}
	now = now.AddDate(0, 0, 3)
	learn(t, s, api.LearnRequest{Title: "Zeppelin timeouts", Insight: "Zeppelin timeouts vary.", Domain: "k8s"})
	learn(t, s, api.LearnRequest{Title: "Vacuum", Insight: "Vacuum the tables weekly.", Domain: "db", ConfirmNewDomain: true})
	for _, p := range []string{"02-wiki/k8s/k8s-moc.md", knowledgeIndex} {
		if got := read(t, dir, p); !strings.Contains(got, "created: 2026-11-29\nupdated: 2026-12-02\n---\n") {
			t.Errorf("%s after a later learning:\n%s", p, got)
		}
	}
}

// TestLearnAppendVersusCreate learns near-duplicates: a repeat of a
// learning in the same domain is appended to the note it created, a
// similar one filed in another domain without a shared tag gets its own
// note, and a retried call adds nothing.
func TestLearnAppendVersusCreate(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	first := learn(t, s, api.LearnRequest{Title: "Quorum leases", Insight: "Hold one quorum lease per leader so that two leaders never write at once.", Context: "payments", Domain: "go", Tags: []string{"decision"}})
	if first.Mode != api.LearnCreated || first.Path != "02-wiki/go/quorum-leases.md" {
		t.Fatalf("first %+v", first)
	}
	second := learn(t, s, api.LearnRequest{Title: "Quorum lease renewal", Insight: "Renew the quorum lease before it lapses, at a third of its term.", Context: "review", Domain: "go", Links: []string{"retry-backoff"}})
	if second.Mode != api.LearnAppended || second.Path != first.Path || second.Decision != api.LearnDuplicate {
		t.Fatalf("near-duplicate in the same domain: %+v", second)
	}
	note := read(t, dir, first.Path)
	section := "\n## 2026-11-29 — Quorum lease renewal\n\nRenew the quorum lease before it lapses, at a third of its term.\n\n**Context:** review\n\n**Links:** [[retry-backoff]]\n"
	if !strings.HasSuffix(note, section) || !strings.Contains(note, "Hold one quorum lease") {
		t.Fatalf("appended note:\n%s", note)
	}
	if strings.Count(read(t, dir, "02-wiki/go/go-moc.md"), "quorum-leases") != 1 {
		t.Error("an appended learning changed the MOC")
	}
	daily := read(t, dir, "04-daily/2026-11-29.md")
	if strings.Count(daily, "[[quorum-leases]]") != 2 || !strings.Contains(daily, "(decision)") {
		t.Errorf("daily:\n%s", daily)
	}
	// A retried call: the note already holds the insight, nothing changes.
	head := headCommit(t, dir)
	again := learn(t, s, api.LearnRequest{Title: "Quorum lease renewal", Insight: "Renew the quorum lease before it lapses, at a third of its term.", Context: "review", Domain: "go"})
	if again.Committed || len(again.Files) != 0 || again.Path != first.Path || !hasWarning(again, "already holds this insight") || headCommit(t, dir) != head {
		t.Fatalf("retry: %+v", again)
	}
	if got := read(t, dir, "04-daily/2026-11-29.md"); strings.Count(got, "[[quorum-leases]]") != 2 {
		t.Errorf("retry duplicated the capture:\n%s", got)
	}
	third := learn(t, s, api.LearnRequest{Title: "Quorum leases", Insight: "Hold one quorum lease per leader so that two leaders never write at once.", Context: "payments", Domain: "db"})
	// A note of its own, not 02-wiki/db/quorum-leases.md: beside
	// 02-wiki/go/quorum-leases.md it would take over the daily note's
	// [[quorum-leases]] links (db sorts before go).
	if third.Mode != api.LearnCreated || third.Decision != api.LearnNoOverlap || third.Path != "02-wiki/db/quorum-leases-db.md" ||
		!hasWarning(third, "02-wiki/go/quorum-leases.md") {
		t.Fatalf("same words in another domain: %+v", third)
	}
	if got := read(t, dir, "04-daily/2026-11-29.md"); strings.Count(got, "[[quorum-leases]]") != 2 {
		t.Errorf("daily note:\n%s", got)
	}
	if bl, err := s.Backlinks(context.Background(), api.BacklinksRequest{Path: first.Path}); err != nil || !slices.ContainsFunc(bl.Backlinks, func(b api.Backlink) bool { return b.Path == "04-daily/2026-11-29.md" }) {
		t.Errorf("the daily note no longer links to %s: %+v %v", first.Path, bl, err)
	}
	if !strings.Contains(read(t, dir, "02-wiki/db/db-moc.md"), "- [[quorum-leases-db]] — Hold one quorum lease") {
		t.Errorf("db MOC:\n%s", read(t, dir, "02-wiki/db/db-moc.md"))
	}
}

// mkfifo makes a named pipe with the system's mkfifo (the test is skipped
// where there is none).
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if _, err := exec.LookPath("mkfifo"); err != nil {
		t.Skip("no mkfifo on this system")
	}
	if out, err := exec.Command("mkfifo", p).CombinedOutput(); err != nil {
		t.Fatalf("mkfifo: %v %s", err, out)
	}
}

// TestLearnEscapeRoutes puts a real FIFO, symbolic link, folder or hard link
// where the note would go, or makes the chosen note unwritable: the insight
// always lands in a note, and a warning says where.
func TestLearnEscapeRoutes(t *testing.T) {
	const primary = "02-wiki/go/zeppelin-quirks.md"
	const dated = "02-wiki/go/zeppelin-quirks-2026-11-29.md"
	req := api.LearnRequest{Title: "Zeppelin quirks", Insight: "Quixotic zeppelins hover sideways.", Context: "a drill", Domain: "go"}
	abs := func(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	// A project note that matches the learning best, so that the note with
	// the slug's name is not the one the decision picks.
	const zeppelins = "# Zeppelin quirks in the airship project\n\nQuixotic zeppelins hover sideways, zeppelin quirks everywhere.\n"
	cases := []struct {
		name  string
		files map[string]string
		req   api.LearnRequest
		setup func(t *testing.T, dir string)
		path  string
		mode  string
		warn  []string
		check func(t *testing.T, dir string)
	}{
		{
			name:  "a note with the slug's name exists",
			files: with(learnVault, map[string]string{primary: "# Unrelated\n\nNothing alike here.\n"}),
			req:   req, path: primary, mode: api.LearnAppended,
			warn: []string{"a note named zeppelin-quirks already exists", primary, "appended"},
			check: func(t *testing.T, dir string) {
				if got := read(t, dir, primary); got != "# Unrelated\n\nNothing alike here.\n\n## 2026-11-29 — Zeppelin quirks\n\nQuixotic zeppelins hover sideways.\n\n**Context:** a drill\n" {
					t.Errorf("appended:\n%s", got)
				}
			},
		},
		{
			name:  "the note with the slug's name is read-only",
			files: with(learnVault, map[string]string{primary: "# Unrelated\n\nNothing alike here.\n"}),
			setup: func(t *testing.T, dir string) { os.Chmod(abs(dir, primary), 0o444) },
			req:   req, path: dated, mode: api.LearnCreated,
			warn: []string{"already exists (" + primary + ") but could not be written", "PERMISSION_DENIED", dated},
		},
		{
			name:  "the duplicate is read-only",
			files: learnVault,
			setup: func(t *testing.T, dir string) { os.Chmod(abs(dir, "02-wiki/db/pool.md"), 0o444) },
			req:   api.LearnRequest{Title: "Pool from cores", Insight: "Size the pool from the number of cores, plus one.", Domain: "db"},
			path:  "02-wiki/db/pool-from-cores-2026-11-29.md", mode: api.LearnCreated,
			warn: []string{"02-wiki/db/pool.md could not be written", "PERMISSION_DENIED", "02-wiki/db/pool-from-cores-2026-11-29.md"},
			check: func(t *testing.T, dir string) {
				if read(t, dir, "02-wiki/db/pool.md") != learnVault["02-wiki/db/pool.md"] {
					t.Error("the read-only note changed")
				}
				if !strings.Contains(read(t, dir, "02-wiki/db/db-moc.md"), "- [[pool-from-cores-2026-11-29]] — Size the pool") {
					t.Error("the dated note is not in the MOC")
				}
			},
		},
		{
			name:  "the duplicate has another hard link",
			files: learnVault,
			setup: func(t *testing.T, dir string) {
				if err := os.Link(abs(dir, "02-wiki/db/pool.md"), filepath.Join(t.TempDir(), "pool-elsewhere.md")); err != nil {
					t.Skip("no hard links here:", err)
				}
			},
			req:  api.LearnRequest{Title: "Pool from cores", Insight: "Size the pool from the number of cores, plus one.", Domain: "db"},
			path: "02-wiki/db/pool-from-cores-2026-11-29.md", mode: api.LearnCreated,
			warn: []string{"02-wiki/db/pool.md could not be written", "hard links", "02-wiki/db/pool-from-cores-2026-11-29.md"},
		},
		{
			name: "a FIFO at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) { mkfifo(t, abs(dir, primary)) },
			warn:  []string{primary + " is taken by something that is not a note", "FIFO", dated},
			check: func(t *testing.T, dir string) {
				if fi, err := os.Lstat(abs(dir, primary)); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
					t.Errorf("the FIFO was touched: %v", err)
				}
			},
		},
		{
			name: "a symbolic link at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink("gc.md", abs(dir, primary)); err != nil {
					t.Skip("no symbolic links here:", err)
				}
			},
			warn: []string{primary + " is taken by something that is not a note", "symbolic link", dated},
			check: func(t *testing.T, dir string) {
				if read(t, dir, "02-wiki/go/gc.md") != learnVault["02-wiki/go/gc.md"] {
					t.Error("the link's target changed")
				}
			},
		},
		{
			name: "a folder at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) { os.Mkdir(abs(dir, primary), 0o755) },
			warn:  []string{primary + " is taken by something that is not a note", "folder", dated},
		},
		{
			name: "a hard link at the create path", files: learnVault, req: req, path: dated, mode: api.LearnCreated,
			setup: func(t *testing.T, dir string) {
				if err := os.Link(abs(dir, "03-projects/billing.md"), abs(dir, primary)); err != nil {
					t.Skip("no hard links here:", err)
				}
			},
			warn: []string{primary + " is taken by something that is not a note", "hard links", dated},
			check: func(t *testing.T, dir string) {
				if read(t, dir, "03-projects/billing.md") != learnVault["03-projects/billing.md"] {
					t.Error("the other name of the hard link changed")
				}
			},
		},
		{
			// Nothing is there: the name is one Windows takes for a
			// device, which the guard refuses for a new file.
			name: "a title that makes a device name", files: learnVault, path: "02-wiki/go/con-2026-11-29.md", mode: api.LearnCreated,
			req:  api.LearnRequest{Title: "Con", Insight: "Quixotic zeppelins con the tourists.", Domain: "go"},
			warn: []string{"02-wiki/go/con.md could not be written", "device name", "02-wiki/go/con-2026-11-29.md"},
		},
		{
			name:  "the dated name is taken too",
			files: with(learnVault, map[string]string{dated: "# Taken\n"}),
			setup: func(t *testing.T, dir string) {
				mkfifo(t, abs(dir, primary))
				os.MkdirAll(abs(dir, "02-wiki/go/zeppelin-quirks-2026-11-29-2.md"), 0o755)
			},
			req: req, path: "02-wiki/go/zeppelin-quirks-2026-11-29-3.md", mode: api.LearnCreated,
			warn: []string{"02-wiki/go/zeppelin-quirks-2026-11-29-3.md"},
			check: func(t *testing.T, dir string) {
				if read(t, dir, dated) != "# Taken\n" {
					t.Error("the note at the dated name changed")
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, s := openLearn(t, with(c.files, map[string]string{"03-projects/airships.md": zeppelins}), learnOpts{setup: func(dir string) {
				if c.setup != nil {
					c.setup(t, dir)
				}
			}})
			res := learn(t, s, c.req)
			if res.Path != c.path || res.Mode != c.mode || !res.Committed {
				t.Fatalf("went to %s (%s), want %s (%s); warnings %v", res.Path, res.Mode, c.path, c.mode, res.Warnings)
			}
			if !hasWarning(res, c.warn...) {
				t.Errorf("warnings %q lack %q", res.Warnings, c.warn)
			}
			if !strings.Contains(read(t, dir, c.path), c.req.Insight) {
				t.Errorf("the insight is not in %s", c.path)
			}
			if files := lastCommitFiles(t, dir); !slices.Contains(files, c.path) || !slices.Equal(files, res.Files) {
				t.Errorf("commit %v, result %v", files, res.Files)
			}
			if c.check != nil {
				c.check(t, dir)
			}
		})
	}
}

// TestLearnConcurrent learns the same title from many goroutines of one
// server: every insight is kept, in one note, each in its own commit.
func TestLearnConcurrent(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	head := headCommit(t, dir)
	const n = 4
	insights := []string{"Zephyr alpha quibbles.", "Zephyr bravo quibbles.", "Zephyr charlie quibbles.", "Zephyr delta quibbles."}
	var wg sync.WaitGroup
	results := make([]*api.LearnResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.Learn(context.Background(), api.LearnRequest{Title: "Zephyr quibbles", Insight: insights[i], Domain: "go"})
		}()
	}
	wg.Wait()
	created := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if r.Mode == api.LearnCreated {
			created++
		}
		if r.Path != "02-wiki/go/zephyr-quibbles.md" || !r.Committed {
			t.Errorf("learning %d: %+v", i, r)
		}
	}
	note := read(t, dir, "02-wiki/go/zephyr-quibbles.md")
	for _, ins := range insights {
		if strings.Count(note, ins) != 1 {
			t.Errorf("%q is in the note %d times:\n%s", ins, strings.Count(note, ins), note)
		}
	}
	if created != 1 {
		t.Errorf("%d learnings created the note", created)
	}
	if got := strings.Count(gitRun(t, dir, "log", "--format=%s", head+"..HEAD"), "docs(vault): Zephyr quibbles"); got != n {
		t.Errorf("%d commits, want %d", got, n)
	}
}

// TestLearnBareVault: a vault without 00-index, 04-daily, _templates or
// MOCs gets what a learning needs, and never an error.
func TestLearnBareVault(t *testing.T) {
	dir, s := openLearn(t, map[string]string{"02-wiki/go/a.md": "# A\n\nSome text.\n", "notes.md": "# Loose\n"}, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Quibble", Insight: "Zephyrs quibble.", Domain: "go"})
	if res.Path != "02-wiki/go/quibble.md" || res.Mode != api.LearnCreated {
		t.Fatalf("%+v", res)
	}
	want := "---\ntype: wiki\ntags: []\ncreated: 2026-11-29\n---\n# Quibble\n\nZephyrs quibble.\n"
	if got := read(t, dir, res.Path); got != want {
		t.Errorf("note:\n%s", got)
	}
	// The domain had no MOC: made, with its knowledge-index line.
	if !strings.Contains(read(t, dir, "02-wiki/go/go-moc.md"), "- [[quibble]] — Zephyrs quibble.") ||
		!strings.Contains(read(t, dir, knowledgeIndex), "- [[go-moc]] — go") || !exists(dir, "04-daily/2026-11-29.md") {
		t.Errorf("propagation %v", res.Propagated)
	}
	// No 02-wiki at all: the first domain needs confirmation, then is made.
	dir, s = openLearn(t, map[string]string{"README.md": "# Readme\n"}, learnOpts{})
	_, err := s.Learn(context.Background(), api.LearnRequest{Title: "First", Insight: "The first insight.", Domain: "go"})
	if api.CodeOf(err) != api.CodeNeedsConfirm || !strings.Contains(err.Error(), "no domain exists yet") {
		t.Fatalf("first domain: %v", err)
	}
	res = learn(t, s, api.LearnRequest{Title: "First", Insight: "The first insight.", Domain: "go", ConfirmNewDomain: true})
	if !slices.Equal(res.Files, []string{knowledgeIndex, "02-wiki/go/first.md", "02-wiki/go/go-moc.md", "04-daily/2026-11-29.md"}) || len(res.Warnings) != 0 {
		t.Errorf("files %v warnings %v", res.Files, res.Warnings)
	}
}

func TestLearnNotAGitRepository(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{noGit: true})
	res := learn(t, s, api.LearnRequest{Title: "Zephyr quibbles", Insight: "Zephyrs quibble.", Domain: "go"})
	if res.Committed || res.Version != "" || !hasWarning(res, "not a git repository") || res.Diff == "" {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(read(t, dir, "02-wiki/go/zephyr-quibbles.md"), "Zephyrs quibble.") || exists(dir, ".git") {
		t.Fatal("not written, or a repository appeared")
	}
}

// TestLearnUndo: one vault_undo takes a whole learning back: the new note,
// the new MOC, the knowledge-index line and the daily note.
func TestLearnUndo(t *testing.T) {
	dir, s := openLearn(t, with(learnVault, map[string]string{"04-daily/2026-11-29.md": "## Captures\n\n- 08:00 [[gc]] (learning)\n"}), learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Probes", Insight: "Quixotic probes.", Domain: "k8s", ConfirmNewDomain: true})
	if len(res.Files) != 4 || res.Version == "" {
		t.Fatalf("%+v", res)
	}
	u, err := s.Undo(context.Background(), api.UndoRequest{Version: res.Version})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Committed || !slices.Equal(u.Files, res.Files) {
		t.Errorf("undo %+v", u)
	}
	if exists(dir, "02-wiki/k8s/probes.md") || exists(dir, "02-wiki/k8s/k8s-moc.md") ||
		read(t, dir, knowledgeIndex) != learnVault[knowledgeIndex] || read(t, dir, "04-daily/2026-11-29.md") != "## Captures\n\n- 08:00 [[gc]] (learning)\n" {
		t.Error("undo did not restore every file")
	}
	if out := gitRun(t, dir, "status", "--porcelain"); out != "" {
		t.Errorf("work tree:\n%s", out)
	}
	if r := search(t, s, api.SearchRequest{Query: "quixotic probes"}); len(r.Results) != 0 {
		t.Errorf("undone note still found: %v", paths(r))
	}
	// The domain is gone with it.
	if _, err := s.Learn(context.Background(), api.LearnRequest{Title: "Probes", Insight: "Quixotic probes.", Domain: "k8s"}); api.CodeOf(err) != api.CodeNeedsConfirm {
		t.Errorf("domain after undo: %v", err)
	}
}

func TestLearnReadOnly(t *testing.T) {
	dir := writeVault(t, learnVault)
	s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Learn(context.Background(), api.LearnRequest{Title: "T", Insight: "I", Domain: "go"}); api.CodeOf(err) != api.CodeReadOnly {
		t.Fatalf("%v", err)
	}
}

// BenchmarkLearn measures one learning end to end on a committed vault (the
// generated one, or a copy of $VAULTMCP_CORPUS): search, decision, new note,
// map of content, daily note and the git commit. Each learning is a new
// subject, so each one creates a note.
func BenchmarkLearn(b *testing.B) {
	src := benchVault(b)
	dir := src
	if os.Getenv("VAULTMCP_CORPUS") != "" {
		dir = b.TempDir()
		copyTree(b, src, dir)
	}
	gitInit(b, dir)
	s, err := Open(context.Background(), Options{Dir: dir, Now: func() time.Time { return learnNow }})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		word := slugify(strings.Repeat("q", 1+i%7)) + strconv.Itoa(i)
		res, err := s.Learn(context.Background(), api.LearnRequest{
			Title: "Benchmark " + word, Insight: "Retry the " + word + " with backoff and jitter before giving up.",
			Context: "benchmark", Domain: "bench", ConfirmNewDomain: true,
		})
		if err != nil || !res.Committed {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// TestLearnNameTakenElsewhere: a new note whose name another note already
// bears (in another domain) gets a name of its own, with a warning, so that
// the links to the other note by that bare name keep their target.
func TestLearnNameTakenElsewhere(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	ctx := context.Background()
	before, err := s.Backlinks(ctx, api.BacklinksRequest{Path: "02-wiki/db/pool.md"})
	if err != nil || len(before.Backlinks) == 0 {
		t.Fatalf("backlinks of pool before: %+v %v", before, err)
	}
	res := learn(t, s, api.LearnRequest{Title: "Pool", Insight: "Reuse worker goroutines through a bounded channel of idle workers.", Domain: "go", Tags: []string{"go"}})
	if res.Path != "02-wiki/go/pool-go.md" || !hasWarning(res, "02-wiki/db/pool.md", "02-wiki/go/pool-go.md", "[[pool]]") {
		t.Fatalf("path %s, warnings %q", res.Path, res.Warnings)
	}
	after, err := s.Backlinks(ctx, api.BacklinksRequest{Path: "02-wiki/db/pool.md"})
	if err != nil || len(after.Backlinks) != len(before.Backlinks) {
		t.Errorf("backlinks of pool after: %+v (before %+v) %v", after, before, err)
	}
	if moc := read(t, dir, "02-wiki/go/go-moc.md"); !strings.Contains(moc, "- [[pool-go]] — Reuse worker goroutines") {
		t.Errorf("go MOC:\n%s", moc)
	}
	// The free name is taken too: the next of its numbered names.
	res = learn(t, s, api.LearnRequest{Title: "Pool", Insight: "Quibble the zorblax flange before the wibble.", Domain: "go", Tags: []string{"zorblax"}})
	if res.Path != "02-wiki/go/pool-go-2.md" || res.Action != api.LearnCreated {
		t.Errorf("second learning: %s %q", res.Path, res.Warnings)
	}
}

// TestLearnKnowledgeIndex: a new domain's line in the knowledge index bumps
// its updated date, as a MOC's does; an index that cannot be written is
// named in the warning, not the MOC (which was written and listed the note).
func TestLearnKnowledgeIndex(t *testing.T) {
	index := "---\ntype: moc\nupdated: 2026-01-01\n---\n# Knowledge index\n\n## Domains\n\n- [[go-moc]] — Go\n"
	dir, s := openLearn(t, with(learnVault, map[string]string{knowledgeIndex: index}), learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Probes", Insight: "Quixotic probes.", Domain: "k8s", ConfirmNewDomain: true})
	want := "---\ntype: moc\nupdated: 2026-11-29\n---\n# Knowledge index\n\n## Domains\n\n- [[go-moc]] — Go\n- [[k8s-moc]] — k8s\n"
	if got := read(t, dir, knowledgeIndex); got != want {
		t.Errorf("index:\n%s\nwant:\n%s", got, want)
	}

	dir, s = openLearn(t, learnVault, learnOpts{})
	p := filepath.Join(dir, filepath.FromSlash(knowledgeIndex))
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(p, 0o644) })
	res := learn(t, s, api.LearnRequest{Title: "Probes", Insight: "Quixotic probes.", Domain: "k8s", ConfirmNewDomain: true})
	if !hasWarning(res, "could not list the new domain in "+knowledgeIndex) || hasWarning(res, "could not list the note in") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if moc := read(t, dir, "02-wiki/k8s/k8s-moc.md"); !strings.Contains(moc, "[[probes]]") || !slices.Contains(res.Files, "02-wiki/k8s/k8s-moc.md") {
		t.Errorf("MOC %v:\n%s", res.Files, moc)
	}
}

// TestLearnAppendNoSelfLink: a learning appended to a note does not list a
// link to that note itself among its links.
func TestLearnAppendNoSelfLink(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Jitter for many clients", Insight: "Full jitter spreads the retries of many clients; cap it.", Domain: "go",
		Links: []string{"retry-backoff", "gc"}})
	if res.Path != "02-wiki/go/retry-backoff.md" || res.Mode != api.LearnAppended {
		t.Fatalf("%+v", res)
	}
	if got := read(t, dir, res.Path); !strings.Contains(got, "**Links:** [[gc]]\n") || strings.Contains(got, "[[retry-backoff]]") {
		t.Errorf("note:\n%s", got)
	}
}

// TestLearnNonLatinTitle: a learning titled in a script without Latin
// letters gets a note named with the title's own letters.
func TestLearnNonLatinTitle(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "キャッシュの注意点", Insight: "キャッシュは冷えている時に注意。", Domain: "go"})
	if res.Path != "02-wiki/go/キャッシュの注意点.md" || !res.Committed {
		t.Fatalf("%+v", res)
	}
	if moc := read(t, dir, "02-wiki/go/go-moc.md"); !strings.Contains(moc, "- [[キャッシュの注意点]] — キャッシュは冷えている時に注意。") {
		t.Errorf("MOC:\n%s", moc)
	}
}

// TestLearnRetryOfNamedNote: a retried learning that no search picks as a
// duplicate (too few words) reaches the note of its slug's name, which
// already holds it: nothing is written, and no warning says it was appended.
func TestLearnRetryOfNamedNote(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	req := api.LearnRequest{Title: "Q", Insight: "Z.", Context: "c", Domain: "go"}
	first := learn(t, s, req)
	if first.Action != api.LearnCreated || first.Path != "02-wiki/go/q.md" {
		t.Fatalf("first: %s %s", first.Action, first.Path)
	}
	head := headCommit(t, dir)
	again := learn(t, s, req)
	if again.Committed || len(again.Files) != 0 || headCommit(t, dir) != head {
		t.Fatalf("retry wrote: committed %v, files %v", again.Committed, again.Files)
	}
	appended := s.msg.Get(wNameTakenAppend, "q", "02-wiki/go/q.md")
	if slices.Contains(again.Warnings, appended) || !hasWarning(again, "02-wiki/go/q.md", "already holds") {
		t.Errorf("retry warnings: %q", again.Warnings)
	}
}

// TestLearnUndoFirstWrite: in a repository made with git init alone, the
// first learning is the root commit, and its answer's vault_undo works: it
// takes every file back (and their folders) in a commit of its own.
func TestLearnUndoFirstWrite(t *testing.T) {
	_, s := openLearn(t, nil, learnOpts{noGit: true, setup: func(dir string) {
		gitRun(t, dir, "init", "-q")
		gitRun(t, dir, "config", "user.name", "u")
		gitRun(t, dir, "config", "user.email", "u@x")
	}})
	dir := s.opts.Dir
	res := learn(t, s, api.LearnRequest{Title: "First", Insight: "The very first insight.", Domain: "go", ConfirmNewDomain: true})
	if !res.Committed || len(res.Files) != 4 {
		t.Fatalf("%+v", res)
	}
	u, err := s.Undo(context.Background(), api.UndoRequest{Version: res.Version})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Committed || !slices.Equal(u.Files, res.Files) {
		t.Errorf("undo %+v", u)
	}
	for _, p := range []string{"02-wiki", "00-index", "04-daily"} {
		if exists(dir, p) {
			t.Errorf("%s is still there", p)
		}
	}
	if out := gitRun(t, dir, "status", "--porcelain"); out != "" {
		t.Errorf("work tree:\n%s", out)
	}
}

// TestLearnKnowledgeIndexLineInPathForm: an index that still lists a
// removed domain's MOC by its path gets no second line when the domain
// comes back.
func TestLearnKnowledgeIndexLineInPathForm(t *testing.T) {
	index := "---\ntype: moc\n---\n# Knowledge index\n\n## Domains\n\n- [[go-moc]] — Go\n- [[../02-wiki/k8s/k8s-moc|k8s]] — Kubernetes\n"
	dir, s := openLearn(t, with(learnVault, map[string]string{knowledgeIndex: index}), learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Probes", Insight: "Quixotic probes.", Domain: "k8s", ConfirmNewDomain: true})
	if got := read(t, dir, knowledgeIndex); got != index || slices.Contains(res.Files, knowledgeIndex) {
		t.Errorf("index (files %v):\n%s", res.Files, got)
	}
}

// TestLearnDomainNormalisation: a domain sent in another Unicode form than
// its folder's (decomposed "técnica", as a macOS file name gives it) is that
// domain, not a new twin folder that looks the same.
func TestLearnDomainNormalisation(t *testing.T) {
	nfc, nfd := "t\u00e9cnica", "te\u0301cnica"
	for _, c := range []struct{ folder, sent string }{{nfc, nfd}, {nfd, nfc}} {
		dir, s := openLearn(t, with(learnVault, map[string]string{"02-wiki/" + c.folder + "/nota.md": "# Nota\n\nalgo\n"}), learnOpts{})
		res := learn(t, s, api.LearnRequest{Title: "Zebra", Insight: "Zebras are striped.", Domain: c.sent})
		if res.Path != "02-wiki/"+c.folder+"/zebra.md" || res.Domain != c.folder {
			t.Errorf("folder %q, sent %q: %s in domain %q", c.folder, c.sent, res.Path, res.Domain)
		}
		entries, _ := os.ReadDir(filepath.Join(dir, "02-wiki"))
		if len(entries) != 3 { // db, go and the one domain
			t.Errorf("02-wiki holds %d folders", len(entries))
		}
	}
	// A new domain's folder is named in the composed form.
	dir, s := openLearn(t, learnVault, learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Zebra", Insight: "Zebras are striped.", Domain: nfd, ConfirmNewDomain: true})
	if !exists(dir, "02-wiki/"+nfc+"/zebra.md") {
		t.Error("the new domain's folder is not in NFC")
	}
}

// TestLearnAppendAfterUnclosedFence: a learning appended to a note that
// ends inside a code block whose fence was never closed is a section of
// its own, not more code: the fence is closed first.
func TestLearnAppendAfterUnclosedFence(t *testing.T) {
	note := "---\ntype: wiki\ntags: [go]\n---\n# Unclosed fence\n\nSome text.\n\n```go\nfunc main() {}\n"
	dir, s := openLearn(t, with(learnVault, map[string]string{"02-wiki/go/unclosed-fence.md": note}), learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Unclosed fence", Insight: "An unclosed fence swallows the rest of the note.", Domain: "go", Tags: []string{"go"}})
	if res.Path != "02-wiki/go/unclosed-fence.md" || res.Action != api.LearnAppended {
		t.Fatalf("%s %s (%s)", res.Action, res.Path, res.Reason)
	}
	want := note + "```\n\n## 2026-11-29 — Unclosed fence\n\nAn unclosed fence swallows the rest of the note.\n"
	if got := read(t, dir, res.Path); got != want {
		t.Errorf("note:\n%s\nwant:\n%s", got, want)
	}
}

// TestLearnSlugOfAMOC: a title whose slug is the name of the domain's map
// of content ("Go MOC") gets a note of its own: the learning is not appended
// to the MOC, which the decision refuses as a duplicate too.
func TestLearnSlugOfAMOC(t *testing.T) {
	dir, s := openLearn(t, learnVault, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Go MOC", Insight: "Zeppelins hover over the map.", Domain: "go"})
	if res.Action != api.LearnCreated || res.Path != "02-wiki/go/go-moc-2026-11-29.md" || !hasWarning(res, "02-wiki/go/go-moc.md", res.Path) {
		t.Fatalf("%s %s %q", res.Action, res.Path, res.Warnings)
	}
	moc := read(t, dir, "02-wiki/go/go-moc.md")
	if strings.Contains(moc, "## 2026-11-29 — Go MOC") || !strings.Contains(moc, "- [[go-moc-2026-11-29]] — Zeppelins hover over the map.") {
		t.Errorf("MOC:\n%s", moc)
	}
}
