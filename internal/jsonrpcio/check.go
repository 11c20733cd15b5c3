package jsonrpcio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Code is a JSON-RPC 2.0 error code this layer answers with.
type Code int

// The JSON-RPC 2.0 error codes of malformed frames.
const (
	CodeParseError     Code = -32700
	CodeInvalidRequest Code = -32600
	// CodeInternalError answers a call whose result was lost (encoded.go).
	CodeInternalError Code = -32603
)

const (
	// MaxFrame is the largest frame, newline excluded, that is read: 16 MiB.
	// A longer one is discarded as it arrives and answered with a parse
	// error.
	MaxFrame = 16 << 20
	// MaxDepth is the deepest nesting of objects and arrays accepted (the
	// SDK's own decoder refuses deeper input).
	MaxDepth = 1000
	// maxSafeID is the largest integer id magnitude accepted: the SDK
	// decodes ids through float64, which holds integers exactly only up to
	// 2^53-1, so a larger id would be answered with a different one.
	maxSafeID = 1<<53 - 1
)

// Error is the answer a malformed frame gets.
type Error struct {
	Code Code
	// Message is one line naming what is wrong and where.
	Message string
	// ID is the frame's id as raw JSON (a string or an integer) when it was
	// valid; nil answers with id null.
	ID []byte
}

func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC %d)", e.Message, e.Code) }

// Kind says what a valid frame is.
type Kind int

const (
	// Call is a request with an id: it gets a response.
	Call Kind = iota + 1
	// Notification is a request without an id.
	Notification
	// Response answers one of the SDK's own calls.
	Response
	// Unattributed is a valid error response with id null: it answers no
	// call, so it is logged and dropped.
	Unattributed
)

// valueKind is the JSON type of a scanned value.
type valueKind uint8

const (
	kNone valueKind = iota
	kObject
	kArray
	kString
	kNumber
	kTrue
	kFalse
	kNull
)

func (k valueKind) String() string {
	return [...]string{"nothing", "an object", "an array", "a string", "a number", "true", "false", "null"}[k]
}

// span is one member value of the top-level object.
type span struct {
	start, end int
	kind       valueKind
	// integer: a number without fraction or exponent; escaped: a string
	// with a backslash escape.
	integer, escaped bool
}

func (s span) present() bool { return s.kind != kNone }

// scanner validates one frame. Its methods return false after recording
// the first error in err.
type scanner struct {
	b   []byte
	i   int
	err *Error
}

func (s *scanner) fail(code Code, format string, args ...any) bool {
	if s.err == nil {
		s.err = &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	}
	return false
}

// Check validates one frame (a line without its newline) in a single scan
// and says what it is, or returns the error it must be answered with.
func Check(frame []byte) (Kind, *Error) {
	kind, _, err := scan(frame)
	return kind, err
}

func scan(frame []byte) (Kind, *envelope, *Error) {
	env, err := scanEnvelope(frame)
	if err != nil {
		return 0, nil, err
	}
	kind, err := env.check(frame)
	return kind, env, err
}

func scanEnvelope(frame []byte) (*envelope, *Error) {
	s := scanner{b: frame}
	s.ws()
	if s.i == len(s.b) {
		return nil, &Error{Code: CodeParseError, Message: "parse error: empty frame"}
	}
	if s.b[s.i] != '{' {
		kind, ok := s.value(0)
		if ok {
			s.trailing()
		}
		if s.err != nil {
			return nil, s.err
		}
		if kind == kArray {
			if len(trimSpace(frame)) == 2 {
				return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}
			}
			return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: batches are not supported (MCP 2025-06-18 removed JSON-RPC batching); send one request a line"}
		}
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: the frame is " + kind.String() + ", not a request object"}
	}
	env := new(envelope)
	if s.object(0, env) {
		s.trailing()
	}
	if s.err != nil {
		return nil, s.err
	}
	return env, nil
}

// Decode validates a frame as Check does and returns the message the SDK
// would decode from it. A request (the hot path) is built from the spans
// the scan found, without a second pass of a JSON decoder; a response is
// decoded by the SDK.
func Decode(frame []byte) (jsonrpc.Message, Kind, *Error) {
	kind, env, ferr := scan(frame)
	if ferr != nil || kind == Unattributed {
		return nil, kind, ferr
	}
	if kind == Response {
		msg, err := jsonrpc.DecodeMessage(frame)
		if err != nil {
			// A response the scan let through and the SDK refuses.
			return nil, 0, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error(), ID: frame[env.id.start:env.id.end]}
		}
		return msg, kind, nil
	}
	req := &jsonrpc.Request{Method: stringValue(frame, env.method)}
	if kind == Call {
		raw := frame[env.id.start:env.id.end]
		var v any
		if env.id.kind == kString {
			v = stringValue(frame, env.id)
		} else {
			n, _ := strconv.ParseInt(string(raw), 10, 64) // a safe integer: checked
			v = float64(n)
		}
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			return nil, 0, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error()}
		}
		req.ID = id
	}
	if env.params.present() {
		req.Params = bytes.Clone(frame[env.params.start:env.params.end])
	}
	return req, kind, nil
}

// stringValue is the string at sp, unescaped.
func stringValue(b []byte, sp span) string {
	raw := b[sp.start:sp.end]
	if !sp.escaped {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid: scanned
	return s
}

// envelope holds the members of the top-level object that JSON-RPC defines.
type envelope struct {
	jsonrpc, id, method, params, result, error span
	// dup names a member given twice.
	dup string
	// sub: this is a response's error object, with its code and message.
	sub           bool
	code, message span
}

func (e *envelope) check(b []byte) (Kind, *Error) {
	invalid := func(id []byte, format string, args ...any) (Kind, *Error) {
		return 0, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...), ID: id}
	}
	if e.dup != "" {
		// Which of the two counts is anyone's guess: answer with id null.
		return invalid(nil, "member %q given twice", e.dup)
	}
	// The id first, so that the other errors can carry it.
	var id []byte
	nullID := false
	if e.id.present() {
		switch {
		case e.id.kind == kString:
			id = b[e.id.start:e.id.end]
		case e.id.kind == kNumber && e.id.integer && safeInteger(b[e.id.start:e.id.end]):
			id = b[e.id.start:e.id.end]
		case e.id.kind == kNumber && e.id.integer:
			return invalid(nil, "id %s is beyond 2^53-1 in magnitude", b[e.id.start:e.id.end])
		case e.id.kind == kNumber:
			return invalid(nil, "id %s is not an integer", clip(b[e.id.start:e.id.end]))
		case e.id.kind == kNull:
			nullID = true
		default:
			return invalid(nil, "id must be a string or an integer, not %s", e.id.kind)
		}
	}
	switch {
	case !e.jsonrpc.present():
		return invalid(id, `jsonrpc is missing; it must be "2.0"`)
	case e.jsonrpc.kind != kString:
		return invalid(id, `jsonrpc must be the string "2.0", not %s`, e.jsonrpc.kind)
	case !e.isString(b, e.jsonrpc, "2.0"):
		return invalid(id, `jsonrpc must be "2.0", not %s`, clip(b[e.jsonrpc.start:e.jsonrpc.end]))
	}
	if e.method.present() {
		switch {
		case e.method.kind != kString:
			return invalid(id, "method must be a string, not %s", e.method.kind)
		case nullID:
			return invalid(nil, "id must not be null (MCP); omit it for a notification")
		case e.result.present() || e.error.present():
			return invalid(id, "a request carries no result or error")
		case e.params.present() && e.params.kind != kObject && e.params.kind != kArray && e.params.kind != kNull:
			return invalid(id, "params must be an object or an array, not %s", e.params.kind)
		}
		if e.id.present() {
			return Call, nil
		}
		return Notification, nil
	}
	switch {
	case !e.result.present() && !e.error.present():
		return invalid(id, "no method, result or error")
	case e.result.present() && e.error.present():
		return invalid(id, "a response carries result or error, not both")
	case e.error.present() && e.error.kind != kObject:
		return invalid(id, "error must be an object, not %s", e.error.kind)
	case e.error.present() && !errorObject(b[e.error.start:e.error.end]):
		return invalid(id, "error needs an integer code and a string message")
	case !e.id.present():
		return invalid(nil, "a response needs an id")
	case nullID && e.result.present():
		return invalid(nil, "a result needs an id, not null")
	case nullID:
		return Unattributed, nil
	}
	return Response, nil
}

// errorObject reports whether a response's error object (valid JSON) has
// what the SDK decodes: code an integer, message a string (either may be
// null or absent, as the SDK allows).
func errorObject(obj []byte) bool {
	e := envelope{sub: true}
	s := scanner{b: obj}
	if !s.object(1, &e) || e.dup != "" {
		return false
	}
	codeOK := !e.code.present() || e.code.kind == kNull || e.code.kind == kNumber && e.code.integer && int64Literal(obj[e.code.start:e.code.end])
	messageOK := !e.message.present() || e.message.kind == kNull || e.message.kind == kString
	return codeOK && messageOK
}

func int64Literal(lit []byte) bool {
	_, err := strconv.ParseInt(string(lit), 10, 64)
	return err == nil
}

// isString reports whether the string value at sp is want.
func (e *envelope) isString(b []byte, sp span, want string) bool {
	raw := b[sp.start:sp.end]
	if !sp.escaped {
		return string(raw[1:len(raw)-1]) == want
	}
	var got string
	return json.Unmarshal(raw, &got) == nil && got == want
}

// safeInteger reports whether the integer literal fits in ±(2^53-1).
func safeInteger(lit []byte) bool {
	digits := lit
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 16 {
		return false
	}
	n, err := strconv.ParseUint(string(digits), 10, 64)
	return err == nil && n <= maxSafeID
}

// clip bounds a client's bytes quoted in a message.
func clip(b []byte) string {
	const n = 40
	if len(b) >= 2 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	if len(b) > n {
		return strconv.QuoteToASCII(string(b[:n])) + "…"
	}
	return strconv.QuoteToASCII(string(b))
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (s *scanner) ws() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

func (s *scanner) trailing() bool {
	s.ws()
	if s.i < len(s.b) {
		return s.fail(CodeParseError, "parse error: bytes after the JSON value at byte %d", s.i)
	}
	return true
}

// unexpected records a parse error for the byte at s.i (or the end).
func (s *scanner) unexpected(what string) bool {
	if s.i >= len(s.b) {
		return s.fail(CodeParseError, "parse error: the frame ends inside %s", what)
	}
	c := s.b[s.i]
	switch {
	case c == 0:
		return s.fail(CodeParseError, "parse error: NUL byte at byte %d", s.i)
	case c < 0x20 || c >= 0x7f:
		return s.fail(CodeParseError, "parse error: unexpected byte 0x%02x at byte %d in %s", c, s.i, what)
	}
	return s.fail(CodeParseError, "parse error: unexpected %q at byte %d in %s", c, s.i, what)
}

// value scans one JSON value at depth (the number of enclosing containers).
func (s *scanner) value(depth int) (valueKind, bool) {
	if s.i >= len(s.b) {
		return kNone, s.unexpected("a value")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return kObject, s.object(depth, nil)
	case c == '[':
		return kArray, s.array(depth)
	case c == '"':
		_, ok := s.str()
		return kString, ok
	case c == '-' || c >= '0' && c <= '9':
		_, ok := s.number()
		return kNumber, ok
	case c == 't':
		return kTrue, s.literal("true")
	case c == 'f':
		return kFalse, s.literal("false")
	case c == 'n':
		return kNull, s.literal("null")
	}
	return kNone, s.unexpected("a value")
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	for k := 0; k < len(lit) && s.i < len(s.b) && s.b[s.i] == lit[k]; k++ {
		s.i++
	}
	return s.unexpected("the literal " + lit)
}

func (s *scanner) enter(depth int) bool {
	if depth+1 > MaxDepth {
		return s.fail(CodeParseError, "parse error: nesting deeper than %d at byte %d", MaxDepth, s.i)
	}
	return true
}

// object scans an object; when env is set (the top level, or an error
// object) the members it knows are recorded in it.
func (s *scanner) object(depth int, env *envelope) bool {
	if !s.enter(depth) {
		return false
	}
	s.i++ // '{'
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.unexpected("an object (a member name)")
		}
		keyStart := s.i
		escaped, ok := s.str()
		if !ok {
			return false
		}
		keyEnd := s.i
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.unexpected("an object (':' after a member name)")
		}
		s.i++
		s.ws()
		start := s.i
		var integer bool
		var vEscaped bool
		var kind valueKind
		if env != nil && s.i < len(s.b) {
			// Scan the value here to learn what a member needs.
			switch c := s.b[s.i]; {
			case c == '"':
				kind = kString
				vEscaped, ok = s.str()
			case c == '-' || c >= '0' && c <= '9':
				kind = kNumber
				integer, ok = s.number()
			default:
				kind, ok = s.value(depth + 1)
			}
		} else {
			kind, ok = s.value(depth + 1)
		}
		if !ok {
			return false
		}
		if env != nil {
			env.member(s.b[keyStart:keyEnd], escaped, span{start: start, end: s.i, kind: kind, integer: integer, escaped: vEscaped})
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.unexpected("an object")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return true
		default:
			return s.unexpected("an object (',' or '}')")
		}
	}
}

// member records a member the envelope knows: at the top level the
// JSON-RPC members, in an error object (sub) its code and message.
func (e *envelope) member(rawKey []byte, escaped bool, v span) {
	name := rawKey[1 : len(rawKey)-1]
	if escaped {
		var key string
		if json.Unmarshal(rawKey, &key) != nil {
			return
		}
		name = []byte(key)
	}
	slot := e.slot(name)
	if slot == nil {
		return
	}
	if slot.present() && e.dup == "" {
		e.dup = string(name)
	}
	*slot = v
}

func (e *envelope) slot(name []byte) *span {
	if e.sub {
		switch string(name) {
		case "code":
			return &e.code
		case "message":
			return &e.message
		}
		return nil
	}
	switch string(name) {
	case "jsonrpc":
		return &e.jsonrpc
	case "id":
		return &e.id
	case "method":
		return &e.method
	case "params":
		return &e.params
	case "result":
		return &e.result
	case "error":
		return &e.error
	}
	return nil
}

func (s *scanner) array(depth int) bool {
	if !s.enter(depth) {
		return false
	}
	s.i++ // '['
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if _, ok := s.value(depth + 1); !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.unexpected("an array")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return true
		default:
			return s.unexpected("an array (',' or ']')")
		}
	}
}

// plain marks the bytes a string holds as they are: printable ASCII other
// than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str scans a string and reports whether it holds an escape.
func (s *scanner) str() (escaped, ok bool) {
	start := s.i
	s.i++ // '"'
	b := s.b
	for {
		i := s.i
		for i < len(b) && plain[b[i]] {
			i++
		}
		s.i = i
		if i >= len(b) {
			s.i = start
			return escaped, s.fail(CodeParseError, "parse error: string at byte %d is not closed", start)
		}
		switch c := b[i]; {
		case c == '"':
			s.i++
			return escaped, true
		case c == '\\':
			escaped = true
			if !s.escape() {
				return escaped, false
			}
		case c == 0:
			return escaped, s.fail(CodeParseError, "parse error: NUL byte at byte %d in a string", i)
		case c < 0x20:
			return escaped, s.fail(CodeParseError, "parse error: control character 0x%02x at byte %d in a string (must be escaped)", c, i)
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return escaped, s.fail(CodeParseError, "parse error: invalid UTF-8 at byte %d", i)
			}
			s.i += size
		}
	}
}

func (s *scanner) escape() bool {
	at := s.i
	s.i++ // '\\'
	if s.i >= len(s.b) {
		return s.fail(CodeParseError, "parse error: string escape at byte %d is cut", at)
	}
	switch s.b[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i++
		return true
	case 'u':
		if len(s.b)-s.i < 5 {
			return s.fail(CodeParseError, "parse error: \\u escape at byte %d is cut", at)
		}
		for _, h := range s.b[s.i+1 : s.i+5] {
			if !isHex(h) {
				return s.fail(CodeParseError, "parse error: \\u escape at byte %d needs 4 hex digits", at)
			}
		}
		s.i += 5
		return true
	}
	return s.fail(CodeParseError, "parse error: invalid escape at byte %d", at)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number scans a number and reports whether it is an integer (no fraction,
// no exponent).
func (s *scanner) number() (integer, ok bool) {
	b := s.b
	if b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case s.i < len(b) && b[s.i] >= '1' && b[s.i] <= '9':
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
		}
	default:
		return false, s.unexpected("a number")
	}
	integer = true
	if s.i < len(b) && b[s.i] == '.' {
		integer = false
		s.i++
		if s.i >= len(b) || b[s.i] < '0' || b[s.i] > '9' {
			return false, s.unexpected("a number (digits after '.')")
		}
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		integer = false
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if s.i >= len(b) || b[s.i] < '0' || b[s.i] > '9' {
			return false, s.unexpected("a number (exponent digits)")
		}
		for s.i < len(b) && b[s.i] >= '0' && b[s.i] <= '9' {
			s.i++
		}
	}
	return integer, true
}
