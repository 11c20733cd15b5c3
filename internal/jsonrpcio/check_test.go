package jsonrpcio_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio/frametest"
)

// Every malformed frame gets the code and id it must, with a one-line message.
func TestCheckMalformed(t *testing.T) {
	for _, tc := range frametest.Malformed() {
		if tc.Frame == nil {
			continue // the oversized frame is the reader's: TestOversizedFrame
		}
		_, err := jsonrpcio.Check(tc.Frame)
		if err == nil {
			t.Errorf("%s: accepted %q", tc.Name, tc.Frame)
			continue
		}
		id := "null"
		if err.ID != nil {
			id = string(err.ID)
		}
		if err.Code != tc.Code || id != tc.ID || err.Message == "" || strings.ContainsAny(err.Message, "\n\r\x00") {
			t.Errorf("%s: got %d %q id %s, want %d id %s", tc.Name, err.Code, err.Message, id, tc.Code, tc.ID)
		}
	}
}

// Valid frames pass, with the kind they are, and the SDK decodes every one.
func TestCheckValid(t *testing.T) {
	for _, tc := range []struct {
		frame string
		kind  jsonrpcio.Kind
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, jsonrpcio.Call},
		{`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"vault_search","arguments":{"query":"retry backoff"}}}`, jsonrpcio.Call},
		{`  {"method":"ping","id":0,"jsonrpc":"2.0"}` + " \r", jsonrpcio.Call},
		{`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, jsonrpcio.Call},
		{`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, jsonrpcio.Call},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, jsonrpcio.Call},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2.5e-3,true,false,null,"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"]}`, jsonrpcio.Call},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"q":"naïve 日本語 😀"}}`, jsonrpcio.Call},
		{`{"jsonrpc":"2.0","id":1,"method":"x","extra":{"ignored":[]}}`, jsonrpcio.Call},
		{`{"\u006aSONrpc":"x","jsonrpc":"\u0032.0","id":1,"method":"ping"}`, jsonrpcio.Call},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, jsonrpcio.Notification},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`, jsonrpcio.Notification},
		{`{"jsonrpc":"2.0","id":5,"result":{}}`, jsonrpcio.Response},
		{`{"jsonrpc":"2.0","id":"s","error":{"code":-32601,"message":"no","data":{"x":1}}}`, jsonrpcio.Response},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, jsonrpcio.Unattributed},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", jsonrpcio.MaxDepth-2) + strings.Repeat("]", jsonrpcio.MaxDepth-2) + `}}`, jsonrpcio.Call},
	} {
		kind, err := jsonrpcio.Check([]byte(tc.frame))
		if err != nil || kind != tc.kind {
			t.Errorf("%s: kind %d err %v, want kind %d", tc.frame, kind, err, tc.kind)
			continue
		}
		if kind != jsonrpcio.Unattributed {
			if _, err := jsonrpc.DecodeMessage([]byte(tc.frame)); err != nil {
				t.Errorf("%s: the SDK refuses it: %v", tc.frame, err)
			}
		}
	}
}

// The nesting bound is exactly MaxDepth levels, objects and arrays alike.
func TestCheckDepthBound(t *testing.T) {
	frame := func(levels int) []byte {
		// The envelope is one level, params and what it holds the others.
		inner := strings.Repeat(`{"a":`, levels-1) + "1" + strings.Repeat("}", levels-1)
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":` + inner + `}`)
	}
	if _, err := jsonrpcio.Check(frame(jsonrpcio.MaxDepth)); err != nil {
		t.Errorf("%d levels refused: %v", jsonrpcio.MaxDepth, err)
	}
	if _, err := jsonrpcio.Check(frame(jsonrpcio.MaxDepth + 1)); err == nil || err.Code != jsonrpcio.CodeParseError || !strings.Contains(err.Message, "nesting") {
		t.Errorf("%d levels: %v", jsonrpcio.MaxDepth+1, err)
	}
}

// The scan agrees with encoding/json on what is JSON, and everything it
// lets through the SDK decodes (or the transport answers it: see frame).
func FuzzCheck(f *testing.F) {
	for _, tc := range frametest.Malformed() {
		if tc.Frame != nil {
			f.Add(tc.Frame)
		}
	}
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"result":{"a":[1,{}]}}`, `[1,"a",{"b":null}]`, `-0.5e+7`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, err := jsonrpcio.Check(b)
		valid := json.Valid(b) && utf8.Valid(b)
		switch {
		case !json.Valid(b) && (err == nil || err.Code != jsonrpcio.CodeParseError):
			t.Fatalf("not JSON but %v / %v: %q", kind, err, b)
		case valid && err != nil && err.Code == jsonrpcio.CodeParseError && !strings.Contains(err.Message, "nesting"):
			t.Fatalf("JSON but a parse error %q: %q", err.Message, b)
		case err != nil && (err.Message == "" || strings.ContainsAny(err.Message, "\n\r")):
			t.Fatalf("message %q", err.Message)
		case err != nil && err.ID != nil && !json.Valid(err.ID):
			t.Fatalf("answer id %q is not JSON", err.ID)
		}
		if err == nil && kind == jsonrpcio.Call {
			msg, derr := jsonrpc.DecodeMessage(b)
			if derr != nil {
				t.Fatalf("a call the SDK refuses: %v: %q", derr, b)
			}
			if r, ok := msg.(*jsonrpc.Request); !ok || !r.IsCall() {
				t.Fatalf("a call decoded as %T: %q", msg, b)
			}
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"vault_search","arguments":{"query":"retry backoff with jitter","limit":6},"_meta":{"progressToken":42}}}`)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpcio.Check(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// Decode builds exactly the message the SDK's own decoder builds, for every
// frame it accepts.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a\u00e9\ud800x","method":"tools/call","params":{"name":"vault_search","arguments":{"query":"q"}}}`,
		`{"jsonrpc":"2.0","id":-0,"method":"m\"x","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":[ 1 , 2 ]}`,
		`{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}`,
		`{"jsonrpc":"2.0","id":"r","error":{"code":-1,"message":"no","data":[1]}}`,
		`{"jsonrpc":"2.0","id":9007199254740991,"method":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, kind, err := jsonrpcio.Decode(b)
		if err != nil || kind == jsonrpcio.Unattributed {
			return
		}
		want, werr := jsonrpc.DecodeMessage(b)
		if werr != nil {
			t.Fatalf("Decode accepts what the SDK refuses (%v): %q", werr, b)
		}
		switch w := want.(type) {
		case *jsonrpc.Request:
			g, ok := got.(*jsonrpc.Request)
			if !ok || g.ID != w.ID || g.Method != w.Method || !bytes.Equal(g.Params, w.Params) || (g.Params == nil) != (w.Params == nil) {
				t.Fatalf("decoded %#v, the SDK %#v: %q", got, want, b)
			}
		case *jsonrpc.Response:
			g, ok := got.(*jsonrpc.Response)
			if !ok || g.ID != w.ID || !bytes.Equal(g.Result, w.Result) || fmt.Sprint(g.Error) != fmt.Sprint(w.Error) {
				t.Fatalf("decoded %#v, the SDK %#v: %q", got, want, b)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"vault_search","arguments":{"query":"retry backoff with jitter","limit":6},"_meta":{"progressToken":42}}}`)
	b.Run("jsonrpcio", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := jsonrpcio.Decode(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
}
