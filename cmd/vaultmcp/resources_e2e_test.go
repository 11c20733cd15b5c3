package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioResourcesPromptsCompletion drives the binary as a client that
// uses more than tools would: it reads a note as a resource (through the
// gatekeeper), subscribes to it and hears of an edit made outside the
// server, completes a note path, and gets both prompts.
func TestStdioResourcesPromptsCompletion(t *testing.T) {
	vault := copyExampleVault(t)
	updates := make(chan string, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(binary)
	cmd.Env = append(cleanEnv(), "VAULT_PATH="+vault)
	var stderr lockedBuilder
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		},
	})
	// The protocol version clients speak today, where a subscription is a
	// request answered at once.
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer s.Close()

	const note = "02-wiki/go/retry-backoff.md"
	uri := "vault://note/" + note
	res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	want, _ := os.ReadFile(filepath.Join(vault, note))
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != string(want) || res.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read %s: %v %+v", uri, err, res)
	}
	for _, bad := range []struct{ uri, want string }{
		{"vault://note/..%2F..%2Fetc%2Fpasswd", "PATH_ESCAPE"},
		{"vault://note/.git/config", "HIDDEN_SEGMENT"},
		{"vault://note/02-wiki/go/nope.md", "not found"},
	} {
		if _, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: bad.uri}); err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), vault) {
			t.Errorf("read %s: %v, want %s", bad.uri, err, bad.want)
		}
	}

	if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(vault, note), append(want, "\nEdited in Obsidian.\n"...), 0o644)
	select {
	case u := <-updates:
		if u != uri {
			t.Errorf("update for %s, want %s", u, uri)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no notifications/resources/updated after an edit\n%s", stderr.String())
	}
	res, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.HasSuffix(res.Contents[0].Text, "Edited in Obsidian.\n") {
		t.Errorf("read after the edit: %v", err)
	}
	if err := s.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}

	comp, err := s.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "vault://note/{+path}"},
		Argument: mcp.CompleteParamsArgument{Name: "path", Value: "02-wiki/go/re"},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{note}) {
		t.Errorf("complete: %v %+v", err, comp)
	}

	prompts, err := s.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 2 {
		t.Fatalf("prompts: %v %+v", err, prompts)
	}
	got, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "recall", Arguments: map[string]string{"topic": "retry backoff"}})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("recall: %v", err)
	}
	if txt := got.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(txt, note+":") || !strings.Contains(txt, "\n> ") {
		t.Errorf("recall does not carry the search:\n%s", txt)
	}
	got, err = s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "record_learning", Arguments: map[string]string{"learning": "Jitter retries."}})
	if txt := got.Messages[0].Content.(*mcp.TextContent).Text; err != nil || !strings.Contains(txt, "go, ") || !strings.Contains(txt, "> Jitter retries.") {
		t.Errorf("record_learning: %v\n%s", err, txt)
	}

	text, _, isErr := call(t, s, "no_such_tool", map[string]any{})
	if !isErr || !strings.HasPrefix(text, `INVALID_ARGUMENT: name: no tool named "no_such_tool"`) {
		t.Errorf("unknown tool: %v %q", isErr, text)
	}
}
