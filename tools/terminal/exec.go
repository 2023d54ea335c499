package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// DefaultNoChangeTimeout is how long a command may print nothing before
// the call returns with the command still running.
const DefaultNoChangeTimeout = 30 * time.Second

// maxTimeout bounds the hard timeout, in seconds (a year).
const maxTimeout = 365 * 24 * 3600

// floodLimit is how much output arriving during one call makes it return
// early: a command that prints without pause (`yes`) would otherwise never
// go quiet.
const floodLimit = 8 << 20

// interruptGrace is how long a cancelled call waits for the interrupted
// command to end.
const interruptGrace = 2 * time.Second

// ErrClosed is returned by calls on a closed Terminal.
var ErrClosed = errors.New("terminal: closed")

// Options configures a Terminal. A nil *Options is valid: the shell is
// bash in the current directory.
type Options struct {
	// WorkingDir is where the shell starts; "" is the current directory.
	WorkingDir string
	// Shell is the bash binary; "" looks up "bash" on PATH.
	Shell string
	// NoChangeTimeout is how long a command may print nothing before the
	// call returns with the command still running; 0 means
	// DefaultNoChangeTimeout. It applies to calls without a timeout.
	NoChangeTimeout time.Duration
	// SessionEnv holds variables added to the shell's environment when it
	// starts.
	SessionEnv map[string]string
	// SaveDir is where output too long to show is saved in full; "" means
	// a temporary directory made when first needed and removed by Close.
	SaveDir string
	// Env, if set, returns variables to export into the session before a
	// command runs (secrets the command refers to). They reach the shell
	// through a private file that is removed when the command ends, never
	// through the terminal.
	Env func(command string) map[string]string
	// Mask, if set, is applied to all output before it is returned or
	// saved (it replaces secret values).
	Mask func(string) string
	// Partial, if set, returns how many bytes at the end of the output may
	// be the start of a secret value (tool.Context.Partial). While the
	// command runs they are held back for the next read, so that a secret
	// split across two reads is masked whole.
	Partial func(string) int
	// PartialStart, if set, returns how many bytes at the start of the
	// output may be the end of a secret value (tool.Context.PartialStart):
	// when the buffer bound dropped the output before them, they are
	// dropped too, so that no part of a secret shows.
	PartialStart func(string) int
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// Terminal runs commands in one persistent shell. Calls are serialised;
// Interrupt and Close may be called at any time from any goroutine. The
// shell starts on the first call and again after it exits or is reset.
type Terminal struct {
	opts     Options
	log      *slog.Logger
	sem      chan struct{} // held by the running call
	username string
	hostname string

	leftover string // see previousResult; used under sem

	mu      sync.Mutex
	sess    *session
	closed  bool
	tmpSave string
}

// New returns a Terminal. It starts no process until the first call.
func New(opts *Options) *Terminal {
	t := &Terminal{sem: make(chan struct{}, 1)}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.NoChangeTimeout <= 0 {
		t.opts.NoChangeTimeout = DefaultNoChangeTimeout
	}
	t.log = t.opts.Logger
	if t.log == nil {
		t.log = slog.Default()
	}
	if u, err := user.Current(); err == nil {
		t.username = u.Username
	}
	t.hostname, _ = os.Hostname()
	return t
}

// Interrupt interrupts the running command, as Ctrl-C would, without
// ending the session. It does nothing when no command runs.
func (t *Terminal) Interrupt() error {
	t.mu.Lock()
	s := t.sess
	t.mu.Unlock()
	if s == nil || !s.running() {
		return nil
	}
	return s.interrupt()
}

// Close kills the shell and every process it started, and makes later
// calls fail with ErrClosed. A call in progress returns at once.
func (t *Terminal) Close() error {
	t.mu.Lock()
	s := t.sess
	t.sess, t.closed = nil, true
	tmp := t.tmpSave
	t.mu.Unlock()
	if s != nil {
		s.close()
	}
	if tmp != "" {
		os.RemoveAll(tmp)
	}
	return nil
}

// session returns the running shell, starting one if needed.
func (t *Terminal) session() (*session, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	if t.sess != nil {
		return t.sess, nil
	}
	s, err := startSession(sessionConfig{shell: t.opts.Shell, dir: t.opts.WorkingDir, env: t.environ()})
	if err != nil {
		return nil, err
	}
	t.sess = s
	return s, nil
}

// dropSession forgets s (it exited) and releases it.
func (t *Terminal) dropSession(s *session) {
	t.mu.Lock()
	if t.sess == s {
		t.sess = nil
	}
	t.mu.Unlock()
	s.close()
}

// environ is the shell's environment: ours, minus the agent server's own
// credentials and what would change the prompt, plus settings that keep
// programs from waiting on a pager, plus SessionEnv.
func (t *Terminal) environ() []string {
	env := make([]string, 0, len(os.Environ())+8)
	agent := false
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "PROMPT_COMMAND", name == "PS0", name == "PS1", name == "PS2",
			name == "BASH_ENV", name == "ENV", name == "HISTFILE":
			continue
		case name == "SESSION_API_KEY", name == "OH_SECRET_KEY", strings.HasPrefix(name, "OH_SESSION_API_KEYS_"):
			continue
		case name == "AI_AGENT":
			agent = strings.TrimSpace(value) != ""
		}
		env = append(env, kv)
	}
	env = append(env, "TERM=xterm-256color", "PAGER=cat", "GIT_PAGER=cat", "SYSTEMD_PAGER=")
	if !agent {
		// Tells programs that check it to prefer plain, non-interactive
		// output, as the reference does.
		env = append(env, "AI_AGENT=gohands")
	}
	for _, k := range slices.Sorted(maps.Keys(t.opts.SessionEnv)) {
		env = append(env, k+"="+t.opts.SessionEnv[k])
	}
	return env
}

// saveDir returns the directory for full outputs.
func (t *Terminal) saveDir() (string, error) {
	if t.opts.SaveDir != "" {
		return t.opts.SaveDir, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tmpSave == "" {
		d, err := os.MkdirTemp("", "gohands-observations-")
		if err != nil {
			return "", err
		}
		t.tmpSave = d
	}
	return t.tmpSave, nil
}

// Run executes one action. Failures the model can act on are error
// observations; the error is non-nil only when the shell cannot be
// started, the Terminal is closed, or ctx ends before the call starts.
//
// Cancelling ctx interrupts the running command (Ctrl-C) and returns
// promptly with the output read so far; the session lives on.
func (t *Terminal) Run(ctx context.Context, a *Action) (*Observation, error) {
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-t.sem }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	command := strings.TrimSpace(a.Command)
	switch {
	case a.Reset && a.IsInput:
		return errorObservation(a.Command, "reset=true cannot be combined with is_input=true: reset starts a new shell, so there is no program to send input to."), nil
	case a.Timeout != nil && (*a.Timeout < 0 || math.IsNaN(*a.Timeout) || math.IsInf(*a.Timeout, 0)):
		return errorObservation(a.Command, fmt.Sprintf("timeout must be a number of seconds >= 0, got %v.", *a.Timeout)), nil
	}
	if !a.IsInput {
		if kind := literalKind(command); kind != "" {
			return literalObservation(a.Command, kind), nil
		}
	}

	var resetNote string
	if a.Reset {
		t.mu.Lock()
		s := t.sess
		t.sess = nil
		closed := t.closed
		t.mu.Unlock()
		if s != nil {
			s.close()
		}
		if closed {
			return nil, ErrClosed
		}
		resetNote = "The terminal was reset: a new shell was started, so earlier environment variables, functions, working directory changes and background jobs are gone."
	}
	s, err := t.session()
	if err != nil {
		return nil, err
	}
	if a.Reset && command == "" {
		o := newObservation("[RESET]", resetNote)
		o.ExitCode = new(0)
		o.Metadata.ExitCode = 0
		return o, nil
	}

	running := s.running()
	if !running && command == "" && !a.IsInput && s.unfinished {
		// The command an earlier call left running ended since: this
		// poll reports its end, as it would have a moment sooner.
		running = true
	}
	switch {
	case !running && command == "":
		return errorObservation(command, "No command is running, so there is no output to read. Send a command to run."), nil
	case !running && a.IsInput:
		return errorObservation(command, "No command is running, so there is nothing to send input to. Send the command without is_input to run it."), nil
	case running && !a.IsInput && command != "":
		note := fmt.Sprintf("\n[The command %q was NOT run: the previous command is still running, and only one command runs at a time. Send an empty command to keep waiting for it, is_input=true with text or a key to interact with it, or is_input=true with C-c to stop it.]", command)
		o := t.observe(s, command, "")
		o.IsError = true
		o.Metadata.Suffix = note
		t.fit(o)
		return o, nil
	}

	var sent string // text whose echo may lead the output
	key := false
	switch {
	case a.IsInput && command != "":
		var b []byte
		b, key = inputBytes(command)
		if !key {
			sent = command
		}
		if err := s.input(b); err != nil {
			return t.exited(s, command, err), nil
		}
	case command != "":
		t.leftover = t.previousResult(s)
		if resetNote != "" {
			t.leftover = resetNote + "\n\n"
		}
		script := command + "\n"
		if t.opts.Env != nil {
			script = t.exports(t.opts.Env(command)) + script
		}
		if err := s.run(script); err != nil {
			return t.exited(s, command, err), nil
		}
	}

	o := t.wait(ctx, s, a, command, sent, key)
	s.unfinished = o.ExitCode != nil && *o.ExitCode == -1
	if resetNote != "" {
		c := "[RESET] " + a.Command
		o.Command = &c
	}
	return o, nil
}

// wait waits for the command to finish, a timeout or cancellation.
func (t *Terminal) wait(ctx context.Context, s *session, a *Action, command, sent string, key bool) *Observation {
	var soft *time.Timer
	var softC, hardC <-chan time.Time
	if a.Timeout != nil {
		// Clamp so huge values do not overflow into an instant timeout.
		hard := time.NewTimer(time.Duration(min(*a.Timeout, maxTimeout) * float64(time.Second)))
		defer hard.Stop()
		hardC = hard.C
	} else {
		soft = time.NewTimer(t.opts.NoChangeTimeout)
		defer soft.Stop()
		softC = soft.C
	}
	from := s.received()
	live, liveAt := tool.Output(ctx), int64(0)
	for {
		if done, gone := s.status(); done {
			if live != nil {
				if out, _, dropped := s.peek(liveAt); len(out) > 0 {
					if dropped {
						out = out[t.afterDrop(out):]
					}
					live(t.mask(string(out)))
				}
			}
			return t.completed(s, command, sent, key, "")
		} else if gone {
			return t.exited(s, command, nil)
		}
		select {
		case <-s.changed:
			if soft != nil {
				soft.Reset(t.opts.NoChangeTimeout)
			}
			if live != nil {
				// Whole lines only, so that a secret is masked whole.
				out, next, dropped := s.peek(liveAt)
				if dropped {
					out = out[t.afterDrop(out):]
				}
				if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
					liveAt = next - int64(len(out)) + int64(i+1)
					live(t.mask(string(out[:i+1])))
				}
			}
			if done, _ := s.status(); !done && s.received()-from > floodLimit {
				o := t.observe(s, command, sent)
				o.Metadata.Suffix = fmt.Sprintf("\n[The command has printed more than %d MiB without pause and is still running. %s]", floodLimit>>20, continueHint)
				t.fit(o)
				return o
			}
		case <-softC:
			o := t.observe(s, command, sent)
			o.Timeout = true
			o.Metadata.Suffix = fmt.Sprintf("\n[No new output for %s; the command is still running. %s]", seconds(t.opts.NoChangeTimeout.Seconds()), continueHint)
			t.fit(o)
			return o
		case <-hardC:
			o := t.observe(s, command, sent)
			o.Timeout = true
			o.Metadata.Suffix = fmt.Sprintf("\n[The command is still running after the timeout of %s. %s]", seconds(*a.Timeout), continueHint)
			t.fit(o)
			return o
		case <-ctx.Done():
			return t.cancelled(s, command, sent)
		}
	}
}

const continueHint = "Send an empty command to wait for more output, is_input=true with text or a key to interact with it, or is_input=true with C-c to stop it; for commands expected to run long, set timeout."

// cancelled interrupts the running command and reports what was read.
func (t *Terminal) cancelled(s *session, command, sent string) *Observation {
	if err := s.interrupt(); err != nil {
		t.log.Warn("terminal: interrupt failed", "err", err)
	}
	timer := time.NewTimer(interruptGrace)
	defer timer.Stop()
	for {
		if done, gone := s.status(); done {
			return t.completed(s, command, sent, false, "\n[The call was cancelled and the command was interrupted (Ctrl-C).]")
		} else if gone {
			return t.exited(s, command, nil)
		}
		select {
		case <-s.changed:
		case <-timer.C:
			o := t.observe(s, command, sent)
			o.Metadata.Suffix = "\n[The call was cancelled; Ctrl-C was sent but the command is still running. " + continueHint + "]"
			t.fit(o)
			return o
		}
	}
}

// completed reports a finished command.
func (t *Terminal) completed(s *session, command, sent string, key bool, note string) *Observation {
	o := t.observe(s, command, sent)
	s.finish()
	p := s.prompt()
	o.ExitCode = new(p.exitCode)
	o.Metadata.ExitCode = p.exitCode
	o.Metadata.PID = p.pid
	// The prompt makes every field known, empty ones included.
	o.Metadata.Username, o.Metadata.Hostname = new(t.username), new(t.hostname)
	o.Metadata.WorkingDir, o.Metadata.PyInterpreterPath = new(p.workingDir), new(p.python)
	// The exit code itself is the status line LLMContent adds; the
	// reference also repeats it in the suffix, which says nothing new.
	switch {
	case note != "":
		o.Metadata.Suffix = note
	case key:
		o.Metadata.Suffix = "\n[" + command + " was sent.]"
	}
	t.fit(o)
	return o
}

// exited reports that the shell ended (an `exit` at top level, a kill, or
// Close) and forgets it, so the next call starts a fresh one.
func (t *Terminal) exited(s *session, command string, cause error) *Observation {
	o := t.observe(s, command, "")
	st := s.exitStatus()
	t.dropSession(s)
	o.IsError = true
	status := "ended"
	if st != nil {
		if c := st.ExitCode(); c >= 0 {
			status = fmt.Sprintf("exited with status %d", c)
			o.ExitCode = new(c)
		} else {
			status = "was killed (" + st.String() + ")"
		}
	}
	if cause != nil {
		t.log.Debug("terminal: shell gone", "err", cause)
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		o.Metadata.Suffix = "\n[The terminal was closed.]"
		t.fit(o)
		return o
	}
	o.Metadata.Suffix = fmt.Sprintf("\n[The shell %s, which ended the terminal session: its environment, working directory and background jobs are gone. The next command starts a new shell. To end a script with a status without closing the shell, use `(exit N)` or a test such as `[ \"$code\" -eq 0 ]` instead of a top-level exit.]", status)
	t.fit(o)
	return o
}

// previousResult reports the end of a command that was still running when
// a call last returned and has finished since: its exit code and the
// output not yet shown (its middle cut, if long). It is "" otherwise.
func (t *Terminal) previousResult(s *session) string {
	if !s.unfinished {
		return ""
	}
	s.unfinished = false
	snap := s.take()
	if snap.done == nil {
		return ""
	}
	s.finish()
	if snap.lost > 0 {
		snap.out = snap.out[t.afterDrop(snap.out):]
	}
	text := strings.TrimRight(clean(snap.out), " \t\n")
	if t.opts.Mask != nil {
		text = t.opts.Mask(text)
	}
	if text == "" {
		return fmt.Sprintf("[The previous command finished with exit code %d.]\n", snap.done.exitCode)
	}
	text = truncateMiddle(text, 4000, func(int) string { return "\n<...>\n" })
	return fmt.Sprintf("[The previous command finished with exit code %d. Its output since the last read:]\n%s\n[Output of this command:]\n", snap.done.exitCode, text)
}

// observe builds an observation of the output not yet returned and
// marks it returned. sent is text just typed, whose echo (by programs
// that echo input themselves) is dropped from the start of the output.
func (t *Terminal) observe(s *session, command, sent string) *Observation {
	snap := s.take()
	if snap.done == nil && snap.exit == nil && t.opts.Partial != nil {
		held := t.opts.Partial(string(snap.out))
		snap.out = snap.out[:len(snap.out)-held]
		snap.next -= int64(held)
	}
	if snap.lost > 0 {
		cut := t.afterDrop(snap.out)
		snap.out = snap.out[cut:]
		snap.lost += int64(cut)
	}
	text := clean(snap.out)
	if sent != "" {
		if rest, ok := strings.CutPrefix(strings.TrimLeft(text, " \n"), sent); ok {
			text = strings.TrimLeft(rest, "\n")
		}
	}
	text = strings.TrimRight(text, " \t\n")
	if snap.lost > 0 {
		text = fmt.Sprintf("[%d bytes of output were dropped here to bound memory use.]\n", snap.lost) + text
	}
	if t.opts.Mask != nil {
		text = t.opts.Mask(text)
	}
	s.markShown(snap.next)
	o := newObservation(command, text)
	o.ExitCode = new(-1)
	o.Metadata.Username, o.Metadata.Hostname = known(t.username), known(t.hostname)
	if snap.read {
		o.Metadata.Prefix = "[Below is the output of the previous command.]\n"
	}
	o.Metadata.Prefix = t.leftover + o.Metadata.Prefix
	t.leftover = ""
	if t.opts.SaveDir != "" {
		o.FullOutputSaveDir = t.opts.SaveDir
	}
	return o
}

// fit makes the model's text of o fit MaxOutput: the output is cut in the
// middle and saved in full to a file that the cut names.
func (t *Terminal) fit(o *Observation) {
	text := o.Text()
	// Prefix, suffix and the status lines must survive; the output gives
	// way.
	deco := utf8.RuneCountInString(o.llmText()) - utf8.RuneCountInString(text)
	budget := MaxOutput - deco
	if utf8.RuneCountInString(text) <= budget {
		return
	}
	path := ""
	if dir, err := t.saveDir(); err != nil {
		t.log.Warn("terminal: no directory for the full output", "err", err)
	} else if path, err = saveOutput(dir, text); err != nil {
		t.log.Warn("terminal: saving the full output failed", "err", err)
	} else {
		o.FullOutputSaveDir = dir
	}
	o.Content = textList(truncateMiddle(text, budget, func(line int) string {
		if path == "" {
			return "\n<response clipped: the middle of the output was cut to fit the output limit>\n"
		}
		return fmt.Sprintf("\n<response clipped: the middle of the output was cut to fit the output limit. The full output is in %s; the cut starts at line %d.>\n", path, line)
	}))
}

// textList returns content holding the text s.
func textList(s string) event.List[event.Content] {
	return event.List[event.Content]{event.Text(s)}
}

// envName is a name that can be exported.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// exports returns shell lines that export vars, quoted so any value is
// taken literally, for one command: the shell's prompt function unsets
// them once the command ends (__gh_sn names them), so they do not stay in
// the persistent shell for later commands to read.
func (t *Terminal) exports(vars map[string]string) string {
	var b strings.Builder
	var names []string
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if !envName.MatchString(k) {
			t.log.Warn("terminal: skipping variable with an invalid name", "name", k)
			continue
		}
		names = append(names, k)
		b.WriteString("export ")
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(ansiQuote(vars[k]))
		b.WriteByte('\n')
	}
	if len(names) > 0 {
		b.WriteString("__gh_sn='" + strings.Join(names, " ") + "'\n")
	}
	return b.String()
}

// ansiQuote quotes s for bash as $'...'.
func ansiQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// literalObservation refuses a command that is a Python/JSON literal.
func literalObservation(command, kind string) *Observation {
	head := strings.TrimLeft(command, " \t\r\n")
	if utf8.RuneCountInString(head) > 60 {
		head = string([]rune(head)[:60])
	}
	o := errorObservation(command, fmt.Sprintf("The command looks like a Python/JSON %s, not a shell command (it starts with %q). The terminal runs shell commands. To run code or pass structured data, write it to a file and run that file, or use a heredoc such as:\n  python3 - <<'EOF'\n  data = {'key': 'value'}\n  print(data)\n  EOF", kind, head))
	o.ExitCode = nil
	return o
}

// seconds formats a number of seconds.
func seconds(s float64) string {
	if s == 1 {
		return "1 second"
	}
	return strconv.FormatFloat(s, 'f', -1, 64) + " seconds"
}

// mask hides secret values in text, as in observations.
// afterDrop returns how many bytes at the start of out, which follows
// output the buffer bound dropped, may be the end of a secret value.
func (t *Terminal) afterDrop(out []byte) int {
	if t.opts.PartialStart == nil || len(out) == 0 {
		return 0
	}
	return t.opts.PartialStart(string(out))
}

func (t *Terminal) mask(text string) string {
	if t.opts.Mask != nil {
		return t.opts.Mask(text)
	}
	return text
}

// known returns s, or nil (unknown) when it is empty.
func known(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
