package teamclient

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// fetches counts the requests that read a file's bytes (GET files/{id}).
func fetches(p *proxy) int {
	n := 0
	for _, s := range p.seen() {
		if s.method == http.MethodGet && strings.Count(s.path, "/") == 5 && strings.Contains(s.path, "/files/") {
			n++
		}
	}
	return n
}

var mirrorQueries = []string{"retry backoff jitter", "context cancellation", "postgres connection pool", "graceful shutdown signal",
	"feature flags", "tls certificate", "goroutine leak", "retry fixed interval"}

// A server without the extension endpoints: search, backlinks, graph and
// list from the local mirror answer exactly what the server's own vault
// answers; the mirror is refreshed by content hash (only what changed is
// fetched, and nothing at all on a later start).
func TestPlainServerMirror(t *testing.T) {
	s := newServer(t)
	ctx := ctxT(t)
	full := newClient(t, s.http.URL, s.rw, "ex", nil, 0)
	p := newProxy(t, plain(s.http.Config.Handler), newFakeClock())
	cache := t.TempDir()
	c, err := New(Config{URL: p.http.URL, APIKey: s.rw, Project: "ex", CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Connect(ctx)
	if err != nil || !id.ExtensionsKnown || id.Extensions {
		t.Fatalf("connect: %+v %v", id, err)
	}

	compare := func(when string) {
		t.Helper()
		for _, q := range mirrorQueries {
			want, err := full.Search(ctx, api.SearchRequest{Query: q, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Search(ctx, api.SearchRequest{Query: q, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			sameAnswers(t, when+": search "+q, want, got)
		}
		for _, path := range []string{"02-wiki/go/context.md", "02-wiki/go/retry-backoff.md", "02-wiki/go/go-moc.md"} {
			want, err := full.Backlinks(ctx, api.BacklinksRequest{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Backlinks(ctx, api.BacklinksRequest{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			sameAnswers(t, when+": backlinks "+path, want, got)
		}
		wantG, err := full.Graph(ctx, api.GraphRequest{Folder: "02-wiki"})
		if err != nil {
			t.Fatal(err)
		}
		gotG, err := c.Graph(ctx, api.GraphRequest{Folder: "02-wiki"})
		if err != nil {
			t.Fatal(err)
		}
		// The mirror holds notes only: a link to an attachment is broken
		// there.
		if gotG.BrokenCount < wantG.BrokenCount {
			t.Errorf("%s: %d broken links in the mirror, %d on the server", when, gotG.BrokenCount, wantG.BrokenCount)
		}
		gotG.BrokenCount = wantG.BrokenCount
		sameAnswers(t, when+": graph", wantG, gotG)
		wantL, err := full.List(ctx, api.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		gotL, err := c.List(ctx, api.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		sameAnswers(t, when+": list", wantL, gotL)
	}

	p.setPlan(nil)
	compare("first sync")
	first := fetches(p)
	if first == 0 {
		t.Fatal("the first sync fetched nothing")
	}
	t.Logf("first sync: %d notes fetched", first)

	// A change by someone else: only that note is fetched.
	note, err := full.GetNote(ctx, api.NoteRequest{Path: "02-wiki/go/context.md"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := full.WriteNote(ctx, api.WriteRequest{Path: "02-wiki/go/context.md", Content: note.Content + "\nA zebracorn line.\n", ExpectedSHA256: note.SHA256}); err != nil {
		t.Fatal(err)
	}
	if _, err := full.Move(ctx, api.MoveRequest{From: "02-wiki/devops/dns-ttl.md", To: "02-wiki/devops/dns-time-to-live.md"}); err != nil {
		t.Fatal(err)
	}
	p.setPlan(nil)
	res, err := c.Search(ctx, api.SearchRequest{Query: "zebracorn"})
	if err != nil || len(res.Results) == 0 || res.Results[0].Path != "02-wiki/go/context.md" || res.Results[0].ViaGraph {
		t.Fatalf("search after the change: %+v %v", res, err)
	}
	moved, err := full.GetNote(ctx, api.NoteRequest{Path: "02-wiki/devops/dns-time-to-live.md"})
	if err != nil {
		t.Fatal(err)
	}
	// context.md, the moved note, and the notes whose links the move rewrote.
	if n, most := fetches(p), 2+len(moved.Links)+10; n < 2 || n > most {
		t.Errorf("%d notes fetched after two changes", n)
	}
	compare("after a change")

	// Nothing changed: nothing fetched.
	p.setPlan(nil)
	compare("unchanged")
	if n := fetches(p); n != 0 {
		t.Errorf("%d notes fetched with nothing changed", n)
	}

	// A note leaves 99-archive: its archived copy goes too.
	unarchived, err := full.Move(ctx, api.MoveRequest{From: "99-archive/retry-fixed-interval.md", To: "02-wiki/go/retry-fixed-interval.md"})
	if err != nil {
		t.Fatal(err)
	}
	p.setPlan(nil)
	compare("after an unarchive")
	if n := fetches(p); n < 1 || n > len(unarchived.Files) {
		t.Errorf("%d notes fetched after an unarchive that changed %d", n, len(unarchived.Files))
	}
	if h := c.mirrors["ex"].hashOf("99-archive/retry-fixed-interval.md"); h != "" {
		t.Error("the archived copy is still in the mirror")
	}

	// A later start over the same cache fetches nothing.
	c.Close()
	p.setPlan(nil)
	c2, err := New(Config{URL: p.http.URL, APIKey: s.rw, Project: "ex", CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c = c2
	compare("restart")
	if n := fetches(p); n != 0 {
		t.Errorf("%d notes fetched after a restart", n)
	}

	// Two processes on one cache: the second gets a mirror of its own.
	c3 := newClient(t, p.http.URL, s.rw, "ex", nil, 0)
	c3.cacheDir = cache
	if _, err := c3.Search(ctx, api.SearchRequest{Query: "context"}); err != nil {
		t.Fatal(err)
	}
	if c3.mirrors["ex"].dir == c2.mirrors["ex"].dir {
		t.Error("two clients share a mirror folder")
	}
}
