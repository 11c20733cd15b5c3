package teamserver

import (
	"net/http"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/teamapi"
)

// wellKnown is the path of the protected-resource metadata (RFC 9728).
const wellKnown = "/.well-known/oauth-protected-resource"

// resourceMetadata is the protected-resource metadata of RFC 9728.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported"`
	ResourceName           string   `json:"resource_name"`
}

// handleResourceMetadata serves the metadata of the server (at the
// well-known path) and of each MCP endpoint (the well-known path followed
// by the endpoint's path). It needs no key. With API keys there is no
// authorization server to name: a client is given a key by an operator.
func (s *Server) handleResourceMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET")
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, wellKnown)
	if rest != "" && rest != "/mcp" && !(strings.HasPrefix(rest, "/projects/") && strings.HasSuffix(rest, "/mcp")) {
		errorf(http.StatusNotFound, teamapi.CodeNotFound, "no protected resource at %s", rest).write(w)
		return
	}
	md := resourceMetadata{
		Resource:               s.baseURL(r) + rest,
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        []string{"vault:read", "vault:write"},
		ResourceName:           "vaultmcp team server",
	}
	resp := jsonResponse(http.StatusOK, md)
	resp.header.Set("Access-Control-Allow-Origin", "*")
	resp.write(w)
}

// baseURL is the server's address as the client reached it: PublicURL when
// set, else the request's scheme and Host.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
