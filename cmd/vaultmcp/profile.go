package main

import (
	"fmt"
	"io"

	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// writeProfileLine says which profile (the language of the keys and
// sections written into notes) the vault is in, and why: set by --lang or
// VAULT_LANG, detected from the vault, or English by default. For a
// person's explanations (eval -v, search --explain); the server logs the
// same at start ("vault indexed ... profile=").
func writeProfileLine(w io.Writer, svc *vault.Service) {
	lang, why := svc.Profile()
	fmt.Fprintf(w, "profile: %s (%s)\n", lang, why)
}
