//go:build unix

package mcp

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

func setProcAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

func killGroup(cmd *exec.Cmd) {
	// The group id is the leader's pid (Setpgid with Pgid 0).
	_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
}
