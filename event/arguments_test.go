package event

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompactArguments: an ActionEvent whose large arguments are what its
// action stands for is encoded with them once, decodes to the same
// arguments, and stays readable as JSON to a reader that does not know
// the stand-in; anything else is encoded as it is.
func TestCompactArguments(t *testing.T) {
	big := strings.Repeat("z", LargeArgumentBytes)
	ae := &ActionEvent{
		Base: NewBase(SourceAgent), Thought: List[Content]{}, ToolName: "terminal", ToolCallID: "c1",
		Action: &terminalAction{Command: "echo " + big}, SecurityRisk: RiskLow, LLMResponseID: "r1",
	}
	args, err := ActionArguments(ae)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil || m["command"] != "echo "+big || m["security_risk"] != "LOW" || m["kind"] != nil {
		t.Fatalf("ActionArguments: %v, %.120s", err, args)
	}
	ae.ToolCall = ToolCall{ID: "c1", Name: "terminal", Arguments: args}
	data, err := Marshal(CompactArguments(ae))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), big); n != 1 {
		t.Fatalf("the encoding holds the argument %d times", n)
	}
	if ae.ToolCall.Arguments != args {
		t.Fatal("CompactArguments changed its argument")
	}
	var raw struct {
		ToolCall struct{ Arguments string } `json:"tool_call"`
	}
	if err := json.Unmarshal(data, &raw); err != nil || !json.Valid([]byte(raw.ToolCall.Arguments)) {
		t.Fatalf("stored arguments are not JSON: %v %q", err, raw.ToolCall.Arguments)
	}
	back, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.(*ActionEvent).ToolCall.Arguments; got != args {
		t.Fatalf("decoded arguments differ: %.120s", got)
	}

	// Arguments that are not the action's, small ones, and a call without
	// an action are kept as they are.
	for name, e := range map[string]*ActionEvent{
		"other": {ToolCall: ToolCall{Arguments: `{"command": "` + big + `"}`}, Action: ae.Action},
		"small": {ToolCall: ToolCall{Arguments: `{"command":"ls","is_input":false,"reset":false}`}, Action: &terminalAction{Command: "ls"}},
		"none":  {ToolCall: ToolCall{Arguments: args}},
	} {
		if CompactArguments(e) != Event(e) {
			t.Errorf("%s: compacted", name)
		}
	}
}
