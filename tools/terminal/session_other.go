//go:build !linux

package terminal

import (
	"errors"
	"os"
)

// The session needs Linux: the pty's termios and foreground group ioctls
// and /proc (to find every process of the shell's session on Close).

var errUnsupported = errors.New("terminal: the terminal tool needs Linux")

type prompt struct {
	exitCode   int
	pid        int
	python     string
	workingDir string
}

type sessionConfig struct {
	shell string
	dir   string
	env   []string
}

type snapshot struct {
	out  []byte
	next int64
	lost int64
	done *prompt
	exit *os.ProcessState
	read bool
}

type session struct {
	unfinished bool
	changed    chan struct{}
}

func startSession(sessionConfig) (*session, error) { return nil, errUnsupported }

func (s *session) take() snapshot                   { return snapshot{} }
func (s *session) markShown(int64)                  {}
func (s *session) peek(int64) ([]byte, int64, bool) { return nil, 0, false }
func (s *session) received() int64                  { return 0 }
func (s *session) running() bool                    { return false }
func (s *session) interrupt() error                 { return errUnsupported }
func (s *session) close()                           {}
func (s *session) input([]byte) error               { return errUnsupported }
func (s *session) write([]byte) error               { return errUnsupported }
func (s *session) run(string) error                 { return errUnsupported }
func (s *session) script() string                   { return "" }
func (s *session) finish()                          {}
func (s *session) status() (done, gone bool)        { return false, true }
func (s *session) prompt() prompt                   { return prompt{exitCode: -1, pid: -1} }
func (s *session) exitStatus() *os.ProcessState     { return nil }
