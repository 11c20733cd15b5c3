package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPeerQMD measures qmd on the example vault when $VAULTMCP_QMD names
// its executable (npm install @tobilu/qmd@2.8.3, with Node 22); skipped
// otherwise: qmd is not ours and not installed by CI.
func TestPeerQMD(t *testing.T) {
	qmd := os.Getenv("VAULTMCP_QMD")
	if qmd == "" {
		t.Skip("VAULTMCP_QMD is not set")
	}
	rep, err := RunPeerQMD(context.Background(), qmd, filepath.Join("..", "..", "examples", "vault"), []string{"retry backoff", "postgres vacuum", "goroutine leak"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.IndexMs <= 0 || rep.Search.N != 3 || rep.Errors != 0 || rep.AnswerBytes == 0 {
		t.Fatalf("report %+v", rep)
	}
}
