//go:build linux

package procgroup

import (
	"bufio"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillEndsTheGroup starts a shell that starts a grandchild, and checks
// that Kill ends the grandchild too, and Terminate the leader.
func TestKillEndsTheGroup(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(*exec.Cmd)
		sig  syscall.Signal
	}{{"kill", Kill, syscall.SIGKILL}, {"terminate", Terminate, syscall.SIGTERM}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", "sleep 600 & echo $!; wait")
			Own(cmd)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			grandchild, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatal(err)
			}
			tc.stop(cmd)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != tc.sig {
				t.Errorf("the leader ended with %v, want %v", err, tc.sig)
			}
			// The grandchild got the signal too: it is gone, or a zombie
			// waiting for init. The deadline only guards against a hang.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if st, err := procState(grandchild); err != nil || st == "Z" {
					break
				}
				if time.Now().After(deadline) {
					syscall.Kill(grandchild, syscall.SIGKILL)
					t.Fatalf("the grandchild %d outlived its group's %v", grandchild, tc.sig)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestNotStarted(t *testing.T) {
	cmd := exec.Command("true")
	Kill(cmd) // no panic on a command never started
	Terminate(cmd)
}
