//go:build !race

package graph_test

// raceEnabled reports whether the race detector is on, which slows the differential test ten
// times over.
const raceEnabled = false
