package mcpserver

import (
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
	"github.com/vaultmcp/vaultmcp/internal/jsonx"
)

// A tool answer over stdio is written by its own encoder, not by
// encoding/json.
//
// Even in one pass (wire.go), encoding/json spent on a search answer about
// as much as the rest of the server's share of the call: reflection over
// every field, the text escaped a byte at a time, its buffer grown by
// copies, and the whole again copied out. Over the stdio transport
// (jsonrpcio), a result that wireResult writes is written instead by
// appendWireResult, straight into the answer frame (jsonrpcio.EncodeResult):
// the text and the strings of vault_search's structured content escaped
// eight bytes at a time while they need no escape, numbers with strconv,
// the structured content of the other tools (and explanations) by
// encoding/json as before. The bytes are exactly those encoding/json writes
// for the wireResult (a test compares the two on every tool and on random
// strings, numbers and results), so a client sees no difference.

// inPlaceResult is a wireResult answering a call read by jsonrpcio: when the
// SDK marshals it, it writes its answer frame there and gives the SDK the
// placeholder the transport replaces by that frame.
type inPlaceResult struct {
	*wireResult
	extra *mcp.RequestExtra
}

// MarshalJSON writes the answer frame of the call, or encodes the result as
// the SDK would when the transport does not take it.
func (r *inPlaceResult) MarshalJSON() ([]byte, error) {
	if jsonrpcio.EncodeResult(r.extra, r.wireResult.appendJSON) {
		return jsonrpcio.Placeholder, nil
	}
	return jsonx.Marshal(r.wireResult)
}

// appendJSON appends w as encoding/json writes it (without HTML
// escaping); ok is false when it cannot (a number that is not finite,
// structured content encoding/json refuses): the SDK's encoding then
// reports it.
func (w *wireResult) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, '{')
	first := true
	member := func(name string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, `":`...)
	}
	if v := w.Meta.value(); v != nil {
		member("_meta")
		dst = append(dst, v...)
	}
	member("content")
	if w.Content == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, c := range w.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"type":`...)
			dst = jsonrpcio.AppendString(dst, c.Type)
			dst = append(dst, `,"text":`...)
			dst = jsonrpcio.AppendString(dst, c.Text)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if w.StructuredContent != nil {
		member("structuredContent")
		var ok bool
		if dst, ok = appendStructured(dst, w.StructuredContent); !ok {
			return dst, false
		}
	}
	if v := w.IsError.value(); v != nil {
		member("isError")
		dst = append(dst, v...)
	}
	if v := w.ResultType.value(); v != nil {
		member("resultType")
		dst = append(dst, v...)
	}
	return append(dst, '}'), true
}

// appendStructured appends v, structured content, as encoding/json writes
// it: vault_search's by hand, any other by encoding/json.
func appendStructured(dst []byte, v any) ([]byte, bool) {
	if s, ok := v.(*searchOutput); ok && s != nil {
		return appendSearchOutput(dst, s)
	}
	data, err := jsonx.Marshal(v)
	if err != nil {
		return dst, false
	}
	return append(dst, data...), true
}

// appendSearchOutput appends s as encoding/json writes a searchOutput.
func appendSearchOutput(dst []byte, s *searchOutput) ([]byte, bool) {
	dst = append(dst, `{"query":`...)
	dst = jsonrpcio.AppendString(dst, s.Query)
	dst = append(dst, `,"results":`...)
	if s.Results == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range s.Results {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendSearchHit(dst, &s.Results[i]); !ok {
				return dst, false
			}
		}
		dst = append(dst, ']')
	}
	if len(s.Suggestions) > 0 {
		dst = append(dst, `,"suggestions":`...)
		dst = appendStrings(dst, s.Suggestions)
	}
	if s.RawMatches {
		dst = append(dst, `,"raw_matches":true`...)
	}
	if len(s.Unindexed) > 0 {
		dst = append(dst, `,"unindexed":`...)
		dst = appendStrings(dst, s.Unindexed)
	}
	if s.UnindexedTotal != 0 {
		dst = append(dst, `,"unindexed_total":`...)
		dst = strconv.AppendInt(dst, int64(s.UnindexedTotal), 10)
	}
	return append(dst, '}'), true
}

// appendSearchHit appends h as encoding/json writes a searchHit.
func appendSearchHit(dst []byte, h *searchHit) ([]byte, bool) {
	dst = append(dst, `{"path":`...)
	dst = jsonrpcio.AppendString(dst, h.Path)
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, int64(h.Line), 10)
	dst = append(dst, `,"end_line":`...)
	dst = strconv.AppendInt(dst, int64(h.EndLine), 10)
	dst = append(dst, `,"title":`...)
	dst = jsonrpcio.AppendString(dst, h.Title)
	if len(h.Headings) > 0 {
		dst = append(dst, `,"headings":`...)
		dst = appendStrings(dst, h.Headings)
	}
	dst = append(dst, `,"score":`...)
	var ok bool
	if dst, ok = appendFloat(dst, h.Score); !ok {
		return dst, false
	}
	if h.ViaGraph {
		dst = append(dst, `,"via_graph":true`...)
	}
	if h.Fuzzy {
		dst = append(dst, `,"fuzzy":true`...)
	}
	if h.Truncated {
		dst = append(dst, `,"snippet_truncated":true`...)
	}
	if h.Explain != nil {
		dst = append(dst, `,"explain":`...)
		data, err := jsonx.Marshal(h.Explain)
		if err != nil {
			return dst, false
		}
		dst = append(dst, data...)
	}
	return append(dst, '}'), true
}

// appendStrings appends a non-nil list of strings.
func appendStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpcio.AppendString(dst, s)
	}
	return append(dst, ']')
}

// appendFloat appends f as encoding/json writes a float64 (ES6 number
// formatting); ok is false for NaN and the infinities, which it refuses.
func appendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}
