//go:build !linux

package vaultfs

import "os"

// readDir is a folder a DirReader holds open, as a root of its own
// (opened through the vault's root, so it cannot lead out of the vault).
type readDir struct{ root *os.Root }

func openReadDir(root *os.Root, dir string) (readDir, bool) {
	r, err := root.OpenRoot(dir)
	if err != nil {
		return readDir{}, false
	}
	return readDir{root: r}, true
}

func (h readDir) close() { h.root.Close() }

// read reads the note w, named name in the folder, with the checks of
// ReadWalked. The folder must stay open until read returns.
func (h readDir) read(v *Vault, w FileInfo, name string) ([]byte, FileInfo, error) {
	f, err := h.root.OpenFile(name, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		return v.ReadNote(w.Path)
	}
	return v.readOpened(w, f)
}
