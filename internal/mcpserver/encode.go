package mcpserver

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
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
	return marshalNoHTML(r.wireResult)
}

// marshalNoHTML is v encoded as the SDK encodes a result: encoding/json
// without HTML escaping.
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
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
			dst = appendJSONString(dst, c.Type)
			dst = append(dst, `,"text":`...)
			dst = appendJSONString(dst, c.Text)
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
	data, err := marshalNoHTML(v)
	if err != nil {
		return dst, false
	}
	return append(dst, data...), true
}

// appendSearchOutput appends s as encoding/json writes a searchOutput.
func appendSearchOutput(dst []byte, s *searchOutput) ([]byte, bool) {
	dst = append(dst, `{"query":`...)
	dst = appendJSONString(dst, s.Query)
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
	dst = appendJSONString(dst, h.Path)
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, int64(h.Line), 10)
	dst = append(dst, `,"end_line":`...)
	dst = strconv.AppendInt(dst, int64(h.EndLine), 10)
	dst = append(dst, `,"title":`...)
	dst = appendJSONString(dst, h.Title)
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
		data, err := marshalNoHTML(h.Explain)
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
		dst = appendJSONString(dst, s)
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it without HTML escaping: `"` and `\` escaped, control characters
// as \n, \r, \t, \b, \f or \u00XX, U+2028 and U+2029 as \u2028 and \u2029,
// each byte that is not UTF-8 as \ufffd; the rest as it is. Runs of
// printable ASCII are skipped eight bytes at a time.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && jsonSafe8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonSafe8 reports whether the eight bytes of s are all ASCII that a JSON
// string holds as it is: none with the high bit set, none below 0x20, no
// '"', no '\'.
func jsonSafe8(s string) bool {
	_ = s[7]
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// As in plainASCII8: without high bits in w no borrow crosses a byte.
	less20 := (w - 0x20*ones) &^ w
	quote := ((w ^ '"'*ones) - ones) &^ (w ^ '"'*ones)
	backslash := ((w ^ '\\'*ones) - ones) &^ (w ^ '\\'*ones)
	return (w|less20|quote|backslash)&highs == 0
}
