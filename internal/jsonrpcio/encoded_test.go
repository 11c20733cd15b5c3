package jsonrpcio_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
)

// writes records each Write call.
type writes struct{ calls [][]byte }

func (w *writes) Write(p []byte) (int, error) {
	w.calls = append(w.calls, append([]byte(nil), p...))
	return len(p), nil
}

// readAll connects a transport to the frames and reads every message.
func readAll(t *testing.T, frames string, out *writes) (mcp.Connection, []*jsonrpc.Request) {
	t.Helper()
	c, err := (&jsonrpcio.Transport{Reader: strings.NewReader(frames), Writer: out, Drain: noDrain}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*jsonrpc.Request
	for {
		msg, err := c.Read(context.Background())
		if err != nil {
			return c, reqs
		}
		reqs = append(reqs, msg.(*jsonrpc.Request))
	}
}

func appendText(s string) func([]byte) ([]byte, bool) {
	return func(b []byte) ([]byte, bool) { return append(b, s...), true }
}

func respond(t *testing.T, c mcp.Connection, id jsonrpc.ID, result []byte) {
	t.Helper()
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: result}); err != nil {
		t.Fatal(err)
	}
}

// A tools/call carries the mark of its call; the frame its result encodes
// is written, in one Write, as the response whose result is the
// placeholder. Other requests carry no mark, and a response that is not
// the placeholder is written as before.
func TestEncodedResult(t *testing.T) {
	out := &writes{}
	c, reqs := readAll(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}
{"jsonrpc":"2.0","id":"s-2","method":"tools/call","params":{"name":"x"}}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}
`, out)
	if len(reqs) != 4 {
		t.Fatalf("%d requests read", len(reqs))
	}
	for i, r := range reqs {
		extra, _ := r.Extra.(*mcp.RequestExtra)
		if marked := jsonrpcio.InPlace(extra); marked != (i < 2) {
			t.Errorf("request %d (%s, id %v): marked %v", i, r.Method, r.ID.Raw(), marked)
		}
	}
	e1, e2 := reqs[0].Extra.(*mcp.RequestExtra), reqs[1].Extra.(*mcp.RequestExtra)
	if !jsonrpcio.EncodeResult(e1, appendText(`{"content":[{"type":"text","text":"a"}]}`)) {
		t.Fatal("the frame of call 1 was not taken")
	}
	if !jsonrpcio.EncodeResult(e2, appendText(`{"content":[]}`)) {
		t.Fatal("the frame of call s-2 was not taken")
	}
	respond(t, c, reqs[1].ID, jsonrpcio.Placeholder)
	respond(t, c, reqs[2].ID, []byte(`{"tools":[]}`))
	respond(t, c, reqs[0].ID, jsonrpcio.Placeholder)
	want := []string{
		`{"jsonrpc":"2.0","id":"s-2","result":{"content":[]}}` + "\n",
		`{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}}` + "\n",
	}
	if len(out.calls) != len(want) {
		t.Fatalf("%d writes: %q", len(out.calls), out.calls)
	}
	for i := range want {
		if string(out.calls[i]) != want[i] {
			t.Errorf("write %d: %q, want %q", i, out.calls[i], want[i])
		}
	}
	if jsonrpcio.InPlace(e1) || jsonrpcio.EncodeResult(e1, appendText(`{}`)) {
		t.Error("an answered call still takes a frame")
	}
}

// What a result may not write is refused (the result is then encoded as
// usual): nothing, a line break, a failure of its encoder, an unknown mark.
func TestEncodedResultRefused(t *testing.T) {
	out := &writes{}
	_, reqs := readAll(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`+"\n", out)
	extra := reqs[0].Extra.(*mcp.RequestExtra)
	for name, f := range map[string]func([]byte) ([]byte, bool){
		"nothing":    appendText(""),
		"line break": appendText("{\"text\":\"a\nb\"}"),
		"failure":    func(b []byte) ([]byte, bool) { return append(b, "{}"...), false },
	} {
		if jsonrpcio.EncodeResult(extra, f) {
			t.Errorf("%s: taken", name)
		}
	}
	if jsonrpcio.EncodeResult(&mcp.RequestExtra{}, appendText("{}")) || jsonrpcio.EncodeResult(nil, appendText("{}")) {
		t.Error("a frame taken for a call this transport did not read")
	}
}

// A call answered with an error before its result was encoded is forgotten
// (its result, if encoded later, goes the usual way); a placeholder whose
// frame is missing is never sent: the client gets an internal error.
func TestEncodedResultErrorsAndLoss(t *testing.T) {
	out := &writes{}
	c, reqs := readAll(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}
`, out)
	e1 := reqs[0].Extra.(*mcp.RequestExtra)
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: reqs[0].ID, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}}); err != nil {
		t.Fatal(err)
	}
	if jsonrpcio.EncodeResult(e1, appendText("{}")) {
		t.Error("a frame taken for a call already answered")
	}
	respond(t, c, reqs[1].ID, jsonrpcio.Placeholder)
	if len(out.calls) != 2 {
		t.Fatalf("%d writes: %q", len(out.calls), out.calls)
	}
	if !bytes.Contains(out.calls[0], []byte(`"code":-32602`)) {
		t.Errorf("error response %q", out.calls[0])
	}
	if bytes.Contains(out.calls[1], jsonrpcio.Placeholder) || !bytes.Contains(out.calls[1], []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603`)) {
		t.Errorf("a placeholder without its frame was answered %q", out.calls[1])
	}
}

// A client reusing the id of a call still in flight gets the second call
// refused (see TestReusedIDRefused), never handed over, so that the first
// call's frame answers the first call alone; closing the connection
// forgets the calls.
func TestEncodedResultReusedID(t *testing.T) {
	out := &writes{}
	c, reqs := readAll(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}
{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"y"}}
{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x"}}
`, out)
	if len(reqs) != 2 || reqs[1].ID.Raw() != int64(8) {
		t.Fatalf("a call reusing an id in flight was handed over: %+v", reqs)
	}
	first := reqs[0].Extra.(*mcp.RequestExtra)
	if !jsonrpcio.EncodeResult(first, appendText(`{"n":1}`)) {
		t.Fatal("not taken")
	}
	respond(t, c, reqs[0].ID, jsonrpcio.Placeholder)
	if len(out.calls) != 2 || !bytes.Contains(out.calls[0], []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600`)) || !bytes.Contains(out.calls[1], []byte(`{"n":1}`)) {
		t.Errorf("writes %q", out.calls)
	}
	third := reqs[1].Extra.(*mcp.RequestExtra)
	_ = c.Close()
	if jsonrpcio.InPlace(third) {
		t.Error("a call of a closed connection is still pending")
	}
}
