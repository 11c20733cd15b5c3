package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// Bench runs the benchmarks of the store calls every request makes: the key
// lookup of each request, and the idempotency record and bookkeeping of each
// write (BeginIdem, then Record with a version, an audit row and the
// answer), serially and from parallel goroutines (writes to separate
// projects). newStore returns a fresh, empty store (closed by Bench).
func Bench(b *testing.B, newStore func(b *testing.B) teamstore.Store) {
	b.Run("KeyByHash", func(b *testing.B) {
		s := newStore(b)
		defer s.Close()
		ctx := context.Background()
		p := teamstore.Project{ID: teamstore.NewID(), Name: "p", CreatedAt: t0}
		if err := s.AddProject(ctx, p); err != nil {
			b.Fatal(err)
		}
		for i := range 100 {
			k := teamstore.Key{ID: teamstore.NewID(), Name: fmt.Sprint("k", i), Hash: hashOf(fmt.Sprint("tv_", i)), Projects: []string{p.ID}, CreatedAt: t0}
			if err := s.AddKey(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
		hash := hashOf("tv_42")
		b.ResetTimer()
		for b.Loop() {
			if _, err := s.KeyByHash(ctx, hash); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("BeginIdem+Record", func(b *testing.B) {
		s := newStore(b)
		defer s.Close()
		w := newWriter(b, s, 0)
		b.ResetTimer()
		for b.Loop() {
			w.write(b)
		}
	})
	b.Run("BeginIdem+Record/parallel", func(b *testing.B) {
		s := newStore(b)
		defer s.Close()
		var n atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			w := newWriter(b, s, int(n.Add(1)))
			for pb.Next() {
				w.write(b)
			}
		})
	})
}

// writer makes the store calls of writes to one note of its own project.
type writer struct {
	s    teamstore.Store
	p    teamstore.Project
	f    teamstore.File
	i    int
	resp teamstore.Response
}

func newWriter(b *testing.B, s teamstore.Store, n int) *writer {
	ctx := context.Background()
	p := teamstore.Project{ID: teamstore.NewID(), Name: fmt.Sprint("p", n), CreatedAt: t0}
	if err := s.AddProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	f, err := teamstore.EnsureFile(ctx, s, p.ID, "notes/a.md", t0)
	if err != nil {
		b.Fatal(err)
	}
	resp := teamstore.Response{Status: 200, Header: map[string][]string{"Content-Type": {"application/json"}, "Etag": {`"0123456789abcdef"`}},
		Body: []byte(`{"file":{"id":"` + f.ID + `","path":"notes/a.md"}}`)}
	return &writer{s: s, p: p, f: f, resp: resp}
}

func (w *writer) write(b *testing.B) {
	ctx := context.Background()
	w.i++
	at := t0.Add(time.Duration(w.i) * time.Millisecond)
	rec := teamstore.Idem{KeyID: "key", Key: fmt.Sprint(w.p.ID, "-", w.i), Fingerprint: "fp", Project: w.p.ID, Operation: "update", Target: w.f.ID,
		Token: teamstore.NewID(), Owner: "bench", CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)}
	if _, created, err := w.s.BeginIdem(ctx, rec); err != nil || !created {
		b.Fatalf("BeginIdem: created=%v %v", created, err)
	}
	err := w.s.Record(ctx, teamstore.Record{Project: w.p.ID, At: at,
		Versions: []teamstore.Version{{FileID: w.f.ID, Path: w.f.Path, Hash: "0123456789abcdef", VersionID: "0123456789abcdef0123456789abcdef01234567", Message: "update notes/a.md"}},
		Audit:    &teamstore.AuditEntry{At: at, KeyID: "key", KeyName: "alice", Project: w.p.ID, Operation: "update", Paths: []string{w.f.Path}, Version: "0123456789abcdef", IdempotencyKey: rec.Key, Result: "ok"},
		Answer:   &teamstore.IdemAnswer{KeyID: "key", Key: rec.Key, Token: rec.Token, Response: w.resp}})
	if err != nil {
		b.Fatal(err)
	}
}
