//go:build !unix

package mcp

import "os/exec"

func setProcAttr(*exec.Cmd) {}
