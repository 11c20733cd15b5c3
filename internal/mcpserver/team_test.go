package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// fakeTeam is a writable backend that is also a team server's client: it
// records the project each call was made for.
type fakeTeam struct {
	*fakeWriter
	mu       sync.Mutex
	projects []string
}

func (f *fakeTeam) saw(ctx context.Context) {
	f.mu.Lock()
	f.projects = append(f.projects, api.ProjectFrom(ctx))
	f.mu.Unlock()
}

func (f *fakeTeam) Search(ctx context.Context, req api.SearchRequest) (*api.SearchResult, error) {
	f.saw(ctx)
	return f.fakeWriter.Search(ctx, req)
}

func (f *fakeTeam) WriteNote(ctx context.Context, req api.WriteRequest) (*api.WriteResult, error) {
	f.saw(ctx)
	return f.fakeWriter.WriteNote(ctx, req)
}

func (f *fakeTeam) WhoAmI(ctx context.Context) (*api.Identity, error) {
	f.saw(ctx)
	return &api.Identity{Name: "alice", Server: "https://vault.example.com", Scope: []string{"ex", "ops"}, DefaultProject: "ex",
		Extensions: false, ExtensionsKnown: true}, nil
}

func (f *fakeTeam) Projects(ctx context.Context) (*api.ProjectList, error) {
	f.saw(ctx)
	return &api.ProjectList{Default: "ex", Projects: []api.Project{{ID: "id-1", Name: "ex", Default: true}, {ID: "id-2", Name: "ops"}}}, nil
}

func (f *fakeTeam) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.projects)
}

// In team mode every vault tool takes an optional project, which reaches
// the backend in the context and not in the request; the team tools exist
// only for a team backend.
func TestProjectArgument(t *testing.T) {
	b := &fakeTeam{fakeWriter: newFakeWriter()}
	cs := connect(t, New(b, Options{}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range res.Tools {
		names[tl.Name] = true
		raw, _ := json.Marshal(tl.InputSchema)
		var schema struct {
			Properties map[string]struct{ Type any } `json:"properties"`
			Required   []string                      `json:"required"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		has := schema.Properties["project"].Type == "string" && !slices.Contains(schema.Required, "project")
		team := tl.Name == "vault_whoami" || tl.Name == "vault_projects"
		if has == team {
			t.Errorf("%s: project argument %v", tl.Name, has)
		}
	}
	if !names["vault_whoami"] || !names["vault_projects"] {
		t.Errorf("team tools missing: %v", names)
	}

	if r := call(t, cs, "vault_search", map[string]any{"query": "deploy", "project": "ops"}); r.IsError {
		t.Fatal(text(t, r))
	}
	if r := call(t, cs, "vault_search", map[string]any{"query": "deploy"}); r.IsError {
		t.Fatal(text(t, r))
	}
	if r := call(t, cs, "vault_write_note", map[string]any{"path": "a.md", "content": "x", "project": " ex "}); r.IsError {
		t.Fatal(text(t, r))
	}
	if got := b.seen(); !slices.Equal(got, []string{"ops", "", "ex"}) {
		t.Errorf("projects seen %q", got)
	}
	if req := b.recorded()[0]; req.(api.SearchRequest).Query != "deploy" {
		t.Errorf("request %+v", req)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "x", "project": 5}, "INVALID_ARGUMENT: project: must be a string"},
		{map[string]any{"query": "x", "project": "  "}, "INVALID_ARGUMENT: project: must not be empty"},
		{map[string]any{"query": "x", "projects": "ex"}, "INVALID_ARGUMENT: projects: unknown argument"},
	} {
		r := call(t, cs, "vault_search", tc.args)
		if !r.IsError || text(t, r) != tc.want {
			t.Errorf("%v: %q", tc.args, text(t, r))
		}
	}
	if r := call(t, cs, "vault_whoami", map[string]any{"project": "ex"}); !r.IsError {
		t.Error("vault_whoami took a project")
	}

	local := connect(t, New(newFakeWriter(), Options{}), nil)
	if r := call(t, local, "vault_search", map[string]any{"query": "x", "project": "ex"}); !r.IsError {
		t.Error("a local vault took a project")
	}
	lt, err := local.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == "vault_whoami" || tl.Name == "vault_projects" {
			t.Errorf("%s offered for a local vault", tl.Name)
		}
	}
}

// vault_whoami and vault_projects say who the key is and where it may go.
func TestTeamTools(t *testing.T) {
	b := &fakeTeam{fakeWriter: newFakeWriter()}
	cs := connect(t, New(b, Options{ReadOnly: true}), nil)
	who := text(t, call(t, cs, "vault_whoami", nil))
	want := "Team server: https://vault.example.com\nAPI key: alice (read and write)\nProjects allowed: ex, ops\n" +
		"Default project: ex (a plain Team Vault server: search, backlinks and graph come from a local copy of the project)\n"
	if who != want {
		t.Errorf("whoami:\n%s\nwant:\n%s", who, want)
	}
	ps := text(t, call(t, cs, "vault_projects", map[string]any{}))
	if ps != "2 project(s):\n- ex (id-1) — default\n- ops (id-2)\n" {
		t.Errorf("projects:\n%s", ps)
	}
	// An expiring key says when it expires.
	until := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	rendered := renderIdentity(newMessages("en"), &api.Identity{Name: "ci", ReadOnly: true, ExpiresAt: until, Server: "https://vault.example.com"})
	if !strings.Contains(rendered, "API key: ci (read-only; expires 2027-03-01T09:00:00Z)\n") {
		t.Errorf("whoami of an expiring key:\n%s", rendered)
	}
	if got := renderIdentity(newMessages("pt"), &api.Identity{Name: "ci", ExpiresAt: until}); !strings.Contains(got, "(leitura e escrita; expira em 2027-03-01T09:00:00Z)") {
		t.Errorf("pt whoami of an expiring key:\n%s", got)
	}
	pt := connect(t, New(b, Options{Lang: "pt"}), nil)
	if got := text(t, call(t, pt, "vault_projects", nil)); !strings.HasPrefix(got, "2 projeto(s):") || !strings.Contains(got, "— padrão") {
		t.Errorf("pt: %q", got)
	}
	init := cs.InitializeResult()
	if !strings.Contains(init.Instructions, "vault_projects lists the projects") {
		t.Errorf("instructions: %s", init.Instructions)
	}
}

// The tool schemas of team mode, snapshotted as tools.golden.json is.
func TestTeamToolSchemasGolden(t *testing.T) {
	cs := connect(t, New(&fakeTeam{fakeWriter: newFakeWriter()}, Options{}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := slices.Clone(res.Tools)
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	got, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tools.team.golden.json", append(got, '\n'))
}

func (f *fakeTeam) Learn(ctx context.Context, req api.LearnRequest) (*api.LearnResult, error) {
	f.saw(ctx)
	return f.fakeWriter.Learn(ctx, req)
}

// vault_learn has a project argument of its own (the project a learning
// came from, noted in the daily note): in team mode it keeps it, with the
// same meaning as locally, and the team server's project is team_project.
// The team argument used to replace it, so a learning's project was taken
// for a team project: refused, or recorded in another project's vault.
func TestLearnKeepsItsProjectInTeamMode(t *testing.T) {
	b := &fakeTeam{fakeWriter: newFakeWriter()}
	cs := connect(t, New(b, Options{}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != "vault_learn" {
			continue
		}
		raw, _ := json.Marshal(tl.InputSchema)
		var schema struct {
			Properties map[string]struct{ Description string } `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		if d := schema.Properties["project"].Description; !strings.Contains(d, "daily note") {
			t.Errorf("vault_learn's project is described as %q", d)
		}
		if d := schema.Properties["team_project"].Description; !strings.Contains(d, "team server") {
			t.Errorf("vault_learn's team_project is described as %q", d)
		}
	}
	args := map[string]any{"title": "t", "insight": "i", "context": "c", "domain": "go", "project": "potentia"}
	if r := call(t, cs, "vault_learn", args); r.IsError {
		t.Fatal(text(t, r))
	}
	args["team_project"] = "ops"
	if r := call(t, cs, "vault_learn", args); r.IsError {
		t.Fatal(text(t, r))
	}
	if got := b.seen(); !slices.Equal(got, []string{"", "ops"}) {
		t.Errorf("team projects seen %q, want the default, then ops", got)
	}
	for i, req := range b.recorded() {
		if lr, ok := req.(api.LearnRequest); !ok || lr.Project != "potentia" {
			t.Errorf("learning %d: %+v, want project potentia", i, req)
		}
	}
}
