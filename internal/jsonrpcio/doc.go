// Package jsonrpcio frames newline-delimited JSON-RPC 2.0 for the MCP stdio
// transport so that no frame a client sends can stop the server.
//
// Guarantees, each proven by the package's tests:
//
//   - Any byte sequence on the input is survived: the connection ends only when
//     the input ends (or fails to read) or the output fails to write, never
//     because of what a frame contains.
//   - A frame is one line. A valid JSON-RPC 2.0 request, notification or
//     response object is handed to the MCP SDK unchanged: as the very
//     message the SDK's own decoder makes of it (a fuzz test compares the
//     two). Every other non-blank line is answered on the
//     output with the error the JSON-RPC 2.0 specification names, and the
//     next line is read:
//     parse error -32700 for bytes that are not one JSON value: garbage, a
//     NUL byte, a control character inside a string, invalid UTF-8, bytes
//     after the value, nesting deeper than [MaxDepth], a frame over
//     [MaxFrame];
//     invalid request -32600 for JSON that is not a request object: a bare
//     number, string, true, false or null, an array (a batch, empty or not:
//     batches are refused, since MCP 2025-06-18 removed JSON-RPC batching),
//     "jsonrpc" missing or not "2.0", an id that is not a string or an
//     integer of at most 2^53-1 in magnitude (an object, an array, a bool, a
//     fraction, 1e400, null: MCP forbids null ids), a method that is not a
//     string, params that are not an object or an array, a member named
//     twice, a response without an id or with both result and error, an
//     object with neither method nor result nor error, a call whose id is
//     that of a call still in progress (the SDK would drop it unanswered).
//     The error carries the request's id when the id itself was valid (and
//     not in use), and null otherwise. Blank lines are skipped.
//   - A JSON-RPC error response whose id is null (the peer reporting an error
//     it could not attribute) is valid but belongs to no call: it is logged
//     and dropped, never answered, so two peers cannot answer each other's
//     errors forever.
//   - Memory is bounded: a frame is held whole only up to [MaxFrame] bytes;
//     past that its bytes are discarded as they arrive, up to the next
//     newline, and the frame is answered with a parse error.
//   - Frames never interleave on the output: the layer's answers and the
//     SDK's messages go through one writer that writes each frame, newline
//     included, in one call under a mutex.
//
// How: one goroutine reads lines with a bufio.Reader and validates each
// with a single hand-written scan (Check: JSON syntax, UTF-8, depth and the
// JSON-RPC envelope, without building any value). A request is then built
// from the member spans the scan found (Decode), so a frame is read once;
// the rare response goes through the SDK's decoder. Per frame this costs
// about a twentieth of what the SDK's own IOTransport spends decoding
// (BenchmarkReadFrame).
//
// Output: a successful response is written as the SDK would write it, byte
// for byte (a test compares the two), but its envelope is put around the
// SDK's encoded result here instead of by jsonrpc.EncodeMessage, which
// validates and compacts the whole result once more: for a 16 kB search
// answer that pass cost about 200 µs, the envelope here under 1 µs
// (BenchmarkWriteResult). A tools/call result that can encode itself does
// not go through encoding/json at all: it writes its whole answer frame
// here while the SDK marshals it (EncodeResult, encoded.go) and the frame is
// written as it is, in one Write. Every other message goes through
// EncodeMessage.
//
// Decisions: batches are refused, not answered element by element; invalid
// UTF-8 is a parse error (RFC 8259 requires UTF-8; the SDK would silently
// replace it); a member named twice is an invalid request (decoders
// disagree on which one counts); extra top-level members are ignored, as
// the SDK ignores them.
package jsonrpcio
