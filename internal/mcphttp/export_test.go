package mcphttp

import "github.com/modelcontextprotocol/go-sdk/mcp"

// SetCloseSession replaces how h closes the SDK's sessions it evicts or
// expires (a test holds a close open to reach the time before it is done).
func SetCloseSession(h *Handler, f func(*mcp.ServerSession) error) {
	h.mu.Lock()
	h.closeSession = f
	h.mu.Unlock()
}
