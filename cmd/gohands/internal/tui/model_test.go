package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gohands/gohands/agent/finish"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/tasktracker"
	"github.com/gohands/gohands/tools/terminal"

	"github.com/gohands/gohands/internal/golden"
)

// fake is a Backend that records calls and answers from its fields.
type fake struct {
	mu      sync.Mutex
	sent    []string
	answers []Answer
	paused  int
	cmds    []string
	outcome Outcome
	list    []Summary
	setup   []string
	next    []Outcome // Send's outcomes before outcome
	cmdErr  error     // what Command returns as its error
}

func (f *fake) Send(_ context.Context, text string) Outcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, text)
	if len(f.next) > 0 {
		o := f.next[0]
		f.next = f.next[1:]
		return o
	}
	return f.outcome
}

func (f *fake) Answer(_ context.Context, a Answer) Outcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, a)
	return Outcome{Status: "finished"}
}

func (f *fake) Pause() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused++
}

func (f *fake) New() error                        { return nil }
func (f *fake) Conversations() ([]Summary, error) { return f.list, nil }
func (f *fake) Resume(id string) ([]event.Event, error) {
	return []event.Event{userMsg("an earlier task"), agentMsg("Done earlier.")}, nil
}

func (f *fake) Command(_ context.Context, name, arg string) (string, error) {
	f.cmds = append(f.cmds, name+" "+arg)
	if f.cmdErr != nil {
		return "", f.cmdErr
	}
	return "output of /" + name, nil
}

func (f *fake) Stats() Stats {
	return Stats{Model: "openai/gpt-4o", ConversationID: "4171115a-0000-4000-8000-000000000000",
		Confirm: "always", Tokens: 12345, Cost: 0.0123, Context: 0.07}
}

func (f *fake) Setup(model, key, baseURL string) error {
	f.setup = []string{model, key, baseURL}
	return nil
}

var epoch = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// newModel returns a Model at 80x24 whose clock reads epoch+12s.
func newModel(t *testing.T, b Backend, opts *Options) *Model {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	now := epoch
	opts.Now = func() time.Time { n := now; now = now.Add(12 * time.Second); return n }
	m := New(b, opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return m
}

// do runs cmd as the program would, one level deep, feeding the messages
// back; spinner ticks are dropped (they would sleep).
func do(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			do(m, c)
		}
		return
	}
	switch msg.(type) {
	case spinner.TickMsg, nil:
		return
	}
	_, next := m.Update(msg)
	if _, quit := msg.(tea.QuitMsg); !quit {
		do(m, next)
	}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func press(m *Model, code rune, mod tea.KeyMod) tea.Cmd {
	_, cmd := m.Update(tea.KeyPressMsg{Code: code, Mod: mod})
	return cmd
}

// checkGolden compares the plain screen with testdata/name.golden.
func checkGolden(t *testing.T, m *Model, name string) {
	t.Helper()
	got := plain(m.Render())
	golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

func plain(s string) string {
	lines := strings.Split(ansi.Strip(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func userMsg(s string) *event.MessageEvent {
	return &event.MessageEvent{Base: event.Base{Source: event.SourceUser}, LLMMessage: event.UserMessage(s)}
}

func agentMsg(s string) *event.MessageEvent {
	return &event.MessageEvent{Base: event.Base{Source: event.SourceAgent},
		LLMMessage: event.Message{Role: "assistant", Content: event.List[event.Content]{event.Text(s)}}}
}

func delta(s string) *event.StreamingDeltaEvent { return &event.StreamingDeltaEvent{Content: &s} }

// action is a call of the tool named tool, its action decoded from args
// as the agent does (a tool this test does not know has none).
func action(tool, id, args string) *event.ActionEvent {
	e := &event.ActionEvent{Base: event.Base{Source: event.SourceAgent}, ToolName: tool, ToolCallID: id,
		ToolCall: event.ToolCall{ID: id, Name: tool, Arguments: args}}
	var a any
	switch tool {
	case terminal.Name:
		a = new(terminal.Action)
	case fileeditor.Name:
		a = new(fileeditor.Action)
	case tasktracker.Name:
		a = new(tasktracker.Action)
	case finish.Name:
		a = new(finish.Action)
	}
	if a != nil {
		if err := json.Unmarshal([]byte(args), a); err != nil {
			panic(err)
		}
		e.Action = a
	}
	return e
}

func observation(tool, id string, o event.Observation) *event.ObservationEvent {
	return &event.ObservationEvent{Base: event.Base{Source: event.SourceEnvironment}, ToolName: tool,
		ToolCallID: id, Observation: o}
}

// TestStreamingAndLiveOutput: the agent's text appears delta by delta,
// a command's output while it runs, with the spinner and elapsed time.
func TestStreamingAndLiveOutput(t *testing.T) {
	f := &fake{outcome: Outcome{Status: "finished"}}
	m := newModel(t, f, nil)
	typeText(m, "count to three")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if !m.running {
		t.Fatal("not running after Enter")
	}
	m.Update(EventMsg{userMsg("count to three")})
	m.Update(EventMsg{delta("I will count ")})
	m.Update(EventMsg{delta("with a loop.")})
	m.Update(EventMsg{action(terminal.Name, "c1", `{"command":"for i in 1 2 3; do echo $i; sleep 1; done"}`)})
	m.Update(OutputMsg{"1\n2\n"})
	checkGolden(t, m, "running")

	m.Update(OutputMsg{"3\n"})
	m.Update(EventMsg{observation(terminal.Name, "c1", &terminal.Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("1\n2\n3\n")}},
		ExitCode:        new(0)})})
	m.Update(EventMsg{delta("Counted to **three**.")})
	m.Update(EventMsg{agentMsg("Counted to **three**.")})
	do(m, cmd) // the run ends
	if len(f.sent) != 1 || f.sent[0] != "count to three" {
		t.Fatalf("sent %q", f.sent)
	}
	if m.running {
		t.Fatal("still running after the outcome")
	}
	checkGolden(t, m, "finished")
}

// TestConfirmPanel: a run waiting for confirmation shows the panel; each
// key gives its answer.
func TestConfirmPanel(t *testing.T) {
	for key, want := range map[rune]Answer{'y': AnswerYes, 'n': AnswerNo, 'a': AnswerAlways, 'r': AnswerAuto} {
		f := &fake{outcome: Outcome{Status: "waiting_for_confirmation", Pending: []Pending{
			{Tool: "terminal", Risk: "HIGH", Line: "rm -rf build"}}}}
		m := newModel(t, f, &Options{Task: "clean up"})
		do(m, m.Init())
		m.Update(EventMsg{userMsg("clean up")})
		m.Update(EventMsg{action(terminal.Name, "c1", `{"command":"rm -rf build"}`)})
		if m.mode != modeConfirm {
			t.Fatalf("mode %v, want the confirmation panel", m.mode)
		}
		if key == 'y' {
			checkGolden(t, m, "confirm")
		}
		do(m, press(m, key, 0))
		if len(f.answers) != 1 || f.answers[0] != want {
			t.Errorf("key %c: answers %v, want %v", key, f.answers, want)
		}
		if m.mode != modePrompt {
			t.Errorf("key %c: panel still open", key)
		}
	}
}

// TestDiffAndTasks: a file edit shows as a coloured diff, a task list
// with its marks; ctrl+o expands a long output.
func TestDiffAndTasks(t *testing.T) {
	m := newModel(t, &fake{}, nil)
	m.Update(EventMsg{userMsg("rename the greeting")})
	m.Update(EventMsg{action(fileeditor.Name, "e1", `{"command":"str_replace","path":"/w/main.go"}`)})
	old := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"
	m.Update(EventMsg{observation(fileeditor.Name, "e1", &fileeditor.Observation{
		Command: "str_replace", Path: new("/w/main.go"), PrevExist: true,
		OldContent: &old, NewContent: new(strings.Replace(old, "hello", "hi there", 1))})})
	m.Update(EventMsg{action(tasktracker.Name, "t1", `{"command":"plan","task_list":[]}`)})
	m.Update(EventMsg{observation(tasktracker.Name, "t1", &tasktracker.Observation{Command: "plan",
		TaskList: event.List[tasktracker.TaskItem]{
			{Title: "rename", Status: "done"}, {Title: "run the tests", Status: "in_progress"}, {Title: "commit", Status: "todo"}}})})
	m.Update(EventMsg{action(terminal.Name, "c2", `{"command":"seq 20"}`)})
	var out strings.Builder
	for i := 1; i <= 20; i++ {
		out.WriteString(strings.Repeat("x", i%3) + "line\n")
	}
	m.Update(EventMsg{observation(terminal.Name, "c2", &terminal.Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(out.String())}},
		ExitCode:        new(1)})})
	checkGolden(t, m, "diff-tasks")
	if s := m.Render(); !strings.Contains(s, "\x1b[31m-    fmt.Println(\"hello\")") ||
		!strings.Contains(s, "\x1b[32m+    fmt.Println(\"hi there\")") {
		t.Errorf("the diff is not coloured red and green:\n%q", s)
	}
	before := len(strings.Split(plain(m.Render()), "\n"))
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
	tall := plain(m.Render())
	press(m, 'o', tea.ModCtrl)
	if got := plain(m.Render()); strings.Count(got, "line\n") != 20 || strings.Count(tall, "line\n") != collapsedLines {
		t.Errorf("ctrl+o did not expand the last action (%d lines before):\n%s", before, got)
	}
}

// TestSlashCommands: /help lists the commands, the backend's commands
// are called, /resume opens the picker and resumes the choice.
func TestSlashCommands(t *testing.T) {
	f := &fake{list: []Summary{
		{ID: "aaaaaaaa-1", Status: "finished", Updated: "11-23 10:00", Title: "fix the tests"},
		{ID: "bbbbbbbb-2", Status: "paused", Updated: "11-22 09:00", Title: "write docs"}}}
	m := newModel(t, f, nil)
	for _, c := range []string{"/help", "/cost", "/confirm risky", "/nope"} {
		typeText(m, c)
		do(m, press(m, tea.KeyEnter, 0))
	}
	checkGolden(t, m, "help")
	if strings.Join(f.cmds, ",") != "cost ,confirm risky" {
		t.Errorf("backend commands %q", f.cmds)
	}
	typeText(m, "/resume")
	do(m, press(m, tea.KeyEnter, 0))
	if m.mode != modePick {
		t.Fatal("/resume did not open the picker")
	}
	press(m, tea.KeyDown, 0)
	checkGolden(t, m, "picker")
	do(m, press(m, tea.KeyEnter, 0))
	if got := plain(m.Render()); !strings.Contains(got, "Resumed conversation bbbbbbbb-2") ||
		!strings.Contains(got, "an earlier task") {
		t.Errorf("after the pick:\n%s", got)
	}
	typeText(m, "/exit")
	if cmd := press(m, tea.KeyEnter, 0); cmd == nil || !m.Quitting() {
		t.Error("/exit does not quit")
	}
}

// TestCtrlC: Ctrl-C pauses a run; at the prompt, the second one exits.
func TestCtrlC(t *testing.T) {
	f := &fake{outcome: Outcome{Status: "paused"}}
	m := newModel(t, f, nil)
	typeText(m, "work")
	_, run := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd := press(m, 'c', tea.ModCtrl); cmd != nil {
		t.Fatal("Ctrl-C during a run quits")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		n := f.paused
		f.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Ctrl-C during a run did not pause it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	do(m, run)
	if !strings.Contains(plain(m.Render()), "Paused.") {
		t.Error("no paused notice")
	}
	typeText(m, "half typed")
	press(m, 'c', tea.ModCtrl)
	if m.input.Value() != "" || m.Quitting() {
		t.Fatal("Ctrl-C with text should clear the prompt only")
	}
	if press(m, 'c', tea.ModCtrl); m.Quitting() {
		t.Fatal("the first Ctrl-C at the prompt exits")
	}
	if !strings.Contains(plain(m.Render()), "Press Ctrl-C again to exit.") {
		t.Error("no hint after the first Ctrl-C")
	}
	if cmd := press(m, 'c', tea.ModCtrl); cmd == nil || !m.Quitting() {
		t.Error("the second Ctrl-C at the prompt does not exit")
	}
}

// TestSetup: the first run asks for a model, a key (hidden) and a base
// URL, then sends the task.
func TestSetup(t *testing.T) {
	f := &fake{outcome: Outcome{Status: "finished"}}
	m := newModel(t, f, &Options{Setup: true, Task: "hello"})
	if cmd := m.Init(); cmd != nil {
		t.Fatal("the task was sent before the setup")
	}
	typeText(m, "openai/gpt-4o")
	press(m, tea.KeyEnter, 0)
	typeText(m, "sk-secret")
	checkGolden(t, m, "setup")
	if strings.Contains(m.Render(), "sk-secret") {
		t.Error("the key is shown")
	}
	press(m, tea.KeyEnter, 0)
	do(m, press(m, tea.KeyEnter, 0))
	if strings.Join(f.setup, "|") != "openai/gpt-4o|sk-secret|" {
		t.Errorf("setup %q", f.setup)
	}
	if len(f.sent) != 1 || f.sent[0] != "hello" {
		t.Errorf("sent %q after the setup", f.sent)
	}
}

// TestControlSequencesStripped: what the model writes cannot drive the
// terminal.
func TestControlSequencesStripped(t *testing.T) {
	m := newModel(t, &fake{}, nil)
	m.Update(EventMsg{delta("safe\x1b]0;pwned\x07 text\x1b[2J")})
	m.Update(EventMsg{action(terminal.Name, "c1", `{"command":"echo \u001b[31mred"}`)})
	m.Update(OutputMsg{"\x1b[?1049lout\n"})
	s := m.Render()
	for _, bad := range []string{"\x1b]0;", "\x1b[2J", "\x1b[?1049l"} {
		if strings.Contains(s, bad) {
			t.Errorf("screen holds %q", bad)
		}
	}
}

// TestTypeWhileConfirming: with the panel shown, a key that is not one
// of the panel's starts a message; Enter queues it, the panel's keys
// then type text, and the message is sent once the answer's run ends.
func TestTypeWhileConfirming(t *testing.T) {
	f := &fake{next: []Outcome{{Status: "waiting_for_confirmation",
		Pending: []Pending{{Tool: "terminal", Risk: "LOW", Line: "ls"}}}}, outcome: Outcome{Status: "finished"}}
	m := newModel(t, f, nil)
	typeText(m, "list files")
	do(m, press(m, tea.KeyEnter, 0))
	if m.mode != modeConfirm {
		t.Fatalf("mode %v, want the panel", m.mode)
	}
	typeText(m, "then say bye") // 'y' and 'a' inside are text now
	do(m, press(m, tea.KeyEnter, 0))
	if len(f.answers) != 0 || m.mode != modeConfirm {
		t.Fatalf("typing answered the panel: %v", f.answers)
	}
	if scr := plain(m.Render()); !strings.Contains(scr, "⏵ queued: then say bye") {
		t.Errorf("the queued message is not shown:\n%s", scr)
	}
	do(m, press(m, 'y', 0))
	if len(f.answers) != 1 || f.answers[0] != AnswerYes {
		t.Fatalf("answers %v", f.answers)
	}
	if len(f.sent) != 2 || f.sent[1] != "then say bye" {
		t.Errorf("sent %q, want the queued message after the answer", f.sent)
	}
	if strings.Contains(plain(m.Render()), "queued") {
		t.Error("the queue is still shown")
	}
}

// TestQueueWhileRunning: messages typed while the agent works are sent
// together when it stops; after a failed run they return to the prompt.
func TestQueueWhileRunning(t *testing.T) {
	f := &fake{outcome: Outcome{Status: "finished"}}
	m := newModel(t, f, nil)
	typeText(m, "first")
	run := press(m, tea.KeyEnter, 0)
	for _, s := range []string{"second", "third"} {
		typeText(m, s)
		if cmd := press(m, tea.KeyEnter, 0); cmd != nil {
			t.Fatalf("Enter while running started something")
		}
	}
	checkGolden(t, m, "queued")
	do(m, run)
	if len(f.sent) != 2 || f.sent[1] != "second\n\nthird" {
		t.Errorf("sent %q", f.sent)
	}

	f.next = []Outcome{{Status: "error", Err: errors.New("model down")}}
	typeText(m, "fourth")
	run = press(m, tea.KeyEnter, 0)
	typeText(m, "fifth")
	press(m, tea.KeyEnter, 0)
	do(m, run)
	if got := m.input.Value(); got != "fifth" {
		t.Errorf("after the error the prompt holds %q, want the queued message", got)
	}
	if len(f.sent) != 3 {
		t.Errorf("sent %q: the queued message went out after an error", f.sent)
	}
}

// TestNotSentIsKept: a message sent while actions wait is held by the
// backend (NotSent): the panel shows and the message goes after it.
func TestNotSentIsKept(t *testing.T) {
	f := &fake{next: []Outcome{{Status: "waiting_for_confirmation", NotSent: true,
		Pending: []Pending{{Tool: "terminal", Risk: "HIGH", Line: "rm -rf build"}}}}, outcome: Outcome{Status: "finished"}}
	m := newModel(t, f, nil)
	typeText(m, "what now?")
	do(m, press(m, tea.KeyEnter, 0))
	if m.mode != modeConfirm {
		t.Fatalf("mode %v", m.mode)
	}
	do(m, press(m, 'n', 0))
	if len(f.sent) != 2 || f.sent[1] != "what now?" {
		t.Errorf("sent %q, want the message again after the answer", f.sent)
	}
}

// TestQuestion: a command that needs an answer asks at the prompt (a
// secret hidden), passes the answer on and shows the result; Esc
// cancels.
func TestQuestion(t *testing.T) {
	var got string
	f := &fake{cmdErr: &Question{Prompt: "API key for anthropic:", Secret: true,
		Answer: func(_ context.Context, s string) (string, error) { got = s; return "Switched.", nil }}}
	m := newModel(t, f, nil)
	typeText(m, "/model anthropic/claude-sonnet-4-5")
	do(m, press(m, tea.KeyEnter, 0))
	if m.mode != modeAsk {
		t.Fatalf("mode %v, want a question", m.mode)
	}
	typeText(m, "sk-ant-secret")
	scr := plain(m.Render())
	if !strings.Contains(scr, "? API key for anthropic:") || strings.Contains(scr, "sk-ant-secret") {
		t.Errorf("the question or a hidden key:\n%s", scr)
	}
	do(m, press(m, tea.KeyEnter, 0))
	if got != "sk-ant-secret" || !strings.Contains(plain(m.Render()), "Switched.") {
		t.Errorf("answer %q; screen:\n%s", got, plain(m.Render()))
	}
	if m.mode != modePrompt || m.input.EchoMode != 0 {
		t.Errorf("mode %v echo %v after the answer", m.mode, m.input.EchoMode)
	}

	got = ""
	typeText(m, "/model anthropic/claude-sonnet-4-5")
	do(m, press(m, tea.KeyEnter, 0))
	typeText(m, "half")
	do(m, press(m, tea.KeyEscape, 0))
	if got != "" || m.mode != modePrompt || !strings.Contains(plain(m.Render()), "Cancelled.") {
		t.Errorf("Esc did not cancel: answer %q, mode %v", got, m.mode)
	}
}

// TestMarkdownCached: a finished message is rendered as markdown once per
// width, not at every redraw.
func TestMarkdownCached(t *testing.T) {
	calls := 0
	md := func(s string, w int) string { calls++; return "MD:" + s }
	m := newModel(t, &fake{}, &Options{Markdown: md})
	m.Update(EventMsg{agentMsg("**done**")})
	for range 3 {
		m.Render()
	}
	if calls != 1 || !strings.Contains(m.Render(), "MD:**done**") {
		t.Errorf("%d markdown renders for 4 redraws", calls)
	}
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 24})
	m.Render()
	if calls != 2 {
		t.Errorf("%d renders after a resize, want 2", calls)
	}
}

// A command that must wait for the run (/condense, /model, /new, /resume)
// typed while the agent works stays in the prompt, with a notice, for
// Enter once the run is over; it is neither run nor lost.
func TestBusyCommandKept(t *testing.T) {
	f := &fake{outcome: Outcome{Status: "finished"}}
	m := newModel(t, f, nil)
	typeText(m, "work")
	press(m, tea.KeyEnter, 0)
	typeText(m, "/condense")
	if cmd := press(m, tea.KeyEnter, 0); cmd != nil {
		t.Fatalf("/condense while running started something")
	}
	if got := m.input.Value(); got != "/condense" {
		t.Errorf("the prompt holds %q, want /condense kept", got)
	}
	if !strings.Contains(m.notice, "once the agent stops") {
		t.Errorf("notice %q", m.notice)
	}
}

// TestConfirmPanelPreview: the panel shows an edit's diff before the
// choice and what "always" covers; a preview too long for the screen is
// cut, and "d" puts it whole in the conversation without answering.
func TestConfirmPanelPreview(t *testing.T) {
	var detail []string
	detail = append(detail, "@@ -0,0 +1,40 @@")
	for i := 1; i <= 40; i++ {
		detail = append(detail, fmt.Sprintf("+line %d", i))
	}
	f := &fake{outcome: Outcome{Status: "waiting_for_confirmation", Always: "file_editor actions", Pending: []Pending{
		{Tool: "file_editor", Risk: "LOW", Line: "create /w/new.txt", Detail: detail}}}}
	m := newModel(t, f, &Options{Task: "write it"})
	do(m, m.Init())
	m.Update(EventMsg{userMsg("write it")})
	if m.mode != modeConfirm {
		t.Fatalf("mode %v, want the confirmation panel", m.mode)
	}
	checkGolden(t, m, "confirm-preview")
	s := m.Render()
	if !strings.Contains(s, "+line 1") || strings.Contains(s, "+line 40") || !strings.Contains(s, "(d shows all)") {
		t.Errorf("the preview is not cut with a way to see it all:\n%s", s)
	}
	do(m, press(m, 'd', 0))
	if len(f.answers) != 0 || m.mode != modeConfirm {
		t.Fatalf("d answered %v (mode %v); want the panel to stay", f.answers, m.mode)
	}
	if s := m.Render(); !strings.Contains(s, "+line 40") {
		t.Errorf("d did not show the whole preview:\n%s", s)
	}
}

// TestPresentation: an action is titled by its tool's presentation
// (tool.PresentAction), or generically (the tool's name and arguments)
// when the tool gives none; a finish shows as the agent's words.
func TestPresentation(t *testing.T) {
	m := newModel(t, &fake{}, nil)
	m.Update(EventMsg{action(terminal.Name, "c1", `{"command":"go test ./...\ngo vet ./...","timeout":30}`)})
	m.Update(EventMsg{action("lookup", "l1", `{"q":"weather"}`)})
	m.Update(EventMsg{action(finish.Name, "f1", `{"message":"All done: the tests pass."}`)})
	screen := plain(m.Render())
	for _, want := range []string{"$ go test ./... …", `lookup {"q":"weather"}`, "All done: the tests pass."} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "finish") || strings.Contains(screen, `"message"`) {
		t.Errorf("the finish shows as an action:\n%s", screen)
	}
}

// TestMultiLinePrompt: Ctrl-J and Alt-Enter break the line, a paste keeps
// its newlines and does not send, Backspace at a line's start joins it to
// the one above, and Enter sends every line as one message.
func TestMultiLinePrompt(t *testing.T) {
	f := &fake{outcome: Outcome{Status: "finished"}}
	m := newModel(t, f, nil)
	typeText(m, "fix this:")
	press(m, 'j', tea.ModCtrl)
	m.Update(tea.PasteMsg{Content: "Traceback (most recent call last):\r\n  File \"calc.py\", line 3\nZeroDivisionError\n"})
	if len(f.sent) != 0 || m.running {
		t.Fatalf("the paste sent %q", f.sent)
	}
	typeText(m, "please")
	press(m, tea.KeyEnter, tea.ModAlt)
	typeText(m, "thanks")
	// Backspace at the start of "thanks" joins it to "please".
	for range len("thanks") {
		press(m, tea.KeyLeft, 0)
	}
	press(m, tea.KeyBackspace, 0)
	screen := plain(m.Render())
	for _, want := range []string{"› fix this:", `  File "calc.py", line 3`, "  ZeroDivisionError", "  pleasethanks"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, screen)
		}
	}
	do(m, press(m, tea.KeyEnter, 0))
	want := "fix this:\nTraceback (most recent call last):\n  File \"calc.py\", line 3\nZeroDivisionError\npleasethanks"
	if len(f.sent) != 1 || f.sent[0] != want {
		t.Fatalf("sent %q, want %q", f.sent, want)
	}
	if m.draft() != "" {
		t.Errorf("the prompt keeps %q after sending", m.draft())
	}
}

// TestEscInterrupts: Esc while the agent works pauses it, as Ctrl-C does;
// at the prompt it does nothing.
func TestEscInterrupts(t *testing.T) {
	f := &fake{outcome: Outcome{Status: "paused"}}
	m := newModel(t, f, nil)
	press(m, tea.KeyEscape, 0)
	if m.quit || f.pauses() != 0 {
		t.Fatalf("Esc at the prompt: quit %v, %d pauses", m.quit, f.pauses())
	}
	typeText(m, "long task")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	press(m, tea.KeyEscape, 0)
	if !strings.Contains(plain(m.Render()), "Interrupting…") {
		t.Errorf("no notice:\n%s", plain(m.Render()))
	}
	do(m, cmd)
	deadline := time.Now().Add(10 * time.Second)
	for f.pauses() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f.pauses() != 1 {
		t.Fatalf("%d pauses after Esc, want 1", f.pauses())
	}
}

func (f *fake) pauses() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paused
}
