package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// stdioProtocolVersion is the MCP version the minimal client asks for: the
// newest one whose sessions begin with initialize, as those of Claude Code
// and most clients do; the go-sdk server answers with the same version.
const stdioProtocolVersion = "2025-11-25"

// Bounds on one exchange with the child: a server that stops answering is
// killed rather than waited for (the first search may wait for the whole
// index of a large vault to build).
const (
	handshakeTimeout   = 2 * time.Minute
	firstSearchTimeout = 30 * time.Minute
	searchTimeout      = time.Minute
	exitGrace          = 5 * time.Second
)

// frameBuffer is the read buffer of the minimal client: an answer that fits
// is read without a copy; a longer one is still read whole.
const frameBuffer = 1 << 20

// stdioClient is a minimal MCP client over stdio, as the MCP stdio transport
// specifies it: one JSON-RPC message a line on the child's stdin and stdout.
// It decodes only what a client needs to match an answer to its request and
// to tell success from failure (id, error, result.isError), so its timings
// show what the server costs a client, not what a client library costs. It
// is not safe for concurrent use.
type stdioClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	r      *bufio.Reader
	stderr *tailBuffer

	start     time.Time     // exec
	handshake time.Duration // exec to the initialize answer read (startStdio)

	nextID   int64
	long     []byte // a frame longer than the read buffer
	timedOut atomic.Bool
	stopCtx  func() bool // stops the kill on ctx done

	closeOnce sync.Once
	closeErr  error
}

// rpcEnvelope is what the minimal client decodes of every frame it reads.
type rpcEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *rpcError       `json:"error"`
	Result *struct {
		IsError bool `json:"isError"`
	} `json:"result"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// startStdio starts cmd (its stdin, stdout and stderr must be unset) and
// completes the MCP handshake: initialize, its answer, then
// notifications/initialized. When ctx ends the child is killed, which ends
// whatever exchange is in flight.
func startStdio(ctx context.Context, cmd *exec.Cmd) (*stdioClient, error) {
	c := &stdioClient{cmd: cmd, stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = c.stderr
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = exitGrace // a grandchild holding stderr open does not hold up Wait
	}
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if c.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	c.r = bufio.NewReaderSize(c.stdout, frameBuffer)
	c.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	c.stopCtx = context.AfterFunc(ctx, c.kill)
	if err := c.initialize(ctx); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// newPipeClient is a minimal client of a server in this process, which
// reads w and writes r; initialize does the handshake.
func newPipeClient(w io.WriteCloser, r io.ReadCloser) *stdioClient {
	return &stdioClient{stdin: w, stdout: r, r: bufio.NewReaderSize(r, frameBuffer), stderr: &tailBuffer{max: 4096}}
}

// initialize is the MCP handshake: initialize, its answer, then
// notifications/initialized.
func (c *stdioClient) initialize(ctx context.Context) error {
	init, err := c.frame("initialize", map[string]any{
		"protocolVersion": stdioProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "vaultmcp-bench", "version": "1"},
	})
	if err != nil {
		return err
	}
	answer, _, err := c.roundTrip(ctx, init, c.nextID, handshakeTimeout)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	c.handshake = time.Since(c.start)
	var res struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &res); err != nil || res.Result.ProtocolVersion == "" {
		return fmt.Errorf("initialize: no protocol version in the answer %.200q", answer)
	}
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return fmt.Errorf("notifications/initialized: %w", c.failure(ctx, err))
	}
	return nil
}

// frame is the request frame of method with params, numbered with the next
// id (c.nextID after the call).
func (c *stdioClient) frame(method string, params any) ([]byte, error) {
	c.nextID++
	data, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", c.nextID, method, params})
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// callFrame is the tools/call frame of tool with args; with progress, the
// request asks for progress notifications.
func (c *stdioClient) callFrame(tool string, args any, progress bool) ([]byte, error) {
	params := map[string]any{"name": tool, "arguments": args}
	if progress {
		params["_meta"] = map[string]any{"progressToken": "vaultmcp-bench-" + strconv.FormatInt(c.nextID+1, 10)}
	}
	return c.frame("tools/call", params)
}

// callTool sends a tools/call frame made by callFrame and waits for its
// answer. It returns the time from writing the frame to having read and
// decoded the answer, and the answer's size. A JSON-RPC error or a tool
// error (isError) is an error carrying the server's message.
func (c *stdioClient) callTool(ctx context.Context, frame []byte, timeout time.Duration) (time.Duration, int, error) {
	answer, took, err := c.roundTrip(ctx, frame, c.nextID, timeout)
	return took, len(answer), err
}

// roundTrip writes frame, a request with the given id, and reads frames
// until the answer with that id: notifications (progress) and answers to
// other ids are skipped, and a request from the server is refused. The
// answer is valid until the next read; took runs from the write to the
// answer decoded.
func (c *stdioClient) roundTrip(ctx context.Context, frame []byte, id int64, timeout time.Duration) (answer []byte, took time.Duration, err error) {
	want := strconv.AppendInt(nil, id, 10)
	c.timedOut.Store(false)
	watchdog := time.AfterFunc(timeout, func() {
		c.timedOut.Store(true)
		c.kill()
	})
	defer watchdog.Stop()

	start := time.Now()
	if err := c.write(frame); err != nil {
		return nil, 0, c.failure(ctx, err)
	}
	for {
		line, err := c.readFrame()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // the server ended before answering
			}
			return nil, 0, c.failure(ctx, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var env rpcEnvelope
		if err := json.Unmarshal(line, &env); err != nil {
			return nil, 0, fmt.Errorf("undecodable frame %.200q: %w", line, err)
		}
		if env.Method != "" {
			if len(env.ID) > 0 && !bytes.Equal(env.ID, []byte("null")) {
				// A request from the server: this client offers nothing.
				refusal := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", env.ID)
				if err := c.write(refusal); err != nil {
					return nil, 0, c.failure(ctx, err)
				}
			}
			continue
		}
		if !bytes.Equal(env.ID, want) {
			continue
		}
		took = time.Since(start)
		switch {
		case env.Error != nil:
			return line, took, fmt.Errorf("JSON-RPC error %d: %s", env.Error.Code, env.Error.Message)
		case env.Result == nil:
			return line, took, fmt.Errorf("answer without result or error: %.200q", line)
		case env.Result.IsError:
			return line, took, fmt.Errorf("tool error: %s", toolErrorText(line))
		}
		return line, took, nil
	}
}

// toolErrorText is the text content of an isError answer.
func toolErrorText(frame []byte) string {
	var res struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(frame, &res); err != nil {
		return fmt.Sprintf("%.200q", frame)
	}
	var msg string
	for _, c := range res.Result.Content {
		if c.Type == "text" {
			msg += c.Text
		}
	}
	return msg
}

// readFrame reads one line. The result is valid until the next read.
func (c *stdioClient) readFrame() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == nil {
		return line, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	c.long = append(c.long[:0], line...)
	for {
		line, err = c.r.ReadSlice('\n')
		c.long = append(c.long, line...)
		switch {
		case err == nil:
			return c.long, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

func (c *stdioClient) write(frame []byte) error {
	_, err := c.stdin.Write(frame)
	return err
}

// failure explains err, an exchange cut short: by ctx, by the watchdog, or
// by the server (with the end of its stderr).
func (c *stdioClient) failure(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case c.timedOut.Load():
		return fmt.Errorf("no answer in time: the server was killed (%w)%s", err, c.stderr.suffix())
	}
	return fmt.Errorf("%w%s", err, c.stderr.suffix())
}

// kill ends the child and closes its stdout, which ends a read in flight
// even when a grandchild holds the pipe open.
func (c *stdioClient) kill() {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	if c.stdout != nil {
		_ = c.stdout.Close()
	}
}

// sdkTransport hands the connection over to another client (the go-sdk
// one): the frames the minimal client has buffered but not read go with it.
// Closing the transport's connection closes the child's stdin, which ends
// the server. The minimal client must not be used afterwards, except for
// close.
func (c *stdioClient) sdkTransport() (io.ReadCloser, io.WriteCloser) {
	return readCloser{c.r, c.stdout}, c.stdin
}

type readCloser struct {
	io.Reader
	io.Closer
}

// close ends the child: its stdin is closed (a server exits at the end of
// its input) and, after a grace period, it is killed. It returns how the
// child ended when that was not a clean exit after the end of its input.
func (c *stdioClient) close() error {
	c.closeOnce.Do(func() {
		if c.stopCtx != nil {
			c.stopCtx()
		}
		_ = c.stdin.Close()
		if c.cmd == nil || c.cmd.Process == nil {
			return
		}
		grace := time.AfterFunc(exitGrace, c.kill)
		defer grace.Stop()
		if err := c.cmd.Wait(); err != nil {
			c.closeErr = fmt.Errorf("%w%s", err, c.stderr.suffix())
		}
	})
	return c.closeErr
}
