package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGuardHandsOverWhatWasMeasured(t *testing.T) {
	type over struct {
		rep *Report
		err error
	}
	got := make(chan over, 1)
	g := &guard{limit: 1, base: Report{Queries: 7}, onOver: func(r *Report, err error) { got <- over{r, err} }}
	g.finish(VaultReport{Name: "first", Notes: 10})
	tmp := filepath.Join(t.TempDir(), "copy")
	if err := os.MkdirAll(filepath.Join(tmp, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	g.addTemp(tmp)
	cur := &VaultReport{Name: "second", Notes: 20, Problems: []string{"rg: broken"}}
	g.publish(cur, "moving a.md")
	cur.Notes = 99 // the snapshot must not see later writes
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go g.run(ctx)
	select {
	case o := <-got:
		if o.rep.Queries != 7 || len(o.rep.Vaults) != 2 || o.rep.Vaults[0].Name != "first" || o.rep.Vaults[1].Notes != 20 {
			t.Fatalf("partial report: %+v", o.rep)
		}
		p := o.rep.Vaults[1].Problems
		if len(p) != 2 || !strings.Contains(p[1], "stopped while moving a.md") {
			t.Errorf("problems: %q", p)
		}
		if o.err == nil || !strings.Contains(o.err.Error(), "second") || !strings.Contains(o.err.Error(), "moving a.md") {
			t.Errorf("error: %v", o.err)
		}
	case <-ctx.Done():
		t.Fatal("the guard never fired over a 1-byte limit")
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the guard left its temporary folder: %v", err)
	}
	var none *guard
	none.addTemp(tmp) // a run without a guard
	none.publish(&VaultReport{}, "x")
	none.finish(VaultReport{})
	if selfRSS() <= 0 {
		t.Error("this process's memory is unknown")
	}
}
