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
