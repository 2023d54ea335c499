//go:build unix

package eval

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in its own process group and makes its cancellation
// kill the group, so that a timeout also stops what the command started.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
