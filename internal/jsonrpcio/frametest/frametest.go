// Package frametest holds the malformed JSON-RPC frames that the stdio
// server must answer and survive, shared by the tests of package jsonrpcio
// and the end-to-end tests of the vaultmcp binary.
package frametest

import (
	"bytes"
	"io"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
)

// Case is one malformed frame and the answer it must get.
type Case struct {
	Name string
	// Frame is the line, newline excluded; nil when Write is set.
	Frame []byte
	// Write writes a frame too large to hold in a test (newline excluded)
	// and returns its length.
	Write func(w io.Writer) (int64, error)
	// Code is the JSON-RPC error code of the answer.
	Code jsonrpcio.Code
	// ID is the id the answer carries, as JSON: null, 1, "a".
	ID string
}

const (
	parse   = jsonrpcio.CodeParseError
	invalid = jsonrpcio.CodeInvalidRequest
)

// OversizeBytes is the length of the oversized frame of Malformed: 16
// times the bound (256 MiB), so that holding it would show in memory far
// above what reading up to the bound costs.
const OversizeBytes = 16*jsonrpcio.MaxFrame + 12345

// Malformed returns every kind of malformed frame, the 15 of the issue that
// found the server dying on them first.
func Malformed() []Case {
	deep := strings.Repeat("[", jsonrpcio.MaxDepth+1) + strings.Repeat("]", jsonrpcio.MaxDepth+1)
	cases := []Case{
		// The kinds named in issue 9.
		{Name: "garbage line", Frame: []byte("hello, is this the server?"), Code: parse, ID: "null"},
		{Name: "NUL byte between members", Frame: []byte("{\"jsonrpc\":\"2.0\",\x00\"id\":1,\"method\":\"ping\"}"), Code: parse, ID: "null"},
		{Name: "trailing bytes after the object", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"} x`), Code: parse, ID: "null"},
		{Name: "empty array", Frame: []byte(`[]`), Code: invalid, ID: "null"},
		{Name: "batch", Frame: []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`), Code: invalid, ID: "null"},
		{Name: "bare number", Frame: []byte(`42`), Code: invalid, ID: "null"},
		{Name: "bare string", Frame: []byte(`"ping"`), Code: invalid, ID: "null"},
		{Name: "null", Frame: []byte(`null`), Code: invalid, ID: "null"},
		{Name: "jsonrpc missing", Frame: []byte(`{"id":1,"method":"ping"}`), Code: invalid, ID: "1"},
		{Name: `jsonrpc "1.0"`, Frame: []byte(`{"jsonrpc":"1.0","id":1,"method":"ping"}`), Code: invalid, ID: "1"},
		{Name: "object id", Frame: []byte(`{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "1e400 id", Frame: []byte(`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "numeric method", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":42}`), Code: invalid, ID: "1"},
		{Name: "nesting deeper than 1,000", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + deep + `}}`), Code: parse, ID: "null"},
		{Name: "frame over 16 MiB", Write: writeOversize, Code: parse, ID: "null"},

		// The other ways to get JSON wrong.
		{Name: "NUL byte in a string", Frame: []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x00ng\"}"), Code: parse, ID: "null"},
		{Name: "two objects on one line", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`), Code: parse, ID: "null"},
		{Name: "cut frame", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"`), Code: parse, ID: "null"},
		{Name: "trailing comma", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping",}`), Code: parse, ID: "null"},
		{Name: "single quotes", Frame: []byte(`{'jsonrpc':'2.0','id':1,'method':'ping'}`), Code: parse, ID: "null"},
		{Name: "invalid UTF-8", Frame: []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"q\":\"\xff\xfe\"}}"), Code: parse, ID: "null"},
		{Name: "raw control character in a string", Frame: []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"q\":\"a\x01b\"}}"), Code: parse, ID: "null"},
		{Name: "invalid escape", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":"\x41"}}`), Code: parse, ID: "null"},

		// Valid JSON that is not a JSON-RPC request.
		{Name: "bare true", Frame: []byte(`true`), Code: invalid, ID: "null"},
		{Name: "empty object", Frame: []byte(`{}`), Code: invalid, ID: "null"},
		{Name: "jsonrpc a number", Frame: []byte(`{"jsonrpc":2.0,"id":1,"method":"ping"}`), Code: invalid, ID: "1"},
		{Name: "array id", Frame: []byte(`{"jsonrpc":"2.0","id":[1],"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "bool id", Frame: []byte(`{"jsonrpc":"2.0","id":true,"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "fractional id", Frame: []byte(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "id beyond 2^53", Frame: []byte(`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "null id on a request", Frame: []byte(`{"jsonrpc":"2.0","id":null,"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "method null", Frame: []byte(`{"jsonrpc":"2.0","id":"m","method":null}`), Code: invalid, ID: `"m"`},
		{Name: "params a string", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`), Code: invalid, ID: "1"},
		{Name: "id given twice", Frame: []byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`), Code: invalid, ID: "null"},
		{Name: "request with a result", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`), Code: invalid, ID: "1"},
		{Name: "no method, result or error", Frame: []byte(`{"jsonrpc":"2.0","id":1}`), Code: invalid, ID: "1"},
		{Name: "response with result and error", Frame: []byte(`{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}`), Code: invalid, ID: "7"},
		{Name: "response without id", Frame: []byte(`{"jsonrpc":"2.0","result":{}}`), Code: invalid, ID: "null"},
		{Name: "error a string", Frame: []byte(`{"jsonrpc":"2.0","id":7,"error":"boom"}`), Code: invalid, ID: "7"},
		{Name: "error code a string", Frame: []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":"x","message":"m"}}`), Code: invalid, ID: "7"},
	}
	return cases
}

// Odd returns valid frames that get no answer and must not disturb the
// server: a blank line, a response to no call, an error response with id
// null.
func Odd() [][]byte {
	return [][]byte{
		[]byte(""),
		[]byte("   \t\r"),
		[]byte(`{"jsonrpc":"2.0","id":424242,"result":{}}`),
		[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/unknown","params":{}}`),
	}
}

// writeOversize writes OversizeBytes of one JSON string, 1 MiB at a time.
func writeOversize(w io.Writer) (int64, error) {
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	head := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":"`)
	n, err := w.Write(head)
	total := int64(n)
	for err == nil && total < OversizeBytes {
		c := chunk
		if rest := OversizeBytes - total; rest < int64(len(c)) {
			c = c[:rest]
		}
		n, err = w.Write(c)
		total += int64(n)
	}
	return total, err
}
