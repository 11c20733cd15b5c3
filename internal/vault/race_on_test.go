//go:build race

package vault

// raceEnabled tells tests that wait for work of a known size to allow for
// the race detector, which slows it down several times.
const raceEnabled = true
