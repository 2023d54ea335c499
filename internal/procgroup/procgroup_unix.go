//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Own makes cmd, not yet started, the leader of a new process group,
// keeping the rest of its SysProcAttr.
func Own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// The group id is the leader's pid (Setpgid with Pgid 0).
func kill(cmd *exec.Cmd)      { _ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
func terminate(cmd *exec.Cmd) { _ = unix.Kill(-cmd.Process.Pid, unix.SIGTERM) }
