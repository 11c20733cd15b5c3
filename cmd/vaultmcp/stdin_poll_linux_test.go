package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeReadsStdinThroughThePoller: the real binary, given stdin on a
// blocking pipe as a client's child gets it, reads it through the poller
// (package pollpipe), answers, and ends when the client closes the pipe.
func TestServeReadsStdinThroughThePoller(t *testing.T) {
	vault := copyExampleVault(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(binary, "serve", "--read-only")
	cmd.Env = append(cleanEnv(), "VAULT_PATH="+vault, "VAULTMCP_CACHE_DIR="+t.TempDir(), "VAULTMCP_LOG_LEVEL=debug")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
	}
	for range 3 {
		if err := session.Ping(ctx, nil); err != nil {
			t.Fatalf("ping: %v\nstderr:\n%s", err, stderr)
		}
	}
	if text, _, isErr := call(t, session, "vault_search", map[string]any{"query": "vault"}); isErr {
		t.Fatalf("search: %s", text)
	}
	// Close closes the server's stdin and waits for it to exit.
	if err := session.Close(); err != nil {
		t.Fatalf("close: %v\nstderr:\n%s", err, stderr)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("server did not exit cleanly: %v\nstderr:\n%s", cmd.ProcessState, stderr)
	}
	if !strings.Contains(stderr.String(), "stdin is a pipe: read through the poller") {
		t.Fatalf("stdin not read through the poller; stderr:\n%s", stderr)
	}
}
