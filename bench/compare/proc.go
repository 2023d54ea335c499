package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/refenv"
)

// commandContext runs argv in dir in its own process group, which is
// killed with ctx, in refenv's environment with home as HOME (both sides
// alike).
func commandContext(ctx context.Context, argv []string, dir, home string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = refenv.Env(home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// watchPeakRSS follows the peak resident set (VmHWM) of process pid,
// running the program name, every 2 ms until done, and returns the
// largest seen, in bytes. The kernel's own figure at exit, ru_maxrss,
// would not do: it starts from the high-water mark of the memory the
// child shared with this process between fork and exec (Go forks with
// CLONE_VM), so it is never below this process's own peak. Samples taken
// before the exec (another name) are skipped; growth in the last 2 ms
// before exit is missed.
func watchPeakRSS(pid int, name string, done <-chan struct{}) int64 {
	if len(name) > 15 {
		name = name[:15] // the kernel's comm
	}
	path := fmt.Sprintf("/proc/%d/status", pid)
	var peak int64
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			var comm string
			for line := range strings.Lines(string(b)) {
				if v, ok := strings.CutPrefix(line, "Name:"); ok {
					comm = strings.TrimSpace(v)
				}
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok && comm == name {
					kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					peak = max(peak, kb*1024)
				}
			}
		}
		select {
		case <-done:
			return peak
		case <-t.C:
		}
	}
}
