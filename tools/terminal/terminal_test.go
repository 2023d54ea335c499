package terminal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// need fails the test when a program it needs is missing on CI, and skips
// it elsewhere.
func need(t testing.TB, prog string) {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required: %v", prog, err)
		}
		t.Skipf("%s not installed", prog)
	}
}

// quiet is the no-output timeout of tests that wait for it; the others
// keep the default, so a slow machine cannot make them time out.
const quiet = time.Second

// newTerminal returns a Terminal in a fresh directory, closed when the
// test ends.
func newTerminal(t testing.TB, opts *Options) *Terminal {
	t.Helper()
	need(t, "bash")
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.WorkingDir == "" {
		o.WorkingDir = t.TempDir()
	}
	term := New(&o)
	t.Cleanup(func() { term.Close() })
	return term
}

func run(t testing.TB, term *Terminal, a Action) *Observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := term.Run(ctx, &a)
	if err != nil {
		t.Fatalf("Run(%+v): %v", a, err)
	}
	return o
}

// exitCode returns the observation's exit code, -2 when it has none.
func exitCode(o *Observation) int {
	if o.ExitCode == nil {
		return -2
	}
	return *o.ExitCode
}

// expect checks a completed command's output and exit code.
func expect(t testing.TB, o *Observation, output string, code int) {
	t.Helper()
	if o.Text() != output || exitCode(o) != code || o.IsError {
		t.Errorf("command %q: output %q, exit %d, is_error %v; want %q, exit %d\nsuffix: %s",
			*o.Command, o.Text(), exitCode(o), o.IsError, output, code, o.Metadata.Suffix)
	}
	if o.Metadata.ExitCode != exitCode(o) {
		t.Errorf("metadata exit code %d, observation %d", o.Metadata.ExitCode, exitCode(o))
	}
}

func TestStatePersists(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	sub := filepath.Join(term.opts.WorkingDir, "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	o := run(t, term, Action{Command: `cd "sub dir" && export GREETING=hello && greet() { echo "$GREETING, $1"; }`})
	expect(t, o, "", 0)
	if val(o.Metadata.WorkingDir) != sub {
		t.Errorf("working dir %q, want %q", val(o.Metadata.WorkingDir), sub)
	}
	o = run(t, term, Action{Command: "pwd && greet world"})
	expect(t, o, sub+"\nhello, world", 0)
	llm := o.LLMContent()[0].Text
	for _, want := range []string{"[Current working directory: " + sub + "]", "[Command finished with exit code 0]"} {
		if !strings.Contains(llm, want) {
			t.Errorf("LLM text lacks %q:\n%s", want, llm)
		}
	}
	if val(o.Metadata.Username) == "" || val(o.Metadata.Hostname) == "" {
		t.Errorf("metadata lacks user or host: %+v", o.Metadata)
	}
	o = run(t, term, Action{Command: "sleep 0.01 & wait"})
	if o.Metadata.PID <= 0 {
		t.Errorf("pid of the background job = %d", o.Metadata.PID)
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("SESSION_API_KEY", "server-credential")
	t.Setenv("OH_SESSION_API_KEYS_0", "server-credential")
	t.Setenv("PROMPT_COMMAND", "echo noise")
	term := newTerminal(t, &Options{SessionEnv: map[string]string{"GOHANDS_SETTING": "on"}})
	o := run(t, term, Action{Command: `echo "${SESSION_API_KEY:-none} ${OH_SESSION_API_KEYS_0:-none} $GOHANDS_SETTING $PAGER $GIT_PAGER ${AI_AGENT:+agent}"`})
	expect(t, o, "none none on cat cat agent", 0)
	// A cancelled context runs nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := term.Run(ctx, &Action{Command: "touch ran"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Run: %v", err)
	}
}

func TestShellMissing(t *testing.T) {
	t.Parallel()
	term := New(&Options{Shell: filepath.Join(t.TempDir(), "no-such-shell")})
	defer term.Close()
	if _, err := term.Run(context.Background(), &Action{Command: "true"}); err == nil || !strings.Contains(err.Error(), "no-such-shell") {
		t.Errorf("Run with a missing shell: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	for cmd, code := range map[string]int{"true": 0, "false": 1, "(exit 42)": 42, "no-such-command-gohands 2>/dev/null": 127, "ls / >/dev/null; false; true": 0} {
		o := run(t, term, Action{Command: cmd})
		if exitCode(o) != code || o.IsError {
			t.Errorf("%q: exit %d, is_error %v; want %d", cmd, exitCode(o), o.IsError, code)
		}
		llm := o.LLMContent()[0].Text
		if want := fmt.Sprintf("\n[Command finished with exit code %d]", code); !strings.HasSuffix(llm, want) || strings.Count(llm, "exit code") != 1 {
			t.Errorf("%q: LLM text %q should end with %q and state the exit code once", cmd, llm, want)
		}
	}
}

func TestMultiLineAndHeredoc(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	o := run(t, term, Action{Command: "for i in 1 2 3\ndo\n  echo \"n$i\"\ndone\necho end"})
	expect(t, o, "n1\nn2\nn3\nend", 0)
	o = run(t, term, Action{Command: "cat <<'EOF'\n$HOME stays literal\n  indented\nEOF"})
	expect(t, o, "$HOME stays literal\n  indented", 0)
	// A command longer than a terminal's line buffer (4096 bytes).
	long := strings.Repeat("x", 10000)
	o = run(t, term, Action{Command: "echo " + long + " | wc -c"})
	expect(t, o, "10001", 0)
	// A syntax error is reported, not waited on.
	o = run(t, term, Action{Command: "echo 'unterminated"})
	if exitCode(o) == 0 || !strings.Contains(o.Text(), "unexpected EOF") {
		t.Errorf("unterminated quote: exit %d, output %q", exitCode(o), o.Text())
	}
}

func TestOutputShapes(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	tests := []struct{ cmd, want string }{
		{"printf abc", "abc"},
		{"printf 'no newline\\nat end'", "no newline\nat end"},
		{"echo 'héllo 世界 🎉'", "héllo 世界 🎉"},
		{`printf '10%%\r50%%\r100%%\n'`, "100%"},
		{`printf '\033[31mred\033[0m plain\n'`, "red plain"},
		{`printf '\033[6n\033]11;?\007query-free\n'`, "query-free"},
		{"echo out; echo err >&2", "out\nerr"},
		{"true", ""},
	}
	for _, tt := range tests {
		o := run(t, term, Action{Command: tt.cmd})
		expect(t, o, tt.want, 0)
	}
}

// TestMarkerLikeOutput: output that imitates the reference's prompt or our
// own marker (without the session's nonce) does not end the command early,
// and printing the prompt function does not either.
func TestMarkerLikeOutput(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	o := run(t, term, Action{Command: `echo '###PS1JSON###'; echo '{"exit_code": "0"}'; echo '###PS1END###'; sleep 0.2; echo after; (exit 3)`})
	expect(t, o, "###PS1JSON###\n{\"exit_code\": \"0\"}\n###PS1END###\nafter", 3)
	o = run(t, term, Action{Command: `printf '\033_gh0123456789abcdef01234567;0\037-1\037\037/fake\033\\'; sleep 0.2; echo after; (exit 4)`})
	if exitCode(o) != 4 || !strings.HasSuffix(o.Text(), "after") || val(o.Metadata.WorkingDir) == "/fake" {
		t.Errorf("forged marker: exit %d, output %q, dir %q", exitCode(o), o.Text(), val(o.Metadata.WorkingDir))
	}
	o = run(t, term, Action{Command: `declare -f __gh_prompt; set | grep -c . >/dev/null; echo tail`})
	if exitCode(o) != 0 || !strings.HasSuffix(o.Text(), "tail") {
		t.Errorf("printing the prompt function: exit %d, output %q", exitCode(o), o.Text())
	}
}

// TestPromptSurvives: commands that would break the prompt of an ordinary
// shell do not break completion detection.
func TestPromptSurvives(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	// The assignment fails (and, as for any such error in a sourced
	// script, ends the command); the model is told why.
	o := run(t, term, Action{Command: "PROMPT_COMMAND='echo noise'"})
	if exitCode(o) == 0 || !strings.Contains(o.Text(), "PROMPT_COMMAND: readonly variable") {
		t.Errorf("PROMPT_COMMAND assignment: exit %d, output %q", exitCode(o), o.Text())
	}
	o = run(t, term, Action{Command: "unset -f __gh_prompt"})
	if exitCode(o) == 0 || !strings.Contains(o.Text(), "readonly") {
		t.Errorf("unset -f: exit %d, output %q", exitCode(o), o.Text())
	}
	expect(t, run(t, term, Action{Command: "PS1='$ '; echo ps1"}), "ps1", 0)
	expect(t, run(t, term, Action{Command: "echo clean"}), "clean", 0)
	log := filepath.Join(term.opts.WorkingDir, "log")
	expect(t, run(t, term, Action{Command: "exec 3>&1 >" + log + " 2>&1; echo to-file"}), "", 0)
	expect(t, run(t, term, Action{Command: "exec >&3 2>&1 3>&-; echo back"}), "back", 0)
	if data, _ := os.ReadFile(log); string(data) != "to-file\n" {
		t.Errorf("log = %q", data)
	}
}

// TestUnreadInputDiscarded: input typed into a command that ends without
// reading it is not run by the shell afterwards, and a key without Enter
// is not glued to the next command.
func TestUnreadInputDiscarded(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: quiet})
	junk := filepath.Join(term.opts.WorkingDir, "junk")
	gate := filepath.Join(term.opts.WorkingDir, "gate")
	wait := "while [ ! -e " + gate + " ]; do sleep 0.05; done"
	for _, input := range []string{"touch " + junk, "UP", "C-x"} {
		os.Remove(gate)
		if o := run(t, term, Action{Command: wait}); exitCode(o) != -1 {
			t.Fatalf("exit %d", exitCode(o))
		}
		time.AfterFunc(200*time.Millisecond, func() { os.WriteFile(gate, nil, 0o644) })
		o := run(t, term, Action{Command: input, IsInput: true, Timeout: new(30.0)})
		if exitCode(o) != 0 {
			t.Errorf("%q: exit %d, output %q", input, exitCode(o), o.Text())
		}
		expect(t, run(t, term, Action{Command: "echo next"}), "next", 0)
	}
	if _, err := os.Stat(junk); err == nil {
		t.Error("unread input was run by the shell")
	}
}

// TestEchoTurnedOn: a command that turns the terminal's echo back on does
// not make later commands echo.
func TestEchoTurnedOn(t *testing.T) {
	t.Parallel()
	need(t, "stty")
	term := newTerminal(t, nil)
	expect(t, run(t, term, Action{Command: "stty sane"}), "", 0)
	expect(t, run(t, term, Action{Command: "echo hi"}), "hi", 0)
}

// readUntil returns o's output, and the output of further empty-command
// reads while the command is still running, until it contains want (a
// slow machine may need several reads before a program shows something).
func readUntil(t *testing.T, term *Terminal, o *Observation, want string) (string, *Observation) {
	t.Helper()
	text := o.Text()
	for i := 0; i < 10 && !strings.Contains(text, want) && exitCode(o) == -1; i++ {
		o = run(t, term, Action{Command: ""})
		text += "\n" + o.Text()
	}
	return text, o
}

// settle keeps reading while o is a soft timeout of a command that is
// about to end: on a loaded machine a shell can be quiet for longer than
// the no-output timeout before it reports the end. Output read meanwhile
// is kept in front of the last observation's.
func settle(t *testing.T, term *Terminal, o *Observation) (string, *Observation) {
	t.Helper()
	var text strings.Builder
	text.WriteString(o.Text())
	for i := 0; i < 20 && o.Timeout && exitCode(o) == -1; i++ {
		o = run(t, term, Action{Command: ""})
		text.WriteString(o.Text())
	}
	return text.String(), o
}

func TestReadPrompt(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: 2 * time.Second})
	text, o := readUntil(t, term, run(t, term, Action{Command: `read -r -p 'Name? ' name && echo "hello, $name"`}), "Name?")
	if exitCode(o) != -1 || !o.Timeout || !strings.Contains(text, "Name?") {
		t.Fatalf("read prompt: exit %d, timeout %v, output %q", exitCode(o), o.Timeout, text)
	}
	text, o = settle(t, term, run(t, term, Action{Command: "gohands", IsInput: true}))
	if exitCode(o) != 0 || !strings.HasSuffix(text, "hello, gohands") {
		t.Errorf("after input: exit %d, output %q", exitCode(o), text)
	}
	if o.Metadata.Prefix == "" {
		t.Error("continued output has no prefix")
	}
}

func TestPythonREPL(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	term := newTerminal(t, &Options{NoChangeTimeout: 2 * time.Second, SessionEnv: map[string]string{"PYTHONSTARTUP": ""}})
	text, o := readUntil(t, term, run(t, term, Action{Command: "python3"}), ">>>")
	if exitCode(o) != -1 || !strings.Contains(text, ">>>") {
		t.Fatalf("python3: exit %d, output %q", exitCode(o), text)
	}
	text, o = readUntil(t, term, run(t, term, Action{Command: "1+1", IsInput: true}), ">>>")
	if exitCode(o) != -1 || !strings.HasPrefix(strings.TrimLeft(text, "\n"), "2\n") || strings.Contains(text, "1+1") {
		t.Errorf("1+1: exit %d, output %q", exitCode(o), text)
	}
	o = run(t, term, Action{Command: "C-d", IsInput: true})
	if exitCode(o) != 0 || o.Metadata.Suffix != "\n[C-d was sent.]" {
		t.Errorf("C-d: exit %d, suffix %q", exitCode(o), o.Metadata.Suffix)
	}
	expect(t, run(t, term, Action{Command: "echo back"}), "back", 0)
}

func TestSoftTimeoutReadInterrupt(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: quiet})
	o := run(t, term, Action{Command: "echo first; sleep 3; echo second; sleep 60"})
	if exitCode(o) != -1 || !o.Timeout || o.Text() != "first" || o.Metadata.Prefix != "" {
		t.Fatalf("first read: exit %d, timeout %v, output %q, prefix %q", exitCode(o), o.Timeout, o.Text(), o.Metadata.Prefix)
	}
	if !strings.Contains(o.Metadata.Suffix, "still running") {
		t.Errorf("suffix %q", o.Metadata.Suffix)
	}
	if strings.Contains(o.LLMContent()[0].Text, "Command finished") {
		t.Error("LLM text reports an exit code for a running command")
	}

	// Read until the second line shows up; earlier output is not repeated.
	for range 10 {
		if o = run(t, term, Action{Command: ""}); o.Text() != "" {
			break
		}
	}
	if exitCode(o) != -1 || o.Text() != "second" || o.Metadata.Prefix == "" {
		t.Errorf("second read: exit %d, output %q, prefix %q", exitCode(o), o.Text(), o.Metadata.Prefix)
	}

	// A new command while one runs is refused and not run.
	marker := filepath.Join(term.opts.WorkingDir, "ran")
	o = run(t, term, Action{Command: "touch " + marker})
	if !o.IsError || !strings.Contains(o.Metadata.Suffix, "NOT run") {
		t.Errorf("refusal: is_error %v, suffix %q", o.IsError, o.Metadata.Suffix)
	}

	_, o = settle(t, term, run(t, term, Action{Command: "C-c", IsInput: true}))
	if exitCode(o) != 130 {
		t.Errorf("C-c: exit %d, output %q, suffix %q", exitCode(o), o.Text(), o.Metadata.Suffix)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused command ran")
	}
	expect(t, run(t, term, Action{Command: "echo still works"}), "still works", 0)
}

// TestPreviousResult: a command that timed out and finished before the
// next command still reports its exit code and its last output.
func TestPreviousResult(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: quiet})
	o := run(t, term, Action{Command: "while [ ! -e go ]; do sleep 0.05; done; echo late; (exit 7)"})
	if exitCode(o) != -1 {
		t.Fatalf("exit %d", exitCode(o))
	}
	if err := os.WriteFile(filepath.Join(term.opts.WorkingDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	term.mu.Lock()
	s := term.sess
	term.mu.Unlock()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if done, _ := s.status(); done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not finish")
		}
	}
	o = run(t, term, Action{Command: "echo next"})
	expect(t, o, "next", 0)
	if want := "[The previous command finished with exit code 7. Its output since the last read:]\nlate\n"; !strings.HasPrefix(o.Metadata.Prefix, want) {
		t.Errorf("prefix %q, want it to start with %q", o.Metadata.Prefix, want)
	}
	expect(t, run(t, term, Action{Command: "echo again"}), "again", 0)
	if o := run(t, term, Action{Command: "echo again"}); o.Metadata.Prefix != "" {
		t.Errorf("stale prefix %q", o.Metadata.Prefix)
	}
}

func TestHardTimeout(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: time.Minute})
	start := time.Now()
	o := run(t, term, Action{Command: "while :; do echo tick; sleep 0.1; done", Timeout: new(0.5)})
	if exitCode(o) != -1 || !o.Timeout || !strings.Contains(o.Text(), "tick") || !strings.Contains(o.Metadata.Suffix, "0.5 seconds") {
		t.Errorf("hard timeout: exit %d, timeout %v, output %q, suffix %q", exitCode(o), o.Timeout, o.Text(), o.Metadata.Suffix)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %v", d)
	}
	o = run(t, term, Action{Command: "C-c", IsInput: true})
	if exitCode(o) != 130 {
		t.Errorf("C-c: exit %d", exitCode(o))
	}
}

func TestLargeOutput(t *testing.T) {
	t.Parallel()
	save := filepath.Join(t.TempDir(), "observations")
	term := newTerminal(t, &Options{SaveDir: save})
	o := run(t, term, Action{Command: "seq 1 200000"}) // 1.27 MB
	if exitCode(o) != 0 {
		t.Fatalf("exit %d", exitCode(o))
	}
	var want strings.Builder
	for i := 1; i <= 200000; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	full := strings.TrimSuffix(want.String(), "\n")

	llm := o.LLMContent()[0].Text
	if n := utf8.RuneCountInString(llm); n > MaxOutput || n < MaxOutput-100 {
		t.Errorf("LLM text has %d characters, want close to %d", n, MaxOutput)
	}
	if !strings.HasPrefix(o.Text(), "1\n2\n3\n") || !strings.HasSuffix(o.Text(), "199999\n200000") {
		t.Error("head or tail of the output lost")
	}
	if o.FullOutputSaveDir != save {
		t.Errorf("full_output_save_dir = %q, want %q", o.FullOutputSaveDir, save)
	}
	files, _ := filepath.Glob(filepath.Join(save, "terminal_output_*.txt"))
	if len(files) != 1 {
		t.Fatalf("saved files: %v", files)
	}
	if !strings.Contains(o.Text(), files[0]) {
		t.Errorf("the output does not name %s", files[0])
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != full {
		t.Errorf("saved output has %d bytes, want %d (complete)", len(data), len(full))
	}
	expect(t, run(t, term, Action{Command: "echo small"}), "small", 0)
}

// TestFlood: a command that prints without pause returns with a part of
// its output instead of never going quiet.
func TestFlood(t *testing.T) {
	t.Parallel()
	need(t, "yes")
	term := newTerminal(t, &Options{NoChangeTimeout: time.Minute})
	o := run(t, term, Action{Command: "yes flood"})
	if exitCode(o) != -1 || !strings.HasPrefix(o.Text(), "flood\nflood\n") || !strings.Contains(o.Metadata.Suffix, "without pause") {
		t.Errorf("flood: exit %d, suffix %q", exitCode(o), o.Metadata.Suffix)
	}
	if n := utf8.RuneCountInString(o.LLMContent()[0].Text); n > MaxOutput {
		t.Errorf("LLM text has %d characters", n)
	}
	o = run(t, term, Action{Command: "C-c", IsInput: true})
	if exitCode(o) != 130 {
		t.Errorf("C-c: exit %d", exitCode(o))
	}
	expect(t, run(t, term, Action{Command: "echo calm"}), "calm", 0)
}

func TestCancelInterrupts(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	start := time.Now()
	o, err := term.Run(ctx, &Action{Command: "echo started; sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second { // well before the command's 60 s
		t.Errorf("cancelled call returned after %v", d)
	}
	if exitCode(o) != 130 || o.Text() != "started" || !strings.Contains(o.Metadata.Suffix, "cancelled") {
		t.Errorf("cancelled: exit %d, output %q, suffix %q", exitCode(o), o.Text(), o.Metadata.Suffix)
	}
	expect(t, run(t, term, Action{Command: "echo alive"}), "alive", 0)

	// Interrupt from another goroutine, as a conversation's interrupt does.
	// Until the command is in the foreground, Interrupt has nothing to
	// interrupt; keep trying.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				term.Interrupt()
			}
		}
	}()
	o = run(t, term, Action{Command: "sleep 60", Timeout: new(30.0)})
	close(stop)
	if exitCode(o) != 130 {
		t.Errorf("Interrupt: exit %d", exitCode(o))
	}
	if err := term.Interrupt(); err != nil {
		t.Errorf("Interrupt with nothing running: %v", err)
	}
	expect(t, run(t, term, Action{Command: "echo alive"}), "alive", 0)
}

func TestExitStartsFreshShell(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	run(t, term, Action{Command: "export KEEP=1 && cd /"})
	o := run(t, term, Action{Command: "echo bye; exit 3"})
	if !o.IsError || exitCode(o) != 3 || o.Text() != "bye" || !strings.Contains(o.Metadata.Suffix, "new shell") {
		t.Errorf("exit: is_error %v, exit %d, output %q, suffix %q", o.IsError, exitCode(o), o.Text(), o.Metadata.Suffix)
	}
	o = run(t, term, Action{Command: "echo ${KEEP:-gone}; pwd"})
	expect(t, o, "gone\n"+term.opts.WorkingDir, 0)
}

func TestReset(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: quiet})
	run(t, term, Action{Command: "export KEEP=1"})
	o := run(t, term, Action{Command: "echo ${KEEP:-unset}", Reset: true})
	if exitCode(o) != 0 || *o.Command != "[RESET] echo ${KEEP:-unset}" || o.Text() != "unset" || !strings.HasPrefix(o.LLMContent()[0].Text, "The terminal was reset") {
		t.Errorf("reset with command: exit %d, command %q, output %q, prefix %q", exitCode(o), *o.Command, o.Text(), o.Metadata.Prefix)
	}
	o = run(t, term, Action{Reset: true})
	if exitCode(o) != 0 || *o.Command != "[RESET]" || o.IsError {
		t.Errorf("reset: exit %d, command %q", exitCode(o), *o.Command)
	}
	// Reset ends a running command too.
	run(t, term, Action{Command: "sleep 60"})
	expect(t, run(t, term, Action{Command: "true", Reset: true}), "", 0)
	o = run(t, term, Action{Command: "x", Reset: true, IsInput: true})
	if !o.IsError {
		t.Error("reset with is_input accepted")
	}
}

func TestPrechecks(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	for _, a := range []Action{
		{Command: ""},
		{Command: "y", IsInput: true},
		{Command: `["ls", "-la"]`},
		{Command: `{"command": "ls"}`},
		{Command: "ls", Timeout: new(-1.0)},
	} {
		o := run(t, term, a)
		if !o.IsError {
			t.Errorf("%+v: accepted: %q", a, o.Text())
		}
		if len(o.LLMContent()) != 2 {
			t.Errorf("%+v: error observation renders without the error header", a)
		}
	}
	expect(t, run(t, term, Action{Command: "[ -d / ] && echo dir"}), "dir", 0)
	expect(t, run(t, term, Action{Command: "echo big", Timeout: new(1e300)}), "big", 0)
	expect(t, run(t, term, Action{Command: "[[ -d / ]] && echo dir"}), "dir", 0)
}

func TestSecretsHook(t *testing.T) {
	t.Parallel()
	const value = "s3cr3t-'quoted' \"value\"\\n$HOME"
	save := t.TempDir()
	var asked []string
	var mu sync.Mutex
	term := newTerminal(t, &Options{
		SaveDir: save,
		Env: func(command string) map[string]string {
			mu.Lock()
			asked = append(asked, command)
			mu.Unlock()
			if strings.Contains(command, "$API_TOKEN") {
				return map[string]string{"API_TOKEN": value, "bad name": "x"}
			}
			return nil
		},
		Mask:   func(s string) string { return strings.ReplaceAll(s, value, "<secret-hidden>") },
		Logger: slog.New(slog.DiscardHandler),
	})
	o := run(t, term, Action{Command: `echo "token=$API_TOKEN"`})
	expect(t, o, "token=<secret-hidden>", 0)
	// The value arrived exactly, quotes, backslashes and dollar signs
	// included.
	expect(t, run(t, term, Action{Command: `[ "$API_TOKEN" = 's3cr3t-'"'"'quoted'"'"' "value"\n$HOME' ] && echo same`}), "same", 0)
	if len(asked) != 2 {
		t.Errorf("Env called %d times, want 2", len(asked))
	}
	// Saved full output is masked too.
	o = run(t, term, Action{Command: `for i in $(seq 3000); do echo "$i $API_TOKEN"; done`})
	files, _ := filepath.Glob(filepath.Join(save, "terminal_output_*.txt"))
	if len(files) != 1 {
		t.Fatalf("saved files: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if strings.Contains(string(data), "s3cr3t") || strings.Contains(o.Text(), "s3cr3t") || !strings.Contains(string(data), "3000 <secret-hidden>") {
		t.Error("secret not masked in the saved or shown output")
	}
	// No command file with the secret is left behind.
	term.mu.Lock()
	script := term.sess.script()
	term.mu.Unlock()
	if _, err := os.Stat(script); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("command file left behind: %v", err)
	}
}

func TestConcurrentCallsSerialised(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, nil)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 8 {
		wg.Go(func() {
			want := fmt.Sprintf("call-%d", i)
			o, err := term.Run(context.Background(), &Action{Command: "sleep 0.0$RANDOM; echo " + want})
			if err != nil || o.Text() != want || exitCode(o) != 0 {
				errs <- fmt.Sprintf("%s: %v %q exit %d", want, err, o.Text(), exitCode(o))
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// alive reports whether a process whose command line contains needle is
// alive (zombies count as dead).
func alive(needle string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cmdline := strings.ReplaceAll(string(raw), "\x00", " ")
		if err != nil || !strings.Contains(cmdline, needle) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		found = append(found, e.Name()+": "+cmdline)
	}
	return found
}

func TestCloseKillsEverything(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: quiet})
	run(t, term, Action{Command: "sleep 1234567 & nohup sleep 1234568 >/dev/null 2>&1 & disown"})
	o := run(t, term, Action{Command: "sleep 1234569"})
	if exitCode(o) != -1 {
		t.Fatalf("foreground sleep: exit %d", exitCode(o))
	}
	if got := alive("sleep 123456"); len(got) != 3 {
		t.Fatalf("before Close: %v", got)
	}
	if err := term.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(alive("sleep 123456")) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := alive("sleep 123456"); len(got) > 0 {
		t.Errorf("orphans after Close: %v", got)
	}
	if _, err := term.Run(context.Background(), &Action{Command: "true"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}

// val returns the metadata field *p, or "" when it is unknown.
func val(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
