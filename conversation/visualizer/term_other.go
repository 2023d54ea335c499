//go:build !linux

package visualizer

import "os"

// isTerminal reports whether f is a character device; outside Linux this
// also takes /dev/null for a terminal, which only costs colour codes.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// termWidth is unknown outside Linux.
func termWidth(*os.File) int { return 0 }
