package terminal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
)

// fixture is one case of testdata/reference_fixtures.json, written by the
// Python reference (openhands-tools 1.43.1) with exclude_none, as it
// writes events.
type fixture struct {
	Name string   `json:"name"`
	Raw  string   `json:"raw"`
	LLM  []string `json:"llm"`
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference_fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(data, &fs); err != nil {
		t.Fatal(err)
	}
	if len(fs) == 0 {
		t.Fatal("no fixtures")
	}
	return fs
}

// TestReferenceJSON decodes what the reference wrote and encodes it back
// byte for byte; observations render the same LLM text.
func TestReferenceJSON(t *testing.T) {
	t.Parallel()
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			v, err := event.DecodeKinded[any]([]byte(f.Raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := event.MarshalKinded(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != f.Raw {
				t.Errorf("re-encoded:\n%s\nreference:\n%s", got, f.Raw)
			}
			o, ok := v.(*Observation)
			if !ok {
				if len(f.LLM) > 0 {
					t.Fatalf("decoded %T, want *Observation", v)
				}
				return
			}
			var texts []string
			for _, c := range event.ObservationContent(o) {
				texts = append(texts, c.Text)
			}
			if !slices.Equal(texts, f.LLM) {
				t.Errorf("LLM content:\n%q\nreference:\n%q", texts, f.LLM)
			}
		})
	}
}

// TestActionJSON is a TerminalAction as the reference writes it.
func TestActionJSON(t *testing.T) {
	t.Parallel()
	got, err := event.MarshalKinded(&Action{Command: "ls -la"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"command":"ls -la","is_input":false,"reset":false,"kind":"TerminalAction"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Unknown fields are rejected, as the reference's models forbid them.
	if _, err := event.DecodeKinded[event.Action]([]byte(`{"command":"ls","bogus":1,"kind":"TerminalAction"}`)); err == nil {
		t.Error("unknown field accepted")
	}
}

// TestObservationCommandAlwaysWritten: command is a required key of the
// reference's observation even when null.
func TestObservationCommandAlwaysWritten(t *testing.T) {
	t.Parallel()
	o := newObservation("", "x")
	o.Command = nil
	got, err := event.MarshalKinded(o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"command":null`) {
		t.Errorf("command key missing: %s", got)
	}
}

func TestGoldens(t *testing.T) {
	t.Parallel()
	tl := NewTool(nil)
	defer tl.Close()
	tooltest.Goldens(t, tl)
	ec := 0
	dir := "/conv/observations"
	o := newObservation("echo hi", "hi")
	o.ExitCode = &ec
	o.Metadata = Metadata{ExitCode: 0, PID: -1, Username: new("agent"), Hostname: new("box"), WorkingDir: new("/work"), Prefix: "", Suffix: ""}
	o.FullOutputSaveDir = dir
	tooltest.GoldenKinded(t, "observation.json", o)
	tooltest.GoldenKinded(t, "action.json", &Action{Command: "sleep 100", IsInput: false, Timeout: new(7.5), Reset: false})
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	tl := NewTool(nil)
	defer tl.Close()
	d := tl.Definition()
	if d.Kind != "TerminalTool" || d.ActionType != "TerminalAction" || d.ObservationType != "TerminalObservation" || d.Title != "terminal" {
		t.Errorf("definition = %+v", d)
	}
	a := d.Annotations
	if a == nil || a.ReadOnlyHint || !a.DestructiveHint || a.IdempotentHint || !a.OpenWorldHint {
		t.Errorf("annotations = %+v", a)
	}
	if !strings.Contains(tl.Description(), "30 seconds") {
		t.Errorf("description does not state the default no-output timeout: %s", tl.Description())
	}
}

func TestParseAction(t *testing.T) {
	t.Parallel()
	tl := NewTool(nil)
	defer tl.Close()
	a, err := tl.ParseAction(json.RawMessage(`{"command":"ls"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.(*Action); got.Command != "ls" || got.IsInput || got.Reset || got.Timeout != nil {
		t.Errorf("action = %+v", got)
	}
	for _, bad := range []string{`{}`, `{"command":1}`, `{"command":"ls","timeout":"soon"}`, `{"command":"ls","is_input":"yes"}`} {
		if _, err := tl.ParseAction(json.RawMessage(bad)); err == nil {
			t.Errorf("ParseAction(%s) accepted", bad)
		}
	}
}

func TestResolveSpec(t *testing.T) {
	t.Parallel()
	conv := t.TempDir()
	work := t.TempDir()
	tools, err := tool.Resolve(tool.Context{WorkingDir: work, ConversationDir: conv}, tool.Spec{
		Name:   "terminal",
		Params: event.Map[string, any]{"no_change_timeout_seconds": 5, "env": map[string]any{"GOHANDS_X": "1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name() != "terminal" {
		t.Fatalf("tools = %v", tools)
	}
	tl := tools[0].(*tool.Typed[Action, *Observation])
	defer tl.Close()
	if !strings.Contains(tl.Description(), "5 seconds") {
		t.Errorf("no_change_timeout_seconds not applied: %s", tl.Description())
	}

	for name, params := range map[string]event.Map[string, any]{
		"unknown param":    {"bogus": true},
		"bad timeout":      {"no_change_timeout_seconds": -1},
		"powershell":       {"terminal_type": "powershell"},
		"other user":       {"username": "no-such-user-gohands"},
		"wrong param type": {"env": "x"},
		"bad env name":     {"env": map[string]any{"A-B": "x"}},
	} {
		if _, err := tool.Resolve(tool.Context{WorkingDir: work}, tool.Spec{Name: "terminal", Params: params}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := tool.Resolve(tool.Context{WorkingDir: filepath.Join(work, "missing")}, tool.Spec{Name: "terminal"}); err == nil {
		t.Error("missing working directory accepted")
	}
}

// TestResolveSpecSecretHooks checks that a terminal built from a spec takes
// the conversation's secret hooks from tool.Context: a mentioned secret is
// exported and its value never comes back in the output.
func TestResolveSpecSecretHooks(t *testing.T) {
	t.Parallel()
	const value = "s3cr3t-Value-42"
	ctx := tool.Context{
		WorkingDir: t.TempDir(),
		SecretEnv: func(command string) map[string]string {
			if strings.Contains(strings.ToLower(command), "api_token") {
				return map[string]string{"API_TOKEN": value}
			}
			return nil
		},
		Mask: func(s string) string { return strings.ReplaceAll(s, value, "<secret-hidden>") },
	}
	tools, err := tool.Resolve(ctx, tool.Spec{Name: "terminal"})
	if err != nil {
		t.Fatal(err)
	}
	tl := tools[0].(*tool.Typed[Action, *Observation])
	defer tl.Close()
	obs, err := tl.Run(t.Context(), &Action{Command: `echo "len=${#API_TOKEN} v=$API_TOKEN"`})
	if err != nil {
		t.Fatal(err)
	}
	out := event.TextOf(obs.Content)
	if strings.Contains(out, value) {
		t.Fatalf("secret leaked: %q", out)
	}
	if !strings.Contains(out, "len=15 v=<secret-hidden>") {
		t.Fatalf("secret not exported or not masked: %q", out)
	}
}

// TestMetadataDefaults: exit_code and pid are -1 when the JSON leaves them
// out, as the reference's CmdOutputMetadata defaults them, with or without
// a metadata object.
func TestMetadataDefaults(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"content":[],"is_error":false,"command":"x","timeout":false,"metadata":{"working_dir":"","prefix":"","suffix":""},"kind":"TerminalObservation"}`,
		`{"content":[],"is_error":false,"command":"x","timeout":false,"kind":"TerminalObservation"}`,
	} {
		v, err := event.DecodeKinded[*Observation]([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if m := v.Metadata; m.ExitCode != -1 || m.PID != -1 || m.Username != nil {
			t.Errorf("%s: metadata %+v", in, m)
		}
	}
	// A known empty field is written back; an unknown one is not.
	v, _ := event.DecodeKinded[*Observation]([]byte(`{"content":[],"is_error":false,"command":"x","timeout":false,"metadata":{"working_dir":"","prefix":"","suffix":""},"kind":"TerminalObservation"}`))
	b, err := event.MarshalKinded(v)
	if want := `"metadata":{"exit_code":-1,"pid":-1,"working_dir":"","prefix":"","suffix":""}`; err != nil || !strings.Contains(string(b), want) {
		t.Errorf("re-encoded %s, %v; want it to hold %s", b, err, want)
	}
}
