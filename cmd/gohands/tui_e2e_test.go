package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"

	"golang.org/x/sys/unix"
)

// screen is gohands running in a tmux session of fixed size: the test
// types into it and reads what it shows.
type screen struct {
	t      *testing.T
	sock   string
	name   string
	stderr string // the file gohands' standard error goes to
	status string // the file its exit status goes to
}

// startScreen runs gohands args in a new 100x30 tmux session with e's
// environment, in e's workspace.
func startScreen(t *testing.T, e *e2e, name string, args ...string) *screen {
	t.Helper()
	return startScreenOn(t, e, name, false, args...)
}

// startScreenOn is startScreen; with paneStderr, standard error goes to
// the terminal too.
func startScreenOn(t *testing.T, e *e2e, name string, paneStderr bool, args ...string) *screen {
	t.Helper()
	tmux := testenv.Program(t, "tmux")
	dir := t.TempDir()
	s := &screen{t: t, sock: filepath.Join(dir, "tmux.sock"), name: name,
		stderr: filepath.Join(dir, "stderr"), status: filepath.Join(dir, "status")}
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	// An interrupt typed in line mode reaches the shell too: it must
	// not end the script, whose status line the test reads.
	script.WriteString("trap true INT\n")
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "NO_COLOR" || k == "TERM" || k == "TMUX" || k == "CI" {
			continue
		}
		fmt.Fprintf(&script, "export %s=%s\n", k, shellQuote(v))
	}
	fmt.Fprintf(&script, "cd %s\n", shellQuote(cmpOr(e.cwd, e.work)))
	q := []string{shellQuote(binPath)}
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	redirect := " 2>" + shellQuote(s.stderr)
	if paneStderr {
		redirect = ""
	}
	fmt.Fprintf(&script, "%s%s\necho $? >%s\nsleep 600\n", strings.Join(q, " "), redirect, shellQuote(s.status))
	sh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(sh, []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tmux, "-S", s.sock, "-f", "/dev/null", "new-session", "-d", "-s", name,
		"-x", "100", "-y", "30", sh).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(tmux, "-S", s.sock, "kill-server").Run() })
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (s *screen) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// capture is the screen's text now.
func (s *screen) capture() string { return s.tmux("capture-pane", "-p", "-t", s.name) }

// waitFor waits until the screen shows all of want.
func (s *screen) waitFor(want ...string) string {
	s.t.Helper()
	return s.waitUntil(func(got string) string {
		for _, w := range want {
			if !strings.Contains(got, w) {
				return fmt.Sprintf("the screen does not show %q", w)
			}
		}
		return ""
	})
}

// waitForMatch waits until the screen shows a match of re and returns it.
func (s *screen) waitForMatch(re *regexp.Regexp) string {
	s.t.Helper()
	return s.waitUntil(func(got string) string {
		if !re.MatchString(got) {
			return fmt.Sprintf("the screen shows nothing matching %q", re)
		}
		return ""
	})
}

// waitUntil captures the screen until check finds nothing missing (it
// returns "") and returns it; after a minute it fails the test with what
// check says is missing.
func (s *screen) waitUntil(check func(screen string) (missing string)) string {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := s.capture()
		missing := check(got)
		if missing == "" {
			return got
		}
		if time.Now().After(deadline) {
			errOut, _ := os.ReadFile(s.stderr)
			s.t.Fatalf("%s:\n%s\nstderr:\n%s", missing, got, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitIdle waits until the run has ended: the screen can show a run's
// last words before the interface has its outcome, and until then it
// keeps /new, /resume, /model and /condense for later.
func (s *screen) waitIdle() {
	s.t.Helper()
	s.waitGone("· Ctrl-C pauses")
}

// waitGone waits until the screen no longer shows text.
func (s *screen) waitGone(text string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Contains(s.capture(), text) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen still shows %q:\n%s", text, s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// typeLine types text and Enter.
func (s *screen) typeLine(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", s.name, "-l", text)
	s.tmux("send-keys", "-t", s.name, "Enter")
}

func (s *screen) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// exited waits for gohands to end and returns its status and stderr.
func (s *screen) exited() (string, string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(s.status); err == nil && len(b) > 0 {
			errOut, _ := os.ReadFile(s.stderr)
			return strings.TrimSpace(string(b)), string(errOut)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("gohands did not exit; screen:\n%s", s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTUIInTmux drives the interactive mode as a person would: a task,
// its streamed answer and live command, an "always" confirmation, a
// follow-up, slash commands, the /resume picker, Ctrl-C to pause a
// command and twice to leave, then gohands -c to come back.
func TestTUIInTmux(t *testing.T) {
	t.Parallel()
	gate := "gate-" + fmt.Sprint(time.Now().UnixNano())
	e := newE2E(t,
		llmtest.Reply{Text: "Let me count for you.", ChunkDelay: 20 * time.Millisecond,
			ToolCalls: []llmtest.ToolCall{call("call_count", "terminal", map[string]any{
				"command": "echo first-line; while [ ! -f " + gate + " ]; do sleep 0.1; done; echo second-line"})}},
		llmtest.Reply{Text: "Counted **two** lines."},
		llmtest.Reply{Text: "You are welcome."},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_sleep", "terminal", map[string]any{"command": "echo sleeping; sleep 120"})}},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "tui", "--persistence-dir", e.data, "--llm-config", e.config)

	s.waitFor("Ask gohands", "openai/gpt-4o")
	s.typeLine("count the lines")
	s.waitFor("› count the lines", "Let me count for you.", "$ echo first-line",
		"The agent wants to run 1 action", "always for `echo`, `[`, `sleep` commands", "never covers HIGH risk")
	// A message typed at the panel waits for the answer and the run.
	s.typeLine("thanks")
	scr := s.waitFor("⏵ queued: thanks")
	t.Logf("the panel with a queued message:\n%s", scr)
	s.keys("a")
	// The command's first line shows while it still runs.
	s.waitFor("first-line", "Running terminal")
	if err := os.WriteFile(filepath.Join(e.work, gate), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	scr = s.waitFor("second-line", "Counted two lines.", "confirm always", "› thanks", "You are welcome.")
	t.Logf("after the first task and the queued message:\n%s", scr)
	s.waitGone("queued")
	s.waitIdle()
	s.typeLine("/cost")
	s.waitFor("Total: $")
	s.typeLine("/model openai/gpt-4o-mini")
	s.waitFor("now uses openai/gpt-4o-mini", "openai/gpt-4o-mini · ")
	s.typeLine("/resume")
	scr = s.waitFor("Resume a conversation", "count the lines")
	t.Logf("the picker:\n%s", scr)
	s.keys("Escape")
	s.waitGone("Resume a conversation")

	s.typeLine("sleep a while")
	s.waitFor("sleeping", "Running terminal")
	var req struct {
		Model string `json:"model"`
	}
	if err := e.srv.LastRequest().Decode(&req); err != nil || req.Model != "gpt-4o-mini" {
		t.Errorf("after /model the request names %q (%v), want gpt-4o-mini", req.Model, err)
	}
	s.keys("C-c")
	scr = s.waitFor("Paused.")
	t.Logf("paused:\n%s", scr)
	s.keys("C-c")
	s.waitFor("Press Ctrl-C again to exit.")
	s.keys("C-c")
	code, stderr := s.exited()
	if code != "0" {
		t.Fatalf("exit status %s; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "continue it with: gohands -c") {
		t.Errorf("no resume hint on stderr:\n%s", stderr)
	}

	// The conversation is stored with both messages.
	infos, err := listConversations(e.data, func(p string, err error) { t.Errorf("%s: %v", p, err) })
	if err != nil || len(infos) != 1 {
		t.Fatalf("stored conversations %v, %v", infos, err)
	}
	if infos[0].Workspace != e.work || infos[0].FirstMessage != "count the lines" {
		t.Errorf("stored %+v", infos[0])
	}
	events, err := os.ReadDir(filepath.Join(infos[0].Dir, "events"))
	if err != nil || len(events) < 8 {
		t.Errorf("%d events stored (%v)", len(events), err)
	}

	// gohands -c comes back to it.
	e.srv.Add(llmtest.Reply{Text: "Still here."})
	s2 := startScreen(t, e, "tui2", "-c", "--persistence-dir", e.data, "--llm-config", e.config)
	s2.waitFor("You are welcome.", infos[0].ID[:8])
	s2.typeLine("still there?")
	s2.waitFor("Still here.")
	s2.typeLine("/exit")
	if code, stderr := s2.exited(); code != "0" {
		t.Fatalf("exit status %s after /exit; stderr:\n%s", code, stderr)
	}
}

// TestLineModeREPL: --no-tui reads messages and answers from standard
// input, asks before actions (the interactive default) and keeps the
// conversation.
func TestLineModeREPL(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_touch", "terminal", map[string]any{"command": "touch made-by-agent"})}},
		llmtest.Reply{Text: "Made the file."},
		llmtest.Reply{Text: "Bye then."},
	)
	e.stdin = "make a file\ny\nthanks\n/cost\n/exit\n"
	p := e.start("--no-tui", "--persistence-dir", e.data, "--llm-config", e.config)
	r := p.wait(2 * time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Confirm terminal (risk", "touch made-by-agent", "Made the file.", "Bye then.", "Total: $"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(e.work, "made-by-agent")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	infos, err := listConversations(e.data, func(string, error) {})
	if err != nil || len(infos) != 1 || infos[0].FirstMessage != "make a file" {
		t.Errorf("stored %+v, %v", infos, err)
	}
}

// TestRunWaitingIndicator: gohands run on a terminal shows a spinner and
// the time waited while the model thinks, and clears it for the answer.
//
// The model answers only once the test saw the indicator: with a fixed
// delay, a loaded machine's slow screen captures missed its one second of
// "1s" (and the delay could end before any capture).
func TestRunWaitingIndicator(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	srv := llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		<-release
		return llmtest.Reply{Text: "Thought about it."}, nil
	}, nil)
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the server closes
	e := newE2E(t)
	e.env = append(e.env, "LLM_BASE_URL="+srv.URL+"/v1") // the last value wins
	s := startScreenOn(t, e, "run", true, e.args("think hard")...)
	scr := s.waitForMatch(regexp.MustCompile(`working… ([0-9]+m)?[1-9][0-9]*s \(Ctrl-C pauses\)`))
	t.Logf("waiting:\n%s", scr)
	once.Do(func() { close(release) })
	scr = s.waitFor("Thought about it.", "gohands: finished")
	if strings.Contains(scr, "working…") {
		t.Errorf("the indicator stayed:\n%s", scr)
	}
	if code, stderr := s.exited(); code != "0" {
		t.Errorf("exit %s: %s", code, stderr)
	}
}

// TestTUIFirstRunSetup: with no model anywhere, gohands asks for one, its
// key and base URL, saves them (mode 0600) and answers the task.
func TestTUIFirstRunSetup(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Reply{Text: "Hello from the configured model."})
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "LLM_") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "setup", "--persistence-dir", e.data, "say hello")
	s.waitFor("No model is configured yet", "Model:")
	s.typeLine("openai/gpt-4o")
	s.waitFor("API key:")
	s.typeLine("sk-first-run")
	s.waitFor("Base URL:")
	if strings.Contains(s.capture(), "sk-first-run") {
		t.Error("the key is shown on the screen")
	}
	s.typeLine(e.srv.URL + "/v1")
	s.waitFor("› say hello", "Hello from the configured model.")
	if got := e.srv.LastRequest().Header.Get("Authorization"); got != "Bearer sk-first-run" {
		t.Errorf("Authorization %q", got)
	}
	path := filepath.Join(e.home, "gohands", "settings.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("settings mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"model": "openai/gpt-4o"`) || !strings.Contains(string(data), e.srv.URL) {
		t.Errorf("settings:\n%s", data)
	}
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Errorf("exit %s: %s", code, stderr)
	}
}

// pid is the process id of gohands in the screen (the child of the
// pane's shell).
func (s *screen) pid() int {
	s.t.Helper()
	sh := strings.TrimSpace(s.tmux("display-message", "-p", "-t", s.name, "#{pane_pid}"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join("/proc", sh, "task", sh, "children"))
		if f := strings.Fields(string(data)); len(f) > 0 {
			var pid int
			fmt.Sscan(f[0], &pid)
			return pid
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no gohands process under the pane's shell %s", sh)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// altScreen reports whether the pane shows the alternate screen.
func (s *screen) altScreen() bool {
	return strings.TrimSpace(s.tmux("display-message", "-p", "-t", s.name, "#{alternate_on}")) == "1"
}

// writeSettings writes the settings file of e (XDG_CONFIG_HOME=e.home).
func writeSettings(t *testing.T, e *e2e, st string) string {
	t.Helper()
	path := filepath.Join(e.home, "gohands", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(st), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTUIModelSwitchProvider: /model to another provider uses that
// provider's key (its variable, hidden from the agent's commands but
// remembered) and the base URL the settings give for it; with no key
// anywhere it asks, hidden, and saves it. /settings shows and changes
// the settings file.
func TestTUIModelSwitchProvider(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{Text: "Hello over the Chat Completions wire."},
		llmtest.Reply{Text: "Hello over the Messages wire."},
	)
	var env []string
	for _, kv := range e.env {
		if !strings.Contains(kv, "_API_KEY=") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "XDG_CONFIG_HOME="+e.home, "LLM_API_KEY=sk-openai-test", "ANTHROPIC_API_KEY=sk-ant-from-env")
	path := writeSettings(t, e, `{"model": "anthropic/claude-sonnet-4-5", "base_url": "`+e.srv.URL+`"}`)
	// The environment (LLM_MODEL, LLM_BASE_URL) wins over the settings.
	s := startScreen(t, e, "switch", "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor("openai/gpt-4o · ")
	// Before the first message, /model sets the model the conversation
	// starts with.
	s.typeLine("/model openai/gpt-4o-mini")
	s.waitFor("The conversation will use openai/gpt-4o-mini")
	s.typeLine("hello")
	s.waitFor("Hello over the Chat Completions wire.")
	r := e.srv.LastRequest()
	var req struct {
		Model string `json:"model"`
	}
	if err := r.Decode(&req); err != nil || req.Model != "gpt-4o-mini" {
		t.Errorf("first request names %q (%v), want gpt-4o-mini", req.Model, err)
	}
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-openai-test" {
		t.Errorf("first request %s with %q", r.Path, r.Header.Get("Authorization"))
	}

	s.typeLine("/model anthropic/claude-sonnet-4-5")
	s.waitFor("now uses anthropic/claude-sonnet-4-5", "$ANTHROPIC_API_KEY, at "+e.srv.URL, "anthropic/claude-sonnet-4-5 · ")
	s.typeLine("and now?")
	s.waitFor("Hello over the Messages wire.")
	if r := e.srv.LastRequest(); r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "sk-ant-from-env" {
		t.Errorf("after /model the request went to %s with key %q", r.Path, r.Header.Get("X-Api-Key"))
	}

	// No key for Gemini anywhere: asked for, hidden, saved.
	s.typeLine("/model gemini/gemini-2.5-pro")
	s.waitFor("? API key for gemini ($GEMINI_API_KEY or $GOOGLE_API_KEY is not set")
	s.tmux("send-keys", "-t", s.name, "-l", "gm-typed-key")
	if strings.Contains(s.capture(), "gm-typed-key") {
		t.Error("the typed key is shown")
	}
	s.keys("Enter")
	s.waitFor("now uses gemini/gemini-2.5-pro", "(api_keys)).")
	s.typeLine("/model anthropic/claude-sonnet-4-5")
	s.waitFor("anthropic/claude-sonnet-4-5 · ")

	// /settings shows the file and changes it.
	s.typeLine("/settings")
	s.waitFor("Settings file: "+path, "api_keys  gemini", "Change one with /settings")
	s.typeLine("/settings confirm risky")
	s.waitFor("Saved confirm risky", "confirm risky · ")
	s.typeLine("/settings key")
	s.waitFor("? API key for anthropic/claude-sonnet-4-5")
	s.typeLine("sk-ant-in-file")
	s.waitFor("Saved the key in " + path)
	s.typeLine("/settings base_url -")
	s.waitFor("Saved base_url (none)")
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Fatalf("exit %s: %s", code, stderr)
	}
	var st settings
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.APIKeys["gemini"] != "gm-typed-key" || st.APIKey != "sk-ant-in-file" || st.Confirm != "risky" ||
		st.BaseURL != "" || st.Model != "anthropic/claude-sonnet-4-5" {
		t.Errorf("settings after the session:\n%s", data)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("settings file mode: %v %v", fi.Mode(), err)
	}
}

// TestTUINewAndCondense: /new starts a second conversation (the screen
// clears, both are stored); /condense summarises the history, and the
// next request carries the summary instead of the old messages.
func TestTUINewAndCondense(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{Text: "Answer one."},
		llmtest.Reply{Text: "Answer two."},
		llmtest.Reply{Text: "Answer three."},
		llmtest.Reply{Text: "Answer four."},
		llmtest.Reply{Text: "SUMMARY: the user asked four questions."},
		llmtest.Reply{Text: "Answer after the summary."},
		llmtest.Reply{Text: "A fresh start."},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "new", "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor("Ask gohands")
	for i, q := range []string{"question one", "question two", "question three", "question four"} {
		s.typeLine(q)
		s.waitFor("Answer " + []string{"one", "two", "three", "four"}[i] + ".")
		s.waitIdle()
	}
	s.typeLine("/condense")
	scr := s.waitFor("The history was condensed: ")
	t.Logf("condensed:\n%s", scr)
	s.typeLine("question five")
	s.waitFor("Answer after the summary.")
	s.waitIdle()
	body := string(e.srv.LastRequest().RawBody)
	if !strings.Contains(body, "SUMMARY: the user asked four questions.") {
		t.Errorf("the request after /condense lacks the summary:\n%s", body)
	}
	if strings.Contains(body, "question two") {
		t.Errorf("the request after /condense still has the condensed messages:\n%s", body)
	}

	s.typeLine("/new")
	s.waitFor("New conversation.")
	s.waitGone("question one")
	s.typeLine("a new topic")
	s.waitFor("A fresh start.")
	if body := string(e.srv.LastRequest().RawBody); strings.Contains(body, "question one") {
		t.Errorf("the new conversation's request carries the old one:\n%s", body)
	}
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Fatalf("exit %s: %s", code, stderr)
	}
	infos, err := listConversations(e.data, func(string, error) {})
	if err != nil || len(infos) != 2 {
		t.Fatalf("%d conversations stored (%v), want 2", len(infos), err)
	}
	first := map[string]bool{}
	for _, c := range infos {
		first[c.FirstMessage] = true
	}
	if !first["question one"] || !first["a new topic"] {
		t.Errorf("stored conversations %+v", infos)
	}
}

// TestTUICrashRestore: SIGTERM during a command leaves the terminal as
// it was (no alternate screen) and keeps the conversation; after a
// SIGKILL, which nothing can catch, gohands -c reopens the conversation
// (its lock died with the process) with its history, and it goes on.
func TestTUICrashRestore(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_a", "terminal", map[string]any{"command": "echo started-a; sleep 120"})}},
		llmtest.Reply{Text: "Back after the stop."},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_b", "terminal", map[string]any{"command": "echo started-b; sleep 120"})}},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "term", "--persistence-dir", e.data, "--llm-config", e.config, "--confirm", "never")
	s.waitFor("Ask gohands")
	s.typeLine("wait a while")
	s.waitFor("started-a")
	if !s.altScreen() {
		t.Fatal("the interface is not on the alternate screen")
	}
	if err := unix.Kill(s.pid(), unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, stderr := s.exited()
	if s.altScreen() {
		t.Errorf("after SIGTERM the terminal stays on the alternate screen:\n%s", s.capture())
	}
	if !strings.Contains(stderr, "continue it with: gohands -c") {
		t.Errorf("exit %s, stderr:\n%s", code, stderr)
	}

	s2 := startScreen(t, e, "term2", "-c", "--persistence-dir", e.data, "--llm-config", e.config, "--confirm", "never")
	s2.waitFor("wait a while", "$ echo started-a")
	s2.typeLine("are you there?")
	s2.waitFor("Back after the stop.")
	s2.typeLine("wait again")
	s2.waitFor("started-b")
	if err := unix.Kill(s2.pid(), unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s2.exited()

	e.srv.Add(llmtest.Reply{Text: "Still here after the crash."})
	s3 := startScreen(t, e, "term3", "-c", "--persistence-dir", e.data, "--llm-config", e.config, "--confirm", "never")
	scr := s3.waitFor("are you there?", "$ echo started-b")
	t.Logf("reopened after SIGKILL:\n%s", scr)
	s3.typeLine("hello again")
	s3.waitFor("Still here after the crash.")
	s3.typeLine("/exit")
	if code, stderr := s3.exited(); code != "0" {
		t.Fatalf("exit %s: %s", code, stderr)
	}
}

// TestLineModeHeldMessage: a message typed to a conversation whose
// action waits for an answer is not lost, nor does it approve the
// action: the question comes first, and the message is sent after the
// run the answer starts.
func TestLineModeHeldMessage(t *testing.T) {
	e := newE2E(t)
	marker := filepath.Join(e.work, "marker")
	e.srv.Add(touchReplies(marker)[0])
	e.mustRun(exitConfirmation, e.args("--confirm", "always", "touch the marker")...)

	e.srv.Add(finishReply("done"), llmtest.Reply{Text: "It marks the spot."})
	e.stdin = "what is the marker for?\ny\n/exit\n"
	p := e.start("--no-tui", "-r", e.id, "--persistence-dir", e.data, "--llm-config", e.config)
	r := p.wait(2 * time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	if !strings.Contains(r.stdout, "It marks the spot.") {
		t.Errorf("the held message was not answered:\n%s", r.stdout)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if strings.Contains(string(reqs[1].RawBody), "what is the marker for?") {
		t.Error("the message went out before the answer")
	}
	if !strings.Contains(string(reqs[2].RawBody), "what is the marker for?") {
		t.Error("the held message never reached the model")
	}
}
