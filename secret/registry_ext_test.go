package secret_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tools/terminal"
)

func TestMaskEvent(t *testing.T) {
	m := secret.NewManager(secret.Registry{}, nil)
	m.SetValue("TOKEN", `tok"en\value`) // needs escaping in JSON
	m.SetValue("PW", "hunter2")
	ctx := context.Background()

	out := &terminal.Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("login with hunter2 ok")}},
		Command:         new("echo $PW"),
		Metadata:        terminal.Metadata{ExitCode: 0, PID: -1, WorkingDir: new("/home/hunter2")},
	}
	obs := &event.ObservationEvent{Base: event.NewBase(event.SourceEnvironment), ToolName: "terminal", ToolCallID: "c1", ActionID: "a1", Observation: out}
	hook := &event.HookExecutionEvent{Base: event.NewBase(event.SourceHook), HookEventType: event.HookPreToolUse, HookCommand: "./h",
		Stdout: `got tok"en\value`, HookInput: json.RawMessage(`{"env":{"X":"hunter2"},"n":1}`)}
	update := &event.ConversationStateUpdateEvent{Base: event.NewBase(event.SourceEnvironment), Key: "agent_state", Value: map[string]any{"note": "pw hunter2"}}
	msg := &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage("nothing secret here")}

	for _, e := range []event.Event{obs, hook, update} {
		before, _ := event.Marshal(e)
		got, err := m.MaskEvent(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		b, err := event.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), `tok\"en\\value`) {
			t.Errorf("secret left in %s", b)
		}
		if !strings.Contains(string(b), secret.Hidden) {
			t.Errorf("nothing masked in %s", b)
		}
		if after, _ := event.Marshal(e); string(after) != string(before) {
			t.Errorf("the original event was modified")
		}
	}
	got, _ := m.MaskEvent(ctx, obs)
	o := got.(*event.ObservationEvent).Observation.(*terminal.Observation)
	if o.Text() != "login with "+secret.Hidden+" ok" || *o.Command != "echo $PW" || *o.Metadata.WorkingDir != "/home/"+secret.Hidden {
		t.Errorf("masked observation: %q %q %q", o.Text(), *o.Command, *o.Metadata.WorkingDir)
	}
	if got, err := m.MaskEvent(ctx, msg); err != nil || got != event.Event(msg) {
		t.Errorf("an event without secrets was copied (%v)", err)
	}
	h, _ := m.MaskEvent(ctx, hook)
	if in := string(h.(*event.HookExecutionEvent).HookInput); in != `{"env":{"X":"`+secret.Hidden+`"},"n":1}` {
		t.Errorf("hook input = %s", in)
	}
}

// benchObservation is a typical terminal observation of about 8 KB.
func benchObservation() *event.ObservationEvent {
	text := strings.Repeat("src/pkg/file.go:123: a matching line of source code\n", 150)
	return &event.ObservationEvent{Base: event.NewBase(event.SourceEnvironment), ToolName: "terminal", ToolCallID: "c1", ActionID: "a1",
		Observation: &terminal.Observation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}}, Command: new("grep -rn x"), Metadata: terminal.Metadata{PID: -1}}}
}

func benchManager() *secret.Manager {
	m := secret.NewManager(secret.Registry{}, nil)
	for _, name := range []string{"GITHUB_TOKEN", "OPENAI_API_KEY", "DB_PASSWORD", "AWS_SECRET"} {
		m.SetValue(name, "value-of-"+name+"-0123456789abcdef")
	}
	return m
}

// BenchmarkMask masks 8 KB of output holding no secret against four
// secrets: the cost every terminal call pays.
func BenchmarkMask(b *testing.B) {
	m := benchManager()
	text := event.TextOf(benchObservation().Observation.Obs().Content)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		m.Mask(text)
	}
}

// BenchmarkMaskEvent is the per-event cost of masking before persistence
// when the event holds no secret (one encoding, no copy).
func BenchmarkMaskEvent(b *testing.B) {
	m := benchManager()
	e := benchObservation()
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.MaskEvent(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// TestManagerWithRealTerminal drives a real bash through the Manager's
// terminal hooks: a command gets only the secrets it names, and what it
// prints comes back masked.
func TestManagerWithRealTerminal(t *testing.T) {
	m := secret.NewManager(secret.Registry{}, nil)
	m.SetValue("GH_TOKEN", "ghp_live_1234567890")
	m.SetFunc("DB_PASSWORD", func(context.Context) (string, error) { return "pa$$ 'word'", nil })
	ctx := context.Background()
	env, mask := m.TerminalHooks(ctx)
	term := terminal.New(&terminal.Options{WorkingDir: t.TempDir(), Env: env, Mask: mask})
	defer term.Close()
	run := func(cmd string) string {
		t.Helper()
		o, err := term.Run(ctx, &terminal.Action{Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		return o.Text()
	}
	// Only the named secret is exported: DB_PASSWORD is not in the shell.
	if got := run(`echo "token=$GH_TOKEN"; env | grep -c '^DB_PASSW'`); got != "token="+secret.Hidden+"\n0" {
		t.Errorf("output = %q", got)
	}
	if got := run(`echo "[$DB_PASSWORD]"; env | grep -c '^DB_PASSW'`); got != "["+secret.Hidden+"]\n1" {
		t.Errorf("output = %q", got)
	}
	// A value printed without its name (read from a file) is masked too.
	if got := run(`printf '%s' 'pa$$ '"'word'" > f; cat f`); got != secret.Hidden {
		t.Errorf("cat = %q", got)
	}
}
