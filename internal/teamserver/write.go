package teamserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// MaxNote is the largest note a write takes (the vault's own cap).
const MaxNote = vaultfs.MaxNoteSize

// maxBody caps a request body: a note plus room for the multipart or JSON
// around it.
const maxBody = MaxNote + 256<<10

// maxJSONBody caps a JSON body (the extension endpoints, MCP): JSON spells
// a quote, a backslash, a tab or a line break in two bytes, so a note the
// vault takes may need up to twice its size.
const maxJSONBody = 2*MaxNote + 256<<10

// writeOp is one write request, parsed and checked, ready to run.
type writeOp struct {
	pr *project
	// op names the operation (create, update, move, delete, and the
	// extension writes); target is the file id or path it is about.
	op, target string
	// fingerprint identifies the request for its idempotency record.
	fingerprint string
	// apply runs the write under the project's lock and returns its answer
	// and bookkeeping.
	apply func(ctx context.Context) *outcome
}

// outcome is what a write did.
type outcome struct {
	resp *response
	rec  teamstore.Record // moves, tombstones, versions (no audit, no answer)
	// paths and version go to the audit row; result is "ok" or the code.
	paths   []string
	version string
	result  string
	// applied says the write was applied (its answer is definite);
	// uncertain says a failed write may or may not have been; unsettled
	// says its idempotency record must stay running until the remote's
	// history settles it (the push's fate is unknown).
	applied, uncertain, unsettled bool
	// unbooked, when not nil, says the write was applied but its
	// bookkeeping could not be read from the metadata store (a database
	// restarting): its answer is not definite enough to store, so its
	// idempotency record stays running and is settled from git.
	unbooked error
	// at is the time of the write's bookkeeping (and of its answer).
	at time.Time
}

func failed(resp *response) *outcome {
	code := "error"
	var body teamapi.ErrorBody
	if err := jsonUnmarshal(resp.body, &body); err == nil && body.Error.Code != "" {
		code = body.Error.Code
	}
	return &outcome{resp: resp, result: code, uncertain: body.Error.Uncertain}
}

// failedAt is failed for a write about the notes at paths (its audit row
// names them).
func failedAt(resp *response, paths ...string) *outcome {
	out := failed(resp)
	out.paths = paths
	return out
}

// refuse answers a write request refused before it could run (a read-only
// key, a bad body or path, a bad or reused Idempotency-Key) and adds its
// audit row: time, key, project, operation, the path it named (or the file
// id, or none) and the refusal's code.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project, op, target string, resp *response) {
	code := "error"
	var body teamapi.ErrorBody
	if err := jsonUnmarshal(resp.body, &body); err == nil && body.Error.Code != "" {
		code = body.Error.Code
	}
	paths := []string{}
	if target != "" {
		paths = []string{target}
	}
	idemKey := r.Header.Get(teamapi.HeaderIdempotencyKey)
	if !validIdemKey(idemKey) {
		idemKey = ""
	}
	e := teamstore.AuditEntry{At: s.now(), KeyID: k.ID, KeyName: k.Name, Project: pr.meta.ID, Operation: op, Paths: paths, IdempotencyKey: idemKey, Result: code}
	actx, cancel := s.storeCtx(context.WithoutCancel(r.Context()))
	if err := s.store.AppendAudit(actx, e); err != nil {
		s.log.Error("recording a refused write", "err", err)
	}
	cancel()
	s.log.Info("write refused", "project", pr.meta.Name, "key", k.Name, "op", op, "paths", target, "result", code, "status", resp.status)
	resp.write(w)
}

// filePath is the path of a file id for an audit row (the id itself when
// the project has no such file).
func (s *Server) filePath(ctx context.Context, pr *project, id string) string {
	ctx, cancel := s.storeCtx(ctx)
	defer cancel()
	if f, err := s.store.File(ctx, pr.meta.ID, id); err == nil {
		return f.Path
	}
	return id
}

// auditPath is what a write's audit row names before it runs: the path of
// a file id, the path of a create, the paths of an extension's request.
func (s *Server) auditPath(ctx context.Context, op writeOp) string {
	switch op.op {
	case "update", "move", "delete":
		return s.filePath(ctx, op.pr, op.target)
	}
	return op.target
}

// fingerprint hashes the parts of a request that decide what it does.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// validIdemKey: 1-255 printable ASCII characters, no spaces.
func validIdemKey(k string) bool {
	if k == "" || len(k) > teamapi.MaxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// runWrite runs a write once: with an Idempotency-Key, the first request
// is applied and its answer stored with its bookkeeping in one transaction;
// a repeat gets the stored answer; a repeat while the first runs gets 409;
// the same key on another request gets 422. A started write is finished
// even when the client goes away.
func (s *Server) runWrite(w http.ResponseWriter, r *http.Request, k *teamstore.Key, op writeOp) {
	s.writes.Add(1)
	defer s.writes.Done()
	s.inflightWrites.Add(1)
	defer s.inflightWrites.Add(-1)
	ctx := context.WithoutCancel(r.Context())
	idemKey := r.Header.Get(teamapi.HeaderIdempotencyKey)
	if idemKey == "" {
		op.pr.book.RLock()
		out := s.applyOp(ctx, k, op, "")
		s.finish(ctx, k, op, out, "", nil)
		op.pr.book.RUnlock()
		out.resp.write(w)
		return
	}
	if !validIdemKey(idemKey) {
		s.refuse(w, r, k, op.pr, op.op, s.auditPath(ctx, op), errorf(http.StatusBadRequest, teamapi.CodeInvalidIdemKey, "Idempotency-Key: use 1-%d printable ASCII characters without spaces (a UUID is best)", teamapi.MaxIdempotencyKey))
		return
	}
	now := s.now()
	rec := teamstore.Idem{KeyID: k.ID, Key: idemKey, Fingerprint: op.fingerprint, Project: op.pr.meta.ID, Operation: op.op, Target: op.target,
		Token: teamstore.NewID(), Owner: s.instance, CreatedAt: now, ExpiresAt: now.Add(IdemTTL)}
	s.running(rec.Token, true)
	defer s.running(rec.Token, false)
	// Bounded as the key's lookup is: nothing is applied yet, so a
	// database that hangs answers 503 and the retry works once it is
	// back. (A record the database stored all the same, its answer lost,
	// is this replica's, not in flight: the settler releases it.)
	bctx, cancel := context.WithTimeout(ctx, keyLookupTimeout)
	held, created, err := s.store.BeginIdem(bctx, rec)
	cancel()
	if err != nil {
		// The metadata store does not answer (a database restarting or
		// failing over), or refused (its disk full): nothing was done, and
		// the retry works once it is back, as for a key that cannot be
		// checked.
		s.log.Error("beginning an idempotency record", "err", err)
		why := "the server's database does not answer"
		if !teamstore.Unavailable(err) {
			why = "the server's database refused it; the server's log says why"
		}
		errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "the write cannot be started right now (%s); nothing was changed: retry", why).write(w)
		return
	}
	if !created {
		switch {
		case held.Fingerprint != rec.Fingerprint:
			s.refuse(w, r, k, op.pr, op.op, s.auditPath(ctx, op), errorf(http.StatusUnprocessableEntity, teamapi.CodeIdempotencyMisuse, "Idempotency-Key %q was used for a different request; use a new key for each new request", idemKey))
		case held.State != teamstore.IdemDone || held.Response == nil:
			resp := errorf(http.StatusConflict, teamapi.CodeIdempotencyInUse, "a request with Idempotency-Key %q is still being applied; retry in a moment", idemKey)
			resp.header.Set("Retry-After", "1")
			resp.write(w)
		default:
			replay(w, held.Response)
		}
		return
	}
	s.crash(CrashBeforeApply)
	s.applyIdem(ctx, k, op, rec).write(w)
}

// applyIdem applies a write whose idempotency record rec was just created,
// stores its bookkeeping and answer, and returns the answer.
func (s *Server) applyIdem(ctx context.Context, k *teamstore.Key, op writeOp, rec teamstore.Idem) *response {
	op.pr.book.RLock()
	defer op.pr.book.RUnlock()
	out := s.applyOp(ctx, k, op, rec.Token)
	s.crash(CrashAfterApply)
	if s.afterApply != nil {
		s.afterApply()
	}
	if out.unbooked != nil {
		// Applied, but its bookkeeping could not be read: storing this
		// answer would replay an error to every retry and leave the write
		// unbooked for good. The record stays running, the settler books
		// the write from its commit (about 10 s; at the next lease renewal
		// on replicas), and the retry gets that answer.
		s.log.Warn("a write was applied but could not be recorded; it is settled from git shortly", "project", op.pr.meta.Name, "op", op.op, "version", out.version, "idempotency_key", rec.Key, "err", out.unbooked)
		return errorf(http.StatusServiceUnavailable, teamapi.CodeUnavailable, "the change was applied (version %s) but the server's database did not answer while recording it; retry with the same Idempotency-Key for its answer", out.version)
	}
	if (out.resp.status >= 500 || out.uncertain) && !out.applied {
		// No definite answer: settle it from git (the token is in the commit
		// when the write was applied), else let a retry run it again.
		if sha, err := op.pr.git.commitWithToken(ctx, rec.Token); err == nil && sha != "" {
			settled, err := s.settle(ctx, k, op.pr, rec, sha)
			if err == nil {
				return settled
			}
			s.log.Error("settling a write from its commit", "err", err)
		} else if err == nil && !out.unsettled {
			_ = s.store.ReleaseIdem(ctx, k.ID, rec.Key, rec.Token)
		}
		s.finish(ctx, k, op, out, rec.Key, nil)
		return out.resp
	}
	answer := &teamstore.IdemAnswer{KeyID: k.ID, Key: rec.Key, Token: rec.Token, Response: teamstore.Response{Status: out.resp.status, Header: out.resp.header, Body: out.resp.body}}
	if err := s.finish(ctx, k, op, out, rec.Key, answer); err != nil {
		if errors.Is(err, teamstore.ErrNotRunning) {
			// Settled meanwhile from the remote by the vault's new holder
			// (this replica was too slow to keep its lease): booked there.
			s.log.Warn("a write was booked by the replica that took the vault over meanwhile", "project", op.pr.meta.Name, "op", op.op, "idempotency_key", rec.Key)
		} else {
			// The write happened but its record could not be stored: the
			// record stays running, and the next start settles it from git.
			s.log.Error("recording a write", "err", err)
		}
	}
	return out.resp
}

func replay(w http.ResponseWriter, stored *teamstore.Response) {
	for k, vs := range stored.Header {
		w.Header()[k] = vs
	}
	w.Header().Set(teamapi.HeaderReplayed, "true")
	w.WriteHeader(stored.Status)
	_, _ = w.Write(stored.Body)
}

// applyOp runs the write under the project's lock, as the key's author.
func (s *Server) applyOp(ctx context.Context, k *teamstore.Key, op writeOp, token string) *outcome {
	start := time.Now()
	op.pr.mu.Lock()
	defer op.pr.mu.Unlock()
	var out *outcome
	if err := s.confirmLease(ctx, op.pr); err != nil {
		out = failed(notServing(op.pr, err))
	} else {
		ctx = withWriteMeta(ctx, k.Name, authorEmail(k.Name), token)
		out = op.apply(ctx)
	}
	if out.result == "" {
		out.result = "ok"
	}
	s.met.writeSeconds.Observe(time.Since(start).Seconds())
	return out
}

// authorEmail is the address of a key's commits (keys have no mailbox).
func authorEmail(name string) string { return name + "@vaultmcp.invalid" }

// finish stores the bookkeeping, the audit row and the answer of a write in
// one transaction.
func (s *Server) finish(ctx context.Context, k *teamstore.Key, op writeOp, out *outcome, idemKey string, answer *teamstore.IdemAnswer) error {
	rec := out.rec
	rec.Project, rec.At = op.pr.meta.ID, out.at
	if rec.At.IsZero() {
		rec.At = s.now()
	}
	paths := out.paths
	if paths == nil {
		paths = []string{}
		if op.target != "" {
			paths = []string{op.target}
		}
	}
	rec.Audit = &teamstore.AuditEntry{At: rec.At, KeyID: k.ID, KeyName: k.Name, Project: op.pr.meta.ID, Operation: op.op,
		Paths: paths, Version: out.version, IdempotencyKey: idemKey, Result: out.result}
	rec.Answer = answer
	s.met.writes.Inc(op.op, out.result)
	s.log.Info("write", "project", op.pr.meta.Name, "key", k.Name, "op", op.op, "paths", strings.Join(paths, ","), "version", out.version, "result", out.result, "status", out.resp.status)
	// Bounded (storeWait, and a millisecond a note: storeCtxFor): a write
	// unbooked stays running and is booked from its commit by the settler.
	ctx, cancel := s.storeCtxFor(ctx, len(rec.Versions)+len(rec.Deletes)+len(rec.Moves))
	defer cancel()
	return s.store.Record(ctx, rec)
}

// crash is the test hook: SIGKILL this process at a named point.
func (s *Server) crash(at string) {
	if s.cfg.CrashAt == at {
		s.log.Warn("test hook: killing the server", "at", at)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Kill() // SIGKILL where there are signals
		}
		select {}
	}
}

// reconcile turns what a vault write reports into the server's
// bookkeeping: the moved file keeps its id, every other changed note gets a
// new version (and an id if it had none), and a removed one becomes a
// tombstone.
func (s *Server) reconcile(ctx context.Context, pr *project, res *api.WriteResult, message string, at time.Time) (teamstore.Record, map[string]teamstore.File, error) {
	version := versionOf(res)
	rec := teamstore.Record{}
	files := make(map[string]teamstore.File)
	pr.hashes.forget(res.Files...)
	if res.From != "" {
		pr.hashes.forget(res.From)
	}
	movedTo := ""
	if res.Action == api.ActionMoved && res.From != "" {
		if f, err := s.store.FileByPath(ctx, pr.meta.ID, res.From); err == nil {
			rec.Moves = append(rec.Moves, teamstore.Move{FileID: f.ID, To: res.Path})
			f.Path = res.Path
			files[res.Path] = f
			movedTo = res.Path
		} else if !errors.Is(err, teamstore.ErrNotFound) {
			return rec, nil, err
		}
	}
	var present, hashes []string
	for _, p := range res.Files {
		if p == res.From && movedTo != "" {
			continue
		}
		data, _, err := pr.svc.FS().ReadNote(p)
		switch {
		case err == nil:
			if p == movedTo {
				rec.Versions = append(rec.Versions, teamstore.Version{FileID: files[p].ID, Path: p, Hash: sha256Hex(data), VersionID: version, Message: message})
				continue
			}
			present, hashes = append(present, p), append(hashes, sha256Hex(data))
		case vaultfs.CodeOf(err) == vaultfs.CodeNotFound:
			if f, err := s.store.FileByPath(ctx, pr.meta.ID, p); err == nil && f.Live() {
				rec.Deletes = append(rec.Deletes, f.ID)
			}
		}
	}
	if len(present) > 0 {
		fs, err := s.store.EnsureFiles(ctx, pr.meta.ID, present, at)
		if err != nil {
			return rec, nil, err
		}
		for i, f := range fs {
			files[f.Path] = f
			msg := message
			if f.Path != res.Path && res.Path != "" {
				msg = message + " (" + res.Path + ")"
			}
			rec.Versions = append(rec.Versions, teamstore.Version{FileID: f.ID, Path: f.Path, Hash: hashes[i], VersionID: version, Message: msg})
		}
	}
	return rec, files, nil
}

// written is the outcome of a vault write that succeeded: pushed to the
// vault's git remote when it has one (remote.go), then the answer built by
// answer from the reconciled files.
func (s *Server) written(ctx context.Context, pr *project, res *api.WriteResult, message string, answer func(at time.Time, files map[string]teamstore.File) *response) *outcome {
	if fail := s.publish(ctx, pr, res); fail != nil {
		fail.paths = res.Files
		if fail.uncertain {
			// Its commit may be in the remote: the audit row names it. A
			// refused push's commit went with the clone's reset to the
			// remote, and exists nowhere.
			fail.version = versionOf(res)
		}
		return fail
	}
	return s.recorded(ctx, pr, res, message, answer)
}

// recorded is the outcome of a vault write that is in the vault's storage
// of record: its bookkeeping and its answer.
func (s *Server) recorded(ctx context.Context, pr *project, res *api.WriteResult, message string, answer func(at time.Time, files map[string]teamstore.File) *response) *outcome {
	// One time for the bookkeeping and the answer, at the store's precision.
	at := s.now().UTC().Truncate(time.Microsecond)
	rctx, cancel := s.storeCtxFor(ctx, len(res.Files)) // see finish
	rec, files, err := s.reconcile(rctx, pr, res, message, at)
	cancel()
	if err != nil {
		s.log.Error("recording the files of a write", "err", err)
		return &outcome{resp: errorf(http.StatusInternalServerError, teamapi.CodeInternal, "the change was applied (version %s) but the server could not record it: internal error", versionOf(res)),
			paths: writtenPaths(res), version: versionOf(res), result: teamapi.CodeInternal, applied: true, unbooked: err, at: at}
	}
	resp := answer(at, files)
	if resp.status >= 500 && len(res.Files) == 0 {
		// Nothing changed (the same bytes again) and the answer could not
		// be built (the database failing as the file's row was read): no
		// definite answer to store for every retry to replay. The record
		// is let go (no commit carries its token), and a retry runs the
		// write again, which changes nothing again.
		out := failed(resp)
		out.paths = writtenPaths(res)
		return out
	}
	return &outcome{resp: resp, rec: rec, paths: writtenPaths(res), version: versionOf(res), applied: true, at: at}
}

// writtenPaths are the paths a write's audit row names: the notes it
// changed, or the note it was about when it changed none (the same content
// again).
func writtenPaths(res *api.WriteResult) []string {
	if len(res.Files) == 0 && res.Path != "" {
		return []string{res.Path}
	}
	return res.Files
}

// fileAnswer is the wire file of path right after a write.
func (s *Server) fileAnswer(ctx context.Context, pr *project, at time.Time, files map[string]teamstore.File, path string) (teamapi.File, error) {
	fi, err := pr.svc.FS().Stat(path)
	if err != nil {
		return teamapi.File{}, err
	}
	h, got, err := pr.noteHash(fi)
	if err != nil {
		return teamapi.File{}, err
	}
	f, ok := files[path]
	if !ok {
		// Not written (the same bytes again): the file as the store has it.
		fctx, cancel := s.storeCtx(ctx)
		f, err = s.store.FileByPath(fctx, pr.meta.ID, path)
		cancel()
		if err != nil {
			return teamapi.File{}, err
		}
		return wireFile(f, got, h), nil
	}
	wf := wireFile(f, got, h)
	wf.UpdatedAt = at
	return wf, nil
}

// readBody reads a request body up to maxBody, or the 413 answer.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *response) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errorf(http.StatusRequestEntityTooLarge, teamapi.CodeTooLarge, "the request body is over %d bytes", limit)
		}
		return nil, errorf(http.StatusBadRequest, teamapi.CodeBadRequest, "reading the request body: %v", err)
	}
	return b, nil
}

// preconditionFailed is the 412 answer naming the current hash.
func preconditionFailed(path, current string) *response {
	resp := errResponse(http.StatusPreconditionFailed, teamapi.ErrorDetail{Code: teamapi.CodePreconditionFailed,
		Message: fmt.Sprintf("%s changed: its current content hash is %s; read it again before writing", path, current), CurrentHash: current})
	return withETag(resp, current)
}

// createFile: POST .../files, multipart with "path" and "file".
func (s *Server) createFile(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project) {
	refuse := func(target string, resp *response) { s.refuse(w, r, k, pr, "create", target, resp) }
	if fail := s.writable(r, k); fail != nil {
		refuse("", fail)
		return
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		refuse("", errorf(http.StatusUnsupportedMediaType, teamapi.CodeUnsupportedMedia, "a create is multipart/form-data with the fields \"path\" and \"file\""))
		return
	}
	body, fail := readBody(w, r, maxBody)
	if fail != nil {
		refuse("", fail)
		return
	}
	path, content, fail := parseCreate(body, params["boundary"])
	if fail != nil {
		refuse(path, fail)
		return
	}
	rel, err := pr.svc.FS().Resolve(path, vaultfs.Write)
	if err != nil && vaultfs.CodeOf(err) != vaultfs.CodeNotFound {
		refuse(path, vaultError(fieldErr("path", err)))
		return
	}
	if err != nil {
		rel = path
	}
	s.runWrite(w, r, k, writeOp{pr: pr, op: "create", target: rel, fingerprint: fingerprint("create", pr.meta.ID, rel, string(content)),
		apply: func(ctx context.Context) *outcome {
			res, err := pr.svc.WriteNoteRaw(ctx, api.WriteRequest{Path: path, Content: string(content)})
			if err != nil {
				switch api.CodeOf(err) {
				case api.CodeConflict:
					return failed(errResponse(http.StatusConflict, teamapi.ErrorDetail{Code: teamapi.CodePathExists, Field: "path",
						Message: fmt.Sprintf("%s exists; replace it with PUT /files/{id} (see GET /files?path=)", rel)}))
				case api.CodeAlreadyExists:
					// Another spelling of the name is taken: the vault's
					// message names the note that is there.
					return failed(pathExists(err, "path"))
				}
				// The content is the multipart "file" part here.
				return failed(renameField(vaultError(err), "content", "file"))
			}
			return s.written(ctx, pr, res, "create "+res.Path, func(at time.Time, files map[string]teamstore.File) *response {
				wf, err := s.fileAnswer(ctx, pr, at, files, res.Path)
				if err != nil {
					return vaultError(err)
				}
				return withETag(jsonResponse(http.StatusCreated, teamapi.FileAnswer{File: wf, Warnings: res.Warnings}), wf.ContentHash)
			})
		}})
}

// parseCreate reads the "path" and "file" parts of a create.
func parseCreate(body []byte, boundary string) (string, []byte, *response) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var path string
	var content []byte
	havePath, haveFile := false, false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, errorf(http.StatusBadRequest, teamapi.CodeBadRequest, "reading the multipart body: %v", err)
		}
		switch part.FormName() {
		case "path":
			b, err := io.ReadAll(io.LimitReader(part, vaultfs.MaxPathBytes+1))
			if err != nil || len(b) > vaultfs.MaxPathBytes {
				// The gatekeeper's code and field, as for any other path it
				// refuses (the part is not read to its end to quote it).
				return "", nil, errResponse(http.StatusBadRequest, teamapi.ErrorDetail{Code: strings.ToLower(string(vaultfs.CodeInvalidPath)), Field: "path",
					Message: fmt.Sprintf("path: over %d bytes; a path may be at most %d bytes", vaultfs.MaxPathBytes, vaultfs.MaxPathBytes)})
			}
			path, havePath = string(b), true
		case "file":
			b, err := io.ReadAll(io.LimitReader(part, MaxNote+1))
			if err != nil {
				return "", nil, errorf(http.StatusBadRequest, teamapi.CodeBadRequest, "reading the file part: %v", err)
			}
			if len(b) > MaxNote {
				return "", nil, errorf(http.StatusRequestEntityTooLarge, teamapi.CodeTooLarge, "file: over the %d-byte limit of a note", MaxNote)
			}
			content, haveFile = b, true
		}
		part.Close()
	}
	switch {
	case !havePath:
		return "", nil, errResponse(http.StatusBadRequest, teamapi.ErrorDetail{Code: teamapi.CodeInvalidArgument, Field: "path", Message: "path: missing (the note's vault path, e.g. notes/idea.md)"})
	case !haveFile:
		return "", nil, errResponse(http.StatusBadRequest, teamapi.ErrorDetail{Code: teamapi.CodeInvalidArgument, Field: "file", Message: "file: missing (the note's content)"})
	}
	return path, content, nil
}

// writable refuses a write with a read-only key. A token without
// vault:write is told so in the challenge too (RFC 6750 insufficient_scope,
// naming the scope), so that an OAuth client can ask for it.
func (s *Server) writable(r *http.Request, k *teamstore.Key) *response {
	if !k.ReadOnly {
		return nil
	}
	if strings.HasPrefix(k.ID, oauthKeyPrefix) {
		oe := &oauth.Error{Code: "insufficient_scope", Reason: "the token lacks the scope " + oauth.ScopeWrite, Scope: oauth.ScopeWrite}
		resp := errorf(http.StatusForbidden, teamapi.CodeReadOnlyKey, "the access token of %q is read-only: a write needs the scope %s", k.Name, oauth.ScopeWrite)
		resp.header.Set("WWW-Authenticate", oauth.Challenge(s.metadataURL(r), oe))
		return resp
	}
	return errorf(http.StatusForbidden, teamapi.CodeReadOnlyKey, "the key %q is read-only", k.Name)
}

// updateFile: PUT .../files/{id}, the raw new content.
func (s *Server) updateFile(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project, id string) {
	refuse := func(resp *response) { s.refuse(w, r, k, pr, "update", s.filePath(r.Context(), pr, id), resp) }
	if fail := s.writable(r, k); fail != nil {
		refuse(fail)
		return
	}
	// The body is the note's bytes as they are. A form (curl -F, as a
	// create is sent) is refused: its MIME envelope would become the note.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
		refuse(errorf(http.StatusUnsupportedMediaType, teamapi.CodeUnsupportedMedia, "a PUT's body is the note's new content as it is (e.g. curl --data-binary @note.md -H 'Content-Type: application/octet-stream'), not a multipart form"))
		return
	}
	content, fail := readBody(w, r, maxBody)
	if fail != nil {
		refuse(fail)
		return
	}
	if len(content) > MaxNote {
		refuse(errorf(http.StatusRequestEntityTooLarge, teamapi.CodeTooLarge, "the content is over the %d-byte limit of a note", MaxNote))
		return
	}
	ifMatch := r.Header.Get("If-Match")
	s.runWrite(w, r, k, writeOp{pr: pr, op: "update", target: id, fingerprint: fingerprint("update", pr.meta.ID, id, ifMatch, string(content)),
		apply: func(ctx context.Context) *outcome {
			f, data, _, fail := s.liveFile(ctx, pr, id)
			if fail != nil {
				return failed(fail)
			}
			current := sha256Hex(data)
			if ifMatch != "" && !etagMatches(ifMatch, current, false) {
				return failedAt(preconditionFailed(f.Path, current), f.Path)
			}
			res, err := pr.svc.WriteNoteRaw(ctx, api.WriteRequest{Path: f.Path, Content: string(content), ExpectedSHA256: current})
			if err != nil {
				if api.CodeOf(err) == api.CodeConflict {
					now, _, rerr := pr.svc.FS().ReadNote(f.Path)
					if rerr == nil {
						return failedAt(preconditionFailed(f.Path, sha256Hex(now)), f.Path)
					}
				}
				return failedAt(vaultError(err), f.Path)
			}
			return s.written(ctx, pr, res, "update "+res.Path, func(at time.Time, files map[string]teamstore.File) *response {
				wf, err := s.fileAnswer(ctx, pr, at, files, res.Path)
				if err != nil {
					return vaultError(err)
				}
				return withETag(jsonResponse(http.StatusOK, teamapi.FileAnswer{File: wf, Warnings: res.Warnings}), wf.ContentHash)
			})
		}})
}

// moveFile: PATCH .../files/{id} {"newPath"}, through the vault's move, so
// every link to the note is rewritten and its MOC line follows it.
func (s *Server) moveFile(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project, id string) {
	refuse := func(resp *response) { s.refuse(w, r, k, pr, "move", s.filePath(r.Context(), pr, id), resp) }
	if fail := s.writable(r, k); fail != nil {
		refuse(fail)
		return
	}
	body, fail := readBody(w, r, 64<<10)
	if fail != nil {
		refuse(fail)
		return
	}
	var req teamapi.MoveRequest
	if err := decodeStrict(body, &req); err != nil {
		refuse(badBodyAnswer(err, "the body must be {\"newPath\": \"...\"}: %v", err))
		return
	}
	if req.NewPath == "" {
		refuse(errResponse(http.StatusBadRequest, teamapi.ErrorDetail{Code: teamapi.CodeInvalidArgument, Field: "newPath", Message: "newPath: missing"}))
		return
	}
	ifMatch := r.Header.Get("If-Match")
	s.runWrite(w, r, k, writeOp{pr: pr, op: "move", target: id, fingerprint: fingerprint("move", pr.meta.ID, id, ifMatch, req.NewPath),
		apply: func(ctx context.Context) *outcome {
			f, data, _, fail := s.liveFile(ctx, pr, id)
			if fail != nil {
				return failed(fail)
			}
			current := sha256Hex(data)
			if ifMatch != "" && !etagMatches(ifMatch, current, false) {
				return failedAt(preconditionFailed(f.Path, current), f.Path)
			}
			if to, err := vaultfs.Clean(req.NewPath); err == nil && to == f.Path {
				return failedAt(errResponse(http.StatusBadRequest, teamapi.ErrorDetail{Code: teamapi.CodeInvalidArgument, Field: "newPath",
					Message: fmt.Sprintf("newPath: %s is where the note is already", vaultfs.QuotePath(f.Path))}), f.Path)
			}
			res, err := pr.svc.Move(ctx, api.MoveRequest{From: f.Path, To: req.NewPath, ConfirmNewDomain: true})
			if err != nil {
				if api.CodeOf(err) == api.CodeAlreadyExists {
					return failedAt(pathExists(err, "newPath"), f.Path, req.NewPath)
				}
				return failedAt(renameField(vaultError(err), "to", "newPath"), f.Path, req.NewPath)
			}
			return s.written(ctx, pr, res, "move "+res.From+" -> "+res.Path, func(_ time.Time, files map[string]teamstore.File) *response {
				fid := id
				if mf, ok := files[res.Path]; ok {
					fid = mf.ID
				}
				ans := teamapi.MoveAnswer{File: teamapi.MovedFile{ID: fid, Path: res.Path}, LinksRewritten: res.LinksRewritten, NotesRewritten: res.NotesRewritten, Warnings: res.Warnings}
				return withETag(jsonResponse(http.StatusOK, ans), res.SHA256)
			})
		}})
}

// deleteFile: DELETE .../files/{id}: the note is removed from the vault (a
// commit, so it can be brought back) and its id becomes a tombstone.
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project, id string) {
	if fail := s.writable(r, k); fail != nil {
		s.refuse(w, r, k, pr, "delete", s.filePath(r.Context(), pr, id), fail)
		return
	}
	ifMatch := r.Header.Get("If-Match")
	s.runWrite(w, r, k, writeOp{pr: pr, op: "delete", target: id, fingerprint: fingerprint("delete", pr.meta.ID, id, ifMatch),
		apply: func(ctx context.Context) *outcome {
			f, data, _, fail := s.liveFile(ctx, pr, id)
			if fail != nil {
				return failed(fail)
			}
			current := sha256Hex(data)
			if ifMatch != "" && !etagMatches(ifMatch, current, false) {
				return failedAt(preconditionFailed(f.Path, current), f.Path)
			}
			res, err := pr.svc.Delete(ctx, api.DeleteRequest{Path: f.Path, Confirm: true})
			if err != nil {
				return failedAt(vaultError(err), f.Path)
			}
			return s.written(ctx, pr, res, "delete "+res.Path, func(time.Time, map[string]teamstore.File) *response {
				return jsonResponse(http.StatusOK, teamapi.DeleteAnswer{Success: true, Warnings: res.Warnings})
			})
		}})
}

// pathExists is the 409 path_exists answer to the vault's refusal of a
// name a note holds already, on the request's field, with the vault's
// message: it names the note that is there, which may be spelt otherwise
// than the path asked for (letter case, Unicode normalisation).
func pathExists(err error, field string) *response {
	d := teamapi.ErrorDetail{Code: teamapi.CodePathExists, Field: field, Message: "a note already exists there; it is never overwritten"}
	var ae *api.Error
	if errors.As(fieldErr(field, err), &ae) && ae.Message != "" {
		d.Message = ae.Message
	}
	return errResponse(http.StatusConflict, d)
}

// renameField renames the field of an error answer (the vault's names are
// not the REST API's).
func renameField(r *response, from, to string) *response {
	var body teamapi.ErrorBody
	if err := jsonUnmarshal(r.body, &body); err != nil || body.Error.Field != from {
		return r
	}
	body.Error.Field = to
	out := errResponse(r.status, body.Error)
	for k, vs := range r.header {
		if k != "Content-Type" {
			out.header[k] = vs
		}
	}
	return out
}
