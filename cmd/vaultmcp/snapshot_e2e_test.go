package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuilder is a strings.Builder safe for the process's stderr copier
// and the test at once.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logSays reports whether the server's stderr says text, waiting up to 10 s
// for it: the log line is written before the answer, but stderr reaches the
// test through its own pipe and copying goroutine, which may lag behind
// stdout on a loaded machine.
func logSays(log fmt.Stringer, text string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), text) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// The server writes an index snapshot after its first build and the next
// server on the vault starts from it, answering the same; a note edited in
// between is re-read.
func TestStdioSnapshotRestart(t *testing.T) {
	vault := copyExampleVault(t)
	cache := t.TempDir()
	env := []string{"VAULT_PATH=" + vault, "VAULTMCP_CACHE_DIR=" + cache, "VAULTMCP_LOG_LEVEL=info"}
	start := func() (*mcp.ClientSession, *lockedBuilder) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		t.Cleanup(cancel)
		cmd := exec.Command(binary)
		cmd.Env = append(cleanEnv(), env...)
		stderr := &lockedBuilder{}
		cmd.Stderr = stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		return s, stderr
	}
	query := map[string]any{"query": "retry backoff jitter", "limit": 10}

	s1, log1 := start()
	first, _, isErr := call(t, s1, "vault_search", query)
	if isErr {
		t.Fatal(first)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log1.String(), "index snapshot written") {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot written:\n%s", log1.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s1.Close()
	snaps, _ := filepath.Glob(filepath.Join(cache, "index-*.snap"))
	if len(snaps) != 1 {
		t.Fatalf("snapshot files: %v", snaps)
	}
	if fi, err := os.Stat(snaps[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v (want mode 0600)", fi.Mode(), err)
	}

	s2, log2 := start()
	second, _, _ := call(t, s2, "vault_search", query)
	if !logSays(log2, "index snapshot loaded") {
		t.Fatalf("second server did not use the snapshot:\n%s", log2.String())
	}
	if second != first {
		t.Fatalf("answers differ:\n%s\n---\n%s", first, second)
	}
	s2.Close()

	// An edit while no server runs.
	var edited string
	filepath.WalkDir(vault, func(p string, d os.DirEntry, err error) error {
		if edited == "" && err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && strings.Contains(p, "02-wiki") {
			edited = p
		}
		return nil
	})
	f, err := os.OpenFile(edited, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n\nPangolinesque retries are documented here.\n")
	f.Close()
	s3, log3 := start()
	third, _, _ := call(t, s3, "vault_search", map[string]any{"query": "pangolinesque"})
	if !logSays(log3, "index snapshot loaded") || !strings.Contains(third, "Pangolinesque retries") {
		t.Fatalf("edited note not re-read:\n%s\n%s", third, log3.String())
	}
	s3.Close()

	// The search command reads the snapshot a server wrote, and leaves it
	// as it is when nothing changed since.
	before, _ := os.ReadFile(snaps[0])
	cmd := exec.Command(binary, "search", "--json", "pangolinesque")
	cmd.Env = append(cleanEnv(), env...)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "Pangolinesque retries") {
		t.Fatalf("search command: %v\n%s", err, out)
	}
	after, _ := os.ReadFile(snaps[0])
	if string(after) != string(before) {
		t.Fatal("the search command rewrote the snapshot")
	}
	// Without a snapshot, it leaves one for the next command.
	empty := t.TempDir()
	cmd = exec.Command(binary, "search", "--vault", vault, "retry")
	cmd.Env = append(cleanEnv(), "VAULTMCP_CACHE_DIR="+empty)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("search command: %v\n%s", err, out)
	}
	if snaps, _ := filepath.Glob(filepath.Join(empty, "index-*.snap")); len(snaps) != 1 {
		t.Fatalf("the search command left %v", snaps)
	}
}
