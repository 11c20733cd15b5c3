package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// fakeEnd is what a fake server's answer can do: write frames, read what
// the client writes next, and hang up (close its stdout).
type fakeEnd struct {
	write  func(string)
	read   func() string
	hangup func()
}

// fakeServer is the other end of a stdioClient that is not a process: for
// each request line it reads, it runs answer with the request's id.
func fakeServer(t *testing.T, answer func(id string, end fakeEnd)) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{
		stdin:  inW,
		stdout: outR,
		r:      bufio.NewReaderSize(outR, 16), // the smallest: most frames are longer
		stderr: &tailBuffer{max: 256},
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer outW.Close()
		in := bufio.NewReader(inR)
		read := func() string {
			line, err := in.ReadString('\n')
			if err != nil {
				return ""
			}
			return line
		}
		end := fakeEnd{
			read:   read,
			write:  func(s string) { _, _ = io.WriteString(outW, s) },
			hangup: func() { outW.Close() },
		}
		for {
			line := read()
			if line == "" {
				return
			}
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(line), &req); err != nil {
				t.Errorf("the client wrote %q: %v", line, err)
				return
			}
			answer(string(req.ID), end)
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-done
	})
	return c
}

// TestStdioClientFrames checks how the minimal client reads answers: what it
// skips, what it refuses, and what it reports as a failure.
func TestStdioClientFrames(t *testing.T) {
	const ok = `"result":{"content":[{"type":"text","text":"Found 1 section for \"deploy\"."}],"structuredContent":{"query":"deploy","results":[]}}}` + "\n"
	for _, tc := range []struct {
		name string
		// answer writes the server's frames for the request id.
		answer func(id string, end fakeEnd)
		want   string // in the error; empty for success
	}{
		{
			name: "answer after notifications, other ids and blank lines",
			answer: func(id string, end fakeEnd) {
				end.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":10,"total":100}}` + "\n")
				end.write(`{"jsonrpc":"2.0","id":"` + id + `","result":{"isError":true}}` + "\n") // a string id, not the number sent
				end.write(`{"jsonrpc":"2.0","id":` + id + `0,"result":{"isError":true}}` + "\n")
				end.write("\n  \r\n")
				end.write(`{"jsonrpc":"2.0","id":` + id + `,` + ok)
			},
		},
		{
			name: "a request from the server is refused",
			answer: func(id string, end fakeEnd) {
				end.write(`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}` + "\n")
				var refusal struct {
					ID    string    `json:"id"`
					Error *rpcError `json:"error"`
				}
				if err := json.Unmarshal([]byte(end.read()), &refusal); err != nil || refusal.ID != "srv-1" || refusal.Error == nil || refusal.Error.Code != -32601 {
					end.write(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32000,"message":"bad refusal"}}` + "\n")
					return
				}
				end.write(`{"jsonrpc":"2.0","id":` + id + `,` + ok)
			},
		},
		{
			name: "JSON-RPC error",
			answer: func(id string, end fakeEnd) {
				end.write(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"unknown tool \"nope\""}}` + "\n")
			},
			want: `JSON-RPC error -32602: unknown tool "nope"`,
		},
		{
			name: "tool error",
			answer: func(id string, end fakeEnd) {
				end.write(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"INVALID_ARGUMENT: query: "},{"type":"text","text":"empty"}],"isError":true}}` + "\n")
			},
			want: "tool error: INVALID_ARGUMENT: query: empty",
		},
		{
			name: "neither result nor error",
			answer: func(id string, end fakeEnd) {
				end.write(`{"jsonrpc":"2.0","id":` + id + `}` + "\n")
			},
			want: "answer without result or error",
		},
		{
			name: "not JSON",
			answer: func(_ string, end fakeEnd) {
				end.write("Listening on stdio\n")
			},
			want: "undecodable frame",
		},
		{
			name: "the server ends before answering",
			answer: func(_ string, end fakeEnd) {
				end.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}` + "\n")
				end.hangup()
			},
			want: io.ErrUnexpectedEOF.Error(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeServer(t, tc.answer)
			frame, err := c.callFrame("vault_search", map[string]string{"query": "deploy"}, true)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(frame), `"progressToken":"vaultmcp-bench-1"`) || !strings.HasSuffix(string(frame), "}\n") {
				t.Errorf("request frame %q", frame)
			}
			took, size, err := c.callTool(context.Background(), frame, time.Minute)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want == "":
				if took <= 0 || size != len(`{"jsonrpc":"2.0","id":1,`+strings.TrimSpace(ok)) {
					t.Errorf("took %v, size %d", took, size)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestStdioClientTimeout: a server that never answers is cut off by the
// watchdog, and the error says so.
func TestStdioClientTimeout(t *testing.T) {
	c := fakeServer(t, func(string, fakeEnd) {})
	frame, err := c.callFrame("vault_search", map[string]string{"query": "x"}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.callTool(context.Background(), frame, 20*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("error %v, want a timeout", err)
	}
}

// TestStdioClientHungProcess: a child that reads nothing and says nothing
// is killed when the context ends, and the handshake returns the context's
// error.
func TestStdioClientHungProcess(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	cmd := exec.Command(sleep, "60")
	c, err := startStdio(ctx, cmd)
	if c != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("startStdio = %v, %v; want the context's deadline", c, err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.Success() {
		t.Errorf("the child was not killed and reaped: %v", cmd.ProcessState)
	}
}

// TestStdioClientRealServer speaks to a real `vaultmcp serve --read-only`:
// the handshake, a search with progress, a tool error, a JSON-RPC error,
// then the go-sdk client on the same connection, and a clean exit.
func TestStdioClientRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds vaultmcp")
	}
	exe := buildVaultmcp(t)
	vault, _ := generate(t, 60, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	queries, err := SampleQueries(ctx, vault, "en", 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "serve", "--read-only", "--vault", vault, "--lang", "en")
	cmd.Env = append(cleanEnv(), "VAULTMCP_CACHE_DIR="+t.TempDir())
	c, err := startStdio(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if c.handshake <= 0 {
		t.Errorf("handshake %v", c.handshake)
	}

	call := func(tool string, args any, progress bool) (time.Duration, int, error) {
		t.Helper()
		frame, err := c.callFrame(tool, args, progress)
		if err != nil {
			t.Fatal(err)
		}
		return c.callTool(ctx, frame, time.Minute)
	}
	for i, q := range queries {
		took, size, err := call("vault_search", map[string]string{"query": q}, i == 0)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if took <= 0 || size <= 0 {
			t.Errorf("search %q: took %v, %d bytes", q, took, size)
		}
	}
	if _, _, err := call("vault_search", map[string]string{"query": "  "}, false); err == nil ||
		!strings.Contains(err.Error(), "tool error: "+api.CodeInvalidArgument) {
		t.Errorf("empty query: error %v, want a tool error with code %s", err, api.CodeInvalidArgument)
	}
	if _, _, err := call("vault_nope", map[string]string{}, false); err == nil || !strings.Contains(err.Error(), "tool error: "+api.CodeInvalidArgument) || !strings.Contains(err.Error(), "vault_nope") {
		t.Errorf("unknown tool: error %v, want a tool error naming it", err)
	}
	// The connection still works after both failures.
	if _, _, err := call("vault_search", map[string]string{"query": queries[0]}, false); err != nil {
		t.Fatalf("search after the failures: %v", err)
	}

	d, err := measureGoSDK(ctx, c, queries)
	if err != nil {
		t.Fatalf("go-sdk client on the same connection: %v", err)
	}
	if d.N != len(queries) || !(d.P50 > 0) || d.P99 < d.P50 {
		t.Errorf("go-sdk figures %+v", d)
	}
	if err := c.close(); err != nil {
		t.Errorf("the server did not exit cleanly at the end of its input: %v", err)
	}
}
