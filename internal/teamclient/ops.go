package teamclient

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/teamapi"
	"github.com/vaultmcp/vaultmcp/internal/vault"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// The operations of the backend: each is one tool call (one budget), on
// the extension endpoints when the project's server has them, else on the
// basic files API and the project's local mirror.

// readTool runs a read tool whose request is req: on the extension endpoint
// op when the project's server has them, else by local on the project's
// mirror, synced whole (a note's links resolve against every other note).
// path, when not nil, is the request's note path (in req), checked first.
func readTool[Req, Res any](ctx context.Context, c *Client, op string, req *Req, path *string, local func(*vault.Service, context.Context, Req) (*Res, error)) (*Res, error) {
	return run(ctx, c, func(cl *call, p project) (*Res, error) {
		if path != nil {
			rel, err := cleanPath("path", *path, vaultfs.Read)
			if err != nil {
				return nil, err
			}
			*path = rel
		}
		if p.ext {
			return ext[Res](cl, p, op, *req, false)
		}
		m, err := cl.syncAll(p)
		if err != nil {
			return nil, err
		}
		return local(m.svc, cl.ctx, *req)
	})
}

// Search runs vault_search.
func (c *Client) Search(ctx context.Context, req api.SearchRequest) (*api.SearchResult, error) {
	return readTool(ctx, c, "search", &req, nil, (*vault.Service).Search)
}

// GetNote runs vault_get_note.
func (c *Client) GetNote(ctx context.Context, req api.NoteRequest) (*api.Note, error) {
	return readTool(ctx, c, "note", &req, &req.Path, (*vault.Service).GetNote)
}

// List runs vault_list.
func (c *Client) List(ctx context.Context, req api.ListRequest) (*api.ListResult, error) {
	return readTool(ctx, c, "list", &req, nil, (*vault.Service).List)
}

// Backlinks runs vault_backlinks.
func (c *Client) Backlinks(ctx context.Context, req api.BacklinksRequest) (*api.BacklinksResult, error) {
	return readTool(ctx, c, "backlinks", &req, &req.Path, (*vault.Service).Backlinks)
}

// Graph runs vault_graph.
func (c *Client) Graph(ctx context.Context, req api.GraphRequest) (*api.GraphResult, error) {
	return readTool(ctx, c, "graph", &req, nil, (*vault.Service).Graph)
}

// History runs vault_history: the server's versions of the note.
func (c *Client) History(ctx context.Context, req api.HistoryRequest) (*api.HistoryResult, error) {
	return run(ctx, c, func(cl *call, p project) (*api.HistoryResult, error) {
		rel, err := cleanPath("path", req.Path, vaultfs.Read)
		if err != nil {
			return nil, err
		}
		req.Path = rel
		if p.ext {
			return ext[api.HistoryResult](cl, p, "history", req, false)
		}
		limit := req.Limit
		switch {
		case limit <= 0:
			limit = api.DefaultHistory
		case limit > api.MaxHistory:
			limit = api.MaxHistory
		}
		f, err := cl.mustLookup(p, "path", rel)
		if err != nil {
			return nil, err
		}
		vs, err := cl.versions(p, f.ID)
		if err != nil {
			return nil, err
		}
		out := &api.HistoryResult{Path: rel, Versions: []api.Version{}}
		for _, v := range vs[:min(len(vs), limit)] {
			out.Versions = append(out.Versions, api.Version{ID: v.ID, Date: v.CreatedAt.UTC().Format(time.RFC3339), Message: v.Message})
		}
		return out, nil
	})
}

// WriteNote runs vault_write_note.
func (c *Client) WriteNote(ctx context.Context, req api.WriteRequest) (*api.WriteResult, error) {
	return run(ctx, c, func(cl *call, p project) (*api.WriteResult, error) {
		rel, err := cleanPath("path", req.Path, vaultfs.Write)
		if err != nil {
			return nil, err
		}
		req.Path = rel
		if p.ext {
			// The server checks expected_sha256 itself; If-Match says it
			// to anything on the way that honours it.
			return extIf[api.WriteResult](cl, p, "write", req, true, strings.ToLower(req.ExpectedSHA256))
		}
		return cl.plainWrite(p, req)
	})
}

// EditNote runs vault_edit_note.
func (c *Client) EditNote(ctx context.Context, req api.EditRequest) (*api.WriteResult, error) {
	return run(ctx, c, func(cl *call, p project) (*api.WriteResult, error) {
		if req.OldText == "" {
			return nil, api.Invalid("old_text", "must not be empty")
		}
		rel, err := cleanPath("path", req.Path, vaultfs.Write)
		if err != nil {
			return nil, err
		}
		req.Path = rel
		if p.ext {
			return ext[api.WriteResult](cl, p, "edit", req, true)
		}
		return cl.plainEdit(p, req)
	})
}

// Move runs vault_move.
func (c *Client) Move(ctx context.Context, req api.MoveRequest) (*api.WriteResult, error) {
	return run(ctx, c, func(cl *call, p project) (*api.WriteResult, error) {
		from, err := cleanPath("from", req.From, vaultfs.Move)
		if err != nil {
			return nil, cl.folderAsFrom(p, req.From, err)
		}
		to, err := cleanPath("to", req.To, vaultfs.Move)
		if err != nil {
			return nil, err
		}
		if from == to {
			return nil, cl.c.refuse.SamePath()
		}
		req.From, req.To = from, to
		if p.ext {
			return ext[api.WriteResult](cl, p, "move", req, true)
		}
		return cl.plainMove(p, req)
	})
}

// Delete runs vault_delete.
func (c *Client) Delete(ctx context.Context, req api.DeleteRequest) (*api.WriteResult, error) {
	return run(ctx, c, func(cl *call, p project) (*api.WriteResult, error) {
		rel, err := cleanPath("path", req.Path, vaultfs.Write)
		if err != nil {
			return nil, err
		}
		req.Path = rel
		if p.ext {
			res, err := ext[api.WriteResult](cl, p, "delete", req, true)
			if res != nil {
				// The server's vault says how to restore the note with git
				// in its own repository, which the agent's shell cannot
				// reach: vault_undo is the way back here.
				res.UndoHint = ""
			}
			return res, err
		}
		return cl.plainDelete(p, req)
	})
}

// Undo runs vault_undo (extension endpoints only).
func (c *Client) Undo(ctx context.Context, req api.UndoRequest) (*api.WriteResult, error) {
	return run(ctx, c, func(cl *call, p project) (*api.WriteResult, error) {
		if !p.ext {
			return nil, unsupported("vault_undo")
		}
		return ext[api.WriteResult](cl, p, "undo", req, true)
	})
}

// Learn runs vault_learn (extension endpoints only).
func (c *Client) Learn(ctx context.Context, req api.LearnRequest) (*api.LearnResult, error) {
	return run(ctx, c, func(cl *call, p project) (*api.LearnResult, error) {
		if !p.ext {
			return nil, unsupported("vault_learn")
		}
		return ext[api.LearnResult](cl, p, "learn", req, true)
	})
}

// WhoAmI says who the API key is (GET /api/auth/me), on which server, with
// which default project, and whether that project's server has the
// extension endpoints (when that is known already).
func (c *Client) WhoAmI(ctx context.Context) (*api.Identity, error) {
	cl := c.begin(ctx)
	defer cl.end()
	return cl.whoAmI()
}

func (cl *call) whoAmI() (*api.Identity, error) {
	a, err := cl.send(request{method: http.MethodGet, segs: []string{"api", "auth", "me"}})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	var me teamapi.Me
	if err := a.decode(&me); err != nil {
		return nil, err
	}
	id := &api.Identity{Name: me.Key.Name, KeyID: me.Key.ID, ReadOnly: me.Key.ReadOnly, ExpiresAt: me.Key.ExpiresAt, Scope: me.Key.Projects, Server: cl.c.base, DefaultProject: cl.c.DefaultProject()}
	if id.DefaultProject != "" {
		cl.c.mu.Lock()
		id.Extensions, id.ExtensionsKnown = cl.c.ext[id.DefaultProject]
		cl.c.mu.Unlock()
	}
	return id, nil
}

// Projects lists the projects the key may use (GET /api/projects).
func (c *Client) Projects(ctx context.Context) (*api.ProjectList, error) {
	cl := c.begin(ctx)
	defer cl.end()
	return cl.projects()
}

func (cl *call) projects() (*api.ProjectList, error) {
	a, err := cl.send(request{method: http.MethodGet, segs: []string{"api", "projects"}})
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, cl.failure(a, nil)
	}
	var l teamapi.ProjectList
	if err := a.decode(&l); err != nil {
		return nil, err
	}
	def := cl.c.DefaultProject()
	out := &api.ProjectList{Projects: []api.Project{}}
	for _, p := range l.Projects {
		ap := api.Project{ID: p.ID, Name: p.Name, Default: def != "" && (p.ID == def || p.Name == def)}
		if !p.CreatedAt.IsZero() {
			ap.Created = p.CreatedAt.UTC().Format(time.RFC3339)
		}
		if ap.Default {
			out.Default = p.Name
		}
		out.Projects = append(out.Projects, ap)
	}
	sort.Slice(out.Projects, func(i, j int) bool { return out.Projects[i].Name < out.Projects[j].Name })
	return out, nil
}

// Connect checks the key (GET /api/auth/me), settles the default project
// (the only one the key may use, when none was given) and asks whether its
// server has the extension endpoints. A failure to settle the project is
// not an error: the tools will say it. A server that answers 404 to
// /api/auth/me is a *NoAPIError.
func (c *Client) Connect(ctx context.Context) (*api.Identity, error) {
	cl := c.begin(ctx)
	defer cl.end()
	id, err := cl.whoAmI()
	if err != nil {
		if api.CodeOf(err) == api.CodeNotFound {
			// The server answered, and has no /api/auth/me: this URL is
			// not a team server's base URL (its API path given twice, a
			// wrong path), and no call would succeed.
			return nil, &NoAPIError{URL: c.base, Err: err}
		}
		return nil, err
	}
	ref, err := cl.projectRef()
	if err != nil {
		c.log.Warn("no default project", "err", err)
		return id, nil
	}
	id.DefaultProject = ref
	ext, err := cl.extensions(ref)
	if err != nil {
		c.log.Warn("the default project cannot be used", "project", ref, "err", err)
		return id, nil
	}
	id.Extensions, id.ExtensionsKnown = ext, true
	return id, nil
}

// folderAsFrom is the error of a move whose from the gatekeeper refused
// (err): a folder is refused for its missing extension, so, as the local
// vault does, it is said to be a folder (NOT_A_NOTE) when the project has
// files under it (one GET files?prefix=, no write sent); any other refusal,
// or a failure to ask, is err itself.
func (cl *call) folderAsFrom(p project, from string, err error) error {
	if api.CodeOf(err) != string(vaultfs.CodeInvalidExtension) {
		return err
	}
	c, cerr := vaultfs.Clean(from)
	if cerr != nil {
		return err
	}
	a, serr := cl.send(request{method: http.MethodGet, segs: projectSegs(p.ref, "files"), query: url.Values{"prefix": {c + "/"}}})
	if serr != nil || !a.ok() {
		return err
	}
	var l teamapi.FileList
	if a.decode(&l) != nil || len(l.Files) == 0 {
		return err
	}
	return cl.c.refuse.MoveFolder(c)
}
