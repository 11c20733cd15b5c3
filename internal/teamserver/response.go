package teamserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// response is an answer built before it is sent, so that a write's answer
// can be stored in its idempotency record and replayed byte for byte.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) write(w http.ResponseWriter) {
	for k, vs := range r.header {
		w.Header()[k] = vs
	}
	writeWhole(w, r.status, r.body)
}

// writeWhole sends an answer whose body is all there, with its length: a
// client (and a replica forwarding the answer, see holdAnswer) reads it
// in one piece and tells an answer cut short by its length.
func writeWhole(w http.ResponseWriter, status int, body []byte) {
	if status != http.StatusNoContent && status != http.StatusNotModified {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// encodeBufs are the buffers writeJSON encodes answers sent at once in.
var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON sends v as jsonResponse(status, v) would, encoded in a pooled
// buffer: for an answer sent at once and never kept (a read's).
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := encodeBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 { // a huge answer's buffer is not kept
			encodeBufs.Put(buf)
		}
	}()
	buf.Reset()
	if fail := encodeJSON(buf, v); fail != nil {
		fail.write(w)
		return
	}
	setJSONHeaders(w.Header())
	writeWhole(w, status, buf.Bytes())
}

func jsonResponse(status int, v any) *response {
	var buf bytes.Buffer
	if fail := encodeJSON(&buf, v); fail != nil {
		return fail
	}
	h := http.Header{}
	setJSONHeaders(h)
	return &response{status: status, header: h, body: buf.Bytes()}
}

// encodeJSON appends v to buf as the answers carry it (no HTML escaping), or
// returns the 500 answer saying why it could not.
func encodeJSON(buf *bytes.Buffer, v any) *response {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return errResponse(http.StatusInternalServerError, teamapi.ErrorDetail{Code: teamapi.CodeInternal, Message: "encoding the answer: " + err.Error()})
	}
	return nil
}

func setJSONHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
}

func errResponse(status int, d teamapi.ErrorDetail) *response {
	r := jsonResponse(status, teamapi.ErrorBody{Error: d})
	r.status = status
	if status == http.StatusServiceUnavailable {
		r.header.Set("Retry-After", "1")
	}
	return r
}

func errorf(status int, code, format string, args ...any) *response {
	return errResponse(status, teamapi.ErrorDetail{Code: code, Message: fmt.Sprintf(format, args...)})
}

func withETag(r *response, hash string) *response {
	if hash != "" {
		r.header.Set("ETag", etag(hash))
	}
	return r
}

func etag(hash string) string { return `"` + hash + `"` }

// outOfSpace says the file system refused err's write for want of room.
func outOfSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// statusOf is the HTTP status of a vault error code.
var statusOf = map[string]int{
	api.CodeInvalidArgument:              http.StatusBadRequest,
	string(vaultfs.CodeInvalidPath):      http.StatusBadRequest,
	string(vaultfs.CodePathEscape):       http.StatusBadRequest,
	string(vaultfs.CodeHiddenSegment):    http.StatusBadRequest,
	string(vaultfs.CodeProtectedPath):    http.StatusBadRequest,
	string(vaultfs.CodeInvalidExtension): http.StatusBadRequest,
	string(vaultfs.CodeSymlinkEscape):    http.StatusForbidden,
	string(vaultfs.CodeNotANote):         http.StatusConflict,
	string(vaultfs.CodeNotFound):         http.StatusNotFound,
	string(vaultfs.CodeTooLarge):         http.StatusRequestEntityTooLarge,
	string(vaultfs.CodePermissionDenied): http.StatusForbidden,
	string(vaultfs.CodeIO):               http.StatusInternalServerError,
	api.CodeAlreadyExists:                http.StatusConflict,
	api.CodeConflict:                     http.StatusConflict,
	api.CodeNoMatch:                      http.StatusUnprocessableEntity,
	api.CodeNotUnique:                    http.StatusUnprocessableEntity,
	api.CodeRefused:                      http.StatusConflict,
	api.CodeNeedsConfirm:                 http.StatusConflict,
	api.CodeReadOnly:                     http.StatusForbidden,
	api.CodeBusy:                         http.StatusServiceUnavailable,
	api.CodeUnavailable:                  http.StatusServiceUnavailable,
	api.CodeInternal:                     http.StatusInternalServerError,
}

// vaultError is the answer for an error of the vault service: its stable
// code in lower case, its field and its one-line message (vault-relative
// paths only).
func vaultError(err error) *response {
	code := api.CodeOf(err)
	d := teamapi.ErrorDetail{Code: strings.ToLower(code), Message: err.Error()}
	var ae *api.Error
	if errors.As(err, &ae) {
		d.Field, d.Message = ae.Field, ae.Message
		d.Uncertain = uncertain(ae)
	} else if errors.Is(err, teamstore.ErrNotFound) {
		d.Code = teamapi.CodeNotFound
		code = string(vaultfs.CodeNotFound)
	} else if teamstore.Unavailable(err) {
		// The database failed under the request (restarting, failing
		// over): a client retries a 503 (with Retry-After, errResponse),
		// not a 500.
		return errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "the server's database or storage does not answer right now; retry")
	}
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if code == string(vaultfs.CodeIO) && outOfSpace(err) {
		// The server's disk (or its quota, or its file size limit) is
		// full: nothing was written (the old content is unchanged), and
		// nothing will be until its operator makes room. 507 says so to
		// a monitor; the code stays io_error, the message the vault's
		// (vault-relative paths only), and no client retries it.
		status = http.StatusInsufficientStorage
		var fe *vaultfs.Error
		if ae == nil && errors.As(err, &fe) {
			d.Message = fe.Error()
		}
	}
	if status == http.StatusInternalServerError && ae == nil {
		// Never show an unclassified error's text: it may hold a path.
		d.Message = "internal error"
	}
	return errResponse(status, d)
}

// fieldErr names the request field in a gatekeeper error.
func fieldErr(field string, err error) error {
	var ve *vaultfs.Error
	if errors.As(err, &ve) {
		return &api.Error{Code: string(ve.Code), Field: field, Message: strings.TrimPrefix(ve.Error(), string(ve.Code)+": "), Err: err}
	}
	return err
}

// retryAfter is the Retry-After value for a wait: whole seconds, at least 1.
func retryAfter(seconds float64) string {
	n := int(seconds)
	if float64(n) < seconds {
		n++
	}
	if n < 1 {
		n = 1
	}
	return strconv.Itoa(n)
}
