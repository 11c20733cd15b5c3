package jsonrpcio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio/frametest"
)

// wireMsg is any JSON-RPC message as read back from the output.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// peer drives a real SDK server through the transport over pipes, as a
// client on the other end of stdin and stdout would.
type peer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan []byte
	done  chan error
}

func startServer(t *testing.T) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	server := mcp.NewServer(&mcp.Implementation{Name: "frames", Version: "1"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p := &peer{t: t, in: inW, lines: make(chan []byte, 16), done: make(chan error, 1)}
	go func() {
		p.done <- server.Run(ctx, &jsonrpcio.Transport{Reader: inR, Writer: outW})
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	p.send([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if m := p.read(); string(m.ID) != "0" || m.Result == nil {
		t.Fatalf("initialize: %+v", m)
	}
	p.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return p
}

func (p *peer) send(frame []byte) {
	p.t.Helper()
	if _, err := p.in.Write(append(frame, '\n')); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// read returns the next message the server wrote; every line must be one
// JSON-RPC 2.0 object.
func (p *peer) read() wireMsg {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("the server closed its output (run: %v)", <-p.done)
		}
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
			p.t.Fatalf("output line is not a JSON-RPC message: %q (%v)", line, err)
		}
		return m
	case <-time.After(20 * time.Second):
		p.t.Fatal("no answer from the server")
		return wireMsg{}
	}
}

// ping sends a ping with id and checks it is the next thing answered.
func (p *peer) ping(id int) {
	p.t.Helper()
	p.send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	if m := p.read(); string(m.ID) != fmt.Sprint(id) || m.Error != nil || m.Result == nil {
		p.t.Fatalf("ping %d answered with %+v", id, m)
	}
}

// Each malformed frame is answered with its error, and the valid request
// after it is answered too: the server never stops.
func TestServerSurvivesMalformedFrames(t *testing.T) {
	p := startServer(t)
	for i, tc := range frametest.Malformed() {
		if tc.Write != nil {
			if _, err := tc.Write(p.in); err != nil {
				t.Fatal(err)
			}
			p.send(nil)
		} else {
			p.send(tc.Frame)
		}
		m := p.read()
		id := "null"
		if m.ID != nil {
			id = string(m.ID)
		}
		if m.Error == nil || m.Error.Code != int(tc.Code) || id != tc.ID || m.Error.Message == "" {
			t.Errorf("%s: answered %+v id %s, want code %d id %s", tc.Name, m.Error, id, tc.Code, tc.ID)
		}
		p.ping(1000 + i)
	}
	// Valid frames that call for no answer get none.
	for i, frame := range frametest.Odd() {
		p.send(frame)
		p.ping(2000 + i)
	}
	p.in.Close()
	select {
	case err := <-p.done:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("run ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not end with its input")
	}
}

// CRLF line ends and a last frame without newline are frames too.
func TestLineEnds(t *testing.T) {
	in := strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}")
	c, err := (&jsonrpcio.Transport{Reader: in, Writer: io.Discard, Drain: noDrain}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a", "b"} {
		msg, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := msg.(*jsonrpc.Request); !ok || r.Method != want {
			t.Fatalf("got %#v, want method %s", msg, want)
		}
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v", err)
	}
}

// Close ends a Read waiting for input.
func TestCloseEndsRead(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	c, err := (&jsonrpcio.Transport{Reader: inR, Writer: io.Discard}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		got <- err
	}()
	c.Close()
	if err := <-got; !errors.Is(err, io.EOF) {
		t.Fatalf("Read after Close: %v", err)
	}
}

// endless is a reader of n bytes of one JSON string frame, then a newline
// and a valid frame, that holds none of it.
type endless struct {
	n, off int64
	tail   []byte
}

var filler = bytes.Repeat([]byte("a"), 64<<10)

func (e *endless) Read(p []byte) (int, error) {
	head := []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"q":"`)
	switch {
	case e.off < int64(len(head)):
		n := copy(p, head[e.off:])
		e.off += int64(n)
		return n, nil
	case e.off < e.n:
		q := p
		if rest := e.n - e.off; int64(len(q)) > rest {
			q = q[:rest]
		}
		n := 0
		for n < len(q) {
			n += copy(q[n:], filler)
		}
		e.off += int64(n)
		return n, nil
	}
	rest := e.off - e.n
	if rest >= int64(len(e.tail)) {
		return 0, io.EOF
	}
	n := copy(p, e.tail[rest:])
	e.off += int64(n)
	return n, nil
}

// A frame of 256 MiB is answered with a parse error and skipped, allocating
// a small bounded amount (the frame up to the 16 MiB bound, never all of it),
// and the frame after it is read.
func TestOversizedFrame(t *testing.T) {
	const size = 256 << 20
	in := &endless{n: size, tail: []byte("\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"after\"}\n")}
	var out bytes.Buffer
	c, err := (&jsonrpcio.Transport{Reader: in, Writer: &out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	msg, err := c.Read(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := msg.(*jsonrpc.Request); !ok || r.Method != "after" {
		t.Fatalf("after the oversized frame: %#v", msg)
	}
	var m wireMsg
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &m); err != nil || m.Error == nil || m.Error.Code != -32700 || string(m.ID) != "null" || !strings.Contains(m.Error.Message, "16 MiB") {
		t.Fatalf("answer %q (%v)", out.Bytes(), err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB to skip a %d MiB frame", allocated>>20, size>>20)
	if allocated > 3*jsonrpcio.MaxFrame {
		t.Errorf("allocated %d MiB to skip the frame: it was held", allocated>>20)
	}
}

// A frame of exactly the bound is read; one byte more is refused.
func TestFrameBound(t *testing.T) {
	const max = 1 << 10
	frame := func(n int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"q":"`
		tail := `"}}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	in := strings.NewReader(frame(max) + "\n" + frame(max+1) + "\n")
	var out bytes.Buffer
	c, _ := (&jsonrpcio.Transport{Reader: in, Writer: &out, MaxFrame: max, Drain: noDrain}).Connect(context.Background())
	if msg, err := c.Read(context.Background()); err != nil || msg.(*jsonrpc.Request).Method != "x" {
		t.Fatalf("frame of %d bytes: %v %v", max, msg, err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after: %v", err)
	}
	if !strings.Contains(out.String(), `"code":-32700`) || !strings.Contains(out.String(), "1024 bytes") {
		t.Fatalf("frame of %d bytes answered %q", max+1, out.String())
	}
}

// A valid frame larger than the read buffer (here 5 MiB) arrives whole.
func TestLargeValidFrame(t *testing.T) {
	q := strings.Repeat("é", 5<<19) // 5 MiB of two-byte runes
	frame := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"q":"` + q + `"}}`
	in := strings.NewReader(frame + "\r\n")
	c, _ := (&jsonrpcio.Transport{Reader: in, Writer: io.Discard}).Connect(context.Background())
	msg, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || r.Method != "tools/call" || string(r.Params) != `{"q":"`+q+`"}` {
		t.Fatalf("the frame did not arrive whole (%d bytes of params)", len(r.Params))
	}
}

// recorder is an output that fails the test when two writes overlap or a
// write is not exactly one frame.
type recorder struct {
	t       *testing.T
	busy    atomic.Int32
	mu      sync.Mutex
	written int
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.busy.CompareAndSwap(0, 1) {
		r.t.Error("two writes at once")
	}
	defer r.busy.Store(0)
	runtime.Gosched() // give an overlapping writer its chance
	if bytes.IndexByte(p, '\n') != len(p)-1 || !json.Valid(p[:len(p)-1]) {
		r.t.Errorf("a write is not one frame: %.80q", p)
	}
	r.mu.Lock()
	r.written++
	r.mu.Unlock()
	return len(p), nil
}

// The layer's answers and the SDK's messages never interleave: each frame
// is one write, and no two writes overlap.
func TestWritesNeverInterleave(t *testing.T) {
	garbage := strings.Repeat("garbage\n{\"jsonrpc\":\"1.0\"}\n", 200)
	rec := &recorder{t: t}
	c, err := (&jsonrpcio.Transport{Reader: strings.NewReader(garbage), Writer: rec}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				params, _ := json.Marshal(map[string]any{"g": g, "i": i, "pad": strings.Repeat("x", 100*i)})
				n := &jsonrpc.Request{Method: "notifications/message", Params: params}
				if err := c.Write(context.Background(), n); err != nil {
					t.Error(err)
				}
			}
		})
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("read: %v", err)
	}
	wg.Wait()
	if rec.written != 400+400 {
		t.Errorf("%d frames written, want 800", rec.written)
	}
}

// A write that fails ends the connection: Read reports it.
func TestAnswerWriteFailureEndsRead(t *testing.T) {
	c, _ := (&jsonrpcio.Transport{Reader: strings.NewReader("garbage\n"), Writer: failWriter{}}).Connect(context.Background())
	if _, err := c.Read(context.Background()); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("read after a failed answer: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// BenchmarkReadFrame is the layer's cost per frame, read to decoded message,
// beside the SDK's own IOTransport reading the same frames.
func BenchmarkReadFrame(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"vault_search","arguments":{"query":"retry backoff with jitter","limit":6},"_meta":{"progressToken":42}}}` + "\n")
	for _, tr := range []struct {
		name string
		new  func(r io.Reader) mcp.Transport
	}{
		{"jsonrpcio", func(r io.Reader) mcp.Transport { return &jsonrpcio.Transport{Reader: r, Writer: io.Discard} }},
		{"sdk-iotransport", func(r io.Reader) mcp.Transport {
			return &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{io.Discard}}
		}},
	} {
		b.Run(tr.name, func(b *testing.B) {
			r := &repeat{frame: frame}
			c, err := tr.new(r).Connect(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Read(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// repeat reads the same frame forever.
type repeat struct {
	frame []byte
	off   int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.frame[r.off:])
		n += c
		r.off = (r.off + c) % len(r.frame)
	}
	return n, nil
}

// frameOf writes msg through the transport and returns the one frame it
// wrote, without its newline.
func frameOf(t testing.TB, msg jsonrpc.Message) []byte {
	t.Helper()
	var out bytes.Buffer
	c, err := (&jsonrpcio.Transport{Reader: strings.NewReader(""), Writer: &out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Write(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	frame := out.Bytes()
	if bytes.IndexByte(frame, '\n') != len(frame)-1 {
		t.Fatalf("not one frame: %.200q", frame)
	}
	return frame[:len(frame)-1]
}

// Every response is written byte for byte as the SDK's own encoder writes
// it, though a successful one has its envelope written by the transport:
// results of every kind (escapes, HTML characters, U+2028, astral runes,
// nested values, the SDK's own results), numeric and string ids (with
// characters to escape), errors.
func TestResponseFramesAsTheSDKEncodes(t *testing.T) {
	results := []any{
		map[string]any{},
		map[string]any{"content": []any{map[string]any{"type": "text", "text": "a \"quote\", a \\ backslash, \n\t\r line ends, <b>&amp;</b>, \u2028\u2029, \x00\x1f, é, 😀"}}},
		map[string]any{"nested": []any{1, 2.5, -3e30, true, false, nil, "x", map[string]any{"k": []any{}}}},
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "> quoted <code> & more\n"}}, StructuredContent: map[string]any{"n": 1}},
		&mcp.InitializeResult{ProtocolVersion: "2025-11-25", ServerInfo: &mcp.Implementation{Name: "vaultmcp", Version: "dev"}},
	}
	var ids []jsonrpc.ID
	for _, v := range []any{0.0, 1.0, -7.0, float64(1<<53 - 1), "", "abc", `<"id">&\`, "é\u2028"} {
		ids = append(ids, makeID(t, v))
	}
	for _, id := range ids {
		for _, res := range results {
			raw, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			// The SDK's raw result (encoding/json output).
			var c bytes.Buffer
			if err := json.Compact(&c, raw); err != nil {
				t.Fatal(err)
			}
			msg := &jsonrpc.Response{ID: id, Result: c.Bytes()}
			want, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			if got := frameOf(t, msg); !bytes.Equal(got, want) {
				t.Errorf("id %v:\n got %s\nwant %s", id.Raw(), got, want)
			}
		}
		msg := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32602, Message: "bad <params>"}}
		want, _ := jsonrpc.EncodeMessage(msg)
		if got := frameOf(t, msg); !bytes.Equal(got, want) {
			t.Errorf("error response, id %v:\n got %s\nwant %s", id.Raw(), got, want)
		}
	}
}

// A result holding a raw line break (no encoder of the SDK writes one) is
// still written on one line, compacted as the SDK's encoder does.
func TestResultWithLineBreakStaysOneFrame(t *testing.T) {
	msg := &jsonrpc.Response{ID: makeID(t, 3.0), Result: json.RawMessage("{\n  \"a\": 1\n}")}
	if got := frameOf(t, msg); string(got) != `{"jsonrpc":"2.0","id":3,"result":{"a":1}}` {
		t.Errorf("frame %s", got)
	}
}

// BenchmarkWriteResult is the transport's cost to write a 16 kB result
// (about a search answer on the obsidian-hub vault), beside the SDK's
// encoding of the same response.
func BenchmarkWriteResult(b *testing.B) {
	text := strings.Repeat("> a line of a note, quoted: \"x\" <y> & z\n", 400)
	raw, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}})
	msg := &jsonrpc.Response{ID: makeID(b, 42.0), Result: raw}
	b.Run("jsonrpcio", func(b *testing.B) {
		c, _ := (&jsonrpcio.Transport{Reader: strings.NewReader(""), Writer: io.Discard}).Connect(context.Background())
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Write(context.Background(), msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk-encode", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func makeID(t testing.TB, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// runUntilEOF serves a real SDK server with one tool, "wait", whose call
// returns once release is closed, on frames written in one go and followed
// by the end of the input (printf '…' | vaultmcp); it returns every line the
// server wrote once Run has returned.
func runUntilEOF(t *testing.T, drain time.Duration, release <-chan struct{}, frames ...string) []wireMsg {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "drain", Version: "1"}, nil)
	type in struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	var out bytes.Buffer
	input := strings.Join(frames, "\n") + "\n"
	done := make(chan error, 1)
	go func() {
		done <- server.Run(context.Background(), &jsonrpcio.Transport{Reader: strings.NewReader(input), Writer: &lockedBuffer{b: &out}, Drain: drain})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after the end of the input")
	}
	var msgs []wireMsg
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// lockedBuffer is a bytes.Buffer written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

const (
	initFrame        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initializedFrame = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	waitFrame        = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`
)

// TestEndOfInputWaitsForAnswers: requests written and followed at once by
// the end of the input are all answered, a call still running when the
// input ends included, before the server stops.
func TestEndOfInputWaitsForAnswers(t *testing.T) {
	release := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond) // the input has ended by then
		close(release)
	}()
	msgs := runUntilEOF(t, time.Minute, release, initFrame, initializedFrame, waitFrame)
	var got []string
	for _, m := range msgs {
		got = append(got, string(m.ID))
	}
	if len(msgs) != 2 || string(msgs[1].ID) != "2" || msgs[1].Result == nil {
		t.Fatalf("answers to ids %v, want 1 and 2: %+v", got, msgs)
	}
}

// TestEndOfInputWaitBounded: a call that never ends does not keep the
// server past the drain bound.
func TestEndOfInputWaitBounded(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	msgs := runUntilEOF(t, 50*time.Millisecond, never, initFrame, initializedFrame, waitFrame)
	if len(msgs) != 1 || string(msgs[0].ID) != "1" {
		t.Fatalf("answers: %+v, want the initialize answer alone", msgs)
	}
}

// TestCancelledCallNotAnswered: a call the client cancels while it runs
// gets no answer (the MCP specification's rule for a cancelled request),
// and still counts as answered when the input ends; a cancellation of a
// call never made changes nothing.
func TestCancelledCallNotAnswered(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	msgs := runUntilEOF(t, time.Minute, never, initFrame, initializedFrame, waitFrame,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	var got []string
	for _, m := range msgs {
		got = append(got, string(m.ID))
	}
	if !slices.Equal(got, []string{"1", "3"}) {
		t.Fatalf("answers to ids %v, want 1 and 3 (2 was cancelled)", got)
	}
}

// noDrain is the end-of-input wait of the tests that read calls and never
// answer them (see Transport.Drain): their input's end is read at once
// instead of after DrainTimeout.
const noDrain = time.Millisecond

// TestReusedIDRefused: a call whose id is that of a call still in progress
// is refused with invalid request (id null: an answer with its id would be
// taken for the first call's), where the SDK dropped it without a word and
// the end of the input then waited for its answer until the drain bound.
func TestReusedIDRefused(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	msgs := runUntilEOF(t, time.Minute, never, initFrame, initializedFrame, waitFrame,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	var got []string
	for _, m := range msgs {
		if string(m.ID) == "null" && (m.Error == nil || m.Error.Code != int(jsonrpcio.CodeInvalidRequest)) {
			t.Errorf("answer with id null: %+v, want a -32600 error", m)
		}
		got = append(got, string(m.ID))
	}
	slices.Sort(got) // the refusal, written as the frame is read, may come first
	if !slices.Equal(got, []string{"1", "3", "null"}) {
		t.Fatalf("answers to ids %v, want 1, 3 and a -32600 error with id null", got)
	}
}

// TestEndOfInputEndsListen: a subscriptions/listen call (protocol
// 2026-07-28), answered only when its subscription ends, does not hold the
// server for the drain bound once the input ends: the end of the input
// ends the subscription.
func TestEndOfInputEndsListen(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	server := mcp.NewServer(&mcp.Implementation{Name: "listen", Version: "1"}, &mcp.ServerOptions{HasTools: true})
	done := make(chan error, 1)
	go func() {
		done <- server.Run(context.Background(), &jsonrpcio.Transport{Reader: inR, Writer: outW, Drain: time.Minute})
		outW.Close()
	}()
	go func() {
		_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}` + "\n"))
	}()
	out := bufio.NewReader(outR)
	line, err := out.ReadBytes('\n')
	if err != nil || !bytes.Contains(line, []byte(`"notifications/subscriptions/acknowledged"`)) {
		t.Fatalf("first output %q (%v), want the subscription acknowledged", line, err)
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, out) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after the end of the input: it waits for the listen call")
	}
}
