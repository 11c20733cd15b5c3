// Package storetest is the test suite every teamstore.Store passes (the
// SQLite and the PostgreSQL stores), the suite of every teamstore.Leases,
// and the benchmarks of the calls on a request's path. Each test names the
// guarantee of the teamstore package documentation it checks.
package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// t0 is the suite's clock origin, at a whole microsecond so that stored and
// returned times compare equal.
var t0 = time.Date(2026, 11, 20, 9, 30, 0, 123456000, time.UTC)

// Run runs the suite; newStore returns a fresh, empty store (closed by the
// suite).
func Run(t *testing.T, newStore func(t *testing.T) teamstore.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s teamstore.Store)
	}{
		{"Projects", testProjects},
		{"Keys", testKeys},
		{"KeyNameFreedByRevoke", testKeyNameFreedByRevoke},
		{"FileIDs", testFileIDs},
		{"TombstoneRevive", testTombstoneRevive},
		{"EnsureFilesInBulk", testEnsureFiles},
		{"MoveOntoTombstone", testMoveOntoTombstone},
		{"Versions", testVersions},
		{"RecordIsAtomic", testRecordAtomic},
		{"Idempotency", testIdempotency},
		{"IdempotencyAnsweredOnce", testIdemAnsweredOnce},
		{"IdempotencyScopedToKey", testIdempotencyScoped},
		{"IdempotencyExpiry", testIdempotencyExpiry},
		{"Audit", testAudit},
		{"ConcurrentEnsureFile", testConcurrentEnsure},
		{"ConcurrentBeginIdem", testConcurrentBegin},
		{"ByteOrder", testByteOrder},
		{"TimesInUTCToTheMicrosecond", testTimes},
		{"AddKeyIsAtomic", testAddKeyAtomic},
		{"DeleteTwiceKeepsTheTombstone", testDeleteTwice},
		{"ConcurrentRecordNumbersVersions", testConcurrentRecord},
		{"RemoveProject", testRemoveProject},
		{"KeyExpiry", testKeyExpiry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func addProject(t *testing.T, s teamstore.Store, name string) teamstore.Project {
	t.Helper()
	p := teamstore.Project{ID: teamstore.NewID(), Name: name, CreatedAt: t0}
	must(t, s.AddProject(ctx(t), p))
	return p
}

func hashOf(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Projects: created once per name, found by id or by name, listed by name.
func testProjects(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	b := addProject(t, s, "beta")
	a := teamstore.Project{ID: teamstore.NewID(), Name: "alpha", Remote: "ssh://git@git.example/team/alpha.git", Branch: "main", CreatedAt: t0}
	must(t, s.AddProject(c, a))
	wantErr(t, s.AddProject(c, teamstore.Project{ID: teamstore.NewID(), Name: "beta", CreatedAt: t0}), teamstore.ErrExists, "second project named beta")
	for _, ref := range []string{b.ID, "beta"} {
		got, err := s.Project(c, ref)
		must(t, err)
		if got != b {
			t.Errorf("Project(%q) = %+v, want %+v", ref, got, b)
		}
	}
	if got, err := s.Project(c, "alpha"); err != nil || got != a {
		t.Errorf("Project(alpha) = %+v (%v), want its remote and branch: %+v", got, err, a)
	}
	_, err := s.Project(c, "gamma")
	wantErr(t, err, teamstore.ErrNotFound, "Project(gamma)")
	list, err := s.Projects(c)
	must(t, err)
	if !reflect.DeepEqual(list, []teamstore.Project{a, b}) {
		t.Errorf("Projects = %+v, want alpha then beta", list)
	}
}

// Keys: found by hash only while active, with their scope; revoked keys are
// still listed; last use recorded.
func testKeys(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p1, p2 := addProject(t, s, "one"), addProject(t, s, "two")
	k := teamstore.Key{ID: teamstore.NewID(), Name: "alice", Hash: hashOf("tv_alice"), ReadOnly: true, Projects: []string{p2.ID, p1.ID}, CreatedAt: t0}
	must(t, s.AddKey(c, k))
	all := teamstore.Key{ID: teamstore.NewID(), Name: "bob", Hash: hashOf("tv_bob"), CreatedAt: t0.Add(time.Second)}
	must(t, s.AddKey(c, all))
	wantErr(t, s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: "alice", Hash: hashOf("tv_other"), CreatedAt: t0}), teamstore.ErrExists, "second active key named alice")

	got, err := s.KeyByHash(c, hashOf("tv_alice"))
	must(t, err)
	if got.ID != k.ID || got.Name != "alice" || !got.ReadOnly || !got.CreatedAt.Equal(t0) || !got.LastUsedAt.IsZero() || !got.RevokedAt.IsZero() {
		t.Errorf("KeyByHash = %+v", got)
	}
	if len(got.Projects) != 2 || !got.Allows(p1.ID) || !got.Allows(p2.ID) || got.Allows("elsewhere") {
		t.Errorf("scope of alice = %v", got.Projects)
	}
	gotAll, err := s.KeyByHash(c, hashOf("tv_bob"))
	must(t, err)
	if len(gotAll.Projects) != 0 || !gotAll.Allows("anything") || gotAll.ReadOnly {
		t.Errorf("bob = %+v, want every project, read-write", gotAll)
	}
	_, err = s.KeyByHash(c, hashOf("tv_nobody"))
	wantErr(t, err, teamstore.ErrNotFound, "KeyByHash(unknown)")

	used := t0.Add(time.Hour)
	must(t, s.TouchKey(c, k.ID, used))
	must(t, s.TouchKey(c, k.ID, used.Add(-time.Minute))) // an older use never moves it back
	got, err = s.KeyByHash(c, hashOf("tv_alice"))
	must(t, err)
	if !got.LastUsedAt.Equal(used) {
		t.Errorf("LastUsedAt = %v, want %v", got.LastUsedAt, used)
	}

	// A rotation: the new secret finds the same key, the old one nothing.
	must(t, s.RotateKey(c, "alice", hashOf("tv_alice2"), t0.Add(48*time.Hour)))
	_, err = s.KeyByHash(c, hashOf("tv_alice"))
	wantErr(t, err, teamstore.ErrNotFound, "KeyByHash(the secret before the rotation)")
	rotated, err := s.KeyByHash(c, hashOf("tv_alice2"))
	must(t, err)
	if rotated.ID != k.ID || rotated.Name != "alice" || len(rotated.Projects) != 2 || rotated.ReadOnly != got.ReadOnly || !rotated.LastUsedAt.Equal(used) ||
		!rotated.ExpiresAt.Equal(t0.Add(48*time.Hour)) {
		t.Errorf("the rotated key = %+v, want alice's id, scope, access and last use (%+v)", rotated, got)
	}
	wantErr(t, s.RotateKey(c, "carol", hashOf("tv_c"), time.Time{}), teamstore.ErrNotFound, "rotating an unknown key")
	must(t, s.RotateKey(c, "alice", hashOf("tv_alice2"), time.Time{}))
	if k, err := s.KeyByHash(c, hashOf("tv_alice2")); err != nil || !k.ExpiresAt.IsZero() {
		t.Errorf("a rotation to no expiry: %+v %v", k, err)
	}

	revoked := t0.Add(2 * time.Hour)
	must(t, s.RevokeKey(c, "alice", revoked))
	_, err = s.KeyByHash(c, hashOf("tv_alice2"))
	wantErr(t, err, teamstore.ErrNotFound, "KeyByHash(revoked after its rotation)")
	wantErr(t, s.RotateKey(c, "alice", hashOf("tv_alice3"), time.Time{}), teamstore.ErrNotFound, "rotating a revoked key")
	_, err = s.KeyByHash(c, hashOf("tv_alice"))
	wantErr(t, err, teamstore.ErrNotFound, "KeyByHash(revoked)")
	wantErr(t, s.RevokeKey(c, "alice", revoked), teamstore.ErrNotFound, "revoking alice twice")
	wantErr(t, s.RevokeKey(c, "carol", revoked), teamstore.ErrNotFound, "revoking an unknown key")
	keys, err := s.Keys(c)
	must(t, err)
	if len(keys) != 2 || keys[0].Name != "alice" || !keys[0].RevokedAt.Equal(revoked) || keys[1].Name != "bob" || !keys[1].RevokedAt.IsZero() {
		t.Errorf("Keys = %+v", keys)
	}
	if len(keys[0].Projects) != 2 {
		t.Errorf("Keys lost alice's scope: %v", keys[0].Projects)
	}
}

// A revoked key frees its name for a new key; both stay listed.
func testKeyNameFreedByRevoke(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	must(t, s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: "ci", Hash: hashOf("tv_1"), CreatedAt: t0}))
	must(t, s.RevokeKey(c, "ci", t0.Add(time.Minute)))
	must(t, s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: "ci", Hash: hashOf("tv_2"), CreatedAt: t0.Add(2 * time.Minute)}))
	keys, err := s.Keys(c)
	must(t, err)
	if len(keys) != 2 || keys[0].RevokedAt.IsZero() || !keys[1].RevokedAt.IsZero() {
		t.Errorf("Keys = %+v, want the revoked ci then the active one", keys)
	}
	if _, err := s.KeyByHash(c, hashOf("tv_2")); err != nil {
		t.Errorf("the new ci key: %v", err)
	}
}

// File ids: EnsureFile gives one id per path, stable across calls; a move
// keeps it; ids are per project.
func testFileIDs(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p, q := addProject(t, s, "p"), addProject(t, s, "q")
	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	if f.ID == "" || f.Path != "a.md" || !f.Live() || !f.CreatedAt.Equal(t0) || !f.UpdatedAt.Equal(t0) || f.Project != p.ID {
		t.Fatalf("EnsureFile = %+v", f)
	}
	again, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0.Add(time.Minute))
	must(t, err)
	if again != f {
		t.Errorf("EnsureFile twice: %+v then %+v", f, again)
	}
	other, err := teamstore.EnsureFile(c, s, q.ID, "a.md", t0)
	must(t, err)
	if other.ID == f.ID {
		t.Errorf("two projects share file id %s", f.ID)
	}
	moved := t0.Add(time.Hour)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: moved, Moves: []teamstore.Move{{FileID: f.ID, To: "dir/b.md"}}}))
	got, err := s.File(c, p.ID, f.ID)
	must(t, err)
	if got.Path != "dir/b.md" || !got.UpdatedAt.Equal(moved) || !got.CreatedAt.Equal(t0) {
		t.Errorf("after the move: %+v", got)
	}
	byPath, err := s.FileByPath(c, p.ID, "dir/b.md")
	must(t, err)
	if byPath.ID != f.ID {
		t.Errorf("FileByPath(dir/b.md) = %s, want %s", byPath.ID, f.ID)
	}
	_, err = s.FileByPath(c, p.ID, "a.md")
	wantErr(t, err, teamstore.ErrNotFound, "old path after the move")
	_, err = s.File(c, p.ID, "no-such-id")
	wantErr(t, err, teamstore.ErrNotFound, "File(unknown)")
	_, err = s.File(c, q.ID, f.ID)
	wantErr(t, err, teamstore.ErrNotFound, "a file id of another project")
	wantErr(t, s.Record(c, teamstore.Record{Project: p.ID, At: moved, Moves: []teamstore.Move{{FileID: "no-such-id", To: "x.md"}}}), teamstore.ErrNotFound, "moving an unknown id")
}

// Tombstones: a delete keeps the row; the live list drops it; EnsureFile on
// the path revives the same id.
func testTombstoneRevive(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	a, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	b, err := teamstore.EnsureFile(c, s, p.ID, "b.md", t0)
	must(t, err)
	del := t0.Add(time.Minute)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: del, Deletes: []string{a.ID}}))
	got, err := s.File(c, p.ID, a.ID)
	must(t, err)
	if got.Live() || !got.DeletedAt.Equal(del) {
		t.Errorf("deleted file = %+v, want a tombstone at %v", got, del)
	}
	live, err := s.LiveFiles(c, p.ID)
	must(t, err)
	if len(live) != 1 || live[0].ID != b.ID {
		t.Errorf("LiveFiles = %+v, want only b.md", live)
	}
	revive := t0.Add(2 * time.Minute)
	again, err := teamstore.EnsureFile(c, s, p.ID, "a.md", revive)
	must(t, err)
	if again.ID != a.ID || !again.Live() || !again.UpdatedAt.Equal(revive) || !again.CreatedAt.Equal(t0) {
		t.Errorf("revived = %+v, want id %s live", again, a.ID)
	}
	live, err = s.LiveFiles(c, p.ID)
	must(t, err)
	if len(live) != 2 || live[0].Path != "a.md" || live[1].Path != "b.md" {
		t.Errorf("LiveFiles after the revive = %+v", live)
	}
}

// EnsureFiles in bulk answers in the order asked, mixing existing, revived
// and new files.
func testEnsureFiles(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	old, err := teamstore.EnsureFile(c, s, p.ID, "old.md", t0)
	must(t, err)
	gone, err := teamstore.EnsureFile(c, s, p.ID, "gone.md", t0)
	must(t, err)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: t0, Deletes: []string{gone.ID}}))
	fs, err := s.EnsureFiles(c, p.ID, []string{"new.md", "old.md", "gone.md"}, t0.Add(time.Hour))
	must(t, err)
	if len(fs) != 3 || fs[0].Path != "new.md" || fs[0].ID == old.ID || fs[0].ID == gone.ID || fs[1].ID != old.ID || fs[2].ID != gone.ID || !fs[2].Live() {
		t.Fatalf("EnsureFiles = %+v", fs)
	}
	live, err := s.LiveFiles(c, p.ID)
	must(t, err)
	if len(live) != 3 {
		t.Errorf("LiveFiles = %+v", live)
	}
	none, err := s.EnsureFiles(c, p.ID, nil, t0)
	must(t, err)
	if len(none) != 0 {
		t.Errorf("EnsureFiles(nil) = %+v", none)
	}
}

// A move onto a tombstoned path takes the path; the tombstone gives way.
func testMoveOntoTombstone(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	old, err := teamstore.EnsureFile(c, s, p.ID, "x.md", t0)
	must(t, err)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: t0, Versions: []teamstore.Version{{FileID: old.ID, Path: "x.md", Hash: "h0", VersionID: "v0", Message: "create"}}}))
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: t0, Deletes: []string{old.ID}}))
	f, err := teamstore.EnsureFile(c, s, p.ID, "y.md", t0)
	must(t, err)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: t0.Add(time.Second), Moves: []teamstore.Move{{FileID: f.ID, To: "x.md"}}}))
	got, err := s.FileByPath(c, p.ID, "x.md")
	must(t, err)
	if got.ID != f.ID || !got.Live() {
		t.Errorf("x.md is held by %+v, want %s", got, f.ID)
	}
	_, err = s.File(c, p.ID, old.ID)
	wantErr(t, err, teamstore.ErrNotFound, "the tombstone that gave way")
}

// Versions: numbered from 1 per file, newest first, with the path of the
// time; a version moves the file's UpdatedAt.
func testVersions(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	g, err := teamstore.EnsureFile(c, s, p.ID, "g.md", t0)
	must(t, err)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: t0, Versions: []teamstore.Version{
		{FileID: f.ID, Path: "a.md", Hash: "h1", VersionID: "c1", Message: "create a"},
		{FileID: g.ID, Path: "g.md", Hash: "g1", VersionID: "c1", Message: "create g"},
	}}))
	t1 := t0.Add(time.Minute)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: t1,
		Moves:    []teamstore.Move{{FileID: f.ID, To: "b.md"}},
		Versions: []teamstore.Version{{FileID: f.ID, Path: "b.md", Hash: "h2", VersionID: "c2", Message: "move"}}}))
	vs, err := s.Versions(c, p.ID, f.ID)
	must(t, err)
	want := []teamstore.Version{
		{FileID: f.ID, Number: 2, Path: "b.md", Hash: "h2", VersionID: "c2", Message: "move", CreatedAt: t1},
		{FileID: f.ID, Number: 1, Path: "a.md", Hash: "h1", VersionID: "c1", Message: "create a", CreatedAt: t0},
	}
	if !reflect.DeepEqual(vs, want) {
		t.Errorf("Versions =\n%+v\nwant\n%+v", vs, want)
	}
	got, err := s.File(c, p.ID, f.ID)
	must(t, err)
	if !got.UpdatedAt.Equal(t1) {
		t.Errorf("UpdatedAt = %v, want %v", got.UpdatedAt, t1)
	}
	gv, err := s.Versions(c, p.ID, g.ID)
	must(t, err)
	if len(gv) != 1 || gv[0].Number != 1 {
		t.Errorf("g.md versions = %+v", gv)
	}
	none, err := s.Versions(c, p.ID, "no-such-id")
	must(t, err)
	if len(none) != 0 {
		t.Errorf("versions of an unknown id: %+v", none)
	}
}

// Record is all or nothing: when one part fails (here the answer of a record
// that does not exist), no move, version or audit row of it remains.
func testRecordAtomic(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	err = s.Record(c, teamstore.Record{Project: p.ID, At: t0.Add(time.Minute),
		Moves:    []teamstore.Move{{FileID: f.ID, To: "b.md"}},
		Versions: []teamstore.Version{{FileID: f.ID, Path: "b.md", Hash: "h", VersionID: "c", Message: "m"}},
		Audit:    &teamstore.AuditEntry{At: t0, KeyID: "k", KeyName: "alice", Project: p.ID, Operation: "move", Result: "ok"},
		Answer:   &teamstore.IdemAnswer{KeyID: "k", Key: "never-begun", Response: teamstore.Response{Status: 200}},
	})
	wantErr(t, err, teamstore.ErrNotFound, "answering a record never begun")
	got, err := s.File(c, p.ID, f.ID)
	must(t, err)
	if got.Path != "a.md" {
		t.Errorf("the failed Record moved the file to %s", got.Path)
	}
	vs, err := s.Versions(c, p.ID, f.ID)
	must(t, err)
	audit, err := s.Audit(c, teamstore.AuditQuery{})
	must(t, err)
	if len(vs) != 0 || len(audit) != 0 {
		t.Errorf("the failed Record left %d version(s) and %d audit row(s)", len(vs), len(audit))
	}
}

// A record is answered, and its write booked, once: a second answer (a
// replica settling the write its writer answered meanwhile), or one under
// the token of a record released and begun again since, is refused with
// ErrNotRunning and leaves no version or audit row.
func testIdemAnsweredOnce(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	book := func(token, by string, status int) error {
		return s.Record(c, teamstore.Record{Project: p.ID, At: t0,
			Versions: []teamstore.Version{{FileID: f.ID, Path: "a.md", Hash: "h", VersionID: "c1", Message: "update a.md"}},
			Audit:    &teamstore.AuditEntry{At: t0, KeyID: "k", KeyName: by, Project: p.ID, Operation: "update", Result: "ok"},
			Answer:   &teamstore.IdemAnswer{KeyID: "k", Key: "once", Token: token, Response: teamstore.Response{Status: status}}})
	}
	rec := newIdem("k", "once", "fp", t0)
	rec.Project = p.ID
	_, created, err := s.BeginIdem(c, rec)
	must(t, err)
	if !created {
		t.Fatal("the record was not begun")
	}
	must(t, book(rec.Token, "writer", 200))
	wantErr(t, book(rec.Token, "settler", 201), teamstore.ErrNotRunning, "answering an answered record again")
	vs, err := s.Versions(c, p.ID, f.ID)
	must(t, err)
	audit, err := s.Audit(c, teamstore.AuditQuery{})
	must(t, err)
	if len(vs) != 1 || len(audit) != 1 || audit[0].KeyName != "writer" {
		t.Errorf("after a second answer: %d version(s), audit %+v; want the first answer's only", len(vs), audit)
	}
	held, _, err := s.BeginIdem(c, rec)
	must(t, err)
	if held.Response == nil || held.Response.Status != 200 {
		t.Errorf("the stored answer is %+v, want the first (200)", held.Response)
	}
	// Released and begun again: the old token answers nothing.
	old := newIdem("k", "again", "fp", t0)
	_, _, err = s.BeginIdem(c, old)
	must(t, err)
	must(t, s.ReleaseIdem(c, "k", "again", old.Token))
	fresh := newIdem("k", "again", "fp", t0)
	_, _, err = s.BeginIdem(c, fresh)
	must(t, err)
	err = s.Record(c, teamstore.Record{Project: p.ID, At: t0, Answer: &teamstore.IdemAnswer{KeyID: "k", Key: "again", Token: old.Token, Response: teamstore.Response{Status: 200}}})
	wantErr(t, err, teamstore.ErrNotRunning, "answering under a released record's token")
	if held, _, _ := s.BeginIdem(c, fresh); held.State != teamstore.IdemRunning || held.Token != fresh.Token {
		t.Errorf("the record begun again was answered by the old token: %+v", held)
	}
}

func newIdem(keyID, key, fp string, at time.Time) teamstore.Idem {
	return teamstore.Idem{KeyID: keyID, Key: key, Fingerprint: fp, Project: "p", Operation: "create", Target: "a.md", Token: teamstore.NewID(),
		Owner: "instance-1", CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)}
}

// Idempotency: the first Begin holds the record (running); later ones get it
// back, then with its stored answer once Record answers it; Release frees a
// running record only.
func testIdempotency(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	rec := newIdem("key-1", "idem-1", "fp-1", t0)
	held, created, err := s.BeginIdem(c, rec)
	must(t, err)
	if !created || held.State != teamstore.IdemRunning || held.Token != rec.Token || held.Response != nil {
		t.Fatalf("first Begin: created=%v %+v", created, held)
	}
	second := newIdem("key-1", "idem-1", "fp-other", t0.Add(time.Second))
	held, created, err = s.BeginIdem(c, second)
	must(t, err)
	if created || held.Fingerprint != "fp-1" || held.Token != rec.Token || held.State != teamstore.IdemRunning || !held.CreatedAt.Equal(t0) || held.Owner != "instance-1" || held.Operation != "create" || held.Target != "a.md" || held.Project != "p" {
		t.Fatalf("second Begin: created=%v %+v, want the first record", created, held)
	}
	running, err := s.RunningIdem(c)
	must(t, err)
	if len(running) != 1 || running[0].Key != "idem-1" {
		t.Errorf("RunningIdem = %+v", running)
	}
	resp := teamstore.Response{Status: 201, Header: map[string][]string{"Etag": {`"abc"`}, "Content-Type": {"application/json"}}, Body: []byte(`{"file":{}}`)}
	must(t, s.Record(c, teamstore.Record{Project: "p", At: t0, Answer: &teamstore.IdemAnswer{KeyID: "key-1", Key: "idem-1", Token: rec.Token, Response: resp}}))
	held, created, err = s.BeginIdem(c, second)
	must(t, err)
	if created || held.State != teamstore.IdemDone || held.Response == nil || !reflect.DeepEqual(*held.Response, resp) {
		t.Fatalf("Begin after the answer: created=%v %+v", created, held)
	}
	running, err = s.RunningIdem(c)
	must(t, err)
	if len(running) != 0 {
		t.Errorf("RunningIdem after the answer = %+v", running)
	}
	must(t, s.ReleaseIdem(c, "key-1", "idem-1", rec.Token))
	if held, _, _ = s.BeginIdem(c, second); held.State != teamstore.IdemDone {
		t.Errorf("Release dropped an answered record")
	}
	// A running record released can begin again.
	r2 := newIdem("key-1", "idem-2", "fp-2", t0)
	_, created, err = s.BeginIdem(c, r2)
	must(t, err)
	// Another token (a record begun again since) is not released.
	must(t, s.ReleaseIdem(c, "key-1", "idem-2", teamstore.NewID()))
	if held, created, _ = s.BeginIdem(c, newIdem("key-1", "idem-2", "fp-2", t0)); created || held.Token != r2.Token {
		t.Fatalf("Release with another token dropped the record: created=%v %+v", created, held)
	}
	must(t, s.ReleaseIdem(c, "key-1", "idem-2", r2.Token))
	r2b := newIdem("key-1", "idem-2", "fp-2b", t0.Add(time.Second))
	held, created, err = s.BeginIdem(c, r2b)
	must(t, err)
	if !created || held.Fingerprint != "fp-2b" {
		t.Errorf("Begin after Release: created=%v %+v", created, held)
	}
	// An answer with no headers and an empty body round-trips.
	must(t, s.Record(c, teamstore.Record{Project: "p", At: t0, Answer: &teamstore.IdemAnswer{KeyID: "key-1", Key: "idem-2", Token: r2b.Token, Response: teamstore.Response{Status: 204}}}))
	held, _, err = s.BeginIdem(c, r2b)
	must(t, err)
	if held.Response == nil || held.Response.Status != 204 || len(held.Response.Body) != 0 || len(held.Response.Header) != 0 {
		t.Errorf("empty answer = %+v", held.Response)
	}
}

// Records are scoped to the API key: the same Idempotency-Key from two keys
// makes two records.
func testIdempotencyScoped(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	_, created1, err := s.BeginIdem(c, newIdem("alice", "same", "fp-a", t0))
	must(t, err)
	held, created2, err := s.BeginIdem(c, newIdem("bob", "same", "fp-b", t0))
	must(t, err)
	if !created1 || !created2 || held.Fingerprint != "fp-b" {
		t.Errorf("second key's record: created=%v %+v", created2, held)
	}
}

// An answered record expires at ExpiresAt: a Begin then replaces it, and
// PurgeIdem deletes it. A running record never expires (its write may be
// in the vault until it is settled): neither replaced nor purged.
func testIdempotencyExpiry(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	rec := newIdem("k", "old", "fp", t0)
	_, _, err := s.BeginIdem(c, rec)
	must(t, err)
	must(t, s.Record(c, teamstore.Record{Project: "p", At: t0, Answer: &teamstore.IdemAnswer{KeyID: "k", Key: "old", Token: rec.Token, Response: teamstore.Response{Status: 200, Body: []byte("x")}}}))
	justBefore := newIdem("k", "old", "fp2", rec.ExpiresAt.Add(-time.Microsecond))
	held, created, err := s.BeginIdem(c, justBefore)
	must(t, err)
	if created || held.State != teamstore.IdemDone {
		t.Fatalf("a microsecond before expiry: created=%v %+v", created, held)
	}
	later := newIdem("k", "old", "fp2", rec.ExpiresAt)
	held, created, err = s.BeginIdem(c, later)
	must(t, err)
	if !created || held.Fingerprint != "fp2" || held.State != teamstore.IdemRunning {
		t.Fatalf("at expiry: created=%v %+v, want a new record", created, held)
	}
	young := newIdem("k", "young", "fp", t0.Add(12*time.Hour))
	_, _, err = s.BeginIdem(c, young)
	must(t, err)
	must(t, s.Record(c, teamstore.Record{Project: "p", At: young.CreatedAt, Answer: &teamstore.IdemAnswer{KeyID: "k", Key: "young", Token: young.Token, Response: teamstore.Response{Status: 201, Body: []byte("y")}}}))
	n, err := s.PurgeIdem(c, t0.Add(24*time.Hour+time.Hour))
	must(t, err)
	if n != 0 {
		t.Errorf("PurgeIdem removed %d record(s) not yet expired", n)
	}
	// Two days on, "young" (answered) has expired and goes; "old", running
	// since it was begun again a day ago, stays, and holds its key.
	n, err = s.PurgeIdem(c, t0.Add(72*time.Hour))
	must(t, err)
	if n != 1 {
		t.Errorf("PurgeIdem at +72h removed %d, want 1 (young, answered)", n)
	}
	running, err := s.RunningIdem(c)
	must(t, err)
	if len(running) != 1 || running[0].Key != "old" || running[0].Token != later.Token {
		t.Errorf("left: %+v, want the renewed old, running", running)
	}
	held, created, err = s.BeginIdem(c, newIdem("k", "old", "fp3", t0.Add(72*time.Hour)))
	must(t, err)
	if created || held.Token != later.Token || held.State != teamstore.IdemRunning {
		t.Errorf("a Begin over a running record a day past its expiry: created=%v %+v, want it kept", created, held)
	}
}

// The audit log: rows come back newest first, whole, filtered by project
// and limited.
func testAudit(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	for i := range 5 {
		project := "p1"
		if i%2 == 1 {
			project = "p2"
		}
		e := teamstore.AuditEntry{At: t0.Add(time.Duration(i) * time.Second), KeyID: "k", KeyName: "alice", Project: project,
			Operation: fmt.Sprintf("op%d", i), Paths: []string{"a.md", fmt.Sprintf("b%d.md", i)}, Version: "c", IdempotencyKey: "i", Result: "ok"}
		if i == 4 {
			must(t, s.AppendAudit(c, e))
		} else {
			must(t, s.Record(c, teamstore.Record{Project: project, At: e.At, Audit: &e}))
		}
	}
	all, err := s.Audit(c, teamstore.AuditQuery{})
	must(t, err)
	if len(all) != 5 || all[0].Operation != "op4" || all[4].Operation != "op0" {
		t.Fatalf("Audit = %+v", all)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Errorf("ids not decreasing: %d then %d", all[i-1].ID, all[i].ID)
		}
	}
	e := all[4]
	if !e.At.Equal(t0) || e.KeyName != "alice" || !reflect.DeepEqual(e.Paths, []string{"a.md", "b0.md"}) || e.Version != "c" || e.IdempotencyKey != "i" || e.Result != "ok" {
		t.Errorf("oldest row = %+v", e)
	}
	p2, err := s.Audit(c, teamstore.AuditQuery{Project: "p2", Limit: 1})
	must(t, err)
	if len(p2) != 1 || p2[0].Operation != "op3" {
		t.Errorf("Audit(p2, 1) = %+v", p2)
	}
	since, err := s.Audit(c, teamstore.AuditQuery{Since: t0.Add(3 * time.Second)})
	must(t, err)
	if len(since) != 2 || since[0].Operation != "op4" || since[1].Operation != "op3" {
		t.Errorf("Audit(since the fourth row's time) = %+v", since)
	}
	must(t, s.AppendAudit(c, teamstore.AuditEntry{At: t0.Add(time.Minute), KeyID: "k2", KeyName: "bob", Project: "p2", Operation: "delete", Result: "conflict"}))
	bob, err := s.Audit(c, teamstore.AuditQuery{KeyName: "bob"})
	must(t, err)
	if len(bob) != 1 || bob[0].Operation != "delete" || bob[0].Result != "conflict" {
		t.Errorf("Audit(key bob) = %+v", bob)
	}
	aliceP2, err := s.Audit(c, teamstore.AuditQuery{KeyName: "alice", Project: "p2", Since: t0.Add(2 * time.Second)})
	must(t, err)
	if len(aliceP2) != 1 || aliceP2[0].Operation != "op3" {
		t.Errorf("Audit(alice, p2, since the third row's time) = %+v", aliceP2)
	}
	must(t, s.AppendAudit(c, teamstore.AuditEntry{At: t0, Operation: "key add", Result: "ok"}))
	top, err := s.Audit(c, teamstore.AuditQuery{Limit: 1})
	must(t, err)
	if len(top) != 1 || top[0].Paths == nil || len(top[0].Paths) != 0 {
		t.Errorf("a row without paths = %+v, want an empty list", top)
	}
}

// Concurrent EnsureFile calls on one path agree on one id.
func testConcurrentEnsure(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := teamstore.EnsureFile(c, s, p.ID, "same.md", t0)
			ids[i], errs[i] = f.ID, err
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("ids differ: %v", ids)
		}
	}
}

// Concurrent Begins of one record: exactly one creates it.
func testConcurrentBegin(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	creators := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, created, err := s.BeginIdem(c, newIdem("k", "race", fmt.Sprint("fp", i), t0))
			if err != nil {
				t.Error(err)
				return
			}
			if created {
				mu.Lock()
				creators++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if creators != 1 {
		t.Errorf("%d Begins created the record, want 1", creators)
	}
}

// Lists are in byte order of names and paths (not a locale's order): upper
// case before lower case, punctuation by its code, accented letters last.
func testByteOrder(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	names := []string{"beta.1", "Zeta", "alpha", "beta-2", "beta_3", "Beta", "émile", "a1", "a-1"}
	for _, n := range names {
		addProject(t, s, n)
	}
	want := append([]string(nil), names...)
	sort.Strings(want)
	ps, err := s.Projects(c)
	must(t, err)
	var got []string
	for _, p := range ps {
		got = append(got, p.Name)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Projects in order %q, want byte order %q", got, want)
	}

	p := ps[0]
	paths := []string{"b.md", "B.md", "a b.md", "a-b.md", "ab.md", "a/b.md", "a.md", "é.md", "Z/z.md", "_x.md"}
	_, err = s.EnsureFiles(c, p.ID, paths, t0)
	must(t, err)
	live, err := s.LiveFiles(c, p.ID)
	must(t, err)
	wantPaths := append([]string(nil), paths...)
	sort.Strings(wantPaths)
	got = got[:0]
	for _, f := range live {
		got = append(got, f.Path)
	}
	if !reflect.DeepEqual(got, wantPaths) {
		t.Errorf("LiveFiles in order %q, want byte order %q", got, wantPaths)
	}

	for i, n := range []string{"bob", "Alice", "alice", "_ci"} {
		must(t, s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: n, Hash: hashOf(n), CreatedAt: t0.Add(time.Duration(i) * time.Second)}))
	}
	keys, err := s.Keys(c)
	must(t, err)
	got = got[:0]
	for _, k := range keys {
		got = append(got, k.Name)
	}
	if want := []string{"Alice", "_ci", "alice", "bob"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Keys in order %q, want %q", got, want)
	}
	// A name matches exactly: no case folding.
	_, err = s.Project(c, "zeta")
	wantErr(t, err, teamstore.ErrNotFound, "Project(zeta) with only Zeta")
	_, err = s.FileByPath(c, p.ID, "AB.md")
	wantErr(t, err, teamstore.ErrNotFound, "FileByPath(AB.md) with only ab.md")
}

// Times given in any zone with nanoseconds come back in UTC, cut to the
// microsecond, from every call that returns one.
func testTimes(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	at := time.Date(2026, 11, 20, 15, 0, 0, 123456789, zone)
	want := time.Date(2026, 11, 20, 9, 30, 0, 123456000, time.UTC)
	check := func(what string, got time.Time) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v (%s), want %v", what, got, got.Location(), want)
		}
	}
	p := teamstore.Project{ID: teamstore.NewID(), Name: "p", CreatedAt: at}
	must(t, s.AddProject(c, p))
	got, err := s.Project(c, p.ID)
	must(t, err)
	check("Project.CreatedAt", got.CreatedAt)
	ps, err := s.Projects(c)
	must(t, err)
	check("Projects[0].CreatedAt", ps[0].CreatedAt)

	k := teamstore.Key{ID: teamstore.NewID(), Name: "k", Hash: hashOf("k"), CreatedAt: at}
	must(t, s.AddKey(c, k))
	must(t, s.TouchKey(c, k.ID, at))
	must(t, s.RevokeKey(c, "k", at))
	keys, err := s.Keys(c)
	must(t, err)
	check("Key.CreatedAt", keys[0].CreatedAt)
	check("Key.LastUsedAt", keys[0].LastUsedAt)
	check("Key.RevokedAt", keys[0].RevokedAt)

	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", at)
	must(t, err)
	check("EnsureFile.CreatedAt", f.CreatedAt)
	check("EnsureFile.UpdatedAt", f.UpdatedAt)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: at, Deletes: []string{f.ID},
		Versions: []teamstore.Version{{FileID: f.ID, Path: "a.md", Hash: "h", VersionID: "v", Message: "m"}},
		Audit:    &teamstore.AuditEntry{At: at, Project: p.ID, Operation: "delete", Result: "ok"}}))
	f, err = s.File(c, p.ID, f.ID)
	must(t, err)
	check("File.CreatedAt", f.CreatedAt)
	check("File.DeletedAt", f.DeletedAt)
	revived, err := teamstore.EnsureFile(c, s, p.ID, "a.md", at)
	must(t, err)
	check("revived UpdatedAt", revived.UpdatedAt)
	vs, err := s.Versions(c, p.ID, f.ID)
	must(t, err)
	check("Version.CreatedAt", vs[0].CreatedAt)
	audit, err := s.Audit(c, teamstore.AuditQuery{})
	must(t, err)
	check("AuditEntry.At", audit[0].At)

	rec := newIdem("k", "i", "fp", at)
	held, _, err := s.BeginIdem(c, rec)
	must(t, err)
	check("BeginIdem.CreatedAt", held.CreatedAt)
	held, _, err = s.BeginIdem(c, rec)
	must(t, err)
	check("BeginIdem (held).CreatedAt", held.CreatedAt)
	running, err := s.RunningIdem(c)
	must(t, err)
	check("RunningIdem.CreatedAt", running[0].CreatedAt)
	if !running[0].ExpiresAt.Equal(want.Add(24*time.Hour)) || running[0].ExpiresAt.Location() != time.UTC {
		t.Errorf("RunningIdem.ExpiresAt = %v", running[0].ExpiresAt)
	}
}

// AddKey is all or nothing: a key scoped to a project that does not exist
// is refused, and leaves no key behind.
func testAddKeyAtomic(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	err := s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: "k", Hash: hashOf("k"), Projects: []string{p.ID, "no-such-project"}, CreatedAt: t0})
	if err == nil {
		t.Fatal("AddKey with an unknown project in its scope succeeded")
	}
	_, err = s.KeyByHash(c, hashOf("k"))
	wantErr(t, err, teamstore.ErrNotFound, "the refused key")
	keys, err := s.Keys(c)
	must(t, err)
	if len(keys) != 0 {
		t.Errorf("Keys after a refused AddKey = %+v", keys)
	}
	// The name is still free.
	must(t, s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: "k", Hash: hashOf("k"), Projects: []string{p.ID}, CreatedAt: t0}))
}

// Deleting a tombstone again changes nothing: it keeps its first time.
func testDeleteTwice(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	first := t0.Add(time.Minute)
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: first, Deletes: []string{f.ID}}))
	must(t, s.Record(c, teamstore.Record{Project: p.ID, At: first.Add(time.Hour), Deletes: []string{f.ID}}))
	got, err := s.File(c, p.ID, f.ID)
	must(t, err)
	if !got.DeletedAt.Equal(first) || !got.UpdatedAt.Equal(first) {
		t.Errorf("after a second delete: %+v, want deleted at %v", got, first)
	}
}

// Concurrent Records on one file number its versions 1..n, each once.
func testConcurrentRecord(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Record(c, teamstore.Record{Project: p.ID, At: t0, Versions: []teamstore.Version{{FileID: f.ID, Path: "a.md", Hash: fmt.Sprint("h", i), VersionID: "v", Message: "m"}},
				Audit: &teamstore.AuditEntry{At: t0, Project: p.ID, Operation: "write", Result: "ok"}})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	vs, err := s.Versions(c, p.ID, f.ID)
	must(t, err)
	hashes := map[string]bool{}
	for i, v := range vs {
		if v.Number != n-i {
			t.Errorf("version %d has number %d, want %d", i, v.Number, n-i)
		}
		hashes[v.Hash] = true
	}
	if len(vs) != n || len(hashes) != n {
		t.Errorf("%d versions with %d distinct hashes, want %d", len(vs), len(hashes), n)
	}
	audit, err := s.Audit(c, teamstore.AuditQuery{})
	must(t, err)
	if len(audit) != n {
		t.Errorf("%d audit rows, want %d", len(audit), n)
	}
}

// RemoveProject takes the project's file ids, versions, idempotency records
// and key scope rows with it, and keeps its audit rows and the other
// projects' rows; it refuses, removing nothing, while an active key may use
// only that project.
func testRemoveProject(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	p := addProject(t, s, "p")
	q := addProject(t, s, "q")
	f, err := teamstore.EnsureFile(c, s, p.ID, "a.md", t0)
	must(t, err)
	g, err := teamstore.EnsureFile(c, s, q.ID, "a.md", t0)
	must(t, err)
	for _, pr := range []teamstore.Project{p, q} {
		file := f
		if pr.ID == q.ID {
			file = g
		}
		must(t, s.Record(c, teamstore.Record{Project: pr.ID, At: t0,
			Versions: []teamstore.Version{{FileID: file.ID, Path: "a.md", Hash: "h", VersionID: "c1", Message: "create"}},
			Audit:    &teamstore.AuditEntry{At: t0, KeyID: "k", KeyName: "alice", Project: pr.ID, Operation: "create", Result: "ok"}}))
		rec := newIdem("key-"+pr.Name, "idem", "fp", t0)
		rec.Project = pr.ID
		_, _, err := s.BeginIdem(c, rec)
		must(t, err)
	}
	only := teamstore.Key{ID: teamstore.NewID(), Name: "only-p", Hash: hashOf("tv_only"), Projects: []string{p.ID}, CreatedAt: t0}
	both := teamstore.Key{ID: teamstore.NewID(), Name: "both", Hash: hashOf("tv_both"), Projects: []string{p.ID, q.ID}, CreatedAt: t0}
	old := teamstore.Key{ID: teamstore.NewID(), Name: "old-p", Hash: hashOf("tv_old"), Projects: []string{p.ID}, CreatedAt: t0}
	for _, k := range []teamstore.Key{only, both, old} {
		must(t, s.AddKey(c, k))
	}
	must(t, s.RevokeKey(c, "old-p", t0))

	var scoped *teamstore.ScopedKeysError
	if err := s.RemoveProject(c, p.ID); !errors.As(err, &scoped) || !reflect.DeepEqual(scoped.Keys, []string{"only-p"}) {
		t.Fatalf("RemoveProject with a key limited to it = %v, want only-p named", err)
	}
	if _, err := s.Project(c, p.ID); err != nil {
		t.Fatalf("the refused removal removed the project: %v", err)
	}
	must(t, s.RevokeKey(c, "only-p", t0))
	must(t, s.RemoveProject(c, p.ID))
	_, err = s.Project(c, p.ID)
	wantErr(t, err, teamstore.ErrNotFound, "the removed project")
	_, err = s.File(c, p.ID, f.ID)
	wantErr(t, err, teamstore.ErrNotFound, "a file id of the removed project")
	if vs, err := s.Versions(c, p.ID, f.ID); err != nil || len(vs) != 0 {
		t.Errorf("versions of the removed project: %+v %v", vs, err)
	}
	running, err := s.RunningIdem(c)
	must(t, err)
	if len(running) != 1 || running[0].Project != q.ID {
		t.Errorf("running records after the removal: %+v, want q's only", running)
	}
	k, err := s.KeyByHash(c, hashOf("tv_both"))
	must(t, err)
	if !reflect.DeepEqual(k.Projects, []string{q.ID}) {
		t.Errorf("the scope of a key to both projects: %v, want q only", k.Projects)
	}
	if _, err := s.File(c, q.ID, g.ID); err != nil {
		t.Errorf("the other project's file: %v", err)
	}
	if vs, err := s.Versions(c, q.ID, g.ID); err != nil || len(vs) != 1 {
		t.Errorf("the other project's versions: %+v %v", vs, err)
	}
	audit, err := s.Audit(c, teamstore.AuditQuery{Project: p.ID})
	must(t, err)
	if len(audit) != 1 {
		t.Errorf("the removed project's audit rows: %+v, want its one row kept", audit)
	}
	wantErr(t, s.RemoveProject(c, p.ID), teamstore.ErrNotFound, "removing it twice")
	addProject(t, s, "p") // its name is free again
}

// A key's expiry is kept to the microsecond; the store finds an expired key
// all the same (the server refuses it, by its own clock).
func testKeyExpiry(t *testing.T, s teamstore.Store) {
	c := ctx(t)
	until := t0.Add(90 * 24 * time.Hour)
	must(t, s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: "temp", Hash: hashOf("tv_temp"), CreatedAt: t0, ExpiresAt: until}))
	must(t, s.AddKey(c, teamstore.Key{ID: teamstore.NewID(), Name: "forever", Hash: hashOf("tv_forever"), CreatedAt: t0}))
	k, err := s.KeyByHash(c, hashOf("tv_temp"))
	must(t, err)
	if !k.ExpiresAt.Equal(until) || !k.Expired(until) || k.Expired(until.Add(-time.Microsecond)) {
		t.Errorf("the expiring key = %+v", k)
	}
	f, err := s.KeyByHash(c, hashOf("tv_forever"))
	must(t, err)
	if !f.ExpiresAt.IsZero() || f.Expired(until.Add(1000*time.Hour)) {
		t.Errorf("the key without expiry = %+v", f)
	}
	keys, err := s.Keys(c)
	must(t, err)
	if len(keys) != 2 || !keys[1].ExpiresAt.Equal(until) || !keys[0].ExpiresAt.IsZero() {
		t.Errorf("Keys = %+v", keys)
	}
}
