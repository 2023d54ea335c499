//go:build linux

package procgroup

import (
	"os"
	"strconv"
	"strings"
)

// procState returns the state letter of pid from /proc (R, S, Z…).
func procState(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+3 > len(s) {
		return "", os.ErrInvalid
	}
	return s[i+2 : i+3], nil
}
