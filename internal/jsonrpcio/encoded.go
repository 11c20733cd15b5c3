package jsonrpcio

import (
	"bytes"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Results encoded by their handler.
//
// The SDK encodes every result with encoding/json before the transport sees
// it, and a result type with a MarshalJSON method of its own gets its output
// validated and compacted byte by byte once more: there is no way through
// the SDK for a result that can encode itself faster than encoding/json.
// So a tools/call request read by this transport carries, as its
// RequestExtra, a mark of the call (InPlace tells it); a result that can
// encode itself writes its whole answer frame here (EncodeResult) when the
// SDK marshals it, and hands the SDK the short Placeholder instead; the
// transport then writes that frame, in one Write, as the response to the
// call. A response that is anything but the placeholder is written as
// before: an error, a result from another handler, a call whose encoding
// did not go through here.
//
// What a handler writes through EncodeResult must be the JSON value of the
// result that the SDK would have written, compact and on one line: the
// transport does not check it again (mcpserver's tests compare the two on
// every tool). A line break in it is refused, so the framing holds whatever
// the encoder does.

// Placeholder is what a result whose frame EncodeResult took gives the SDK
// to encode (as the output of its MarshalJSON method): valid, compact JSON
// that no tool result is, replaced on the wire by the frame.
var Placeholder = []byte(`{"jsonrpcio":"encoded by the handler"}`)

// pendingCall is a tools/call read by a conn whose response is not written
// yet.
type pendingCall struct {
	c     *conn
	id    jsonrpc.ID
	extra *mcp.RequestExtra // its mark, the key of pendingCalls
	// frame is the answer frame, newline included, once EncodeResult wrote
	// it; guarded by c.callsMu.
	frame []byte
}

// pendingCalls maps the RequestExtra of each pending call to it.
var pendingCalls sync.Map // *mcp.RequestExtra -> *pendingCall

// InPlace reports whether extra is the mark of a call read by this
// transport and not answered yet: EncodeResult can take its answer.
func InPlace(extra *mcp.RequestExtra) bool {
	if extra == nil {
		return false
	}
	_, ok := pendingCalls.Load(extra)
	return ok
}

// EncodeResult writes the answer frame of the call marked by extra: the
// envelope with the call's id, and as its result whatever appendResult
// appends (a JSON value, compact, without a line break), which it reports
// with ok. It reports whether the frame was taken, so that the result may
// give the SDK the Placeholder; when it was not (not such a call, or
// appendResult failed or wrote a line break), the result must be encoded
// as usual.
func EncodeResult(extra *mcp.RequestExtra, appendResult func([]byte) ([]byte, bool)) bool {
	if extra == nil {
		return false
	}
	v, ok := pendingCalls.Load(extra)
	if !ok {
		return false
	}
	p := v.(*pendingCall)
	b := frameBuffers.Get().(*[]byte)
	frame, ok := appendID(append((*b)[:0], `{"jsonrpc":"2.0","id":`...), p.id)
	if !ok {
		frameBuffers.Put(b)
		return false
	}
	frame = append(frame, `,"result":`...)
	start := len(frame)
	frame, ok = appendResult(frame)
	if !ok || len(frame) == start || bytes.IndexByte(frame[start:], '\n') >= 0 {
		*b = frame[:0]
		frameBuffers.Put(b)
		return false
	}
	frame = append(frame, "}\n"...)
	p.c.callsMu.Lock()
	defer p.c.callsMu.Unlock()
	if p.c.calls[p.id] != p {
		// Answered meanwhile (an error response): not this answer's place.
		*b = frame[:0]
		frameBuffers.Put(b)
		return false
	}
	if p.frame != nil {
		putFrame(p.frame)
	}
	p.frame = frame
	return true
}

// frameBuffers holds the buffers of written answer frames for reuse.
var frameBuffers = sync.Pool{New: func() any { return new([]byte) }}

// putFrame returns a written frame's buffer, unless it is large.
func putFrame(frame []byte) {
	if cap(frame) > 1<<20 {
		return
	}
	b := frame[:0]
	frameBuffers.Put(&b)
}

// markCall gives req, a tools/call request, its mark, unless a call with
// the same id is still pending (a client reusing an id in flight gets its
// answers encoded as usual, so that one call's frame never answers the
// other).
func (c *conn) markCall(req *jsonrpc.Request) {
	if req.Method != "tools/call" || !req.IsCall() || req.Extra != nil {
		return
	}
	switch req.ID.Raw().(type) {
	case int64, string:
	default:
		return
	}
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if c.callsClosed || c.calls[req.ID] != nil {
		return
	}
	p := &pendingCall{c: c, id: req.ID, extra: &mcp.RequestExtra{}}
	if c.calls == nil {
		c.calls = map[jsonrpc.ID]*pendingCall{}
	}
	c.calls[req.ID] = p
	pendingCalls.Store(p.extra, p)
	req.Extra = p.extra
}

// takeFrame returns the frame to write for r, a response, if it is the
// placeholder of a call whose frame was encoded (the caller writes it and
// gives it back with putFrame), and forgets the call once it is answered.
func (c *conn) takeFrame(r *jsonrpc.Response) []byte {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	p := c.calls[r.ID]
	if p == nil {
		return nil
	}
	placeholder := r.Error == nil && bytes.Equal(r.Result, Placeholder)
	if !placeholder && p.frame != nil {
		// Not this call's answer: a response to another request with the
		// same id (which markCall left unmarked). The call keeps its frame.
		return nil
	}
	c.forget(p)
	if !placeholder {
		return nil
	}
	if p.frame == nil {
		// A placeholder without its frame: a handler bug. The client gets
		// an error, never the placeholder.
		return append(errorFrameID(&Error{Code: CodeInternalError, Message: "internal error: the result was not encoded"}, r.ID), '\n')
	}
	return p.frame
}

// forget drops p. Caller holds c.callsMu.
func (c *conn) forget(p *pendingCall) {
	delete(c.calls, p.id)
	pendingCalls.Delete(p.extra)
}

// forgetCalls drops every pending call, when the connection closes.
func (c *conn) forgetCalls() {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	c.callsClosed = true
	for _, p := range c.calls {
		c.forget(p)
	}
}
