package mcp

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// setDeathSignal makes the kernel kill the server if the thread that
// started it dies, so a crashed agent leaves no server behind.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = unix.SIGKILL }
