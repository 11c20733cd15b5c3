package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Team mode: a backend that is a team server's client (api.Team) serves
// several projects. Every tool then takes an optional "project" argument
// (the project's id or name; the backend's default when absent), which
// travels to the backend in the context (api.WithProject), not in the api
// request types; and two more tools say who the key is and which projects
// it may use (the jobs of Team Vault's own whoami and list-projects tools).

// isTeam is the Available check of the team tools.
func isTeam(b api.Backend) bool {
	_, ok := b.(api.Team)
	return ok
}

// projectArg is the name of the argument every tool takes in team mode;
// teamProjectArg is its name in a tool that has a project argument of its
// own (vault_learn's: the project a learning came from, written in the
// daily note), which keeps that argument and its meaning.
const (
	projectArg     = "project"
	teamProjectArg = "team_project"
)

// projectArgOf is the name of the team project argument of a tool whose
// own input schema is in.
func projectArgOf(in *jsonschema.Schema) string {
	if _, ok := in.Properties[projectArg]; ok {
		return teamProjectArg
	}
	return projectArg
}

const projectArgDescription = "The team server's project to use (its id or name, as vault_projects lists them); " +
	"leave it out for the default project."

// addProjectProperty adds the optional project argument, named arg, to a
// tool's input schema.
func addProjectProperty(s *jsonschema.Schema, arg string) {
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Properties[arg] = &jsonschema.Schema{Type: "string", Description: projectArgDescription}
}

// takeProject removes the project argument, named arg, from a tool call's
// raw arguments and returns it. Arguments that are not an object are left
// for decodeArgs to refuse.
func takeProject(m *messages, raw json.RawMessage, arg string) (json.RawMessage, string, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return raw, "", nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(trimmed, &obj) != nil {
		return raw, "", nil
	}
	v, ok := obj[arg]
	if !ok {
		return raw, "", nil
	}
	delete(obj, arg)
	rest, err := json.Marshal(obj)
	if err != nil {
		return raw, "", err
	}
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return rest, "", nil
	}
	var p string
	if json.Unmarshal(v, &p) != nil {
		return raw, "", api.Invalid(arg, "%s", m.get(msgErrWantString))
	}
	if strings.TrimSpace(p) == "" {
		return raw, "", api.Invalid(arg, "%s", m.get(msgErrEmpty))
	}
	return rest, strings.TrimSpace(p), nil
}

// onTeam adapts a call on the api.Team side of the backend.
func onTeam[In any, Out any](f func(context.Context, api.Team, In) (*Out, error)) func(context.Context, api.Backend, In) (*Out, error) {
	return onSide(f)
}

type noInput struct{}

var whoamiTool = toolSpec[noInput, api.Identity]{
	Name:  "vault_whoami",
	Title: "Who am I on the team server",
	Description: "Say which team server this vault lives on, which API key is in use (its name, whether it is " +
		"read-only, the projects it may use) and the default project, with whether that server answers search, " +
		"backlinks and graph itself or they come from a local copy of the project.",
	Effect:    effectRead,
	Available: isTeam,
	NoProject: true,
	Call: onTeam(func(ctx context.Context, t api.Team, _ noInput) (*api.Identity, error) {
		return t.WhoAmI(ctx)
	}),
	Render: func(m *messages, _ noInput, out *api.Identity) string { return renderIdentity(m, out) },
}

var projectsTool = toolSpec[noInput, api.ProjectList]{
	Name:  "vault_projects",
	Title: "List the team's projects",
	Description: "List the projects (vaults) of the team server that this API key may use, with their ids; the " +
		"default project is marked. Pass a project's name or id as the project argument of any other tool to use it.",
	Effect:    effectRead,
	Available: isTeam,
	NoProject: true,
	Call: onTeam(func(ctx context.Context, t api.Team, _ noInput) (*api.ProjectList, error) {
		return t.Projects(ctx)
	}),
	Render: func(m *messages, _ noInput, out *api.ProjectList) string { return renderProjects(m, out) },
}

func renderIdentity(m *messages, id *api.Identity) string {
	var b strings.Builder
	b.WriteString(m.get(msgTeamServer, escape(id.Server)))
	b.WriteByte('\n')
	mode := m.get(msgTeamReadWrite)
	if id.ReadOnly {
		mode = m.get(msgTeamReadOnly)
	}
	if !id.ExpiresAt.IsZero() {
		mode = m.get(msgTeamExpires, mode, id.ExpiresAt.UTC().Format(time.RFC3339))
	}
	b.WriteString(m.get(msgTeamKey, escape(id.Name), mode))
	b.WriteByte('\n')
	if len(id.Scope) == 0 {
		b.WriteString(m.get(msgTeamScopeAll))
	} else {
		b.WriteString(m.get(msgTeamScope, escapedList(id.Scope)))
	}
	b.WriteByte('\n')
	if id.DefaultProject == "" {
		b.WriteString(m.get(msgTeamNoDefault))
	} else {
		b.WriteString(m.get(msgTeamDefault, escape(id.DefaultProject)))
		switch {
		case !id.ExtensionsKnown:
		case id.Extensions:
			b.WriteString(m.get(msgTeamExtensions))
		default:
			b.WriteString(m.get(msgTeamMirror))
		}
	}
	b.WriteByte('\n')
	return b.String()
}

func renderProjects(m *messages, l *api.ProjectList) string {
	if len(l.Projects) == 0 {
		return m.get(msgTeamNoProjects) + "\n"
	}
	var b strings.Builder
	b.WriteString(m.get(msgTeamProjects, len(l.Projects)))
	b.WriteByte('\n')
	for _, p := range l.Projects {
		b.WriteString("- " + escape(p.Name) + " (" + escape(p.ID) + ")")
		if p.Default {
			b.WriteString(m.get(msgTeamIsDefault))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

const (
	msgInstructionsTeam msgID = "instructions.team"
	msgTeamServer       msgID = "team.server"
	msgTeamKey          msgID = "team.key"
	msgTeamReadWrite    msgID = "team.read_write"
	msgTeamReadOnly     msgID = "team.read_only"
	msgTeamExpires      msgID = "team.expires"
	msgTeamScopeAll     msgID = "team.scope_all"
	msgTeamScope        msgID = "team.scope"
	msgTeamDefault      msgID = "team.default"
	msgTeamNoDefault    msgID = "team.no_default"
	msgTeamExtensions   msgID = "team.extensions"
	msgTeamMirror       msgID = "team.mirror"
	msgTeamProjects     msgID = "team.projects"
	msgTeamNoProjects   msgID = "team.no_projects"
	msgTeamIsDefault    msgID = "team.is_default"
)

// teamTexts join the catalogue (kept here so that the team texts live with
// the team tools).
var teamTexts = map[string]map[msgID]string{
	"en": {
		msgInstructionsTeam: "- The vault is a project of a team server, shared with other people and agents: vault_whoami " +
			"says which key and default project are in use and vault_projects lists the projects; every tool takes an " +
			"optional project argument (vault_learn, whose own project is the one a learning came from: team_project).",
		msgTeamServer:     "Team server: %s",
		msgTeamKey:        "API key: %s (%s)",
		msgTeamReadWrite:  "read and write",
		msgTeamReadOnly:   "read-only",
		msgTeamExpires:    "%s; expires %s",
		msgTeamScopeAll:   "Projects allowed: all",
		msgTeamScope:      "Projects allowed: %s",
		msgTeamDefault:    "Default project: %s",
		msgTeamNoDefault:  "Default project: none (pass project to every tool, team_project to vault_learn; vault_projects lists them)",
		msgTeamExtensions: " (searched on the server)",
		msgTeamMirror:     " (a plain Team Vault server: search, backlinks and graph come from a local copy of the project)",
		msgTeamProjects:   "%d project(s):",
		msgTeamNoProjects: "This key may use no project.",
		msgTeamIsDefault:  " — default",
	},
	"pt": {
		msgInstructionsTeam: "- O cofre é um projeto de um servidor de equipe, compartilhado com outras pessoas e agentes: " +
			"vault_whoami diz qual chave e qual projeto padrão estão em uso e vault_projects lista os projetos; toda " +
			"ferramenta aceita um argumento project opcional (vault_learn, cujo project é o de onde vem o aprendizado: " +
			"team_project).",
		msgTeamServer:     "Servidor de equipe: %s",
		msgTeamKey:        "Chave de API: %s (%s)",
		msgTeamReadWrite:  "leitura e escrita",
		msgTeamReadOnly:   "somente leitura",
		msgTeamExpires:    "%s; expira em %s",
		msgTeamScopeAll:   "Projetos permitidos: todos",
		msgTeamScope:      "Projetos permitidos: %s",
		msgTeamDefault:    "Projeto padrão: %s",
		msgTeamNoDefault:  "Projeto padrão: nenhum (passe project a cada ferramenta, team_project a vault_learn; vault_projects os lista)",
		msgTeamExtensions: " (buscado no servidor)",
		msgTeamMirror:     " (um servidor Team Vault simples: busca, backlinks e grafo vêm de uma cópia local do projeto)",
		msgTeamProjects:   "%d projeto(s):",
		msgTeamNoProjects: "Esta chave não pode usar nenhum projeto.",
		msgTeamIsDefault:  " — padrão",
	},
}

func init() {
	for lang, texts := range teamTexts {
		for id, s := range texts {
			catalogue[lang][id] = s
		}
	}
}
