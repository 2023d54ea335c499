//go:build !unix

package eval

import "os/exec"

// killGroup leaves cmd as it is: without process groups, cancellation
// kills the command only.
func killGroup(cmd *exec.Cmd) {}
