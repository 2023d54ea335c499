package tool_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// A client tool resolves from a spec carrying its ClientToolSpec (as the
// reference stores it in the agent's tools), offers the client's schema
// unchanged, validates calls against it, writes a call as the reference
// writes a ClientAction_<name> (arguments, then the kind) and acknowledges
// it with a ClientToolObservation.
func TestClientTool(t *testing.T) {
	cs, err := tool.ParseClientSpec([]byte(`{"name":"pick_color","description":"Ask for a colour","parameters":{"type":"object","properties":{"hint":{"type":"string","enum":["warm","cold"]}},"required":["hint"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := tool.Resolve(tool.Context{}, cs.Spec())
	if err != nil || len(tools) != 1 {
		t.Fatalf("Resolve: %v, %v", tools, err)
	}
	ct := tools[0]
	def, err := event.MarshalJSON(ct.Definition())
	if err != nil {
		t.Fatal(err)
	}
	// The reference 1.58.2's ClientTool in a SystemPromptEvent (nulls left out).
	want := `{"description":"Ask for a colour","action_type":"ClientAction_pick_color","observation_type":"ClientToolObservation","client_tool_name":"pick_color","input_schema":{"type":"object","properties":{"hint":{"type":"string","enum":["warm","cold"]}},"required":["hint"]},"kind":"ClientTool","title":"pick_color"}`
	// The schema's key order is not kept: the spec lives in the agent's
	// tool params, a map.
	var got, exp any
	json.Unmarshal(def, &got)
	json.Unmarshal([]byte(want), &exp)
	if !reflect.DeepEqual(got, exp) || !strings.HasPrefix(string(def), `{"description":"Ask for a colour","action_type":"ClientAction_pick_color","observation_type":"ClientToolObservation","client_tool_name":"pick_color","input_schema":{`) {
		t.Errorf("definition\n%s\nwant\n%s", def, want)
	}
	if _, err := ct.ParseAction(json.RawMessage(`{"hint":"hot"}`)); err == nil || !strings.Contains(err.Error(), "hint") {
		t.Errorf("a value outside the enum: %v", err)
	}
	a, err := ct.ParseAction(json.RawMessage(`{ "hint": "warm" }`))
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := event.MarshalKinded(a); string(raw) != `{"hint":"warm","kind":"ClientAction_pick_color"}` {
		t.Errorf("action %s", raw)
	}
	obs, err := ct.Execute(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := event.MarshalKinded(obs); !strings.Contains(string(raw), `"text":"Tool call dispatched to client."`) || !strings.HasSuffix(string(raw), `"kind":"ClientToolObservation"}`) {
		t.Errorf("observation %s", raw)
	}

	for in, msg := range map[string]string{
		`{"description":"d"}`: "name",
		`{"name":"x"}`:        "description",
		`{"name":"x","description":"d","parameters":{"type":"array"}}`: "parameters",
		`{"name":"x","description":"d","extra":1}`:                     "extra",
		`[]`: "object",
	} {
		if _, err := tool.ParseClientSpec([]byte(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want an error naming %s", in, err, msg)
		}
	}
	// A spec whose name differs from its embedded spec's is not a client tool.
	sp := cs.Spec()
	sp.Name = "other"
	if _, err := tool.Resolve(tool.Context{}, sp); err == nil {
		t.Error("resolved a spec whose name is not its client spec's")
	}
}
