package storetest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// RunShared runs the whole suite over two handles on one database (two
// processes, or two replicas): newPair returns them, fresh and empty, and
// each call of the suite goes to one or the other in turn, so every effect
// is checked through the handle that did not make it and every concurrent
// test races the two.
func RunShared(t *testing.T, newPair func(t *testing.T) (a, b teamstore.Store)) {
	Run(t, func(t *testing.T) teamstore.Store {
		a, b := newPair(t)
		return &alternating{s: [2]teamstore.Store{a, b}}
	})
}

// alternating sends each call to the next of its two stores.
type alternating struct {
	s [2]teamstore.Store
	n atomic.Uint64
}

func (x *alternating) next() teamstore.Store { return x.s[x.n.Add(1)%2] }

func (x *alternating) AddProject(ctx context.Context, p teamstore.Project) error {
	return x.next().AddProject(ctx, p)
}
func (x *alternating) Project(ctx context.Context, ref string) (teamstore.Project, error) {
	return x.next().Project(ctx, ref)
}
func (x *alternating) Projects(ctx context.Context) ([]teamstore.Project, error) {
	return x.next().Projects(ctx)
}
func (x *alternating) AddKey(ctx context.Context, k teamstore.Key) error {
	return x.next().AddKey(ctx, k)
}
func (x *alternating) KeyByHash(ctx context.Context, hash []byte) (teamstore.Key, error) {
	return x.next().KeyByHash(ctx, hash)
}
func (x *alternating) Keys(ctx context.Context) ([]teamstore.Key, error) { return x.next().Keys(ctx) }
func (x *alternating) RevokeKey(ctx context.Context, name string, at time.Time) error {
	return x.next().RevokeKey(ctx, name, at)
}
func (x *alternating) RemoveProject(ctx context.Context, id string) error {
	return x.next().RemoveProject(ctx, id)
}
func (x *alternating) RotateKey(ctx context.Context, name string, hash []byte, expiresAt time.Time) error {
	return x.next().RotateKey(ctx, name, hash, expiresAt)
}
func (x *alternating) TouchKey(ctx context.Context, id string, at time.Time) error {
	return x.next().TouchKey(ctx, id, at)
}
func (x *alternating) File(ctx context.Context, project, id string) (teamstore.File, error) {
	return x.next().File(ctx, project, id)
}
func (x *alternating) FileByPath(ctx context.Context, project, path string) (teamstore.File, error) {
	return x.next().FileByPath(ctx, project, path)
}
func (x *alternating) LiveFiles(ctx context.Context, project string) ([]teamstore.File, error) {
	return x.next().LiveFiles(ctx, project)
}
func (x *alternating) EnsureFiles(ctx context.Context, project string, paths []string, at time.Time) ([]teamstore.File, error) {
	return x.next().EnsureFiles(ctx, project, paths, at)
}
func (x *alternating) Versions(ctx context.Context, project, fileID string) ([]teamstore.Version, error) {
	return x.next().Versions(ctx, project, fileID)
}
func (x *alternating) Record(ctx context.Context, r teamstore.Record) error {
	return x.next().Record(ctx, r)
}
func (x *alternating) BeginIdem(ctx context.Context, rec teamstore.Idem) (teamstore.Idem, bool, error) {
	return x.next().BeginIdem(ctx, rec)
}
func (x *alternating) ReleaseIdem(ctx context.Context, keyID, key, token string) error {
	return x.next().ReleaseIdem(ctx, keyID, key, token)
}
func (x *alternating) RunningIdem(ctx context.Context) ([]teamstore.Idem, error) {
	return x.next().RunningIdem(ctx)
}
func (x *alternating) PurgeIdem(ctx context.Context, at time.Time) (int64, error) {
	return x.next().PurgeIdem(ctx, at)
}
func (x *alternating) Audit(ctx context.Context, q teamstore.AuditQuery) ([]teamstore.AuditEntry, error) {
	return x.next().Audit(ctx, q)
}
func (x *alternating) AppendAudit(ctx context.Context, e teamstore.AuditEntry) error {
	return x.next().AppendAudit(ctx, e)
}

func (x *alternating) Close() error {
	err := x.s[0].Close()
	if err2 := x.s[1].Close(); err == nil {
		err = err2
	}
	return err
}
