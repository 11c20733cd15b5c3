package teamserver

import (
	"context"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// The few places that depend on the shape of internal/api's write types.

// versionOf is the id of the version a write made ("" when it made none).
func versionOf(res *api.WriteResult) string { return res.Version }

// setVersion sets the id of the version a write made.
func setVersion(res *api.WriteResult, v string) { res.Version = v }

// uncertain says the change of a failed write may or may not have been applied.
func uncertain(e *api.Error) bool { return e.Uncertain }

// withWriteMeta asks the vault to commit as the key's name and to carry the
// idempotency token into the commit (a trailer).
func withWriteMeta(ctx context.Context, author, email, token string) context.Context {
	return api.WithWriteMeta(ctx, api.WriteMeta{Author: author, Email: email, IdempotencyKey: token})
}
