package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/tasktracker"
	"github.com/gohands/gohands/tools/terminal"
)

func TestParseArguments(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{``, `{}`, ""},
		{`  `, `{}`, ""},
		{`{"a":1}`, `{"a":1}`, ""},
		{`[1,2]`, `{}`, ""},
		{`"str"`, `{}`, ""},
		{`{"b": 1, "a": null, "c": "x"}`, `{"b":1,"c":"x"}`, ""},
		{`{"securtiy_risk":"LOW","x":1}`, `{"x":1,"security_risk":"LOW"}`, ""},
		{"{\"a\": \"x\ny\", \"b\": \"\t\x01\"}", `{"a":"x\ny","b":"\t\u0001"}`, ""},
		// Pretty-printed JSON with a raw newline in a string: only the one
		// inside the string is escaped.
		{"{\n  \"a\": \"x\ny\"\n}", `{"a":"x\ny"}`, ""},
		{`{"a":`, "", "not valid JSON"},
		{`{"a":1}}`, "", "not valid JSON"},
	}
	for _, tt := range tests {
		got, err := tool.ParseArguments(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseArguments(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ParseArguments(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// repairTools are the real tools whose repairs the tests check, by name.
func repairTools(t *testing.T, names ...string) []tool.Tool {
	t.Helper()
	var out []tool.Tool
	for _, n := range names {
		switch n {
		case terminal.Name:
			out = append(out, terminal.NewTool(nil))
		case fileeditor.Name:
			out = append(out, fileeditor.New(&fileeditor.Options{WorkingDir: t.TempDir()}))
		case tasktracker.Name:
			out = append(out, tasktracker.New(nil))
		default: // a tool with no repairs of its own
			out = append(out, named(n))
		}
	}
	t.Cleanup(func() { tool.CloseAll(out) })
	return out
}

func TestNormalizeCall(t *testing.T) {
	term := repairTools(t, "terminal", "file_editor")
	rg := "rg -n -i foo . --sortr=modified -g '*.go'"
	if _, err := exec.LookPath("rg"); err != nil {
		rg = "grep -R -I -n -i foo . '--include=*.go'"
	}
	tests := []struct {
		name, args string
		tools      []tool.Tool
		wantName   string
		wantArgs   string
		err        string
	}{
		{"terminal", `{"command":"ls"}`, term, "terminal", `{"command":"ls"}`, ""},
		{"bash", `{"command":"ls","timeout":5}`, term, "terminal", `{"command":"ls","timeout":5}`, ""},
		{"execute_bash", `{"command":"ls"}`, term, "terminal", `{"command":"ls"}`, ""},
		{"git", `{"command":"status","path":"x","summary":"s"}`, term, "terminal", `{"summary":"s","command":"git status"}`, ""},
		{"git", `{"command":"git log"}`, term, "terminal", `{"command":"git log"}`, ""},
		{"git", `{"command":"github x"}`, term, "terminal", `{"command":"git github x"}`, ""},
		{"reset", `{}`, term, "terminal", `{"command":"reset"}`, ""},
		{"str_replace </parameter", `{"path":"/a"}`, term, "file_editor", `{"command":"view","path":"/a"}`, ""},
		{"str_replace", `{"old_str":"a","path":"/a"}`, term, "file_editor", `{"command":"str_replace","old_str":"a","path":"/a"}`, ""},
		{"str_replace_editor", `{"insert_line":3,"new_str":"x","path":"/a"}`, term, "file_editor", `{"command":"insert","insert_line":3,"new_str":"x","path":"/a"}`, ""},
		{"file_editor", `{"file_text":"x","path":"/a"}`, term, "file_editor", `{"command":"create","file_text":"x","path":"/a"}`, ""},
		{"file_editor", `{"command":"view","path":"/a"}`, term, "file_editor", `{"command":"view","path":"/a"}`, ""},
		{"str_replace_editor", `{}`, term, "file_editor", "", "cannot infer the command"},
		{"ls", `{}`, term, "terminal", `{"command":"ls"}`, ""},
		{"ls", `{"a":1}`, term, "", `{"a":1}`, ""},
		{"pwd", `{}`, repairTools(t, "file_editor"), "", `{}`, ""},
		{"grep", `{"pattern":"foo","include":"*.go","summary":"s"}`, term, "terminal", `{"summary":"s","command":` + mustJSON(rg) + `}`, ""},
		{"grep", `{"pattern":" "}`, term, "", `{"pattern":" "}`, ""},
		// A tool of the name is never swapped, even for an alias.
		{"bash", `{"x":1}`, repairTools(t, "bash", "terminal"), "bash", `{"x":1}`, ""},
		{"nope", `{"x":1}`, term, "", `{"x":1}`, ""},
		{"terminal", `[1]`, term, "", "", "must be a JSON object"},
	}
	for _, tt := range tests {
		got, args, err := tool.NormalizeCall(tt.tools, tt.name, json.RawMessage(tt.args))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("NormalizeCall(%q, %s) error = %v, want %q", tt.name, tt.args, err, tt.err)
			}
			continue
		}
		name := ""
		if got != nil {
			name = got.Name()
		}
		if err != nil || name != tt.wantName || string(args) != tt.wantArgs {
			t.Errorf("NormalizeCall(%q, %s) = %q, %s, %v; want %q, %s", tt.name, tt.args, name, args, err, tt.wantName, tt.wantArgs)
		}
	}
}

func mustJSON(v any) string {
	b, err := event.MarshalJSON(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestShellJoin(t *testing.T) {
	// Python: shlex.join([...]) for the same words.
	got := tool.ShellJoin([]string{"rg", "-n", "-i", "foo bar", ".", "--sortr=modified", "-g", "*.py", "it's", ""})
	want := `rg -n -i 'foo bar' . --sortr=modified -g '*.py' 'it'"'"'s' ''`
	if got != want {
		t.Errorf("ShellJoin = %s\nwant       %s", got, want)
	}
}

func TestRepairArgs(t *testing.T) {
	schema, err := tool.DecodeSchema([]byte(`{"type":"object","properties":{
		"view_range":{"type":"array","items":{"type":"integer"}},
		"opts":{"type":"object"},
		"old_str":{"type":"string"},
		"either":{"anyOf":[{"type":"string"},{"type":"array"}]},
		"timeout":{"type":"number"},
		"line":{"type":"integer"},
		"flag":{"type":"boolean"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{`{"view_range":"[1, 5]"}`, `{"view_range":[1,5]}`},
		{`{"view_range":"[1, 5]</parameter>"}`, `{"view_range":[1,5]}`},
		{`{"opts":"{\"a\": \"x\ny\"}"}`, `{"opts":{"a":"x\ny"}}`},
		{`{"opts":"{\"a\": 1} trailing"}`, `{"opts":{"a":1}}`},
		{`{"opts":"{\"a\": 1}} x"}`, `{"opts":"{\"a\": 1}} x"}`}, // as the reference: only the last } is tried
		{`{"view_range":"not json"}`, `{"view_range":"not json"}`},
		{`{"view_range":"\"quoted\""}`, `{"view_range":"\"quoted\""}`},
		{`{"old_str":["a","b","c"]}`, `{"old_str":"abc"}`},
		{`{"old_str":["a",1]}`, `{"old_str":["a",1]}`},
		{`{"either":["a","b"]}`, `{"either":["a","b"]}`},
		{`{"timeout":"30"}`, `{"timeout":30}`},
		{`{"timeout":" 2.5 "}`, `{"timeout":2.5}`},
		{`{"timeout":"NaN"}`, `{"timeout":"NaN"}`},
		{`{"line":"7"}`, `{"line":7}`},
		{`{"line":"7.5"}`, `{"line":"7.5"}`},
		{`{"flag":"true","line":1}`, `{"flag":true,"line":1}`},
		{`{"flag":"No"}`, `{"flag":false}`},
		{`{"flag":"maybe"}`, `{"flag":"maybe"}`},
		{`{"unknown":"[1]","old_str":"x"}`, `{"unknown":"[1]","old_str":"x"}`},
	}
	for _, tt := range tests {
		got, err := tool.RepairArgs(schema, json.RawMessage(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("RepairArgs(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	if _, err := tool.RepairArgs(schema, json.RawMessage(`[]`)); err == nil {
		t.Error("RepairArgs accepted an array")
	}
}

type riskyAction struct {
	Command string `json:"command"`
}

type summaryAction struct {
	Project string `json:"project,omitempty" desc:"Project key."`
	Summary string `json:"summary" desc:"Ticket title."`
}

type plainObs struct{ event.ObservationBase }

func init() {
	event.RegisterKind[riskyAction]("TestRiskyAction")
	event.RegisterKind[summaryAction]("TestSummaryAction")
	event.RegisterKind[plainObs]("TestPlainObservation")
}

func newRisky() *tool.Typed[riskyAction, *plainObs] {
	return tool.New("risky", "Runs things.", func(_ context.Context, a *riskyAction) (*plainObs, error) {
		return &plainObs{event.ObservationBase{Content: event.List[event.Content]{event.Text("ran " + a.Command)}}}, nil
	}, nil)
}

func newReader() *tool.Typed[riskyAction, *plainObs] {
	return tool.New("reader", "Reads things.", func(context.Context, *riskyAction) (*plainObs, error) { return &plainObs{}, nil },
		&tool.Options{Annotations: &event.ToolAnnotations{ReadOnlyHint: true}})
}

func newTicket() *tool.Typed[summaryAction, *plainObs] {
	return tool.New("ticket", "Files a ticket.", func(context.Context, *summaryAction) (*plainObs, error) { return &plainObs{}, nil }, nil)
}

func TestSplitMeta(t *testing.T) {
	risky, reader, ticket := newRisky(), newReader(), newTicket()
	tests := []struct {
		tl      tool.Tool
		args    string
		honour  bool
		clean   string
		risk    event.SecurityRisk
		summary string
		err     string
	}{
		{risky, `{"command":"ls","security_risk":"HIGH","summary":"list"}`, true, `{"command":"ls"}`, event.RiskHigh, "list", ""},
		{risky, `{"command":"ls","security_risk":"medium"}`, true, `{"command":"ls"}`, event.RiskMedium, `risky: {"command": "ls"}`, ""},
		{risky, `{"command":"ls","security_risk":"HIGH"}`, false, `{"command":"ls"}`, event.RiskUnknown, `risky: {"command": "ls"}`, ""},
		{risky, `{"command":"ls","security_risk":"bad"}`, false, `{"command":"ls"}`, event.RiskUnknown, `risky: {"command": "ls"}`, ""},
		{risky, `{"command":"ls","security_risk":"bad"}`, true, ``, "", "", `field "security_risk": "bad" is not one of [UNKNOWN LOW MEDIUM HIGH]`},
		{risky, `{"command":"ls","security_risk":3}`, true, ``, "", "", `field "security_risk": 3 is not one of`},
		{risky, `{"command":"ls","summary":"  "}`, true, `{"command":"ls"}`, event.RiskUnknown, `risky: {"command": "ls"}`, ""},
		{risky, `{"summary":7,"command":"é"}`, true, `{"command":"é"}`, event.RiskUnknown, `risky: {"command": "\u00e9"}`, ""},
		{reader, `{"command":"ls","security_risk":"HIGH"}`, true, `{"command":"ls"}`, event.RiskUnknown, `reader: {"command": "ls"}`, ""},
		{reader, `{"command":"ls","security_risk":"bad"}`, true, `{"command":"ls"}`, event.RiskUnknown, `reader: {"command": "ls"}`, ""},
		{ticket, `{"summary":" Fix login "}`, true, `{"summary":" Fix login "}`, event.RiskUnknown, "Fix login", ""},
		{ticket, `{"summary":""}`, true, `{"summary":""}`, event.RiskUnknown, `ticket: {"summary": ""}`, ""},
		{risky, `"x"`, true, ``, "", "", "must be a JSON object"},
		// The generated summary is Python's json.dumps of the arguments
		// (the expected text was printed by Python).
		{risky, `{"command":"ls -la","x":[1,2.5,{"k":null}],"u":"héllo 😀 \u007f\t\"q\"","b":true}`, false,
			`{"command":"ls -la","x":[1,2.5,{"k":null}],"u":"héllo 😀 \u007f\t\"q\"","b":true}`, event.RiskUnknown,
			`risky: {"command": "ls -la", "x": [1, 2.5, {"k": null}], "u": "h\u00e9llo \ud83d\ude00 \u007f\t\"q\"", "b": true}`, ""},
	}
	for _, tt := range tests {
		clean, risk, summary, err := tool.SplitMeta(json.RawMessage(tt.args), tt.tl, tt.honour)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SplitMeta(%s) error = %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || string(clean) != tt.clean || risk != tt.risk || summary != tt.summary {
			t.Errorf("SplitMeta(%s, %s, %v) = %s, %s, %q, %v; want %s, %s, %q",
				tt.tl.Name(), tt.args, tt.honour, clean, risk, summary, err, tt.clean, tt.risk, tt.summary)
		}
	}
}

func TestPrepareCall(t *testing.T) {
	tools := []tool.Tool{newRisky(), newReader()}
	c, err := tool.PrepareCall(tools, "risky", `{"summary":"list files","command":"ls","security_risk":"LOW"}`, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "risky" || c.SecurityRisk != event.RiskLow || c.Summary != "list files" || c.Action.(*riskyAction).Command != "ls" {
		t.Errorf("call = %+v", c)
	}
	if c.Arguments != `{"summary": "list files", "command": "ls", "security_risk": "LOW"}` {
		t.Errorf("arguments = %s", c.Arguments)
	}
	obs, err := c.Tool.Execute(context.Background(), c.Action)
	if err != nil || event.TextOf(event.ObservationContent(obs)) != "ran ls" {
		t.Errorf("execute = %v, %v", obs, err)
	}

	for _, tt := range []struct {
		name, args, want  string
		notFound, unparse bool
	}{
		{"nope", `{}`, `Tool 'nope' not found. Available: ['risky', 'reader']`, true, false},
		{"risky", `{"command":`, `Error validating tool 'risky': arguments are not valid JSON: unexpected end of JSON input. Arguments: unparseable JSON`, false, true},
		{"risky", `{"command":1,"summary":"s"}`, `Error validating tool 'risky': field "command": expected string, got number 1. Parameters provided: ['command']`, false, false},
		{"risky", `{"command":"x","security_risk":"NOPE"}`, `Error validating tool 'risky': field "security_risk": "NOPE" is not one of [UNKNOWN LOW MEDIUM HIGH]. Parameters provided: ['command', 'security_risk']`, false, false},
	} {
		_, err := tool.PrepareCall(tools, tt.name, tt.args, true)
		var ce *tool.CallError
		if !errors.As(err, &ce) {
			t.Errorf("PrepareCall(%s, %s) error = %v, want a *CallError", tt.name, tt.args, err)
			continue
		}
		if ce.Error() != tt.want || ce.NotFound != tt.notFound || ce.Unparseable != tt.unparse {
			t.Errorf("PrepareCall(%s, %s) = %q (notFound %v, unparseable %v)\nwant %q", tt.name, tt.args, ce, ce.NotFound, ce.Unparseable, tt.want)
		}
	}
}
