package vault

import (
	"os"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/gittest"
)

// TestMain gives the tests a git without the machine's configuration
// (gittest), so that they read no file outside the repository and behave
// the same on any machine.
func TestMain(m *testing.M) { os.Exit(gittest.Run(m)) }
