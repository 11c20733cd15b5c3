// Package teamclient is the vault backend of remote mode: it implements
// api.Backend, api.Writer, api.Learner and api.Team over the Team Vault
// REST API of a team server (DESIGN.md section 7), so that every MCP tool
// works against a shared vault as it does against a local folder.
//
// # Guarantees
//
// Time. Each tool call (each method of the backend) has one budget of 45 s
// for all its requests. One attempt lasts at most 20 s and never past the
// budget, and no attempt starts with less than 2 s of it left. All of it
// reads an injectable Clock.
//
// Retries. A request is retried only when no answer came: a network error,
// an attempt that timed out, or 429, 502, 503, 504; at most 3 attempts,
// with pauses of 1 s and then 3 s plus up to 0.25 s of random jitter, or the
// answer's Retry-After when that is longer (at most 10 s). A 409
// idempotency_key_in_use (the first request with the same key is still being
// applied) is retried, once a second or as Retry-After says, until the
// budget ends, without counting as an attempt. Nothing else is retried:
// 400, 401, 403, 404, 409 path_exists, 412, 422 and 500 are answers, and so
// is a TLS certificate this machine does not trust.
//
// Exactly once. Every write tool call sends one Idempotency-Key, a random
// UUID, the same on every attempt and new for the next call, so a server
// that honours the key applies the write once however many attempts reach
// it; an answer replayed from the server's record (Idempotent-Replayed:
// true) is a success like the first. A 422 idempotency_key_mismatch is a bug
// of this client and is reported as one.
//
// Uncertainty. A write that ended without a definite answer (its request
// may have reached the server: a connection lost after the request was
// written, an attempt that timed out, a 502 or 504, a cancellation while
// it was in flight) fails with an *api.Error marked Uncertain; the MCP layer
// tells the agent to read the note before trying again. A write that never
// left this process (a refused path, a connection that could not be
// opened, 429 and 503 only) is not uncertain.
//
// Cancellation. Cancelling a call's context (the host's
// notifications/cancelled) aborts the request in flight at once, and no
// attempt follows.
//
// Paths. Every path is normalised by vaultfs.Clean and checked by
// vaultfs.CheckPolicy before any request, exactly as the local gatekeeper
// does, so "./a.md", "dir\a.md", "dir//a.md" and "x/../dir/a.md" are one
// note and a refused path never leaves the process. A path is turned into a
// file id with GET files?path= and an exact match among the answers.
//
// Errors. A refusal of the server becomes an *api.Error with the code the
// local vault would use (NOT_FOUND, CONFLICT, INVALID_PATH, ...) or the
// API's own (UNAUTHORIZED, FORBIDDEN), the server's one-line message, and
// the HTTP status with the server's code: "FORBIDDEN: the key "ci" is
// read-only (HTTP 403 read_only_key)". A body that is not the API's error
// envelope is never shown, and the API key never appears in any message.
// The key is sent only in the X-API-Key header, and a redirect is never
// followed (it could take the header to another host).
//
// # Servers without the extension endpoints
//
// Whether a project's server has the extension endpoints (POST
// /api/projects/{p}/search, note, list, backlinks, graph, history, write,
// edit, move, delete, undo, learn) is asked once per project and
// remembered. With them, each tool is one request that the server answers
// exactly as the local vault would. Without them (a plain Team Vault
// server), get, list, history, write, edit, move and delete use the basic
// files API, and search, backlinks and graph are answered from a local
// mirror of the project: a folder in the cache holding a copy of its notes,
// indexed by internal/vault (read-only) exactly as a local vault is, and
// brought up to date before each of those calls by comparing content
// hashes, so that only the notes that changed are fetched. Learn and undo
// need the extensions (UNSUPPORTED otherwise).
package teamclient
