package visualizer_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/terminal"

	"github.com/gohands/gohands/internal/golden"
)

// base returns a Base with a fixed id and time, so the output is stable.
func base(n int, src event.Source) event.Base {
	return event.Base{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), Timestamp: fmt.Sprintf("2026-01-02T03:04:%02d", n), Source: src}
}

func call(id, name, args string) event.ToolCall {
	return event.ToolCall{ID: id, Name: name, Arguments: args, Origin: event.OriginCompletion}
}

// script is a run of a conversation touching every event the transcript
// shows, plus some it skips.
func script() []event.Event {
	longOut := make([]string, 120)
	for i := range longOut {
		longOut[i] = fmt.Sprintf("line %d of the test output", i+1)
	}
	return []event.Event{
		&event.SystemPromptEvent{Base: base(1, event.SourceAgent), SystemPrompt: event.Text("You are a careful engineer.\nWork in small steps."),
			Tools: []event.ToolDefinition{{Title: "terminal", Kind: "TerminalTool"}, {Title: "file_editor", Kind: "FileEditorTool"}}},
		&event.MessageEvent{Base: base(2, event.SourceUser), LLMMessage: event.UserMessage("Fix the failing test in ./parser, please.")},
		&event.ConversationStateUpdateEvent{Base: base(3, event.SourceEnvironment), Key: "execution_status", Value: "running"},
		// Two parallel calls of one response: only the first shows this
		// request's tokens.
		&event.ActionEvent{Base: base(4, event.SourceAgent), Summary: "run the parser tests",
			ReasoningContent: "The user wants the tests green.",
			Thought:          event.List[event.Content]{event.Text("Let me run the tests first.")},
			Action:           &terminal.Action{Command: "go test ./parser/...", Timeout: new(float64(120))},
			ToolName:         "terminal", ToolCallID: "call_1", ToolCall: call("call_1", "terminal", `{"command":"go test ./parser/..."}`),
			LLMResponseID: "resp_1", SecurityRisk: event.RiskLow},
		&event.ActionEvent{Base: base(5, event.SourceAgent), Summary: "look at the parser",
			Action:   &fileeditor.Action{Command: "str_replace", Path: "/src/parser/parse.go", OldStr: new("if i < n {"), NewStr: new("if i <= n {\n\treturn nil\n}")},
			ToolName: "file_editor", ToolCallID: "call_2", ToolCall: call("call_2", "file_editor", `{}`),
			LLMResponseID: "resp_1", SecurityRisk: event.RiskUnknown},
		&event.ObservationEvent{Base: base(6, event.SourceEnvironment), ToolName: "terminal", ToolCallID: "call_1", ActionID: base(4, "").ID,
			Observation: &terminal.Observation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(strings.Join(longOut, "\n"))}},
				Command: new("go test ./parser/..."), ExitCode: new(1), Metadata: terminal.Metadata{ExitCode: 1, PID: -1, WorkingDir: new("/src")}}},
		&event.ObservationEvent{Base: base(7, event.SourceEnvironment), ToolName: "terminal", ToolCallID: "call_3", ActionID: "x",
			Observation: &terminal.Observation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("bash: gcc: command not found")}, IsError: true},
				Command: new("gcc"), ExitCode: new(127), Metadata: terminal.Metadata{ExitCode: 127, PID: -1}}},
		&event.ActionEvent{Base: base(8, event.SourceAgent), ToolName: "nosuchtool", ToolCallID: "call_4", ToolCall: call("call_4", "nosuchtool", `{"x": 1`), LLMResponseID: "resp_2"},
		&event.AgentErrorEvent{Base: base(9, event.SourceAgent), ToolName: "nosuchtool", ToolCallID: "call_4", Error: "Tool 'nosuchtool' not found. Available: terminal, file_editor"},
		&event.ActionEvent{Base: base(10, event.SourceAgent), Action: &terminal.Action{Command: "C-c", IsInput: true}, ToolName: "terminal", ToolCallID: "call_5",
			ToolCall: call("call_5", "terminal", `{}`), LLMResponseID: "resp_3", SecurityRisk: event.RiskHigh},
		&event.UserRejectObservation{Base: base(11, event.SourceUser), ToolName: "terminal", ToolCallID: "call_5", ActionID: base(10, "").ID, RejectionReason: "Not now."},
		&event.PauseEvent{Base: base(12, event.SourceUser)},
		&event.CondensationRequest{Base: base(13, event.SourceEnvironment)},
		&event.Condensation{Base: base(14, event.SourceEnvironment), ForgottenEventIDs: event.List[string]{"a", "b", "c"}, Summary: new("The tests fail on an off-by-one."), LLMResponseID: "resp_c"},
		&event.MessageEvent{Base: base(15, event.SourceEnvironment), LLMMessage: event.UserMessage("You have called the same tool 3 times.")},
		&event.MessageEvent{Base: base(16, event.SourceAgent), LLMMessage: event.Message{Role: "assistant", Content: event.List[event.Content]{event.Text("Fixed: the loop bound was off by one. **All tests pass.**")}}, LLMResponseID: "resp_4"},
		&event.ConversationErrorEvent{Base: base(17, event.SourceEnvironment), Code: "MaxIterationsReached", Detail: "The agent reached the limit of 500 iterations."},
		&event.InterruptEvent{Base: base(18, event.SourceUser)},
		&event.HookExecutionEvent{Base: base(19, event.SourceHook), HookEventType: event.HookPreToolUse, HookCommand: "./check.sh", Blocked: true, ExitCode: 2, Reason: "rm -rf is not allowed"},
		&event.StreamingDeltaEvent{Base: base(20, event.SourceAgent), Content: new("tok")},
	}
}

func stats() map[string]*llm.Metrics {
	agent := &llm.Metrics{ModelName: "gpt-5"}
	agent.AddTokenUsage(llm.TokenUsage{PromptTokens: 12_345, CompletionTokens: 420, CacheReadTokens: 2_000, ResponseID: "resp_1"})
	agent.AddTokenUsage(llm.TokenUsage{PromptTokens: 1_500_000, CompletionTokens: 999, ReasoningTokens: 64, ResponseID: "resp_4"})
	agent.AccumulatedCost = 0.12345
	cond := &llm.Metrics{ModelName: "gpt-5-mini"}
	cond.AddTokenUsage(llm.TokenUsage{PromptTokens: 800, CompletionTokens: 80, ResponseID: "resp_c"})
	return map[string]*llm.Metrics{"agent": agent, "condenser": cond}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func TestTranscriptGolden(t *testing.T) {
	for _, tc := range []struct {
		file  string
		color visualizer.ColorMode
	}{
		{"transcript.txt", visualizer.ColorNever},
		{"transcript.ansi", visualizer.ColorAlways},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var buf bytes.Buffer
			v := visualizer.New(&buf, &visualizer.Options{Color: tc.color, Stats: stats, MaxLines: 12})
			for _, e := range script() {
				v.OnEvent(e)
			}
			if err := v.Err(); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.file, buf.Bytes())
			hasEsc := bytes.Contains(buf.Bytes(), []byte("\x1b["))
			if hasEsc != (tc.color == visualizer.ColorAlways) {
				t.Errorf("colour codes present = %v", hasEsc)
			}
		})
	}
}

func TestTranscriptContent(t *testing.T) {
	var buf bytes.Buffer
	v := visualizer.New(&buf, &visualizer.Options{Color: visualizer.ColorNever, Stats: stats, MaxLines: 12})
	for _, e := range script() {
		v.OnEvent(e)
	}
	out := buf.String()
	for _, want := range []string{
		"── Agent Action ──",
		"$ go test ./parser/... [timeout: 120s]",
		"$ C-c (input to running process)",
		"Predicted security risk: HIGH",
		"── Agent Action (Not Executed) ──",
		"- nosuchtool (call_4)",
		`{"x": 1`,
		"Tokens: ↑ input 12.35K (total 1.51M) • cache hit 16.20% (total 0.13%) • reasoning 0 (total 64) • ↓ output 420 (total 1.5K) • $ (total 0.1235)",
		"Tokens: ↑ input (total 1.51M)",
		"line 1 of the test output",
		"line 120 of the test output",
		"lines not shown",
		"[Command finished with exit code 1]",
		"── Conversation Error ──",
		"MaxIterationsReached: The agent reached the limit of 500 iterations.",
		"── User Rejected Action ──",
		"── Hook ──",
		"old_str: if i < n {",
		"new_str:\n    if i <= n {\n    \treturn nil\n    }",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	for _, not := range []string{"line 60 of the test output", "execution_status", "Conversation State Update", "tok\n"} {
		if strings.Contains(out, not) {
			t.Errorf("transcript shows %q", not)
		}
	}
	// The second action of the parallel batch shows totals only.
	second := out[strings.Index(out, "look at the parser"):]
	second = second[:strings.Index(second, "── Observation")]
	if !strings.Contains(second, "Tokens: ↑ input (total") {
		t.Errorf("second action of the batch:\n%s", second)
	}
}

func TestSkipUserMessages(t *testing.T) {
	var buf bytes.Buffer
	v := visualizer.New(&buf, &visualizer.Options{SkipUserMessages: true})
	v.OnEvent(&event.MessageEvent{Base: base(1, event.SourceUser), LLMMessage: event.UserMessage("hidden")})
	v.OnEvent(&event.MessageEvent{Base: base(2, event.SourceAgent), LLMMessage: event.Message{Role: "assistant", Content: event.List[event.Content]{event.Text("shown")}}})
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
		t.Errorf("output:\n%s", out)
	}
	// No stats: no token line.
	if strings.Contains(buf.String(), "Tokens:") {
		t.Error("token line without stats")
	}
}

func TestColorAuto(t *testing.T) {
	if v := visualizer.New(&bytes.Buffer{}, nil); v.Colored() {
		t.Error("colour on a buffer")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	if v := visualizer.New(devnull, nil); v.Colored() {
		t.Error("colour on /dev/null")
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no pty: %v", err)
		}
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	t.Setenv("NO_COLOR", "")
	if v := visualizer.New(tty, nil); !v.Colored() {
		t.Error("no colour on a terminal")
	}
	t.Setenv("NO_COLOR", "1")
	if v := visualizer.New(tty, nil); v.Colored() {
		t.Error("colour on a terminal with NO_COLOR set")
	}
	if v := visualizer.New(tty, &visualizer.Options{Color: visualizer.ColorAlways}); !v.Colored() {
		t.Error("ColorAlways ignored")
	}
	// Rules span the terminal.
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 50}); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		n, _ := ptmx.Read(buf)
		lines <- strings.SplitN(string(buf[:n]), "\n", 2)[0]
	}()
	visualizer.New(tty, nil).OnEvent(&event.PauseEvent{Base: base(1, event.SourceUser)})
	var rule string
	select {
	case rule = <-lines:
	case <-time.After(5 * time.Second):
		t.Fatal("nothing read from the terminal")
	}
	if n := utf8.RuneCountInString(strings.TrimRight(rule, "\r")); n != 50 {
		t.Errorf("rule of %d columns on a 50-column terminal: %q", n, rule)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestWriteErrorStops(t *testing.T) {
	w := &failWriter{}
	v := visualizer.New(w, nil)
	v.OnEvent(&event.PauseEvent{Base: base(1, event.SourceUser)})
	v.OnEvent(&event.PauseEvent{Base: base(2, event.SourceUser)})
	if v.Err() == nil || w.n != 1 {
		t.Errorf("err = %v, writes = %d", v.Err(), w.n)
	}
}

func TestJSONLGolden(t *testing.T) {
	var buf bytes.Buffer
	j := visualizer.NewJSONL(&buf)
	evs := script()
	for _, e := range evs {
		j.OnEvent(e)
	}
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "events.jsonl", buf.Bytes())
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(evs) {
		t.Fatalf("%d lines for %d events", len(lines), len(evs))
	}
	for i, line := range lines {
		want, err := event.Marshal(evs[i])
		if err != nil {
			t.Fatal(err)
		}
		if line != string(want) {
			t.Errorf("line %d is not the event as persisted:\n got %s\nwant %s", i, line, want)
		}
		back, err := event.Unmarshal([]byte(line))
		if err != nil {
			t.Errorf("line %d does not decode: %v", i, err)
		} else if back.EventBase().ID != evs[i].EventBase().ID {
			t.Errorf("line %d decodes to %s", i, back.EventBase().ID)
		}
	}
}

func TestConcurrentEvents(t *testing.T) {
	var buf bytes.Buffer
	v := visualizer.New(&buf, &visualizer.Options{Stats: stats})
	j := visualizer.NewJSONL(&bytes.Buffer{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, e := range script() {
				v.OnEvent(e)
				j.OnEvent(e)
			}
		})
	}
	wg.Wait()
	if got := strings.Count(buf.String(), "── User Paused"); got != 4 {
		t.Errorf("%d pause blocks, want 4", got)
	}
}

func BenchmarkTranscript(b *testing.B) {
	evs := script()
	v := visualizer.New(discard{}, &visualizer.Options{Color: visualizer.ColorAlways, Stats: stats})
	for b.Loop() {
		for _, e := range evs {
			v.OnEvent(e)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// A Visualizer is an event callback. Here it prints a terminal command
// the agent ran, without colour.
func Example() {
	v := visualizer.New(os.Stdout, &visualizer.Options{Color: visualizer.ColorNever, Width: 40})
	v.OnEvent(&event.ActionEvent{
		Base:     event.NewBase(event.SourceAgent),
		Summary:  "list the files",
		Action:   &terminal.Action{Command: "ls -la"},
		ToolName: "terminal",
	})
	// Output:
	// ── Agent Action ────────────────────────
	//
	// Summary: list the files
	//
	// $ ls -la
	//
}

// JSONL writes every event on one line, as it is stored: what
// `gohands run --json` prints.
func ExampleJSONL() {
	j := visualizer.NewJSONL(os.Stdout)
	j.OnEvent(&event.PauseEvent{Base: base(1, event.SourceUser)})
	// Output:
	// {"id":"00000000-0000-4000-8000-000000000001","timestamp":"2026-01-02T03:04:01","source":"user","kind":"PauseEvent"}
}

// Escape sequences the model writes never reach the terminal: they could
// clear the screen, retitle the window or write the clipboard.
func TestControlSequencesStripped(t *testing.T) {
	var b strings.Builder
	v := visualizer.New(&b, &visualizer.Options{Color: visualizer.ColorAlways})
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("done\x1b[2J\x1b]52;c;ZXZpbA==\x07 ok\rX")}}
	v.OnEvent(&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: msg})
	out := b.String()
	for _, bad := range []string{"\x1b[2J", "\x1b]52", "\x07", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("output keeps %q: %q", bad, out)
		}
	}
	if !strings.Contains(out, "done ok\nX") {
		t.Errorf("text lost: %q", out)
	}
}

// A security analysis shows each action's rating and why it waits.
func TestSecurityAnalysisShown(t *testing.T) {
	var buf bytes.Buffer
	v := visualizer.New(&buf, &visualizer.Options{Color: visualizer.ColorNever})
	v.OnEvent(&event.SecurityAnalysisEvent{
		Base: event.NewBase(event.SourceEnvironment), Analyzer: "LLMSecurityAnalyzer", Policy: "ConfirmRisky",
		Risks:   event.ActionRisks{{ActionID: "a1b2c3d4-0000", Risk: event.RiskHigh}, {ActionID: "e5f6", Risk: event.RiskLow}},
		Details: event.ActionDetails{{ActionID: "a1b2c3d4-0000", Detail: []byte(`{"error":"timeout"}`)}},
	})
	out := buf.String()
	for _, want := range []string{"── Security Analysis ──", "LLMSecurityAnalyzer (policy ConfirmRisky)", "a1b2c3d4: HIGH, e5f6: LOW", "failed (timeout)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
