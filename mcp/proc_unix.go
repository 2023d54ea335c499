//go:build unix

package mcp

import (
	"os/exec"

	"github.com/gohands/gohands/internal/procgroup"
)

func setProcAttr(cmd *exec.Cmd) {
	procgroup.Own(cmd)
	setDeathSignal(cmd.SysProcAttr)
}
