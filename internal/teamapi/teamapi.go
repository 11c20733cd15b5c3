// Package teamapi holds the wire types of the Team Vault REST API
// (DESIGN.md section 7) that the team server speaks and the remote client
// reads: JSON shapes, header names and error codes. The vault operations
// themselves travel as the types of internal/api.
package teamapi

import "time"

// Headers of the API.
const (
	HeaderAPIKey         = "X-API-Key"
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderReplayed is "true" on an answer replayed from an idempotency
	// record instead of applied again.
	HeaderReplayed = "Idempotent-Replayed"
)

// MaxIdempotencyKey is the longest Idempotency-Key accepted (printable
// ASCII, no spaces).
const MaxIdempotencyKey = 255

// File types and MIME types of the files the API serves (notes only).
const (
	FileTypeMarkdown = "markdown"
	MimeMarkdown     = "text/markdown"
)

// File is one note of a project.
type File struct {
	ID          string    `json:"id"`
	Path        string    `json:"path"`
	FileType    string    `json:"fileType"`
	ContentHash string    `json:"contentHash"` // hex SHA-256 of the bytes; also the ETag
	Size        int64     `json:"size"`
	MimeType    string    `json:"mimeType"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// FileList is the answer of GET /api/projects/{p}/files.
type FileList struct {
	Files []File `json:"files"`
}

// FileAnswer is the answer of POST .../files and PUT .../files/{id}.
type FileAnswer struct {
	File File `json:"file"`
	// Warnings of the vault write (extension).
	Warnings []string `json:"warnings,omitempty"`
}

// MoveRequest is the body of PATCH .../files/{id}.
type MoveRequest struct {
	NewPath string `json:"newPath"`
}

// MovedFile is the file part of the answer of a PATCH.
type MovedFile struct {
	ID   string `json:"id"`
	Path string `json:"path"`
}

// MoveAnswer is the answer of PATCH .../files/{id}.
type MoveAnswer struct {
	File MovedFile `json:"file"`
	// LinksRewritten and NotesRewritten count the links the move updated
	// (extension): always sent, 0 included, so that a client can tell "no
	// link to rewrite" from a server without the extension (absent).
	LinksRewritten int      `json:"linksRewritten"`
	NotesRewritten int      `json:"notesRewritten"`
	Warnings       []string `json:"warnings,omitempty"`
}

// DeleteAnswer is the answer of DELETE .../files/{id}.
type DeleteAnswer struct {
	Success  bool     `json:"success"`
	Warnings []string `json:"warnings,omitempty"`
}

// Version is one version of a file.
type Version struct {
	// ID is the backend's id of the write that made it (a git commit).
	ID            string    `json:"id"`
	VersionNumber int       `json:"versionNumber"`
	ContentHash   string    `json:"contentHash"`
	Message       string    `json:"message"`
	CreatedAt     time.Time `json:"createdAt"`
}

// VersionList is the answer of GET .../files/{id}/versions, newest first.
type VersionList struct {
	Versions []Version `json:"versions"`
}

// Project is one hosted vault.
type Project struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// ProjectList is the answer of GET /api/projects: the projects the key may use.
type ProjectList struct {
	Projects []Project `json:"projects"`
}

// Me is the answer of GET /api/auth/me: who the key is.
type Me struct {
	Key KeyInfo `json:"key"`
}

// KeyInfo describes an API key (never its secret).
type KeyInfo struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	ReadOnly bool   `json:"readOnly"`
	// Projects are the ids the key is limited to; empty means every project.
	Projects  []string  `json:"projects"`
	CreatedAt time.Time `json:"createdAt"`
	// ExpiresAt is when the key stops being accepted; absent when never.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// ErrorBody is the envelope of every error answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is one error.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field names the request field at fault, when one is (extension).
	Field string `json:"field,omitempty"`
	// CurrentHash is the file's current content hash on a 412 (extension).
	CurrentHash string `json:"currentHash,omitempty"`
	// Uncertain says the change may or may not have been applied
	// (extension).
	Uncertain bool `json:"uncertain,omitempty"`
}

// Error codes of the API itself. Errors of the vault (a refused path, a
// missing note, a conflict) carry the vault's code in lower case:
// invalid_path, path_escape, hidden_segment, protected_path,
// invalid_extension, not_found, no_match, not_unique, refused,
// needs_confirmation, busy, ...
const (
	CodeUnauthorized       = "unauthorized"       // 401: no key, or not a valid one
	CodeKeyInQuery         = "key_in_query"       // 400: a key was sent in the query string
	CodeForbidden          = "forbidden"          // 403: the project is outside the key's scope
	CodeReadOnlyKey        = "read_only_key"      // 403: a write with a read-only key
	CodeRateLimited        = "rate_limited"       // 429 (Retry-After)
	CodeNotFound           = "not_found"          // 404
	CodeMethodNotAllowed   = "method_not_allowed" // 405
	CodeBadRequest         = "bad_request"        // 400: a malformed request
	CodeInvalidArgument    = "invalid_argument"   // 400: a field's value is refused
	CodeTooLarge           = "too_large"          // 413: body over the limit
	CodePathExists         = "path_exists"        // 409: a live file has that path
	CodePreconditionFailed = "precondition_failed"
	CodeIdempotencyInUse   = "idempotency_key_in_use"   // 409: the first request with this key is still running
	CodeIdempotencyMisuse  = "idempotency_key_mismatch" // 422: same key, different request
	CodeInvalidIdemKey     = "invalid_idempotency_key"  // 400
	CodeUnsupportedMedia   = "unsupported_media_type"   // 415
	CodeInternal           = "internal"                 // 500
	CodeUnavailable        = "unavailable"              // 503
)
