package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The agent's commands run under this process and can read its original
// environment and command line in /proc/<pid>/environ and cmdline: the
// kernel shows the memory the process started with, which os.Unsetenv does
// not change. scrubEnv and scrubArgs overwrite the credentials there, in
// place, through /proc/self/mem. Go copied the environment at start-up and
// main copies the arguments before scrubbing, so nothing still reads that
// memory.

// procRegion returns the start and end addresses of the command line
// (which = 0) or the environment (which = 2) from /proc/self/stat.
func procRegion(which int) (start, end int64, err error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name, which may hold spaces, in ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/self/stat: unexpected format")
	}
	f := strings.Fields(string(b[i+1:]))
	// arg_start is field 48 of stat; f[0] is field 3.
	const argStart = 48 - 3
	if len(f) < argStart+4 {
		return 0, 0, fmt.Errorf("/proc/self/stat: %d fields, too few", len(f)+2)
	}
	start, err1 := strconv.ParseInt(f[argStart+which], 10, 64)
	end, err2 := strconv.ParseInt(f[argStart+which+1], 10, 64)
	if err1 != nil || err2 != nil || end < start {
		return 0, 0, fmt.Errorf("/proc/self/stat: bad memory region")
	}
	return start, end, nil
}

// rewriteRegion reads region which, lets edit change it in place, and
// writes it back if edit reports a change.
func rewriteRegion(which int, edit func(b []byte) bool) error {
	start, end, err := procRegion(which)
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	b := make([]byte, end-start)
	if _, err := mem.ReadAt(b, start); err != nil {
		return fmt.Errorf("reading /proc/self/mem: %w", err)
	}
	if !edit(b) {
		return nil
	}
	if _, err := mem.WriteAt(b, start); err != nil {
		return fmt.Errorf("writing /proc/self/mem: %w", err)
	}
	return nil
}

// scrubEnv blanks the value of every NAME=value of names in the
// environment the process started with.
func scrubEnv(names ...string) error {
	return rewriteRegion(2, func(b []byte) bool {
		changed := false
		for off := 0; off < len(b); {
			n := bytes.IndexByte(b[off:], 0)
			if n < 0 {
				n = len(b) - off
			}
			kv := b[off : off+n]
			for _, name := range names {
				if len(kv) > len(name) && kv[len(name)] == '=' && string(kv[:len(name)]) == name {
					clear(kv[len(name)+1:])
					changed = true
				}
			}
			off += n + 1
		}
		return changed
	})
}

// scrubArgs blanks credentials given on the command line: the value of
// --api-key and of --secret NAME=VALUE.
func scrubArgs() error {
	return rewriteRegion(0, func(b []byte) bool {
		args := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
		return blankCredentialArgs(args)
	})
}
