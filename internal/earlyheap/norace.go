//go:build !race

package earlyheap

// raceBuild is whether the binary was built with the race detector.
const raceBuild = false
