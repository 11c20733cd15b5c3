package teamclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// Codes of the API that the local vault has no word for.
const (
	CodeUnauthorized = "UNAUTHORIZED" // no key, or not a valid one
	CodeForbidden    = "FORBIDDEN"    // a read-only key writing, a project outside the key's scope
	CodeUnsupported  = "UNSUPPORTED"  // the server lacks what the tool needs (extension endpoints)
)

// NoAPIError is Connect's error when the server at URL answered GET
// /api/auth/me with 404: the URL is not a team server's base URL.
type NoAPIError struct {
	URL string
	Err error // the refusal, an *api.Error with code NOT_FOUND
}

func (e *NoAPIError) Error() string {
	msg := "no team server API at " + e.URL + " (GET /api/auth/me: " + e.Err.Error() + ")"
	if strings.HasSuffix(e.URL, "/api") {
		msg += "; give the server's base URL, without /api"
	}
	return msg
}

func (e *NoAPIError) Unwrap() error { return e.Err }

// apiCodes maps the API's own error codes to the codes of internal/api.
// The vault's codes travel in lower case (invalid_path, conflict, ...) and
// come back in upper case.
var apiCodes = map[string]string{
	teamapi.CodeUnauthorized:       CodeUnauthorized,
	teamapi.CodeForbidden:          CodeForbidden,
	teamapi.CodeReadOnlyKey:        CodeForbidden,
	teamapi.CodeRateLimited:        api.CodeUnavailable,
	teamapi.CodeNotFound:           api.CodeNotFound,
	teamapi.CodeBadRequest:         api.CodeInvalidArgument,
	teamapi.CodeInvalidArgument:    api.CodeInvalidArgument,
	teamapi.CodeTooLarge:           string(vaultfs.CodeTooLarge),
	teamapi.CodePathExists:         api.CodeAlreadyExists,
	teamapi.CodePreconditionFailed: api.CodeConflict,
	teamapi.CodeIdempotencyInUse:   api.CodeBusy,
	teamapi.CodeInternal:           api.CodeInternal,
	teamapi.CodeUnavailable:        api.CodeUnavailable,
	// Answers to requests this client should never send: its bugs.
	teamapi.CodeKeyInQuery:        api.CodeInternal,
	teamapi.CodeMethodNotAllowed:  api.CodeInternal,
	teamapi.CodeIdempotencyMisuse: api.CodeInternal,
	teamapi.CodeInvalidIdemKey:    api.CodeInternal,
	teamapi.CodeUnsupportedMedia:  api.CodeInternal,
}

// Compiled on first use: a process start does not pay for it.
var vaultCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z_]{1,40}$`) })

// statusCodes is the code of an answer without a known code.
func statusCode(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return CodeUnauthorized
	case status == http.StatusForbidden:
		return CodeForbidden
	case status == http.StatusNotFound:
		return api.CodeNotFound
	case status == http.StatusConflict || status == http.StatusPreconditionFailed:
		return api.CodeConflict
	case status == http.StatusRequestEntityTooLarge:
		return string(vaultfs.CodeTooLarge)
	case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests || status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		return api.CodeUnavailable
	case status >= 500:
		return api.CodeInternal
	case status >= 400:
		return api.CodeInvalidArgument
	}
	return api.CodeInternal
}

// failure turns a refusal of the server into the *api.Error an agent can
// act on: the local code, the server's one-line message, and the HTTP status
// with the server's code. fields renames the API's field names to the
// tool's (newPath -> to). A body that is not the API's error envelope is
// not shown.
func (cl *call) failure(a *answer, fields map[string]string) error {
	var env teamapi.ErrorBody
	isEnv := json.Unmarshal(a.body, &env) == nil && env.Error.Code != ""
	d := env.Error
	code := ""
	switch {
	case !isEnv:
		code = statusCode(a.status)
	case apiCodes[d.Code] != "":
		code = apiCodes[d.Code]
	case vaultCode().MatchString(d.Code):
		code = strings.ToUpper(d.Code)
	default:
		code = statusCode(a.status)
	}
	msg := ""
	if isEnv {
		msg = cl.clean(d.Message)
		// A vault error's message may start with its own code.
		msg = strings.TrimPrefix(msg, code+": ")
	}
	if msg == "" {
		msg = strings.ToLower(http.StatusText(a.status))
		if msg == "" {
			msg = "unexpected answer"
		}
	}
	field := d.Field
	if f, ok := fields[field]; ok {
		field = f
	}
	switch d.Code {
	case teamapi.CodePreconditionFailed:
		field = "expected_sha256"
	case teamapi.CodeIdempotencyMisuse:
		msg = "bug in vaultmcp's remote client: the server says this call's Idempotency-Key was used for a different request (" + msg + ")"
	case teamapi.CodeReadOnlyKey:
		field = ""
	}
	tag := fmt.Sprintf("HTTP %d", a.status)
	if isEnv {
		tag += " " + cl.clean(d.Code)
	}
	return &api.Error{
		Code:      code,
		Field:     cl.clean(field),
		Message:   msg + " (" + tag + ")",
		Uncertain: a.write && (a.uncertain || d.Uncertain || (a.status >= 500 && !isEnv)),
	}
}

// clean makes text of the server safe to show: one line, at most 400
// characters, and never the API key.
func (cl *call) clean(s string) string {
	if cl.c.key != "" {
		s = strings.ReplaceAll(s, cl.c.key, "<key>")
	}
	return oneLine(s, 400)
}

// oneLine joins the lines of s with spaces and cuts it at n runes.
func oneLine(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "�")
	}
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// fieldErr names the request field in a gatekeeper error, as the local
// vault does.
func fieldErr(field string, err error) error {
	var ve *vaultfs.Error
	if errors.As(err, &ve) {
		return &api.Error{Code: string(ve.Code), Field: field, Message: ve.Detail(), Err: err}
	}
	return err
}

// cleanPath normalises a path of a request exactly as the local gatekeeper
// does, and applies its policy for acc, before any request is sent.
func cleanPath(field, p string, acc vaultfs.Access) (string, error) {
	rel, err := vaultfs.Clean(p)
	if err != nil {
		return "", fieldErr(field, err)
	}
	if err := vaultfs.CheckPolicy(rel, acc); err != nil {
		return "", fieldErr(field, err)
	}
	return rel, nil
}

// notFound is the error of a path with no note on the server.
func notFound(field, rel, project string) error {
	return &api.Error{Code: api.CodeNotFound, Field: field, Message: fmt.Sprintf("%s: no such note in project %s", vaultfs.QuotePath(rel), project)}
}

func unsupported(tool string) error {
	return &api.Error{Code: CodeUnsupported, Message: tool + " needs the extension endpoints of a vaultmcp team server; this server offers only the basic Team Vault files API"}
}
