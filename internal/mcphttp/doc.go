// Package mcphttp serves MCP over Streamable HTTP with the protections a
// server reachable by browsers and by many clients needs: vaultmcp serve
// --http and the team server both mount its handler at /mcp.
//
// Guarantees, each proven by the package's tests over real HTTP on
// 127.0.0.1:
//
//   - Origin: a request whose Origin header is present is served only when
//     that origin is the address the request came in on (the listen address;
//     on loopback, localhost and every loopback IP count as one host, the
//     port must match) or is in Options.AllowedOrigins; any other, "null"
//     included, gets 403 before anything else is done. An origin of
//     Options.AllowedOrigins gets the CORS headers a browser needs to use
//     the server: its preflight answered (without a key),
//     Access-Control-Allow-Origin on every answer, Mcp-Session-Id exposed.
//   - DNS rebinding: the SDK's protection stays on (a request that reached a
//     loopback address with a Host header that is not loopback gets 403).
//   - Keys: with Options.Verify set, every request needs a key (X-API-Key,
//     or Authorization: Bearer; never a query string), checked before any
//     body is read; a wrong or missing key gets 401 with a
//     WWW-Authenticate challenge (error="invalid_token" when a key was
//     sent; the metadata URL when there is one). The verifier's
//     TokenInfo reaches tool handlers (RequestExtra.TokenInfo), and a
//     session created with one UserID cannot be used with another (the
//     SDK's hijacking check).
//   - Bodies: a request body must arrive whole within Options.BodyTimeout
//     (default 10 s) or the request gets 408 and its connection is closed;
//     a body over Options.MaxBodyBytes (default 4 MiB) gets 413. Long-lived
//     responses (the SSE streams) are not cut: the deadline covers the
//     request body only.
//   - Sessions expire: a session with no request in flight for
//     Options.SessionIdleTimeout (default 30 min) is closed and forgotten.
//   - Sessions are capped: at most Options.MaxSessions (default 1,000)
//     exist at once. A new session beyond the cap evicts the session idle
//     the longest; when every session has a request in flight, the new one
//     gets 503 with Retry-After. Memory thus stays bounded by the cap
//     whatever clients do.
//
// How: the SDK (go-sdk v1.8.0) has a SessionTimeout, counted on the wall
// clock and invisible from outside, and no cap; so this package keeps its
// own table of the sessions the SDK created (learnt from the Mcp-Session-Id
// of the answer that created each one), ordered by when each went idle, on
// an injected clock, and closes the SDK's session itself on expiry or
// eviction. That close runs in the background; until it is done, a request
// for the session is answered 404 by this package (the SDK would still
// serve it). The SDK's body limit is kept as well.
package mcphttp
