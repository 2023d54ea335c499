package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// The expected strings were written by the Python reference (v1.43.1):
// MCPToolDefinition.create for this tool, dumped with exclude_none (its
// "mcp_tool" member removed, see Tool.Definition), and to_openai_tool().
func TestDefinitionMatchesReference(t *testing.T) {
	t.Parallel()
	st := &sdk.Tool{
		Name:        "get-sum",
		Description: "Returns the sum of two numbers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"b":{"type":"number","description":"Second"},"a":{"type":"number"}},"required":["a","b"]}`),
	}
	mt, err := newTool(&server{name: "s", opts: &Options{}}, st)
	if err != nil {
		t.Fatal(err)
	}
	def, err := event.MarshalJSON(mt.Definition())
	if err != nil {
		t.Fatal(err)
	}
	const wantDef = `{"description":"Returns the sum of two numbers","action_type":"MCPToolAction","observation_type":"MCPToolObservation","kind":"MCPToolDefinition","title":"get-sum"}`
	if string(def) != wantDef {
		t.Errorf("definition\n got %s\nwant %s", def, wantDef)
	}
	// The tool's own arguments, in the server's order, as the reference
	// sends them (the meta-arguments and their wording are tool.Parameters'
	// business, not compared here).
	params, err := event.MarshalJSON(mt.InputSchema())
	if err != nil {
		t.Fatal(err)
	}
	const wantParams = `{"type":"object","properties":{"b":{"type":"number","description":"Second"},"a":{"type":"number"}},"required":["a","b"]}`
	var got, want any
	json.Unmarshal(params, &got)
	json.Unmarshal([]byte(wantParams), &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if ps := tool.PropertiesOf(mt.InputSchema()); string(gb) != string(wb) || ps[0].Name != "b" || ps[1].Name != "a" {
		t.Errorf("parameters\n got %s\nwant %s", params, wantParams)
	}
	var names []string
	for _, p := range tool.PropertiesOf(tool.Parameters(mt)) {
		names = append(names, p.Name)
	}
	if len(names) != 4 || names[1] != "summary" || names[2] != "b" || names[3] != "a" {
		t.Errorf("model-facing properties %v", names)
	}
}
