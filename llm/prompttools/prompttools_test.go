package prompttools

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/google/go-cmp/cmp"
)

// reference is testdata/reference.json, written by the Python reference's
// fn_call_converter for the tools, calls and replies in it.
type reference struct {
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Description string `json:"description"`
	Calls       []struct {
		Call struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"call"`
		Text string `json:"text"`
	} `json:"calls"`
	Parses []struct {
		Text   string `json:"text"`
		Error  *string
		Result *struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"result"`
	} `json:"parses"`
}

func loadReference(t *testing.T) (reference, []Tool) {
	t.Helper()
	data, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	var tools []Tool
	for _, rt := range ref.Tools {
		tools = append(tools, Tool{Name: rt.Function.Name, Description: rt.Function.Description, Parameters: rt.Function.Parameters})
	}
	return ref, tools
}

func TestDescribeMatchesReference(t *testing.T) {
	ref, tools := loadReference(t)
	got, err := Describe(tools)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ref.Description, got); d != "" {
		t.Errorf("description differs (-reference +ours):\n%s", d)
	}
}

func TestCallTextMatchesReference(t *testing.T) {
	ref, _ := loadReference(t)
	for _, c := range ref.Calls {
		got, err := CallText(event.ToolCall{Name: c.Call.Function.Name, Arguments: c.Call.Function.Arguments})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.Text {
			t.Errorf("call text differs:\n got %q\nwant %q", got, c.Text)
		}
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return cmp.Equal(x, y)
}

func TestParseMatchesReference(t *testing.T) {
	ref, tools := loadReference(t)
	// The reference's first batch of replies was parsed with a file_editor
	// tool added.
	withEditor := append(tools, Tool{Name: "file_editor", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"path":{"type":"string"}},"required":["command","path"]}`)})
	for i, p := range ref.Parses {
		ts := tools
		if i < 5 {
			ts = withEditor
		}
		reply := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text(p.Text)}}
		got, err := Parse(reply, ts, 1)
		wantErr := p.Error != nil && *p.Error != ""
		if wantErr {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Errorf("%q: err = %v, want a message for the model like %q", p.Text, err, *p.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", p.Text, err)
			continue
		}
		if p.Result == nil {
			continue
		}
		if text := event.TextOf(got.Content); text != p.Result.Content {
			t.Errorf("%q: text = %q, want %q", p.Text, text, p.Result.Content)
		}
		if len(got.ToolCalls) != len(p.Result.ToolCalls) {
			t.Errorf("%q: %d tool calls, want %d", p.Text, len(got.ToolCalls), len(p.Result.ToolCalls))
			continue
		}
		for j, want := range p.Result.ToolCalls {
			gc := got.ToolCalls[j]
			if gc.ID != want.ID || gc.Name != want.Function.Name || !jsonEqual(t, gc.Arguments, want.Function.Arguments) {
				t.Errorf("%q: call = %+v, want %+v", p.Text, gc, want)
			}
		}
	}
}

func TestParseConvertsTypes(t *testing.T) {
	tools := []Tool{{Name: "set", Parameters: json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"},"ratio":{"type":"number"},"opts":{"type":"object"}},"required":["on"]}`)}}
	reply := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("<function=set>\n<parameter=on>true</parameter>\n<parameter=ratio>0.5</parameter>\n<parameter=opts>{\"a\": 1}</parameter>\n</function>")}}
	got, err := Parse(reply, tools, 7)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.ToolCalls[0]; c.ID != "toolu_07" || c.Arguments != `{"on":true,"ratio":0.5,"opts":{"a":1}}` {
		t.Errorf("call = %+v", c)
	}
	for _, bad := range []string{"<parameter=on>yes</parameter>", "<parameter=on>true</parameter><parameter=on>false</parameter>"} {
		reply.Content[0].Text = "<function=set>\n" + bad + "\n</function>"
		if _, err := Parse(reply, tools, 1); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestToText(t *testing.T) {
	_, tools := loadReference(t)
	tools = append(tools, Tool{Name: "file_editor", Description: "Edit files.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)})
	msgs := []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("You are an agent.")}},
		event.UserMessage("Fix the bug."),
		{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Looking.")}, ReasoningContent: "r",
			ToolCalls: []event.ToolCall{{ID: "toolu_01", Name: "terminal", Arguments: `{"command":"ls"}`}}},
		{Role: event.RoleTool, ToolCallID: "toolu_01", Name: "terminal", Content: event.List[event.Content]{event.Text("main.go")}},
	}
	out, err := ToText(msgs, tools, &Options{Example: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 {
		t.Fatalf("%d messages", len(out))
	}
	sys := event.TextOf(out[0].Content)
	if !strings.HasPrefix(sys, "You are an agent.\nYou can call") || !strings.Contains(sys, "---- BEGIN FUNCTION #1: terminal ----") {
		t.Errorf("system prompt:\n%s", sys)
	}
	// terminal has a security_risk parameter, so the example call shows it.
	if !strings.Contains(sys, "<parameter=security_risk>LOW</parameter>\n<parameter=summary>") || strings.Count(sys, "<parameter=security_risk>") != 1 {
		t.Errorf("security example missing or repeated:\n%s", sys)
	}
	user := event.TextOf(out[1].Content)
	if !strings.Contains(user, "START OF EXAMPLE") || !strings.Contains(user, "<function=file_editor>") || !strings.Contains(user, "NEW TASK DESCRIPTION ---------------------\nFix the bug.\n") {
		t.Errorf("first user message:\n%s", user)
	}
	if got, want := event.TextOf(out[2].Content), "Looking.\n\n<function=terminal>\n<parameter=command>ls</parameter>\n</function>"; got != want || out[2].ReasoningContent != "r" || len(out[2].ToolCalls) != 0 {
		t.Errorf("assistant = %q (%+v)", got, out[2])
	}
	if out[3].Role != event.RoleUser || event.TextOf(out[3].Content) != "EXECUTION RESULT of [terminal]:\nmain.go" {
		t.Errorf("tool result = %+v", out[3])
	}
	// The input is not modified.
	if event.TextOf(msgs[0].Content) != "You are an agent." {
		t.Error("ToText changed its input")
	}
	// Two calls in one message cannot be written.
	msgs[2].ToolCalls = append(msgs[2].ToolCalls, msgs[2].ToolCalls[0])
	if _, err := ToText(msgs, tools, nil); err == nil {
		t.Error("two calls in one message: no error")
	}
}

func TestExampleCallsParse(t *testing.T) {
	// Every call in the worked example must parse against the tools it
	// shows, or the example would teach calls that fail.
	tools := []Tool{
		{Name: "terminal", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"security_risk":{"type":"string"},"summary":{"type":"string"}},"required":["command"]}`)},
		{Name: "file_editor", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"path":{"type":"string"},"file_text":{"type":"string"},"old_str":{"type":"string"},"new_str":{"type":"string"},"security_risk":{"type":"string"},"summary":{"type":"string"}},"required":["command","path"]}`)},
		{Name: "task_tracker", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"task_list":{"type":"array"},"security_risk":{"type":"string"},"summary":{"type":"string"}},"required":["command"]}`)},
		{Name: "finish", Parameters: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"security_risk":{"type":"string"},"summary":{"type":"string"}},"required":["message"]}`)},
	}
	ex := Example(tools)
	turns := strings.Split(ex, "ASSISTANT:")[1:]
	if len(turns) != 7 {
		t.Fatalf("%d assistant turns in the example", len(turns))
	}
	for _, turn := range turns {
		text, _, _ := strings.Cut(turn, "USER:")
		if _, err := Parse(event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text(text)}}, tools, 1); err != nil {
			t.Errorf("example call does not parse: %v\n%s", err, text)
		}
	}
	if Example([]Tool{{Name: "grep"}}) != "" {
		t.Error("example for tools it does not know")
	}
}
