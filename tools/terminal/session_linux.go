//go:build linux

package terminal

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// The completion protocol.
//
// The shell is an interactive bash (job control on, so Ctrl-C reaches only
// the foreground job) without line editing, reading from a pty whose echo
// is off. Each command is written to a private file and the shell is typed
// one short line that sources it, so commands of any length and any number
// of lines run as one unit, in the shell itself (cd, export and functions
// persist), with the pty as their terminal.
//
// Before each prompt, PROMPT_COMMAND prints a marker, an APC escape
// sequence holding a per-session random nonce, the exit status, $!, the
// python on PATH and the working directory:
//
//	ESC _ gh<nonce> ; <status> US <pid> US <python> US <cwd> ESC \
//
// The reader goroutine scans the pty output for the marker as it arrives,
// so completion is seen within microseconds. Output that merely looks like
// a marker cannot match: the nonce is secret to this process, and the
// shell never holds the marker's bytes in one string (the function
// definition keeps the ESC as the text \033), so not even `set` or
// `declare -f` print it. Input typed into a command that ended without
// reading it is discarded (lines by the prompt function, before bash could
// run them; a partial line, such as a key without Enter, by a flush before
// the next command is typed). The variable and the function are read-only, so
// sourcing a bashrc cannot replace them, and the marker goes to /dev/tty,
// so `exec >file` cannot divert it.

const (
	// maxBuffered bounds the output kept for one command; beyond it the
	// oldest bytes are dropped (and counted).
	maxBuffered = 32 << 20
	// startTimeout bounds how long a new shell may take to show its first
	// prompt.
	startTimeout = 10 * time.Second
)

const rcTemplate = `set +o history
unset HISTFILE
__gh_prompt() {
	local __gh_ec=$? __gh_pid=$! __gh_py
	if [[ -n ${__gh_sn-} ]]; then builtin unset -v $__gh_sn; builtin unset -v __gh_sn; fi
	while builtin read -r -t 0 </dev/tty 2>/dev/null; do builtin read -r -t 1 __gh_py </dev/tty || break; done
	__gh_py=${BASH_CMDS[python]-}
	if [[ -z $__gh_py ]] && builtin hash python 2>/dev/null; then __gh_py=${BASH_CMDS[python]-}; fi
	builtin printf '\033_gh%%s;%%s\037%%s\037%%s\037%%s\033\\' '%s' "$__gh_ec" "${__gh_pid:--1}" "$__gh_py" "$PWD" >/dev/tty
	PS1= PS2=
	return $__gh_ec
}
readonly -f __gh_prompt
declare -r PROMPT_COMMAND=__gh_prompt
PS1= PS2=
`

// prompt is what a marker reports.
type prompt struct {
	exitCode   int
	pid        int
	python     string
	workingDir string
}

// sessionConfig is what a session is started with.
type sessionConfig struct {
	shell string
	dir   string
	env   []string
}

// session is one running shell.
type session struct {
	cmd    *exec.Cmd
	pty    *os.File
	tmp    string // private directory: rc file and command file
	tty    string // path of the pty's terminal side
	prefix []byte // start of this session's marker

	// unfinished is set while a command that a call returned from
	// unfinished may still end; only the running call touches it.
	unfinished bool
	// typed is set when input was typed into the current command; only
	// the running call touches it.
	typed bool

	closeOnce  sync.Once
	readerDone chan struct{}
	exited     chan struct{} // closed once the shell has exited

	mu        sync.Mutex
	buf       []byte // output of the current command (a window of it)
	base      int64  // absolute offset of buf[0]
	end       int64  // absolute offset of the end of buf
	start     int64  // absolute offset where the current command began
	shown     int64  // absolute offset up to which output was returned
	lost      int64  // bytes dropped by the bound before being returned
	scanned   int64  // absolute offset from which to look for a marker
	markerAt  int64  // absolute offset of the marker; -1 while none
	done      *prompt
	exitState *os.ProcessState
	changed   chan struct{} // capacity 1; signalled on output and on exit
}

// startSession starts a shell and waits for its first prompt.
func startSession(cfg sessionConfig) (*session, error) {
	cleanStaleOnce.Do(cleanStale)
	tmp, err := os.MkdirTemp("", tmpPrefix)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ownerFile), strconv.AppendInt(nil, int64(os.Getpid()), 10), 0o600); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("terminal: %w", err)
	}
	nonceBytes := make([]byte, 12)
	if _, err := rand.Read(nonceBytes); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("terminal: %w", err)
	}
	nonce := hex.EncodeToString(nonceBytes)
	rc := filepath.Join(tmp, "rc")
	if err := os.WriteFile(rc, fmt.Appendf(nil, rcTemplate, nonce), 0o600); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("terminal: %w", err)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("terminal: opening a pty: %w", err)
	}
	fail := func(err error) (*session, error) {
		ptmx.Close()
		tty.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	// Wide enough that programs rarely wrap; the screen height matters
	// only to full-screen programs.
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 256}); err != nil {
		return fail(fmt.Errorf("terminal: sizing the pty: %w", err))
	}
	if err := setEcho(ptmx, false); err != nil {
		return fail(fmt.Errorf("terminal: %w", err))
	}

	shell := cfg.shell
	if shell == "" {
		shell = "bash"
	}
	cmd := exec.Command(shell, "--noediting", "--rcfile", rc, "-i")
	cmd.Dir = cfg.dir
	cmd.Env = cfg.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("terminal: starting %s: %w", shell, err))
	}
	tty.Close()

	s := &session{
		cmd:        cmd,
		pty:        ptmx,
		tmp:        tmp,
		tty:        tty.Name(),
		prefix:     []byte("\x1b_gh" + nonce + ";"),
		readerDone: make(chan struct{}),
		exited:     make(chan struct{}),
		markerAt:   -1,
		changed:    make(chan struct{}, 1),
	}
	go s.read()
	go s.wait()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ready, gone := s.done != nil, s.exitState != nil
		out := bytes.Clone(s.buf)
		s.mu.Unlock()
		if ready {
			return s, nil
		}
		if gone {
			s.close()
			return nil, fmt.Errorf("terminal: %s exited at start-up: %q", shell, clean(out))
		}
		select {
		case <-s.changed:
		case <-timer.C:
			s.close()
			return nil, fmt.Errorf("terminal: %s showed no prompt within %v: %q", shell, startTimeout, clean(out))
		}
	}
}

// read copies the pty's output into the buffer and looks for the marker.
func (s *session) read() {
	defer close(s.readerDone)
	chunk := make([]byte, 64<<10)
	for {
		n, err := s.pty.Read(chunk)
		if n > 0 {
			s.mu.Lock()
			s.append(chunk[:n])
			s.mu.Unlock()
			s.signal()
		}
		if err != nil {
			return
		}
	}
}

// append adds p to the buffer and parses a marker it completes.
// s.mu is held.
func (s *session) append(p []byte) {
	if s.done != nil {
		// The command is over; what follows the marker is dropped when the
		// next command starts anyway.
		return
	}
	s.buf = append(s.buf, p...)
	s.end += int64(len(p))
	if len(s.buf) > maxBuffered {
		drop := len(s.buf) - maxBuffered/2
		s.buf = append(make([]byte, 0, maxBuffered), s.buf[drop:]...)
		s.base += int64(drop)
		if s.shown < s.base {
			s.lost += s.base - s.shown
			s.shown = s.base
		}
		s.scanned = max(s.scanned, s.base)
	}
	from := s.scanned - s.base
	i := bytes.Index(s.buf[from:], s.prefix)
	if i < 0 {
		// Keep a tail that may be the start of a split prefix.
		s.scanned = max(s.base, s.end-int64(len(s.prefix)-1), s.scanned)
		return
	}
	at := from + int64(i)
	s.scanned = s.base + at // rescan from the marker until it is complete
	body := s.buf[at+int64(len(s.prefix)):]
	before, _, ok := bytes.Cut(body, []byte("\x1b\\"))
	if !ok {
		return
	}
	s.markerAt = s.base + at
	s.done = parsePrompt(string(before))
}

// parsePrompt parses the fields of a marker.
func parsePrompt(body string) *prompt {
	f := strings.SplitN(body, "\x1f", 4)
	for len(f) < 4 {
		f = append(f, "")
	}
	p := &prompt{exitCode: -1, pid: -1, python: f[2], workingDir: f[3]}
	if n, err := strconv.Atoi(f[0]); err == nil {
		p.exitCode = n
	}
	if n, err := strconv.Atoi(f[1]); err == nil {
		p.pid = n
	}
	return p
}

func (s *session) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// wait reaps the shell. Output the shell wrote before it died is read
// first, so an exit never hides the last words of a command.
func (s *session) wait() {
	s.cmd.Wait()
	select {
	case <-s.readerDone:
	case <-time.After(200 * time.Millisecond):
		// Something else (a background job) still holds the pty.
	}
	s.mu.Lock()
	s.exitState = s.cmd.ProcessState
	s.mu.Unlock()
	close(s.exited)
	s.signal()
}

// send starts a new command: the buffer is emptied and line is typed.
func (s *session) send(line []byte) error {
	// Programs may have turned echo back on (stty sane); the shell is
	// idle, so this cannot race with anyone.
	if err := setEcho(s.pty, false); err != nil {
		return err
	}
	if s.typed {
		s.typed = false
		if err := s.flushInput(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.base, s.start, s.shown, s.scanned, s.lost = s.end, s.end, s.end, s.end, 0
	s.buf = s.buf[:0]
	s.markerAt = -1
	s.done = nil
	s.mu.Unlock()
	return s.write(line)
}

// input types p into the running command.
func (s *session) input(p []byte) error {
	s.typed = true
	return s.write(p)
}

// flushInput discards input typed into the terminal and not read (a
// partial line would otherwise be glued to the next command). The
// terminal side is opened for this: a flush through the pty's master side
// would flush the other direction.
func (s *session) flushInput() error {
	f, err := os.OpenFile(s.tty, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	if err := rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH)
	}); err != nil {
		return err
	}
	if ioErr != nil {
		return fmt.Errorf("terminal: discarding unread input: %w", ioErr)
	}
	return nil
}

// write types p into the pty.
func (s *session) write(p []byte) error {
	if _, err := s.pty.Write(p); err != nil {
		return fmt.Errorf("terminal: writing to the shell: %w", err)
	}
	return nil
}

// snapshot is the state of the current command.
type snapshot struct {
	out  []byte // unshown output, up to the marker if there is one
	next int64  // offset to record as shown once out is returned
	lost int64  // bytes dropped by the buffer bound before out
	done *prompt
	exit *os.ProcessState
	read bool // some output of this command was returned before
}

// take returns the output not yet returned. While the command runs, an
// incomplete escape sequence or UTF-8 character at the end is left for the
// next read.
func (s *session) take() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	stop := s.end
	if s.markerAt >= 0 {
		stop = s.markerAt
	}
	out := s.buf[s.shown-s.base : stop-s.base]
	if s.done == nil && s.exitState == nil {
		out = out[:completePrefix(out)]
	}
	return snapshot{
		out:  bytes.Clone(out),
		next: s.shown + int64(len(out)),
		lost: s.lost,
		done: s.done,
		exit: s.exitState,
		read: s.shown > s.start,
	}
}

// peek returns the output from off on that is known not to be part of
// the end marker, and the offset after it; it marks nothing as shown.
// dropped says the buffer bound dropped output of the command at off.
func (s *session) peek(off int64) (out []byte, next int64, dropped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dropped = max(off, s.start) < s.base
	off = max(off, s.base, s.start)
	if off >= s.end {
		return nil, off, dropped
	}
	rest := s.buf[off-s.base:]
	stop := s.end
	switch i := bytes.LastIndexByte(rest, 0x1b); {
	case s.markerAt >= 0:
		stop = s.markerAt
	case bytes.Contains(rest, s.prefix):
		stop = off + int64(bytes.Index(rest, s.prefix))
	case i >= 0 && bytes.HasPrefix(s.prefix, rest[i:]):
		stop = off + int64(i) // may be the start of the marker
	}
	if stop <= off {
		return nil, off, dropped
	}
	out = s.buf[off-s.base : stop-s.base]
	out = out[:completePrefix(out)]
	return bytes.Clone(out), off + int64(len(out)), dropped
}

// markShown records that output up to off was returned.
func (s *session) markShown(off int64) {
	s.mu.Lock()
	if off > s.shown {
		s.shown = off
	}
	s.lost = 0
	s.mu.Unlock()
}

// received returns how many bytes of output the session has read in all.
func (s *session) received() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// running reports whether a command was sent and has not finished.
func (s *session) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done == nil && s.exitState == nil
}

// interrupt sends SIGINT to the terminal's foreground process group, as
// Ctrl-C would, unless that is the shell itself (nothing is running). A
// signal rather than the ^C byte, so programs that turned the terminal's
// signal keys off are interrupted too.
func (s *session) interrupt() error {
	pgrp, err := foreground(s.pty)
	if err != nil {
		return err
	}
	if pgrp <= 0 || pgrp == s.cmd.Process.Pid {
		return nil
	}
	if err := unix.Kill(-pgrp, unix.SIGINT); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("terminal: interrupting: %w", err)
	}
	return nil
}

// close kills the shell and every process of its session (jobs run in
// process groups of their own, so killing the shell's group is not
// enough), then releases the pty.
func (s *session) close() { s.closeOnce.Do(s.kill) }

func (s *session) kill() {
	pid := s.cmd.Process.Pid
	for range 3 {
		members := sessionMembers(pid)
		select {
		case <-s.exited:
		default:
			if !slices.Contains(members, pid) {
				members = append(members, pid)
			}
		}
		if len(members) == 0 {
			break
		}
		for _, p := range members {
			unix.Kill(p, unix.SIGKILL)
		}
		if len(members) == 1 && members[0] == pid {
			// Only the shell, killed now: it starts nothing more, so
			// /proc need not be read again (each scan reads every
			// process's stat, which made closing many idle
			// conversations slow).
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.pty.Close()
	<-s.exited
	os.RemoveAll(s.tmp)
}

// sessionMembers lists the processes whose session id is sid.
func sessionMembers(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses; the fields
		// after its closing parenthesis are: state ppid pgrp session.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 4 || f[0] == "Z" {
			continue
		}
		if s, err := strconv.Atoi(f[3]); err == nil && s == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// setEcho turns the terminal's echo on or off.
func setEcho(f *os.File, on bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		var t *unix.Termios
		t, ioErr = unix.IoctlGetTermios(int(fd), unix.TCGETS)
		if ioErr != nil {
			return
		}
		want := t.Lflag &^ (unix.ECHO | unix.ECHONL)
		if on {
			want = t.Lflag | unix.ECHO
		}
		if want == t.Lflag {
			return
		}
		t.Lflag = want
		ioErr = unix.IoctlSetTermios(int(fd), unix.TCSETS, t)
	})
	if err == nil {
		err = ioErr
	}
	if err != nil {
		return fmt.Errorf("setting terminal echo: %w", err)
	}
	return nil
}

// foreground returns the terminal's foreground process group.
func foreground(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pgrp int
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		pgrp, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
	})
	if err == nil {
		err = ioErr
	}
	if err != nil {
		return 0, fmt.Errorf("terminal: reading the foreground process group: %w", err)
	}
	return pgrp, nil
}

// run starts script, a shell script, as the next command.
func (s *session) run(script string) error {
	// The shell reads a sourced file whole before running it: its first
	// line empties the file, so exported secrets do not stay on disk while
	// the command runs (finish removes it).
	script = "builtin : >| " + shellQuote(s.script()) + "\n" + script
	if err := os.WriteFile(s.script(), []byte(script), 0o600); err != nil {
		return fmt.Errorf("terminal: writing the command: %w", err)
	}
	return s.send([]byte("builtin . " + shellQuote(s.script()) + "\n"))
}

// script is the path of the command file.
func (s *session) script() string { return filepath.Join(s.tmp, "cmd") }

const (
	tmpPrefix = "gohands-terminal-"
	// ownerFile, in a session's directory, holds the process id of the
	// gohands process that made it.
	ownerFile = "owner"
)

var cleanStaleOnce sync.Once

// cleanStale removes the session directories that processes killed
// before they could remove them left behind: those whose owner is gone.
// A directory without an owner file (an older gohands) is removed once it
// is a day old.
func cleanStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tmpPrefix+"*"))
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && time.Since(fi.ModTime()) > 24*time.Hour {
				os.RemoveAll(d)
			}
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
			os.RemoveAll(d)
		}
	}
}

// finish is called once a command's result is taken: the command file,
// which may hold exported secrets, is removed.
func (s *session) finish() { os.Remove(s.script()) }

// status reports whether the command finished and whether the shell is
// gone.
func (s *session) status() (done, gone bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done != nil, s.exitState != nil
}

// prompt returns what the last marker reported.
func (s *session) prompt() prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return prompt{exitCode: -1, pid: -1}
	}
	return *s.done
}

// exitStatus returns how the shell ended, or nil while it runs.
func (s *session) exitStatus() *os.ProcessState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitState
}

// shellQuote quotes s for the shell with single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
