//go:build !linux

package vaultfs

import (
	"io/fs"
	"os"
	"sync/atomic"
)

// fastRoot is Linux's openat2 way to a walked note (fastroot_linux.go);
// elsewhere there is none and ReadWalked takes the root's way.
type fastRoot struct{}

func openFastRoot(*os.Root) fastRoot { return fastRoot{} }

func (fastRoot) close() {}

func (fastRoot) readWalked(*Vault, FileInfo) ([]byte, FileInfo, bool) {
	return nil, FileInfo{}, false
}

func (fastRoot) lstat(string) (fs.FileInfo, bool, bool) { return nil, false, false }

func (fastRoot) openFile(string, int) (*os.File, bool) { return nil, false }

// noOpenat2 mirrors the Linux switch, for the benchmark that compares both
// ways; there is no openat2 here.
var noOpenat2 atomic.Bool
