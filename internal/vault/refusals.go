package vault

import (
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// Refusals are the vault's refusals of a write, with its codes, fields and
// texts in one language, for a backend that applies the vault's rules
// itself: the remote client on a team server without the extension
// endpoints, whose refusals must read as the local vault's do, in the
// language of VAULT_LANG.
type Refusals struct{ msg *texts }

// RefusalsFor returns the refusals in lang ("en", "pt"; anything else is
// English).
func RefusalsFor(lang string) Refusals { return Refusals{catalogue.For(lang)} }

// Exists refuses to replace rel without the hash of its current content.
func (r Refusals) Exists(rel, current string) error {
	return &api.Error{Code: api.CodeConflict, Field: "expected_sha256", Message: r.msg.Get(eExists, rel, current)}
}

// Changed refuses to replace rel whose hash is no longer the one given.
func (r Refusals) Changed(rel, current string) error {
	return &api.Error{Code: api.CodeConflict, Field: "expected_sha256", Message: r.msg.Get(eChanged, rel, current)}
}

// Gone refuses to replace rel, given a hash, when it does not exist.
func (r Refusals) Gone(rel string) error {
	return &api.Error{Code: api.CodeConflict, Field: "expected_sha256", Message: r.msg.Get(eGone, rel)}
}

// EditCount refuses an edit of rel whose old text occurs n times (n != 1);
// nil for n == 1.
func (r Refusals) EditCount(rel string, n int) error {
	switch {
	case n == 0:
		return &api.Error{Code: api.CodeNoMatch, Field: "old_text", Message: r.msg.Get(eNoMatch, rel)}
	case n > 1:
		return &api.Error{Code: api.CodeNotUnique, Field: "old_text", Message: r.msg.Get(eNotUnique, n, rel)}
	}
	return nil
}

// LinkedTo refuses, without confirm, the delete of rel that n notes link
// to; shown are the first of them.
func (r Refusals) LinkedTo(rel string, n int, shown []string) error {
	more := ""
	if n > len(shown) {
		more = r.msg.Get(eAndMore, n-len(shown))
	}
	return &api.Error{Code: api.CodeNeedsConfirm, Field: "confirm", Message: r.msg.Get(eLinkedTo, n, rel, strings.Join(shown, ", "), more)}
}

// MoveFolder refuses a move whose from, rel, is a folder.
func (r Refusals) MoveFolder(rel string) error {
	return &api.Error{Code: string(vaultfs.CodeNotANote), Field: "from", Message: r.msg.Get(eMoveFolder, vaultfs.DisplayPath(rel))}
}

// SamePath refuses a move whose to is its from.
func (r Refusals) SamePath() error { return api.Invalid("to", "%s", r.msg.Get(eSamePath)) }
