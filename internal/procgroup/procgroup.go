// Package procgroup starts a command as the leader of its own process
// group and signals the whole group, so that what the command started
// (a shell's children, an adapter's CLI) ends with it. Where process
// groups do not exist (Windows), the command's own process is signalled
// and its children may survive.
package procgroup

import "os/exec"

// Kill sends SIGKILL to the group of a started cmd (elsewhere: kills the
// process). It does nothing for a command that was never started.
func Kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		kill(cmd)
	}
}

// Terminate asks the group of a started cmd to end (SIGTERM; elsewhere,
// where there is no such request, it kills the process).
func Terminate(cmd *exec.Cmd) {
	if cmd.Process != nil {
		terminate(cmd)
	}
}
