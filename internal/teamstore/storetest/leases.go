package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// LeaseStore is a store that also coordinates replicas.
type LeaseStore interface {
	teamstore.Store
	teamstore.Leases
}

// RunLeases runs the suite of teamstore.Leases; newPair returns two handles
// on one fresh, empty database (two replicas), closed by the suite. Every
// time is given by the test: the clock is the test's.
func RunLeases(t *testing.T, newPair func(t *testing.T) (a, b LeaseStore)) {
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b LeaseStore)
	}{
		{"AcquireFree", testLeaseAcquire},
		{"NoTakeoverBeforeExpiry", testLeaseNoTakeover},
		{"TakeoverAtExpiry", testLeaseTakeover},
		{"RenewByOwnerOnly", testLeaseRenew},
		{"Release", testLeaseRelease},
		{"ConcurrentAcquire", testLeaseConcurrent},
		{"Replicas", testReplicas},
		{"ReplicasPruned", testReplicasPruned},
		{"NotifyAcrossHandles", testNotify},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newPair(t)
			t.Cleanup(func() { a.Close(); b.Close() })
			tc.fn(t, a, b)
		})
	}
}

const ttl = 15 * time.Second

// Acquiring a free lease holds it until at+ttl with a positive epoch; the
// other handle sees it; acquiring it again (the owner) renews it and keeps
// the epoch; a lease of an unknown project is refused.
func testLeaseAcquire(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	p := addProject(t, a, "p")
	_, err := b.Lease(c, p.ID)
	wantErr(t, err, teamstore.ErrNotFound, "Lease before any")
	l, held, err := a.AcquireLease(c, p.ID, "r1", "http://r1", t0, ttl)
	must(t, err)
	want := teamstore.Lease{Project: p.ID, Owner: "r1", Advertise: "http://r1", Epoch: l.Epoch, AcquiredAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(ttl)}
	if !held || l.Epoch <= 0 || l != want {
		t.Fatalf("AcquireLease = %+v held=%v, want %+v", l, held, want)
	}
	seen, err := b.Lease(c, p.ID)
	must(t, err)
	if seen != l || !seen.Live(t0.Add(ttl-time.Microsecond)) || seen.Live(t0.Add(ttl)) {
		t.Errorf("the other handle sees %+v, want %+v", seen, l)
	}
	again, held, err := a.AcquireLease(c, p.ID, "r1", "http://r1:2", t0.Add(5*time.Second), ttl)
	must(t, err)
	if !held || again.Epoch != l.Epoch || !again.AcquiredAt.Equal(t0) || !again.ExpiresAt.Equal(t0.Add(5*time.Second+ttl)) || again.Advertise != "http://r1:2" {
		t.Errorf("acquired again by its owner: %+v held=%v", again, held)
	}
	_, _, err = a.AcquireLease(c, "no-such-project", "r1", "http://r1", t0, ttl)
	wantErr(t, err, teamstore.ErrNotFound, "a lease of an unknown project")
	if _, _, err := a.AcquireLease(c, p.ID, "r1", "http://r1", t0, 0); err == nil {
		t.Error("AcquireLease with a zero ttl succeeded")
	}
	list, err := b.Leases(c)
	must(t, err)
	if len(list) != 1 || list[0] != again {
		t.Errorf("Leases = %+v", list)
	}
}

// Before its expiry a lease stays with its owner: another replica gets the
// owner's lease back, unchanged, up to the last microsecond.
func testLeaseNoTakeover(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	p := addProject(t, a, "p")
	l, _, err := a.AcquireLease(c, p.ID, "r1", "http://r1", t0, ttl)
	must(t, err)
	for _, at := range []time.Time{t0, t0.Add(ttl / 2), t0.Add(ttl - time.Microsecond)} {
		got, held, err := b.AcquireLease(c, p.ID, "r2", "http://r2", at, ttl)
		must(t, err)
		if held || got != l {
			t.Errorf("r2 at %v: held=%v %+v, want r1's lease %+v", at.Sub(t0), held, got, l)
		}
	}
	if _, err := b.RenewLease(c, p.ID, "r2", t0, ttl); !errors.Is(err, teamstore.ErrLeaseLost) {
		t.Errorf("r2 renewing r1's lease: %v", err)
	}
	if err := b.ReleaseLease(c, p.ID, "r2"); !errors.Is(err, teamstore.ErrLeaseLost) {
		t.Errorf("r2 releasing r1's lease: %v", err)
	}
	got, err := a.Lease(c, p.ID)
	must(t, err)
	if got != l {
		t.Errorf("after r2's attempts: %+v, want %+v", got, l)
	}
}

// At its expiry a lease is free: another replica takes it with a larger
// epoch, and the old owner can neither renew nor release it.
func testLeaseTakeover(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	p := addProject(t, a, "p")
	l1, _, err := a.AcquireLease(c, p.ID, "r1", "http://r1", t0, ttl)
	must(t, err)
	at := t0.Add(ttl)
	l2, held, err := b.AcquireLease(c, p.ID, "r2", "http://r2", at, ttl)
	must(t, err)
	want := teamstore.Lease{Project: p.ID, Owner: "r2", Advertise: "http://r2", Epoch: l2.Epoch, AcquiredAt: at, RenewedAt: at, ExpiresAt: at.Add(ttl)}
	if !held || l2 != want || l2.Epoch <= l1.Epoch {
		t.Fatalf("takeover = %+v held=%v, want %+v with an epoch above %d", l2, held, want, l1.Epoch)
	}
	_, err = a.RenewLease(c, p.ID, "r1", at, ttl)
	wantErr(t, err, teamstore.ErrLeaseLost, "the old owner renewing")
	wantErr(t, a.ReleaseLease(c, p.ID, "r1"), teamstore.ErrLeaseLost, "the old owner releasing")
	got, held, err := a.AcquireLease(c, p.ID, "r1", "http://r1", at.Add(time.Second), ttl)
	must(t, err)
	if held || got != l2 {
		t.Errorf("the old owner acquiring again: held=%v %+v", held, got)
	}
	// Taken back after r2's expiry: a new epoch again.
	l3, held, err := a.AcquireLease(c, p.ID, "r1", "http://r1", at.Add(ttl), ttl)
	must(t, err)
	if !held || l3.Epoch <= l2.Epoch || !l3.AcquiredAt.Equal(at.Add(ttl)) {
		t.Errorf("r1 taking it back: held=%v %+v, want an epoch above %d", held, l3, l2.Epoch)
	}
}

// Only the owner renews, and only while the lease lives; a renewal never
// shortens it; once expired, the owner acquires it again with its epoch
// unchanged when nobody took it meanwhile.
func testLeaseRenew(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	p := addProject(t, a, "p")
	l, _, err := a.AcquireLease(c, p.ID, "r1", "http://r1", t0, ttl)
	must(t, err)
	at := t0.Add(10 * time.Second)
	r, err := b.RenewLease(c, p.ID, "r1", at, ttl) // the owner, through the other handle
	must(t, err)
	if r.Epoch != l.Epoch || !r.RenewedAt.Equal(at) || !r.ExpiresAt.Equal(at.Add(ttl)) || !r.AcquiredAt.Equal(t0) || r.Owner != "r1" {
		t.Errorf("renewed = %+v", r)
	}
	short, err := a.RenewLease(c, p.ID, "r1", at.Add(time.Second), time.Second)
	must(t, err)
	if !short.ExpiresAt.Equal(at.Add(ttl)) {
		t.Errorf("a shorter renewal moved the expiry to %v, want %v", short.ExpiresAt, at.Add(ttl))
	}
	_, err = a.RenewLease(c, p.ID, "r2", at, ttl)
	wantErr(t, err, teamstore.ErrLeaseLost, "renewal by another")
	expired := at.Add(ttl)
	_, err = a.RenewLease(c, p.ID, "r1", expired, ttl)
	wantErr(t, err, teamstore.ErrLeaseLost, "renewal at the expiry")
	back, held, err := a.AcquireLease(c, p.ID, "r1", "http://r1", expired, ttl)
	must(t, err)
	if !held || back.Epoch != l.Epoch {
		t.Errorf("the owner acquiring its expired lease: held=%v %+v, want epoch %d kept", held, back, l.Epoch)
	}
	_, err = a.RenewLease(c, "no-such-project", "r1", at, ttl)
	wantErr(t, err, teamstore.ErrLeaseLost, "renewal of a lease that does not exist")
}

// A released lease is gone and free at once; the next holder's epoch is
// larger than any before.
func testLeaseRelease(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	p := addProject(t, a, "p")
	q := addProject(t, a, "q")
	l, _, err := a.AcquireLease(c, p.ID, "r1", "http://r1", t0, ttl)
	must(t, err)
	lq, _, err := a.AcquireLease(c, q.ID, "r1", "http://r1", t0, ttl)
	must(t, err)
	must(t, a.ReleaseLease(c, p.ID, "r1"))
	_, err = b.Lease(c, p.ID)
	wantErr(t, err, teamstore.ErrNotFound, "a released lease")
	wantErr(t, a.ReleaseLease(c, p.ID, "r1"), teamstore.ErrLeaseLost, "releasing twice")
	l2, held, err := b.AcquireLease(c, p.ID, "r2", "http://r2", t0.Add(time.Second), ttl)
	must(t, err)
	if !held || l2.Epoch <= l.Epoch || l2.Epoch <= lq.Epoch {
		t.Errorf("after the release: held=%v %+v, want an epoch above %d and %d", held, l2, l.Epoch, lq.Epoch)
	}
	// The owner's other lease is untouched.
	if got, err := b.Lease(c, q.ID); err != nil || got != lq {
		t.Errorf("the other lease after the release: %+v (%v)", got, err)
	}
}

// Replicas racing for one free lease: exactly one holds it, and every one
// is told who.
func testLeaseConcurrent(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	p := addProject(t, a, "p")
	const n = 8
	var wg sync.WaitGroup
	leases := make([]teamstore.Lease, n)
	helds := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			l, held, err := s.AcquireLease(c, p.ID, fmt.Sprint("r", i), fmt.Sprint("http://r", i), t0, ttl)
			if err != nil {
				t.Error(err)
			}
			leases[i], helds[i] = l, held
		}()
	}
	wg.Wait()
	holders := 0
	for i := range n {
		if helds[i] {
			holders++
		}
		if leases[i] != leases[0] {
			t.Errorf("replica %d was told %+v, replica 0 %+v", i, leases[i], leases[0])
		}
	}
	if holders != 1 {
		t.Errorf("%d replicas hold the lease, want 1", holders)
	}
}

// A heartbeat removes the rows of the replicas dead for over
// teamstore.ReplicaRowsKept (killed, they never left): the table does not
// grow by a row at every crash. A replica dead for less is kept.
func testReplicasPruned(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	must(t, a.Heartbeat(c, "dead-long", "http://d1", t0, ttl))
	must(t, a.Heartbeat(c, "dead-lately", "http://d2", t0.Add(2*time.Hour), ttl))
	now := t0.Add(ttl + teamstore.ReplicaRowsKept + time.Hour)
	must(t, b.Heartbeat(c, "alive", "http://a", now, ttl))
	got, err := a.Replicas(c, t0.Add(-time.Hour)) // every row whose expiry is after then
	must(t, err)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if want := []string{"alive", "dead-lately"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("replica rows = %v, want %v", ids, want)
	}
}

// Heartbeats: a replica is listed until its expiry, keeps its start time,
// and leaving removes it and releases its leases (only its own).
func testReplicas(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	p, q := addProject(t, a, "p"), addProject(t, a, "q")
	must(t, a.Heartbeat(c, "r1", "http://r1", t0, ttl))
	must(t, b.Heartbeat(c, "r2", "http://r2", t0.Add(time.Second), ttl))
	must(t, a.Heartbeat(c, "r1", "http://r1", t0.Add(10*time.Second), ttl))
	got, err := b.Replicas(c, t0.Add(ttl+time.Second))
	must(t, err)
	want := []teamstore.Replica{{ID: "r1", Advertise: "http://r1", StartedAt: t0, SeenAt: t0.Add(10 * time.Second), ExpiresAt: t0.Add(10*time.Second + ttl)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Replicas after r2's expiry = %+v, want %+v", got, want)
	}
	got, err = a.Replicas(c, t0.Add(time.Second))
	must(t, err)
	if len(got) != 2 || got[0].ID != "r1" || got[1].ID != "r2" {
		t.Errorf("Replicas = %+v, want r1 and r2", got)
	}
	if err := a.Heartbeat(c, "", "http://x", t0, ttl); err == nil {
		t.Error("a heartbeat without an id succeeded")
	}
	_, _, err = a.AcquireLease(c, p.ID, "r1", "http://r1", t0, ttl)
	must(t, err)
	_, _, err = a.AcquireLease(c, q.ID, "r2", "http://r2", t0, ttl)
	must(t, err)
	n, err := b.Leave(c, "r1")
	must(t, err)
	if n != 1 {
		t.Errorf("Leave released %d lease(s), want 1", n)
	}
	_, err = a.Lease(c, p.ID)
	wantErr(t, err, teamstore.ErrNotFound, "r1's lease after it left")
	if l, err := a.Lease(c, q.ID); err != nil || l.Owner != "r2" {
		t.Errorf("r2's lease after r1 left: %+v (%v)", l, err)
	}
	got, err = a.Replicas(c, t0.Add(time.Second))
	must(t, err)
	if len(got) != 1 || got[0].ID != "r2" {
		t.Errorf("Replicas after r1 left = %+v", got)
	}
}

// A note sent through one handle reaches the listeners of both, in order;
// a listener ends with its context, closing its channel.
func testNotify(t *testing.T, a, b LeaseStore) {
	c := ctx(t)
	lctx, cancel := context.WithCancel(c)
	defer cancel()
	onA, err := a.Listen(lctx)
	must(t, err)
	onB, err := b.Listen(lctx)
	must(t, err)
	notes := []teamstore.VersionNote{
		{Project: "p", Version: "c1", From: "r2"},
		{Project: "q", Version: "c2", From: "r2"},
		{Project: "p", Version: "c3"},
	}
	for _, n := range notes {
		must(t, b.Notify(c, n))
	}
	for name, ch := range map[string]<-chan teamstore.VersionNote{"the other handle": onA, "the sender's own": onB} {
		for i, want := range notes {
			select {
			case got, ok := <-ch:
				if !ok || got != want {
					t.Fatalf("%s: note %d = %+v (open %v), want %+v", name, i, got, ok, want)
				}
			case <-c.Done():
				t.Fatalf("%s: note %d never came", name, i)
			}
		}
	}
	if err := a.Notify(c, teamstore.VersionNote{Version: "x"}); err == nil {
		t.Error("a note without a project was sent")
	}
	cancel()
	for _, ch := range []<-chan teamstore.VersionNote{onA, onB} {
		for open := true; open; {
			select {
			case _, open = <-ch:
			case <-c.Done():
				t.Fatal("a listener's channel stayed open after its context ended")
			}
		}
	}
}
