package api

import "context"

// Writer is the write side of a vault (not offered in read-only mode).
type Writer interface {
	WriteNote(ctx context.Context, req WriteRequest) (*WriteResult, error)
	EditNote(ctx context.Context, req EditRequest) (*WriteResult, error)
	Move(ctx context.Context, req MoveRequest) (*WriteResult, error)
	Delete(ctx context.Context, req DeleteRequest) (*WriteResult, error)
	Undo(ctx context.Context, req UndoRequest) (*WriteResult, error)
}

// WriteBackend is a vault that can be read and written.
type WriteBackend interface {
	Backend
	Writer
}

// WriteRequest is the input of vault_write_note: create a note, or replace
// one whose current content hash the caller has seen.
type WriteRequest struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	// Frontmatter is merged into the note's frontmatter block (written as
	// YAML before Content); missing keys default to type note, tags [],
	// created today, in the profile's language.
	Frontmatter map[string]any `json:"frontmatter,omitempty"`
	// ExpectedSHA256 is required to replace an existing note: the hex SHA-256
	// of its current bytes (vault_get_note shows it).
	ExpectedSHA256 string `json:"expected_sha256,omitempty"`
}

// EditRequest is the input of vault_edit_note: replace the one occurrence of
// OldText with NewText.
type EditRequest struct {
	Path    string `json:"path"`
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

// MoveRequest is the input of vault_move: rename, promote, archive, unarchive.
type MoveRequest struct {
	From             string `json:"from"`
	To               string `json:"to"`
	ConfirmNewDomain bool   `json:"confirm_new_domain,omitempty"`
}

// DeleteRequest is the input of vault_delete.
type DeleteRequest struct {
	Path    string `json:"path"`
	Confirm bool   `json:"confirm,omitempty"`
}

// UndoRequest is the input of vault_undo: take back one write made by this
// server, given the Version its answer reported.
type UndoRequest struct {
	Version string `json:"version"`
}

// Actions a write reports.
const (
	ActionCreated  = "created"
	ActionReplaced = "replaced"
	ActionEdited   = "edited"
	ActionMoved    = "moved"
	ActionDeleted  = "deleted"
	ActionReverted = "reverted"
	ActionAppended = "appended" // vault_learn
)

// WriteResult is the answer of every write tool.
type WriteResult struct {
	Action string `json:"action"`
	Path   string `json:"path"`
	From   string `json:"from,omitempty"` // moves
	// Files lists every vault path the write changed, created or removed.
	Files  []string `json:"files"`
	SHA256 string   `json:"sha256,omitempty"` // new hash of Path's bytes (not for deletes)
	// LinksRewritten counts links updated by a move, in NotesRewritten notes.
	LinksRewritten int `json:"links_rewritten,omitempty"`
	NotesRewritten int `json:"notes_rewritten,omitempty"`
	// Committed says whether the write was recorded as a version that can be
	// listed and undone; Version is that version's id. The id is opaque: each
	// backend defines it (a git commit locally, a version id on a team
	// server) and takes it back in UndoRequest.Version.
	Committed bool   `json:"committed"`
	Version   string `json:"version,omitempty"`
	// Pushed is nil when no push was attempted.
	Pushed *bool `json:"pushed,omitempty"`
	// UndoHint is a backend's own way to take the change back besides Undo
	// (e.g. the git command that restores a deleted note), or "".
	UndoHint string   `json:"undo_hint,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Diff is a unified diff of everything the write changed.
	Diff string `json:"diff"`
}

// Error codes of the write tools.
const (
	CodeConflict      = "CONFLICT"       // expected_sha256 missing or stale
	CodeAlreadyExists = "ALREADY_EXISTS" // target of a create or move exists
	CodeNotUnique     = "NOT_UNIQUE"     // old_text occurs more than once
	CodeNoMatch       = "NO_MATCH"       // old_text does not occur
	CodeRefused       = "REFUSED"        // the operation is not allowed on this note (structural, uncommitted, has backlinks)
	CodeNeedsConfirm  = "NEEDS_CONFIRMATION"
	CodeReadOnly      = "READ_ONLY"
	CodeBusy          = "BUSY"      // the write lock could not be taken in time; nothing was written
	CodeCancelled     = "CANCELLED" // the caller cancelled before anything was written
)

// WriteMeta says who makes a write and under which idempotency key, for the
// backends that record it (the local vault: the commit's author and a
// trailer). A team server sets it from the API key of the request.
type WriteMeta struct {
	Author string // display name; "" keeps the backend's default identity
	Email  string
	// IdempotencyKey is the client's key for this write, recorded with the
	// version so that a retry after a crash can tell the write was applied.
	IdempotencyKey string
}

type writeMetaKey struct{}

// WithWriteMeta attaches m to ctx for the writes made under it.
func WithWriteMeta(ctx context.Context, m WriteMeta) context.Context {
	return context.WithValue(ctx, writeMetaKey{}, m)
}

// WriteMetaFrom returns the WriteMeta attached to ctx (zero when none).
func WriteMetaFrom(ctx context.Context) WriteMeta {
	m, _ := ctx.Value(writeMetaKey{}).(WriteMeta)
	return m
}
