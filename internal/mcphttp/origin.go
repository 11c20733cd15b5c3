package mcphttp

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CheckOrigin reports why origin cannot be in Options.AllowedOrigins.
func CheckOrigin(origin string) error {
	_, err := normalizeOrigin(origin)
	return err
}

// normalizeOrigin gives an origin as scheme://host:port, lowercase, with
// the scheme's default port written out.
func normalizeOrigin(origin string) (string, error) {
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		return "", err
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("not an http or https origin (scheme://host[:port])")
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return "", errors.New("an origin is scheme://host[:port], nothing more")
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(host), port), nil
}

// originAllowed reports whether origin may use the server: it is in the
// allow-list, or it names the address the request came in on.
func (h *Handler) originAllowed(r *http.Request, origin string) bool {
	n, err := normalizeOrigin(origin)
	if err != nil {
		return false
	}
	if h.origins[n] {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	la, err := netip.ParseAddrPort(local.String())
	if err != nil {
		return false
	}
	u, _ := url.Parse(n)
	if u.Port() != strconv.Itoa(int(la.Port())) {
		return false
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		ip, lip := ip.Unmap(), la.Addr().Unmap()
		return ip == lip || ip.IsLoopback() && lip.IsLoopback()
	}
	return host == "localhost" && la.Addr().Unmap().IsLoopback()
}

// rebound reports a request that reached a loopback address under a Host
// that is not loopback: the mark of DNS rebinding (the SDK's rule).
func rebound(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	la, err := netip.ParseAddrPort(local.String())
	if err != nil || !la.Addr().Unmap().IsLoopback() {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}

// listed reports whether origin is in Options.AllowedOrigins.
func (h *Handler) listed(origin string) bool {
	n, err := normalizeOrigin(origin)
	return err == nil && h.origins[n]
}

// allowCORS lets a page of a listed origin (a browser-based client such as
// an MCP inspector) read the answers: without these headers a browser runs
// no cross-origin POST of JSON at all (its preflight is refused) and hides
// Mcp-Session-Id, so a listed origin could not use the server. It answers a
// preflight itself, without a key (browsers send none on a preflight), and
// reports whether it did. Only the origins the operator listed get them:
// the listen address's own needs none (same origin), and the other
// loopback names it accepts (another loopback IP, localhost, on the same
// port) may be served by another program, even another user's, whose
// pages must not drive this server from the user's browser.
func allowCORS(w http.ResponseWriter, r *http.Request, origin string) bool {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", origin)
	hdr.Add("Vary", "Origin")
	hdr.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	hdr.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	hdr.Set("Access-Control-Allow-Headers", "Accept, Authorization, Content-Type, Last-Event-ID, Mcp-Protocol-Version, Mcp-Session-Id, X-API-Key")
	hdr.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
