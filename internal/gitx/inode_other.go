//go:build !unix

package gitx

import "io/fs"

// inodeOf is 0 where the file system gives no inode: the lock ledger then
// clears nothing, and a crash's lock files stay for a person to remove, as
// without it.
func inodeOf(fs.FileInfo) uint64 { return 0 }
