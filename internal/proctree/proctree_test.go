package proctree_test

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"

	"github.com/gohands/gohands/internal/proctree"
	"github.com/gohands/gohands/internal/testenv"
)

func TestTree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux's /proc")
	}
	sleep := testenv.Program(t, "sleep")
	cmd := exec.Command(sleep, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	self := os.Getpid()
	if !slices.Contains(proctree.Descendants(self), cmd.Process.Pid) {
		t.Errorf("Descendants(%d) = %v, missing the child %d", self, proctree.Descendants(self), cmd.Process.Pid)
	}
	own, tree := proctree.RSS(cmd.Process.Pid), proctree.RSS(self)
	if own <= 0 || tree <= own {
		t.Errorf("RSS: child %d, tree with the child %d; want 0 < child < tree", own, tree)
	}
	if proctree.CPU(self) <= 0 {
		t.Error("CPU of this test process is 0")
	}
}
