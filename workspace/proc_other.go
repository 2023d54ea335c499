//go:build !unix

package workspace

import (
	"context"
	"os/exec"
)

func shell(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "cmd", "/C", command)
}
