package teamserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// The extension endpoints, POST /api/projects/{p}/{op}: every operation of
// the vault service, taking the internal/api request type as JSON and
// answering its result type, so that every MCP tool works against the
// server exactly as it does locally.

// extOp is one extension endpoint.
type extOp struct {
	write bool
	// run decodes the request (unknown fields refused), runs it, and
	// returns the result and, for a write, its api.WriteResult; canon is
	// the request re-encoded, for the idempotency fingerprint.
	run func(ctx context.Context, svc *vault.Service, body []byte) (result any, res *api.WriteResult, canon []byte, err error)
	// decode only decodes (to refuse a bad request before any record).
	decode func(body []byte) ([]byte, error)
}

func ext[Req any, Res any](write bool, method func(*vault.Service) func(context.Context, Req) (Res, error), wr func(Res) *api.WriteResult) extOp {
	decode := func(body []byte) (Req, []byte, error) {
		var req Req
		if err := decodeStrict(body, &req); err != nil {
			return req, nil, err
		}
		canon, err := json.Marshal(req)
		return req, canon, err
	}
	return extOp{
		write: write,
		decode: func(body []byte) ([]byte, error) {
			_, canon, err := decode(body)
			return canon, err
		},
		run: func(ctx context.Context, svc *vault.Service, body []byte) (any, *api.WriteResult, []byte, error) {
			req, canon, err := decode(body)
			if err != nil {
				return nil, nil, nil, badBody{err}
			}
			res, err := method(svc)(ctx, req)
			if err != nil {
				return nil, nil, canon, err
			}
			var w *api.WriteResult
			if wr != nil {
				w = wr(res)
			}
			return res, w, canon, nil
		},
	}
}

func plain(r *api.WriteResult) *api.WriteResult   { return r }
func learned(r *api.LearnResult) *api.WriteResult { return &r.WriteResult }
func noWrite[T any](T) *api.WriteResult           { return nil }
func sortedNames(m map[string]extOp) (names []string) {
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var extOps = map[string]extOp{
	"search": ext(false, func(s *vault.Service) func(context.Context, api.SearchRequest) (*api.SearchResult, error) {
		return s.Search
	}, noWrite[*api.SearchResult]),
	"note": ext(false, func(s *vault.Service) func(context.Context, api.NoteRequest) (*api.Note, error) { return s.GetNote }, noWrite[*api.Note]),
	"list": ext(false, func(s *vault.Service) func(context.Context, api.ListRequest) (*api.ListResult, error) { return s.List }, noWrite[*api.ListResult]),
	"backlinks": ext(false, func(s *vault.Service) func(context.Context, api.BacklinksRequest) (*api.BacklinksResult, error) {
		return s.Backlinks
	}, noWrite[*api.BacklinksResult]),
	"graph": ext(false, func(s *vault.Service) func(context.Context, api.GraphRequest) (*api.GraphResult, error) {
		return s.Graph
	}, noWrite[*api.GraphResult]),
	"history": ext(false, func(s *vault.Service) func(context.Context, api.HistoryRequest) (*api.HistoryResult, error) {
		return s.History
	}, noWrite[*api.HistoryResult]),
	"write": ext(true, func(s *vault.Service) func(context.Context, api.WriteRequest) (*api.WriteResult, error) {
		return s.WriteNote
	}, plain),
	"edit": ext(true, func(s *vault.Service) func(context.Context, api.EditRequest) (*api.WriteResult, error) {
		return s.EditNote
	}, plain),
	"move": ext(true, func(s *vault.Service) func(context.Context, api.MoveRequest) (*api.WriteResult, error) { return s.Move }, plain),
	"delete": ext(true, func(s *vault.Service) func(context.Context, api.DeleteRequest) (*api.WriteResult, error) {
		return s.Delete
	}, plain),
	"undo": ext(true, func(s *vault.Service) func(context.Context, api.UndoRequest) (*api.WriteResult, error) { return s.Undo }, plain),
	"learn": ext(true, func(s *vault.Service) func(context.Context, api.LearnRequest) (*api.LearnResult, error) {
		return s.Learn
	}, learned),
}

// ExtensionOps lists the extension endpoints' names.
func ExtensionOps() []string { return sortedNames(extOps) }

// handleExt: POST /api/projects/{p}/{op}.
func (s *Server) handleExt(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project) {
	name := r.PathValue("op")
	op, ok := extOps[name]
	if !ok {
		errorf(http.StatusNotFound, teamapi.CodeNotFound, "no endpoint %q (the project's endpoints: files, %s)", name, strings.Join(ExtensionOps(), ", ")).write(w)
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	if op.write {
		if fail := s.writable(r, k); fail != nil {
			s.refuse(w, r, k, pr, name, "", fail)
			return
		}
	}
	body, fail := readBody(w, r, maxJSONBody)
	if fail != nil {
		if op.write {
			s.refuse(w, r, k, pr, name, "", fail)
			return
		}
		fail.write(w)
		return
	}
	badRequest := func(err error) {
		badBodyAnswer(err, "the body must be a JSON %s request: %v", name, err).write(w)
	}
	if !op.write {
		// A read decodes its body once, in run.
		result, _, _, err := op.run(r.Context(), pr.svc, body)
		var bad badBody
		switch {
		case errors.As(err, &bad):
			badRequest(bad.err)
		case err != nil:
			vaultError(err).write(w)
		default:
			writeJSON(w, http.StatusOK, result)
		}
		return
	}
	canon, err := op.decode(body)
	if err != nil {
		s.refuse(w, r, k, pr, name, "", badBodyAnswer(err, "the body must be a JSON %s request: %v", name, err))
		return
	}
	s.runWrite(w, r, k, writeOp{pr: pr, op: name, target: requestPath(canon), fingerprint: fingerprint(name, pr.meta.ID, string(canon)),
		apply: func(ctx context.Context) *outcome {
			result, res, _, err := op.run(ctx, pr.svc, body)
			if err != nil {
				return failed(vaultError(err))
			}
			return s.written(ctx, pr, res, name+" "+res.Path, func(time.Time, map[string]teamstore.File) *response {
				return jsonResponse(http.StatusOK, result)
			})
		}})
}

// requestPath is the note an extension write's request names, for its audit
// row: its "path", else its "from" (a move); "" when it names none (learn,
// undo).
func requestPath(canon []byte) string {
	var req struct {
		Path string `json:"path"`
		From string `json:"from"`
	}
	if json.Unmarshal(canon, &req) != nil {
		return ""
	}
	if req.Path != "" {
		return req.Path
	}
	return req.From
}

// badBody is a request body that does not decode.
type badBody struct{ err error }

func (b badBody) Error() string { return b.err.Error() }

// decodeStrict decodes one JSON value, refusing unknown fields and
// trailing data, with the field named in the error. A body that is not
// UTF-8 is refused too: encoding/json would put U+FFFD in place of each bad
// byte, and a write would then name a path, or store a content, other than
// the one the client sent.
func decodeStrict(body []byte, v any) error {
	if !utf8.Valid(body) {
		return fmt.Errorf("not valid UTF-8 (byte %d); JSON text is UTF-8", invalidUTF8At(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty body")
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &wrongType{field: te.Field, want: jsonTypeName(te.Type), got: te.Value}
		}
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// wrongType is a JSON value of the wrong type in a request body: field is
// its path in the body ("" for the body itself), want the type expected,
// got what JSON holds there (string, number, array, ...).
type wrongType struct{ field, want, got string }

func (e *wrongType) Error() string {
	if e.field == "" {
		return fmt.Sprintf("expected a JSON object, not %s", jsonKind(e.got))
	}
	return fmt.Sprintf("field %q: expected %s, not %s", e.field, e.want, jsonKind(e.got))
}

// jsonTypeName names, in JSON's words, what a Go type decodes from.
func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonTypeName(t.Elem())
	}
	return t.String()
}

// jsonKind names what encoding/json found where another type was expected
// ("number 2" is "number").
func jsonKind(v string) string {
	if k, _, ok := strings.Cut(v, " "); ok {
		return k
	}
	return v
}

// badBodyAnswer is the 400 answer to a body that does not decode, naming
// the field at fault when the decoder found one.
func badBodyAnswer(err error, format string, args ...any) *response {
	d := teamapi.ErrorDetail{Code: teamapi.CodeBadRequest, Message: fmt.Sprintf(format, args...)}
	var wt *wrongType
	if errors.As(err, &wt) {
		d.Field = wt.field
	}
	return errResponse(http.StatusBadRequest, d)
}

// invalidUTF8At is the offset of the first byte of b that is not part of
// valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
