package api

import (
	"context"
	"time"
)

// Team is the side of a backend that is a client of a team server hosting
// several projects (vaults) for API keys: it can say who the key is and
// which projects it may use. Every operation of Backend, Writer and Learner
// then works on one project: the one ProjectFrom(ctx) names, or the
// backend's default project when that is "".
type Team interface {
	WhoAmI(ctx context.Context) (*Identity, error)
	Projects(ctx context.Context) (*ProjectList, error)
}

// Identity is who the backend acts as on its team server.
type Identity struct {
	// Name is the API key's name (the author of its writes).
	Name     string `json:"name"`
	KeyID    string `json:"key_id,omitempty"`
	ReadOnly bool   `json:"read_only"`
	// ExpiresAt is when the key stops being accepted (zero: never).
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Scope lists the projects the key is limited to; empty means every
	// project.
	Scope []string `json:"scope,omitempty"`
	// Server is where the team server is (its base URL, without any
	// credential).
	Server string `json:"server"`
	// DefaultProject is the project used when a call names none ("" when
	// there is no default).
	DefaultProject string `json:"default_project,omitempty"`
	// Extensions says the server offers the extension endpoints (search,
	// backlinks, graph, edit, learn, undo on the server); false when it
	// offers only the basic files API, so search, backlinks and graph come
	// from a local index of the project. Unknown (not asked yet, or the
	// server could not be reached) reads as false with ExtensionsKnown false.
	Extensions      bool `json:"extensions"`
	ExtensionsKnown bool `json:"extensions_known"`
}

// Project is one project (vault) of a team server.
type Project struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Created string `json:"created,omitempty"` // RFC 3339
	// Default marks the project used when a call names none.
	Default bool `json:"default,omitempty"`
}

// ProjectList is the projects the backend's key may use, sorted by name.
type ProjectList struct {
	Projects []Project `json:"projects"`
	Default  string    `json:"default,omitempty"`
}

type projectKey struct{}

// WithProject attaches the project a call is about (a team backend's
// project id or name) to ctx; "" leaves the backend's default.
func WithProject(ctx context.Context, project string) context.Context {
	if project == "" {
		return ctx
	}
	return context.WithValue(ctx, projectKey{}, project)
}

// ProjectFrom returns the project attached to ctx, or "".
func ProjectFrom(ctx context.Context) string {
	p, _ := ctx.Value(projectKey{}).(string)
	return p
}
