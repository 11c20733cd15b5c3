package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/pgtest"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/teamstore/pgstore"
)

// pgCLI runs a team-server management command with extra environment.
func pgCLI(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"team-server"}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

var pgListenURL = regexp.MustCompile(`msg="team server listening" url=(\S+)`)

// pgServe starts `team-server --data DIR --db URL` on a free loopback port
// and returns its URL and a function that stops it with SIGTERM.
func pgServe(t *testing.T, data, db string) (string, func()) {
	t.Helper()
	cmd := exec.Command(binary, "team-server", "--data", data, "--db", db, "--listen", "127.0.0.1:0")
	cmd.Env = cleanEnv()
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	var log strings.Builder
	found := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := pgListenURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case err := <-exited:
		<-scanned
		t.Fatalf("team-server --db exited before listening: %v\n%s", err, log.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-scanned
		t.Fatalf("team-server --db did not listen within 60 s:\n%s", log.String())
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("team-server exited with %v", err)
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Error("team-server did not stop within 60 s of SIGTERM")
		}
	}
	t.Cleanup(stop)
	return url, stop
}

// The team server and its management commands keep their metadata in
// PostgreSQL with --db (or VAULTMCP_DB): projects and keys made by the
// commands are served, a write is recorded with its version, audit row and
// idempotency record, nothing goes to SQLite in the data directory, and a
// --db that is not PostgreSQL is refused without showing its password.
func TestTeamServerPostgres(t *testing.T) {
	db := pgtest.DB(t)
	data := t.TempDir()
	out, stderr, err := pgCLI(t, nil, "project", "add", "--data", data, "--db", db, "--from", filepath.Join("..", "..", "examples", "vault"), "ex")
	if err != nil {
		t.Fatalf("project add: %v\n%s", err, stderr)
	}
	projectID := strings.TrimSpace(out)
	out, stderr, err = pgCLI(t, nil, "key", "add", "--data", data, "--db", db, "alice")
	if err != nil {
		t.Fatalf("key add: %v\n%s", err, stderr)
	}
	secret := strings.TrimSpace(out)
	// The environment variable works as the flag does.
	out, stderr, err = pgCLI(t, []string{"VAULTMCP_DB=" + db}, "project", "list", "--data", data)
	if err != nil || !strings.Contains(out, "ex") || !strings.Contains(out, projectID) {
		t.Fatalf("project list with VAULTMCP_DB: %v\n%s%s", err, out, stderr)
	}
	// A backup is SQLite's: with PostgreSQL the command says what to use.
	backup := filepath.Join(t.TempDir(), "backup")
	if _, stderr, err := pgCLI(t, nil, "backup", "--data", data, "--db", db, "--to", backup); err == nil || !strings.Contains(stderr, "pg_dump") {
		t.Errorf("backup with --db: %v %s", err, stderr)
	}

	url, stop := pgServe(t, data, db)
	create := func() *http.Response {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("path", "notes/pg.md")
		fw, _ := mw.CreateFormFile("file", "pg.md")
		io.WriteString(fw, "# Stored in PostgreSQL\n\nMetadata in pg.\n")
		mw.Close()
		req, _ := http.NewRequest("POST", url+"/api/projects/ex/files", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("X-API-Key", secret)
		req.Header.Set("Idempotency-Key", "pg-e2e-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := create()
	var created struct {
		File struct{ ID, Path string }
	}
	json.NewDecoder(first.Body).Decode(&created)
	first.Body.Close()
	if first.StatusCode != 201 || created.File.ID == "" {
		t.Fatalf("create: %d %+v", first.StatusCode, created)
	}
	again := create()
	again.Body.Close()
	if again.StatusCode != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same create again: %d, replayed %q", again.StatusCode, again.Header.Get("Idempotent-Replayed"))
	}
	req, _ := http.NewRequest("GET", url+"/api/projects/ex/files/"+created.File.ID, nil)
	req.Header.Set("X-API-Key", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	content, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(content), "Metadata in pg.") {
		t.Errorf("read back: %d %q", resp.StatusCode, content)
	}
	stop()

	if _, err := os.Stat(filepath.Join(data, "team.db")); !os.IsNotExist(err) {
		t.Errorf("with --db, a SQLite file exists in the data directory (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := pgstore.Open(ctx, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, err := st.FileByPath(ctx, projectID, "notes/pg.md")
	if err != nil || f.ID != created.File.ID {
		t.Fatalf("the file in PostgreSQL: %+v (%v), want id %s", f, err, created.File.ID)
	}
	vs, err := st.Versions(ctx, projectID, f.ID)
	if err != nil || len(vs) != 1 || vs[0].Number != 1 || vs[0].VersionID == "" {
		t.Errorf("versions in PostgreSQL: %+v (%v)", vs, err)
	}
	imported, err := st.LiveFiles(ctx, projectID)
	if err != nil || len(imported) < 2 {
		t.Errorf("live files in PostgreSQL: %d (%v), want the imported notes and the new one", len(imported), err)
	}
	audit, err := st.Audit(ctx, teamstore.AuditQuery{Project: projectID})
	if err != nil {
		t.Fatal(err)
	}
	var writes int
	for _, e := range audit {
		if e.KeyName == "alice" && e.IdempotencyKey == "pg-e2e-1" && e.Result == "ok" {
			writes++
		}
	}
	if writes != 1 {
		t.Errorf("%d audit row(s) of alice's idempotent create, want 1: %+v", writes, audit)
	}

	out, stderr, err = pgCLI(t, nil, "key", "revoke", "--data", data, "--db", db, "alice")
	if err != nil {
		t.Fatalf("key revoke: %v\n%s", err, stderr)
	}
	out, _, err = pgCLI(t, nil, "key", "list", "--data", data, "--db", db)
	if err != nil || !strings.Contains(out, "revoked") {
		t.Errorf("key list after the revoke: %v\n%s", err, out)
	}

	_, stderr, err = pgCLI(t, nil, "project", "list", "--data", data, "--db", "mysql://vault:s3cret@127.0.0.1/x")
	if err == nil || !strings.Contains(stderr, "--db") || strings.Contains(stderr, "s3cret") {
		t.Errorf("--db mysql://: %v, stderr %q: want refused, naming --db, without the password", err, stderr)
	}
}
