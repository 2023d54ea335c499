//go:build unix

package workspace

import (
	"context"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

func shell(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "/bin/sh", "-c", command)
}

// ownGroup makes cmd the leader of a new process group, so that a timeout
// ends what it started too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
	}
}
