package teamclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/jsonx"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// The basic Team Vault API: files by path, by id, their versions, and the
// writes on them.

func projectSegs(ref string, more ...string) []string {
	return append([]string{"api", "projects", ref}, more...)
}

const jsonType = "application/json"

// lookup finds the live file at a clean path (GET files?path= and an exact
// match among the answers), or nil when there is none.
func (cl *call) lookup(p project, rel string) (*teamapi.File, error) {
	a, err := cl.send(request{method: http.MethodGet, segs: projectSegs(p.ref, "files"), query: url.Values{"path": {rel}}})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	var l teamapi.FileList
	if err := a.decode(&l); err != nil {
		return nil, err
	}
	for i := range l.Files {
		if l.Files[i].Path == rel {
			return &l.Files[i], nil
		}
	}
	return nil, nil
}

// mustLookup is lookup for a note that must exist.
func (cl *call) mustLookup(p project, field, rel string) (*teamapi.File, error) {
	f, err := cl.lookup(p, rel)
	if err == nil && f == nil {
		err = notFound(field, rel, p.ref)
	}
	return f, err
}

// listFiles lists every file of the project.
func (cl *call) listFiles(p project) ([]teamapi.File, error) {
	a, err := cl.send(request{method: http.MethodGet, segs: projectSegs(p.ref, "files")})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	var l teamapi.FileList
	if err := a.decode(&l); err != nil {
		return nil, err
	}
	return l.Files, nil
}

// fetch reads a file's bytes by id.
func (cl *call) fetch(p project, field, rel, id string) ([]byte, error) {
	a, err := cl.send(request{method: http.MethodGet, segs: projectSegs(p.ref, "files", id)})
	if err != nil {
		return nil, err
	}
	if a.status == http.StatusNotFound {
		return nil, notFound(field, rel, p.ref)
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	return a.body, nil
}

// versions lists a file's versions, newest first.
func (cl *call) versions(p project, id string) ([]teamapi.Version, error) {
	a, err := cl.send(request{method: http.MethodGet, segs: projectSegs(p.ref, "files", id, "versions")})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	var l teamapi.VersionList
	if err := a.decode(&l); err != nil {
		return nil, err
	}
	return l.Versions, nil
}

// create creates a note: POST files, multipart with "path" and "file".
func (cl *call) create(p project, rel string, content []byte) (*teamapi.FileAnswer, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("path", rel); err != nil {
		return nil, err
	}
	fw, err := mw.CreateFormFile("file", fileName(rel))
	if err != nil {
		return nil, err
	}
	fw.Write(content)
	if err := mw.Close(); err != nil {
		return nil, err
	}
	a, err := cl.send(request{method: http.MethodPost, segs: projectSegs(p.ref, "files"), body: buf.Bytes(), ctype: mw.FormDataContentType(), write: true})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, map[string]string{"file": "content"})
	}
	var out teamapi.FileAnswer
	return &out, a.decode(&out)
}

// fileName is the multipart file name of a path: its last segment, or a
// neutral name when the MIME header could not carry it.
func fileName(rel string) string {
	name := path.Base(rel)
	if strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == '"' || r == '\\' || r == 0x7f }) {
		return "note.md"
	}
	return name
}

// replace replaces a note's bytes (PUT files/{id}) if its hash is still
// ifMatch.
func (cl *call) replace(p project, id, ifMatch string, content []byte) (*teamapi.FileAnswer, error) {
	a, err := cl.send(request{method: http.MethodPut, segs: projectSegs(p.ref, "files", id), body: content, ctype: "text/markdown; charset=utf-8", ifMatch: ifMatch, write: true})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	var out teamapi.FileAnswer
	return &out, a.decode(&out)
}

// rename moves a note (PATCH files/{id} {newPath}).
func (cl *call) rename(p project, id, to string) (*teamapi.MoveAnswer, string, error) {
	body, _ := json.Marshal(teamapi.MoveRequest{NewPath: to})
	a, err := cl.send(request{method: http.MethodPatch, segs: projectSegs(p.ref, "files", id), body: body, ctype: jsonType, write: true})
	if err != nil {
		return nil, "", err
	}
	if !a.ok() {
		return nil, "", cl.failure(a, map[string]string{"newPath": "to"})
	}
	var out teamapi.MoveAnswer
	return &out, strings.Trim(a.header.Get("ETag"), `"`), a.decode(&out)
}

// remove deletes a note (DELETE files/{id}) if its content still has the
// hash ifMatch.
func (cl *call) remove(p project, id, ifMatch string) (*teamapi.DeleteAnswer, error) {
	a, err := cl.send(request{method: http.MethodDelete, segs: projectSegs(p.ref, "files", id), ifMatch: ifMatch, write: true})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		err := cl.failure(a, nil)
		var e *api.Error
		if errors.As(err, &e) && e.Field == "expected_sha256" {
			e.Field = "path" // a delete takes no hash: the note changed
		}
		return nil, err
	}
	var out teamapi.DeleteAnswer
	return &out, a.decode(&out)
}

// ext calls an extension endpoint: POST /api/projects/{p}/{op} with the
// api request as JSON, answered with the api result.
func ext[Out any](cl *call, p project, op string, req any, write bool) (*Out, error) {
	return extIf[Out](cl, p, op, req, write, "")
}

// extIf is ext with an If-Match header (the hash a replacement expects).
func extIf[Out any](cl *call, p project, op string, req any, write bool, ifMatch string) (*Out, error) {
	body, err := jsonx.Marshal(req)
	if err != nil {
		return nil, api.Invalid("arguments", "%v", err)
	}
	a, err := cl.send(request{method: http.MethodPost, segs: projectSegs(p.ref, op), body: body, ctype: jsonType, write: write, ifMatch: ifMatch})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	var out Out
	if err := a.decode(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// extensions says whether the project's server has the extension
// endpoints, asking once per project: an extension endpoint that is there
// refuses a body with an unknown field (400); a server without it answers
// 404 (or 405, 501), and then the files API tells "no such endpoint" from
// "no such project".
func (cl *call) extensions(ref string) (bool, error) {
	cl.c.mu.Lock()
	v, ok := cl.c.ext[ref]
	cl.c.mu.Unlock()
	if ok {
		return v, nil
	}
	a, err := cl.send(request{method: http.MethodPost, segs: projectSegs(ref, "note"), body: []byte(`{"vaultmcp_probe":true}`), ctype: jsonType})
	if err != nil {
		return false, err
	}
	switch code := serverCode(a.body); {
	case a.status == http.StatusBadRequest && (code == teamapi.CodeBadRequest || code == teamapi.CodeInvalidArgument):
		v = true
	case a.status == http.StatusNotFound || a.status == http.StatusMethodNotAllowed || a.status == http.StatusNotImplemented:
		b, err := cl.send(request{method: http.MethodGet, segs: projectSegs(ref, "files"), query: url.Values{"path": {"vaultmcp-probe.md"}}})
		if err != nil {
			return false, err
		}
		if !b.ok() {
			return false, cl.failure(b, nil)
		}
		v = false
	default:
		return false, cl.failure(a, nil)
	}
	cl.c.mu.Lock()
	cl.c.ext[ref] = v
	cl.c.mu.Unlock()
	if !v {
		cl.c.log.Info("team server without extension endpoints: search, backlinks and graph use a local mirror of the project", "project", ref)
	}
	return v, nil
}
