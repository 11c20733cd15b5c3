package teamserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// The files API serves notes only (.md and .markdown): the vault's
// gatekeeper writes nothing else, so a create of any other file is refused
// with 400 invalid_extension, and attachments are not listed.

// foundMessage is the version message of a note the server first saw on
// disk rather than through a write of its own.
const foundMessage = "found in the vault (not written through the team server)"

// noteHash returns the content hash of a note the gatekeeper walked or
// stat'ed, from the cache when its size and time are unchanged.
func (pr *project) noteHash(fi vaultfs.FileInfo) (string, vaultfs.FileInfo, error) {
	if h, ok := pr.hashes.get(fi); ok {
		return h, fi, nil
	}
	data, got, err := pr.svc.FS().ReadWalked(fi)
	if err != nil {
		return "", fi, err
	}
	h := sha256Hex(data)
	pr.hashes.put(got, h)
	return h, got, nil
}

func wireFile(f teamstore.File, fi vaultfs.FileInfo, hash string) teamapi.File {
	return teamapi.File{ID: f.ID, Path: f.Path, FileType: teamapi.FileTypeMarkdown, ContentHash: hash, Size: fi.Size,
		MimeType: teamapi.MimeMarkdown, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// ensure gives ids to notes found on disk that have none yet, each with a
// first version saying so, and returns the files of those still there (in
// order; a note gone since it was seen is left out). It holds the project's
// book alone, so no write of the server is between its change on disk and
// its bookkeeping meanwhile: a note the server just created, moved or
// revived gets the id its write recorded, with no version of its own.
func (s *Server) ensure(ctx context.Context, pr *project, paths []string) ([]teamstore.File, error) {
	ctx, cancel := s.storeCtxFor(ctx, len(paths))
	defer cancel()
	pr.book.Lock()
	defer pr.book.Unlock()
	var present, hashes []string
	for _, p := range paths {
		fi, err := pr.svc.FS().Stat(p)
		if err != nil {
			continue // deleted or moved away since it was seen
		}
		h, _, err := pr.noteHash(fi)
		if err != nil {
			continue
		}
		present, hashes = append(present, p), append(hashes, h)
	}
	if len(present) == 0 {
		return nil, nil
	}
	at := s.now()
	fs, err := s.store.EnsureFiles(ctx, pr.meta.ID, present, at)
	if err != nil {
		return nil, err
	}
	rec := teamstore.Record{Project: pr.meta.ID, At: at}
	for i, f := range fs {
		vs, err := s.store.Versions(ctx, pr.meta.ID, f.ID)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			rec.Versions = append(rec.Versions, teamstore.Version{FileID: f.ID, Path: f.Path, Hash: hashes[i], Message: foundMessage})
		}
	}
	if len(rec.Versions) > 0 {
		if err := s.store.Record(ctx, rec); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// listFiles lists the notes of a project whose path passes keep, with ids.
func (s *Server) listFiles(ctx context.Context, pr *project, keep func(string) bool) ([]teamapi.File, error) {
	lctx, cancel := s.storeCtx(ctx)
	live, err := s.store.LiveFiles(lctx, pr.meta.ID)
	cancel()
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]teamstore.File, len(live))
	for _, f := range live {
		byPath[f.Path] = f
	}
	type found struct {
		fi   vaultfs.FileInfo
		hash string
	}
	var notes []found
	var newPaths []string
	err = pr.svc.FS().Walk(ctx, func(fi vaultfs.FileInfo) error {
		if !fi.IsNote || !keep(fi.Path) {
			return nil
		}
		h, got, err := pr.noteHash(fi)
		if err != nil {
			return nil // unreadable as a note now (too large, replaced): not listed
		}
		notes = append(notes, found{got, h})
		if _, ok := byPath[fi.Path]; !ok {
			newPaths = append(newPaths, fi.Path)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	if len(newPaths) > 0 {
		fs, err := s.ensure(ctx, pr, newPaths)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			byPath[f.Path] = f
		}
	}
	out := make([]teamapi.File, 0, len(notes))
	for _, n := range notes {
		f, ok := byPath[n.fi.Path]
		if !ok {
			continue // gone since the walk saw it
		}
		out = append(out, wireFile(f, n.fi, n.hash))
	}
	return out, nil
}

// lookup finds the note at a client path: its file (with an id) or false
// when there is no note there.
func (s *Server) lookup(ctx context.Context, pr *project, p string) (teamapi.File, bool, error) {
	rel, err := vaultfs.Clean(p)
	if err != nil {
		return teamapi.File{}, false, err
	}
	if !vaultfs.IsNoteName(rel) {
		return teamapi.File{}, false, nil
	}
	fi, err := pr.svc.FS().Stat(rel)
	if err != nil {
		if vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
			return teamapi.File{}, false, nil
		}
		return teamapi.File{}, false, err
	}
	return s.describe(ctx, pr, fi)
}

// describe builds the wire file of a note that exists (giving it an id).
func (s *Server) describe(ctx context.Context, pr *project, fi vaultfs.FileInfo) (teamapi.File, bool, error) {
	h, got, err := pr.noteHash(fi)
	if err != nil {
		if vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
			return teamapi.File{}, false, nil
		}
		return teamapi.File{}, false, err
	}
	fctx, cancel := s.storeCtx(ctx)
	f, err := s.store.FileByPath(fctx, pr.meta.ID, got.Path)
	cancel()
	if err != nil || !f.Live() {
		if err != nil && !errors.Is(err, teamstore.ErrNotFound) {
			return teamapi.File{}, false, err
		}
		fs, err := s.ensure(ctx, pr, []string{got.Path})
		if err != nil {
			return teamapi.File{}, false, err
		}
		if len(fs) == 0 {
			return teamapi.File{}, false, nil // gone meanwhile
		}
		f = fs[0]
	}
	return wireFile(f, got, h), true, nil
}

// describePath is describe for a clean vault path.
func (s *Server) describePath(ctx context.Context, pr *project, rel string) (teamapi.File, bool, error) {
	fi, err := pr.svc.FS().Stat(rel)
	if err != nil {
		if vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
			return teamapi.File{}, false, nil
		}
		return teamapi.File{}, false, err
	}
	return s.describe(ctx, pr, fi)
}

// liveFile finds a live file by id whose note exists: the file, its bytes,
// or the 404 answer.
func (s *Server) liveFile(ctx context.Context, pr *project, id string) (teamstore.File, []byte, vaultfs.FileInfo, *response) {
	fctx, cancel := s.storeCtx(ctx)
	f, err := s.store.File(fctx, pr.meta.ID, id)
	cancel()
	if err != nil || !f.Live() {
		if err != nil && !errors.Is(err, teamstore.ErrNotFound) {
			return f, nil, vaultfs.FileInfo{}, vaultError(err)
		}
		return f, nil, vaultfs.FileInfo{}, errorf(http.StatusNotFound, teamapi.CodeNotFound, "no file %q in project %s", id, pr.meta.Name)
	}
	data, fi, err := pr.svc.FS().ReadNote(f.Path)
	if err != nil {
		if vaultfs.CodeOf(err) == vaultfs.CodeNotFound {
			return f, nil, fi, errorf(http.StatusNotFound, teamapi.CodeNotFound, "file %q (%s) is no longer in the vault", id, f.Path)
		}
		return f, nil, fi, vaultError(err)
	}
	return f, data, fi, nil
}

// handleFiles: GET lists (?path= exact, ?prefix=), POST creates.
func (s *Server) handleFiles(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q := r.URL.Query()
		if p, ok := q["path"]; ok {
			f, found, err := s.lookup(r.Context(), pr, p[0])
			if err != nil {
				vaultError(fieldErr("path", err)).write(w)
				return
			}
			files := []teamapi.File{}
			if found {
				files = append(files, f)
			}
			jsonResponse(http.StatusOK, teamapi.FileList{Files: files}).write(w)
			return
		}
		prefix := strings.TrimLeft(strings.ReplaceAll(q.Get("prefix"), `\`, "/"), "/")
		prefix = strings.TrimPrefix(prefix, "./")
		files, err := s.listFiles(r.Context(), pr, func(p string) bool { return strings.HasPrefix(p, prefix) })
		if err != nil {
			vaultError(err).write(w)
			return
		}
		jsonResponse(http.StatusOK, teamapi.FileList{Files: files}).write(w)
	case http.MethodPost:
		s.createFile(w, r, k, pr)
	default:
		methodNotAllowed(w, "GET, POST")
	}
}

// handleFile: GET raw bytes, PUT replaces, PATCH moves, DELETE deletes.
func (s *Server) handleFile(w http.ResponseWriter, r *http.Request, k *teamstore.Key, pr *project) {
	id := r.PathValue("id")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		_, data, _, fail := s.liveFile(r.Context(), pr, id)
		if fail != nil {
			fail.write(w)
			return
		}
		h := sha256Hex(data)
		w.Header().Set("ETag", etag(h))
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, h, true) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(data)
		}
	case http.MethodPut:
		s.updateFile(w, r, k, pr, id)
	case http.MethodPatch:
		s.moveFile(w, r, k, pr, id)
	case http.MethodDelete:
		s.deleteFile(w, r, k, pr, id)
	default:
		methodNotAllowed(w, "GET, PUT, PATCH, DELETE")
	}
}

// handleVersions: GET the versions of a file, newest first.
func (s *Server) handleVersions(w http.ResponseWriter, r *http.Request, _ *teamstore.Key, pr *project) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET")
		return
	}
	id := r.PathValue("id")
	ctx, cancel := s.storeCtx(r.Context())
	defer cancel()
	f, err := s.store.File(ctx, pr.meta.ID, id)
	if err != nil || !f.Live() {
		if err != nil && !errors.Is(err, teamstore.ErrNotFound) {
			vaultError(err).write(w)
			return
		}
		errorf(http.StatusNotFound, teamapi.CodeNotFound, "no file %q in project %s", id, pr.meta.Name).write(w)
		return
	}
	vs, err := s.store.Versions(ctx, pr.meta.ID, f.ID)
	if err != nil {
		vaultError(err).write(w)
		return
	}
	out := teamapi.VersionList{Versions: make([]teamapi.Version, 0, len(vs))}
	for _, v := range vs {
		out.Versions = append(out.Versions, teamapi.Version{ID: v.VersionID, VersionNumber: v.Number, ContentHash: v.Hash, Message: v.Message, CreatedAt: v.CreatedAt})
	}
	jsonResponse(http.StatusOK, out).write(w)
}

// etagMatches reports whether an If-Match / If-None-Match list names the
// hash: "*" matches any existing file; weak tags (W/"...") match only for
// If-None-Match (weak comparison); a bare hash without quotes is accepted
// too, since clients copy contentHash as it is.
func etagMatches(list, hash string, weak bool) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" {
			return true
		}
		if strings.HasPrefix(t, "W/") {
			if !weak {
				continue
			}
			t = t[2:]
		}
		t = strings.Trim(t, `"`)
		if strings.EqualFold(t, hash) {
			return true
		}
	}
	return false
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	errorf(http.StatusMethodNotAllowed, teamapi.CodeMethodNotAllowed, "method not allowed here (allowed: %s)", allow).write(w)
}
