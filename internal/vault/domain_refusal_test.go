package vault

import (
	"context"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestFirstDomainRefusal: on a vault with no domain yet, the refusal of a
// new domain says so and how to create it, without telling the agent to
// file the learning under existing domains that do not exist.
func TestFirstDomainRefusal(t *testing.T) {
	dir := writeVault(t, map[string]string{"notes/a.md": "# A\n\nSomething.\n"})
	gitInit(t, dir)
	s := openTest(t, dir, false)
	_, err := s.Learn(context.Background(), api.LearnRequest{Title: "Retry", Insight: "Retry with backoff.", Domain: "go"})
	if api.CodeOf(err) != api.CodeNeedsConfirm {
		t.Fatalf("learn into the first domain: %v, want %s", err, api.CodeNeedsConfirm)
	}
	msg := err.Error()
	if strings.Contains(msg, "one of those") || !strings.Contains(msg, "confirm_new_domain: true") || !strings.Contains(msg, `"go"`) {
		t.Errorf("refusal: %s", msg)
	}
}
