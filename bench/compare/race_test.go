//go:build race

package main

// raceEnabled builds gohands with the race detector when the test runs
// with it: the packages are then in the build cache already, and only
// cmd/gohands is compiled.
const raceEnabled = true
