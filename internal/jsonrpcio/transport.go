package jsonrpcio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is an mcp.Transport over newline-delimited JSON-RPC on a reader
// and a writer (stdin and stdout), with the guarantees of the package. It
// takes the place of the SDK's mcp.IOTransport, which ends the connection
// on the first malformed frame. Neither stream is closed by the transport.
type Transport struct {
	Reader io.Reader
	Writer io.Writer
	// Logger receives one line per refused frame (the first ten at warn
	// level, the rest at debug); nil discards them.
	Logger *slog.Logger
	// MaxFrame bounds a frame in bytes; 0 means MaxFrame.
	MaxFrame int
	// Drain bounds how long the end of the input waits for the answers of
	// the calls already read (see conn.Read); 0 means DrainTimeout.
	Drain time.Duration
}

// DrainTimeout is how long, at most, the end of the input waits for the
// answers of the calls read before it: a script that writes its requests
// and closes stdin (printf '…' | vaultmcp) gets every answer, and a client
// that closes stdin to stop the server while a call runs gets that answer
// too (a write finishes either way; see package vault).
const DrainTimeout = 30 * time.Second

// Connect implements mcp.Transport. A transport is connected once.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("jsonrpcio: Transport needs a Reader and a Writer")
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	limit := t.MaxFrame
	if limit <= 0 {
		limit = MaxFrame
	}
	drain := t.Drain
	if drain <= 0 {
		drain = DrainTimeout
	}
	c := &conn{
		drain:    drain,
		out:      &frameWriter{w: t.Writer},
		incoming: make(chan incoming),
		closed:   make(chan struct{}),
		log:      log,
	}
	go c.readLoop(newLineReader(t.Reader, limit))
	return c, nil
}

// incoming is a message for the SDK, or the error that ends the input.
type incoming struct {
	msg jsonrpc.Message
	err error
}

type conn struct {
	out       *frameWriter
	incoming  chan incoming
	closed    chan struct{}
	closeOnce sync.Once
	log       *slog.Logger
	// readErr is the error that ended the input, once Read has seen it
	// (Read is called by one goroutine at a time).
	readErr error
	// refused counts the frames answered with an error (read loop only).
	refused int

	// The tools/call requests not answered yet (encoded.go).
	callsMu     sync.Mutex
	calls       map[jsonrpc.ID]*pendingCall
	callsClosed bool

	// Every call read and not answered yet, by id (a count, should a
	// client reuse an id), and idle, closed once there is none while the
	// end of the input waits for them (see Read).
	drain     time.Duration
	pendingMu sync.Mutex
	pending   map[jsonrpc.ID]int
	idle      chan struct{}
	// live holds the ids of the calls in progress, from the frame read
	// until the answer's write begins (when the SDK frees the id too): a
	// call reusing one of them is refused (see frame).
	live map[jsonrpc.ID]bool
	// cancelled holds the calls in progress the client cancelled
	// (notifications/cancelled): their answers are not written (see
	// Write).
	cancelled map[jsonrpc.ID]bool
}

// called counts a call read, one the end of the input waits for when
// awaited; false, counting nothing, when a call of that id is still in
// progress.
func (c *conn) called(id jsonrpc.ID, awaited bool) bool {
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	if c.live[id] {
		return false
	}
	if c.pending == nil {
		c.pending = map[jsonrpc.ID]int{}
		c.live = map[jsonrpc.ID]bool{}
	}
	if awaited {
		c.pending[id]++
	}
	c.live[id] = true
	return true
}

// answering frees the id of the call answered by a response about to be
// written: the client may use it again once it has the answer.
func (c *conn) answering(id jsonrpc.ID) {
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	delete(c.live, id)
}

// cancel records that the client cancelled the call id, when it is in
// progress (a cancellation that crossed the answer, or names a call never
// made, is ignored: a later call may reuse the id).
func (c *conn) cancel(id jsonrpc.ID) {
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	if !c.live[id] {
		return
	}
	if c.cancelled == nil {
		c.cancelled = map[jsonrpc.ID]bool{}
	}
	c.cancelled[id] = true
}

// dropAnswer reports whether the answer to the call id is to be dropped:
// the client cancelled it, and the MCP specification says that a cancelled
// request gets no response (the client has stopped waiting for it, and
// may ignore or be confused by one). The call still counts as answered.
func (c *conn) dropAnswer(id jsonrpc.ID) bool {
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	if !c.cancelled[id] {
		return false
	}
	delete(c.cancelled, id)
	return true
}

// answered counts the answer to the call id written.
func (c *conn) answered(id jsonrpc.ID) {
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	n, ok := c.pending[id]
	switch {
	case !ok:
		return
	case n > 1:
		c.pending[id] = n - 1
		return
	}
	delete(c.pending, id)
	if len(c.pending) == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// awaitAnswers waits until every call read has been answered, the
// connection is closed, ctx is done or the drain bound has passed.
func (c *conn) awaitAnswers(ctx context.Context) {
	c.pendingMu.Lock()
	if len(c.pending) == 0 {
		c.pendingMu.Unlock()
		return
	}
	idle := make(chan struct{})
	c.idle = idle
	n := len(c.pending)
	c.pendingMu.Unlock()
	c.log.Debug("input ended: waiting for the answers of the calls in progress", "calls", n, "at_most", c.drain)
	t := time.NewTimer(c.drain)
	defer t.Stop()
	select {
	case <-idle:
	case <-ctx.Done():
	case <-c.closed:
	case <-t.C:
		c.log.Warn("input ended: calls still unanswered after the wait", "at_most", c.drain)
	}
}

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.readErr != nil {
		return nil, c.readErr
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case in := <-c.incoming:
		if in.err != nil {
			if errors.Is(in.err, io.EOF) {
				// The SDK ends the session at this error, and the calls
				// still running then go unanswered: it is handed over once
				// they are answered.
				c.awaitAnswers(ctx)
			}
			c.readErr = in.err
		}
		return in.msg, in.err
	}
}

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	r, isAnswer := msg.(*jsonrpc.Response)
	if isAnswer {
		c.answering(r.ID)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if isAnswer {
		defer c.answered(r.ID)
		if c.dropAnswer(r.ID) {
			if frame := c.takeFrame(r); frame != nil {
				putFrame(frame)
			}
			c.log.Debug("answer to a cancelled call not written", "id", r.ID.Raw())
			return nil
		}
		if frame := c.takeFrame(r); frame != nil {
			err := c.out.writeFrame(frame)
			putFrame(frame)
			return err
		}
		if done, err := c.out.writeResult(r); done {
			return err
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.out.write(data)
}

// Close implements mcp.Connection: it ends Read; the streams stay open.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.forgetCalls()
	})
	return nil
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *conn) SessionID() string { return "" }

// deliver hands in to Read; false once the connection is closed.
func (c *conn) deliver(in incoming) bool {
	select {
	case c.incoming <- in:
		return true
	case <-c.closed:
		return false
	}
}

// readLoop reads frames until the input ends, answering the malformed ones
// and delivering the others.
func (c *conn) readLoop(r *lineReader) {
	for {
		line, tooLong, err := r.next()
		switch {
		case tooLong:
			if !c.refuse(&Error{Code: CodeParseError, Message: "parse error: the frame is over " + sizeText(r.limit) + "; skipped to the next newline"}, r.lastLen) {
				return
			}
		case len(trimSpace(line)) > 0:
			if !c.frame(line) {
				return
			}
		}
		if err != nil {
			c.deliver(incoming{err: err})
			return
		}
		select {
		case <-c.closed:
			return
		default:
		}
	}
}

// frame handles one non-blank line; false when the connection is done.
func (c *conn) frame(line []byte) bool {
	msg, kind, ferr := Decode(line)
	switch {
	case ferr != nil:
		return c.refuse(ferr, int64(len(line)))
	case kind == Unattributed:
		c.log.Warn("JSON-RPC error response with id null dropped (it answers no call)", "bytes", len(line))
		return true
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		// A subscriptions/listen call (protocol 2026-07-28) is the client's
		// stream of notifications: it is answered only when the
		// subscription ends, which the end of the input does (the SDK
		// ends it as the session closes), so the end of the input does
		// not wait for it.
		if req.IsCall() && !c.called(req.ID, req.Method != "subscriptions/listen") {
			// The SDK drops such a call without a word (an answer with
			// its id would be taken for the first call's), and the end of
			// the input would wait for an answer that never comes.
			id, _ := appendID(nil, req.ID)
			return c.refuse(&Error{Code: CodeInvalidRequest, Message: "invalid request: id " + string(id) + " is the id of a call still in progress; a request id may not be reused"}, int64(len(line)))
		}
		c.markCall(req)
		if !req.IsCall() && req.Method == "notifications/cancelled" {
			if id, ok := cancelledID(req.Params); ok {
				c.cancel(id)
			}
		}
	}
	return c.deliver(incoming{msg: msg})
}

// cancelledID reads the requestId of a notifications/cancelled's params.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil
}

// refuse answers a malformed frame; false when the answer cannot be
// written (the connection is then over).
func (c *conn) refuse(e *Error, size int64) bool {
	c.refused++
	level := slog.LevelWarn
	if c.refused > 10 {
		level = slog.LevelDebug
	}
	c.log.Log(context.Background(), level, "malformed JSON-RPC frame answered with an error", "code", int(e.Code), "error", e.Message, "bytes", size, "refused", c.refused)
	if err := c.out.write(errorFrame(e)); err != nil {
		c.deliver(incoming{err: err})
		return false
	}
	return true
}

// errorFrameID is the JSON-RPC error response for e answering the call id.
func errorFrameID(e *Error, id jsonrpc.ID) []byte {
	raw, _ := appendID(nil, id)
	return errorFrame(&Error{Code: e.Code, Message: e.Message, ID: raw})
}

// errorFrame is the JSON-RPC error response for e.
func errorFrame(e *Error) []byte {
	msg, _ := json.Marshal(e.Message)
	b := make([]byte, 0, 64+len(msg)+len(e.ID))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if e.ID != nil {
		b = append(b, e.ID...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `,"message":`...)
	b = append(b, msg...)
	return append(b, "}}"...)
}

// sizeText says n bytes in MiB when it is a whole number of them.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// frameWriter writes whole frames, each in one Write call under a mutex,
// so that no two frames interleave.
type frameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// writeFrame writes frame, a whole frame with its newline, as it is.
func (w *frameWriter) writeFrame(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(frame)
	return err
}

func (w *frameWriter) write(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], frame...), '\n')
	return w.flush()
}

// writeResult writes the frame of a successful response, its envelope
// written here around the result as the SDK encoded it, when it can: done
// is false for a response this does not write (an error response, an id
// that is neither a number nor a string, a result holding a line break),
// which then goes through jsonrpc.EncodeMessage.
//
// jsonrpc.EncodeMessage marshals the envelope with encoding/json, which
// validates and compacts the result, a json.RawMessage, byte by byte once
// more: for a search answer of 15 kB that pass cost more than the rest of
// the envelope a hundred times over. The result is the SDK's own encoding
// of a Go value (encoding/json output: compact, valid, no raw line break);
// the line break check, a memchr, keeps the one-line framing guaranteed
// whatever produced it.
func (w *frameWriter) writeResult(r *jsonrpc.Response) (done bool, err error) {
	if r.Error != nil || len(r.Result) == 0 || bytes.IndexByte(r.Result, '\n') >= 0 {
		return false, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := appendID(append(w.buf[:0], `{"jsonrpc":"2.0","id":`...), r.ID)
	if !ok {
		return false, nil
	}
	b = append(b, `,"result":`...)
	b = append(b, r.Result...)
	w.buf = append(b, "}\n"...)
	return true, w.flush()
}

// appendID appends a call's id as JSON; false for an id that is neither a
// number nor a string (which no call has).
func appendID(b []byte, id jsonrpc.ID) ([]byte, bool) {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case string:
		return AppendString(b, v), true
	}
	return b, false
}

// flush writes w.buf in one call. Caller holds w.mu.
func (w *frameWriter) flush() error {
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not keep a large answer's buffer
	}
	return err
}

// lineReader reads lines of at most limit bytes, discarding longer ones
// without holding them.
type lineReader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
	// lastLen is the length of the last line read, counted even when it
	// was discarded.
	lastLen int64
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next returns the next line without its newline (valid until the next
// call), or tooLong when it was over the limit and discarded. err is the read
// error after the line (io.EOF at the end; a last line without newline is
// returned with it).
func (r *lineReader) next() (line []byte, tooLong bool, err error) {
	if cap(r.buf) > 1<<20 {
		r.buf = nil // do not keep a large frame's buffer
	}
	r.buf = r.buf[:0]
	r.lastLen = 0
	for {
		chunk, err := r.r.ReadSlice('\n')
		r.lastLen += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			if !tooLong && len(r.buf)+len(chunk) > r.limit {
				tooLong, r.buf = true, nil
			}
			if !tooLong {
				r.buf = appendDoubling(r.buf, chunk)
			}
			continue
		}
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			chunk = chunk[:len(chunk)-1]
			r.lastLen--
		}
		if tooLong || len(r.buf)+len(chunk) > r.limit {
			return nil, true, err
		}
		if len(r.buf) == 0 {
			return chunk, false, err
		}
		r.buf = appendDoubling(r.buf, chunk)
		return r.buf, false, err
	}
}

// appendDoubling appends, doubling the capacity when it grows (append
// grows large slices by a quarter: reaching 16 MiB would allocate 80 MiB
// on the way, against 32 MiB by doubling).
func appendDoubling(buf, b []byte) []byte {
	if need := len(buf) + len(b); need > cap(buf) {
		grown := make([]byte, len(buf), max(2*cap(buf), need))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, b...)
}
