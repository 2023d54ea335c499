package tool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
)

func propNames(s map[string]any) string {
	var names []string
	for _, p := range tool.PropertiesOf(s) {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

func TestParameters(t *testing.T) {
	for _, tt := range []struct {
		tl    tool.Tool
		props string
	}{
		{newRisky(), "security_risk,summary,command"},
		{newReader(), "summary,command"},
		{newTicket(), "security_risk,summary,project"},
	} {
		p := tool.Parameters(tt.tl)
		if got := propNames(p); got != tt.props {
			t.Errorf("%s: properties %s, want %s", tt.tl.Name(), got, tt.props)
		}
		for _, r := range tool.RequiredOf(p) {
			if r == tool.MetaSecurityRisk || (r == tool.MetaSummary && tt.tl.Name() != "ticket") {
				t.Errorf("%s: meta-argument %s is required", tt.tl.Name(), r)
			}
		}
		// The tool's own schema is untouched.
		if strings.Contains(propNames(tt.tl.InputSchema()), "security_risk") {
			t.Errorf("%s: Parameters changed InputSchema", tt.tl.Name())
		}
	}
	// The ticket tool's own summary keeps its description.
	s, _ := tool.PropertiesOf(tool.Parameters(newTicket())).Get("summary")
	if s["description"] != "Ticket title." {
		t.Errorf("own summary replaced: %v", s)
	}
}

func TestFormatGoldens(t *testing.T) {
	tooltest.Goldens(t, newRisky())
	tooltest.Goldens(t, newReader())
	tooltest.Goldens(t, newTicket())
}

func TestFormatsShape(t *testing.T) {
	tl := newRisky()
	rt := func(m map[string]any) map[string]any {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	chat := rt(tool.ChatCompletionsFormat(tl))
	fn, _ := chat["function"].(map[string]any)
	if chat["type"] != "function" || fn["name"] != "risky" || fn["description"] != "Runs things." || fn["parameters"] == nil {
		t.Errorf("chat form = %v", chat)
	}
	resp := rt(tool.ResponsesFormat(tl))
	if resp["type"] != "function" || resp["name"] != "risky" || resp["strict"] != false || resp["parameters"] == nil {
		t.Errorf("responses form = %v", resp)
	}
	anth := rt(tool.AnthropicFormat(tl))
	if anth["name"] != "risky" || anth["input_schema"] == nil || len(anth) != 3 {
		t.Errorf("anthropic form = %v", anth)
	}
	mcp := rt(tool.MCPFormat(tl))
	if _, ok := mcp["annotations"]; ok {
		t.Errorf("mcp form of a tool without annotations has some: %v", mcp)
	}
	in, _ := mcp["inputSchema"].(map[string]any)
	if props, _ := in["properties"].(map[string]any); props["security_risk"] != nil || props["summary"] != nil {
		t.Errorf("mcp inputSchema has meta-arguments: %v", in)
	}
	mcp = rt(tool.MCPFormat(newReader()))
	if a, _ := mcp["annotations"].(map[string]any); a["readOnlyHint"] != true {
		t.Errorf("mcp annotations = %v", mcp["annotations"])
	}
}

func TestAnnotationsAndDefinition(t *testing.T) {
	risky := newRisky()
	if got := tool.AnnotationsOf(risky); got != (event.ToolAnnotations{DestructiveHint: true, OpenWorldHint: true}) {
		t.Errorf("default annotations = %+v", got)
	}
	if tool.ReadOnly(risky) || !tool.ReadOnly(newReader()) {
		t.Error("ReadOnly wrong")
	}
	def := risky.Definition()
	want := event.ToolDefinition{Description: "Runs things.", ActionType: "TestRiskyAction", ObservationType: "TestPlainObservation", Title: "risky", Kind: "RiskyTool"}
	if def.Description != want.Description || def.ActionType != want.ActionType || def.ObservationType != want.ObservationType ||
		def.Title != want.Title || def.Kind != want.Kind || def.Annotations != nil {
		t.Errorf("definition = %+v, want %+v", def, want)
	}
	titled := tool.New("my_tool", "d", newRisky().Run, &tool.Options{Annotations: &event.ToolAnnotations{Title: "My Tool"}})
	if d := titled.Definition(); d.Title != "My Tool" || d.Kind != "MyToolTool" {
		t.Errorf("titled definition = %+v", d)
	}
}

func TestMeta(t *testing.T) {
	tl := tool.New("with_meta", "d", newRisky().Run, &tool.Options{Meta: map[string]any{"source": "test"}})
	if got := string(tl.Definition().Meta); got != `{"source":"test"}` {
		t.Errorf("definition meta = %s", got)
	}
	b, err := event.MarshalJSON(tool.MCPFormat(tl))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"_meta":{"source":"test"}`) {
		t.Errorf("MCP form without _meta: %s", b)
	}
	if newRisky().Definition().Meta != nil {
		t.Error("meta without Options.Meta")
	}
}

func TestParametersJSON(t *testing.T) {
	got, err := tool.ParametersJSON(newRisky())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := event.MarshalJSON(tool.ChatCompletionsFormat(newRisky())["function"].(map[string]any)["parameters"])
	if string(got) != string(want) || !strings.HasPrefix(string(got), `{"properties":{"security_risk":`) {
		t.Errorf("ParametersJSON = %s", got)
	}
}
