// Package proctree measures a process and its descendants from Linux's
// /proc: the benchmarks that compare servers count the shells and
// terminal sessions a server starts as part of it. Elsewhere, where /proc
// is missing, a tree is just its root and the figures are zero.
package proctree

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Descendants returns pid and the pids of all its live descendants.
func Descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := statFields(stat)
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// RSS returns the resident memory of pid and all its descendants, in
// bytes.
func RSS(pid int) int64 {
	var total int64
	for _, p := range Descendants(pid) {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += kb * 1024
			}
		}
	}
	return total
}

// CPU returns the CPU time (user + system) used so far by pid and its
// live descendants.
func CPU(pid int) time.Duration {
	var ticks int64
	for _, p := range Descendants(pid) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// state is field 3 of stat; utime and stime are 14 and 15.
		if f := statFields(stat); len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ is 100 on Linux
}

// statFields returns the fields of /proc/PID/stat after the command name,
// which is in parentheses and may hold spaces: state ppid ...
func statFields(stat []byte) []string {
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || i+2 > len(stat) {
		return nil
	}
	return strings.Fields(string(stat[i+2:]))
}
