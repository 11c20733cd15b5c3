//go:build race

package hugeheap

const raceEnabled = true
