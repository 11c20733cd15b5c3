package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressRelayNeverBlocks holds the client "slow" (a send that does not
// return until released) and checks that reporting and stopping still
// return at once, that values reported meanwhile are coalesced to the
// newest, and that nothing is sent after stop.
func TestProgressRelayNeverBlocks(t *testing.T) {
	sent := make(chan *mcp.ProgressNotificationParams)
	release := make(chan struct{})
	send := func(_ context.Context, n *mcp.ProgressNotificationParams) error {
		sent <- n
		<-release
		return nil
	}
	r := newProgressRelay(context.Background(), 42, send, discardLogger())

	r.report(1, 10, "first")
	if n := <-sent; n.Progress != 1 || n.Total != 10 || n.Message != "first" || n.ProgressToken != 42 {
		t.Errorf("first notification %+v", n)
	}
	// The sender is stuck in send: these must not block.
	r.report(2, 10, "second")
	r.report(3, 10, "third")
	r.report(2, 10, "going back: dropped")
	r.report(5, 0, "newest, total unknown")
	release <- struct{}{}
	if n := <-sent; n.Progress != 5 || n.Total != 0 || n.Message != "newest, total unknown" {
		t.Errorf("coalesced notification %+v", n)
	}
	// Stop while the sender is stuck again: must not wait for it.
	r.stop()
	r.stop()
	r.report(9, 10, "after stop")
	release <- struct{}{}
	<-r.done
	select {
	case n := <-sent:
		t.Errorf("notification after stop: %+v", n)
	default:
	}
}
