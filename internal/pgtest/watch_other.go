//go:build !unix

package pgtest

// watch: without a watchdog, only Main stops the cluster.
func (c *cluster) watch() error { return nil }
