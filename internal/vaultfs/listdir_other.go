//go:build !linux

package vaultfs

import (
	"io/fs"
	"os"
)

// listDir lists a folder without a stat of each entry on Linux only
// (listdir_linux.go); elsewhere the caller uses ReadDir.
func listDir(*os.File, *os.Root) ([]fs.DirEntry, uint64, bool, error) { return nil, 0, false, nil }

// listedFile: no entry comes from listDir here.
func listedFile(fs.DirEntry, uint64) (fileID, bool) { return fileID{}, false }
