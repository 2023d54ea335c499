//go:build !unix

package procgroup

import "os/exec"

// Own does nothing where process groups are not available.
func Own(cmd *exec.Cmd) {}

func kill(cmd *exec.Cmd)      { _ = cmd.Process.Kill() }
func terminate(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
