package vault

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

func TestZZWrites(t *testing.T) {
	dir := os.Getenv("ZZVAULT")
	if dir == "" {
		t.Skip()
	}
	ctx := context.Background()
	svc, err := Open(ctx, Options{Dir: dir, Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ZZSLEEP") != "" { time.Sleep(10 * time.Second) }
	var ds []time.Duration
	base := time.Now().UnixNano()
	for i := 0; i < 15; i++ {
		rel := fmt.Sprintf(os.Getenv("ZZDIR")+"/zz-%d-%d.md", base, i)
		st := time.Now()
		res, err := svc.WriteNote(ctx, api.WriteRequest{Path: rel, Content: fmt.Sprintf("# zz %d\n\nSome words here about things.\n", i)})
		if err != nil || !res.Committed {
			t.Fatal(err, res)
		}
		ds = append(ds, time.Since(st))
		if os.Getenv("DBGT") != "" {
			println("DBG total", time.Since(st).Microseconds())
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	t.Logf("p50 %v min %v max %v", ds[len(ds)/2], ds[0], ds[len(ds)-1])
}
