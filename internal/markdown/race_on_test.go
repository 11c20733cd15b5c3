//go:build race

package markdown

// raceEnabled tells tests to keep exhaustive loops short under the race
// detector, which slows the YAML library down several times.
const raceEnabled = true
