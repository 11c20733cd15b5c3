package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio/frametest"
)

// rawServer is the vaultmcp binary over stdio driven frame by frame.
type rawServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *strings.Builder
	exited chan struct{}
}

func startRaw(t *testing.T, env ...string) *rawServer {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = append(cleanEnv(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{t: t, cmd: cmd, in: in, lines: make(chan []byte, 64), stderr: &strings.Builder{}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
	})
	go func() { cmd.Wait(); close(s.exited) }()
	s.send([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"frames","version":"1"}}}`))
	if m := s.read(); string(m.ID) != "0" || m.Result == nil {
		t.Fatalf("initialize: %+v", m)
	}
	s.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

func (s *rawServer) send(frame []byte) {
	s.t.Helper()
	if _, err := s.in.Write(append(frame, '\n')); err != nil {
		s.t.Fatalf("write: %v\nstderr:\n%s", err, s.stderr)
	}
}

type rawMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// read returns the next frame on stdout, which must be one JSON-RPC 2.0
// message and nothing else.
func (s *rawServer) read() rawMsg {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			<-s.exited
			s.t.Fatalf("the server closed stdout; exit %v\nstderr:\n%s", s.cmd.ProcessState, s.stderr)
		}
		var m rawMsg
		if !bytes.HasSuffix(line, []byte("\n")) || json.Unmarshal(line, &m) != nil || m.JSONRPC != "2.0" {
			s.t.Fatalf("stdout carries something else than a JSON-RPC frame: %.200q", line)
		}
		return m
	case <-time.After(30 * time.Second):
		s.t.Fatalf("no answer\nstderr:\n%s", s.stderr)
		return rawMsg{}
	}
}

// running fails the test when the process has exited.
func (s *rawServer) running(after string) {
	s.t.Helper()
	select {
	case <-s.exited:
		s.t.Fatalf("after %s the server exited: %v\nstderr:\n%s", after, s.cmd.ProcessState, s.stderr)
	default:
	}
}

func (s *rawServer) ping(id int) {
	s.t.Helper()
	s.send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	if m := s.read(); string(m.ID) != strconv.Itoa(id) || m.Error != nil || m.Result == nil {
		s.t.Fatalf("ping %d answered %+v", id, m)
	}
}

// peakRSS is the process's peak resident memory in bytes (Linux).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// The real binary answers every malformed frame with its JSON-RPC error,
// answers the request after it, writes nothing but JSON-RPC frames on
// stdout, stays running, and exits 0 when stdin closes; the oversized frame
// does not grow its memory by the frame's size.
func TestStdioSurvivesMalformedFrames(t *testing.T) {
	s := startRaw(t, "VAULT_PATH="+copyExampleVault(t))
	s.ping(1)
	for i, tc := range frametest.Malformed() {
		var before int64
		if tc.Write != nil {
			if runtime.GOOS == "linux" {
				before = peakRSS(t, s.cmd.Process.Pid)
			}
			if _, err := tc.Write(s.in); err != nil {
				t.Fatal(err)
			}
			s.send(nil)
		} else {
			s.send(tc.Frame)
		}
		m := s.read()
		id := "null"
		if m.ID != nil {
			id = string(m.ID)
		}
		if m.Error == nil || m.Error.Code != int(tc.Code) || id != tc.ID || m.Error.Message == "" {
			t.Errorf("%s: answered %+v id %s, want code %d id %s", tc.Name, m.Error, id, tc.Code, tc.ID)
		}
		s.running(tc.Name)
		s.ping(100 + i)
		if tc.Write != nil && runtime.GOOS == "linux" {
			after := peakRSS(t, s.cmd.Process.Pid)
			t.Logf("%s: peak RSS %d MiB -> %d MiB for a %d MiB frame", tc.Name, before>>20, after>>20, frametest.OversizeBytes>>20)
			// The reader holds up to a frame's limit (16 MiB, its buffer
			// doubling: 32 MiB allocated) before it lets go; under the
			// race detector every byte of it has shadow memory beside it
			// (about three times in all), so the bound is the frame's
			// size there: holding the frame would grow it by three times
			// that.
			bound := int64(frametest.OversizeBytes / 2)
			if raceEnabled {
				bound = frametest.OversizeBytes
			}
			if grown := after - before; grown > bound {
				t.Errorf("%s: peak RSS grew by %d MiB: the frame was held", tc.Name, grown>>20)
			}
		}
	}
	for i, frame := range frametest.Odd() {
		s.send(frame)
		s.ping(200 + i)
	}
	// A tool call still works after all of it.
	s.send([]byte(`{"jsonrpc":"2.0","id":300,"method":"tools/call","params":{"name":"vault_search","arguments":{"query":"retry backoff"}}}`))
	if m := s.read(); string(m.ID) != "300" || !bytes.Contains(m.Result, []byte("retry-backoff.md")) {
		t.Fatalf("search after the malformed frames: %+v", m)
	}
	s.in.Close()
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not exit when stdin closed")
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit status %d\nstderr:\n%s", code, s.stderr)
	}
	if _, ok := <-s.lines; ok {
		t.Error("stdout carried more than the answers")
	}
}

// TestPipedRequestsAllAnswered: a script that pipes its requests in and
// closes the input (printf '…' | vaultmcp) gets every answer, the search
// that waits for the first index included, and the server then exits 0.
func TestPipedRequestsAllAnswered(t *testing.T) {
	vault := copyExampleVault(t)
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"vault_search","arguments":{"query":"retry backoff"}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(binary, "--vault", vault)
	cmd.Env = append(cleanEnv(), "VAULTMCP_CACHE_DIR=off")
	cmd.Stdin = strings.NewReader(input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	ids := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		if m.Result != nil {
			ids[string(m.ID)] = true
		}
	}
	if !ids["1"] || !ids["2"] {
		t.Fatalf("answered ids %v, want 1 and 2; stdout:\n%s", ids, out)
	}
}
