package askoracle_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/askoracle"
)

func TestAsk(t *testing.T) {
	var got []event.Message
	consult := func(_ context.Context, profile, usageID string, msgs []event.Message) (event.Message, error) {
		if profile != "oracle" || usageID != "oracle:oracle" {
			t.Errorf("profile %q usage %q", profile, usageID)
		}
		got = msgs
		return event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("  Split it. "), event.Text("Then test.")}}, nil
	}
	tl := askoracle.New(consult)
	o, err := tl.Run(context.Background(), &event.AskOracleAction{Question: "How?", Context: "tried X"})
	if err != nil || o.IsError || event.TextOf(o.Content) != "Split it. Then test." {
		t.Fatalf("observation %+v, %v", o, err)
	}
	if len(got) != 2 || got[0].Role != event.RoleSystem || got[1].Role != event.RoleUser ||
		!strings.Contains(event.TextOf(got[1].Content), "How?") || !strings.Contains(event.TextOf(got[1].Content), "tried X") {
		t.Fatalf("messages %+v", got)
	}
	// Without context, no context section.
	if _, err := tl.Run(context.Background(), &event.AskOracleAction{Question: "How?"}); err != nil || strings.Contains(event.TextOf(got[1].Content), "Context") {
		t.Fatalf("messages without context %+v, %v", got, err)
	}
}

func TestAskFails(t *testing.T) {
	for name, c := range map[string]struct {
		consult func(context.Context, string, string, []event.Message) (event.Message, error)
		want    string
	}{
		"no consult": {nil, "not available"},
		"no profile": {func(context.Context, string, string, []event.Message) (event.Message, error) {
			return event.Message{}, errors.New(`llm: no such profile: "oracle"`)
		}, `profile named "oracle"`},
		"empty": {func(context.Context, string, string, []event.Message) (event.Message, error) {
			return event.Message{Role: event.RoleAssistant}, nil
		}, "empty answer"},
	} {
		t.Run(name, func(t *testing.T) {
			o, err := askoracle.New(c.consult).Run(context.Background(), &event.AskOracleAction{Question: "q"})
			if err != nil || !o.IsError || !strings.Contains(event.TextOf(o.Content), c.want) {
				t.Fatalf("observation %+v, %v; want an error saying %q", o, err, c.want)
			}
		})
	}
	// A cancelled call is the run's end, not an answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := askoracle.New(func(ctx context.Context, _, _ string, _ []event.Message) (event.Message, error) {
		return event.Message{}, ctx.Err()
	}).Run(ctx, &event.AskOracleAction{Question: "q"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// The registered tool is the reference's definition: kind AskOracleTool,
// read-only, question required; it takes no params.
func TestRegistered(t *testing.T) {
	tools, err := tool.Resolve(tool.Context{}, tool.Spec{Name: askoracle.Name})
	if err != nil || len(tools) != 1 {
		t.Fatalf("resolve: %v %v", tools, err)
	}
	if !tool.ReadOnly(tools[0]) {
		t.Error("ask_oracle is not read-only")
	}
	params, err := tool.ParametersJSON(tools[0])
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(params, &schema); err != nil {
		t.Fatal(err)
	}
	if len(schema.Required) != 1 || schema.Required[0] != "question" || schema.Properties["question"] == nil || schema.Properties["context"] == nil {
		t.Errorf("parameters %s", params)
	}
	if _, err := tool.Resolve(tool.Context{}, tool.Spec{Name: askoracle.Name, Params: map[string]any{"x": 1}}); err == nil {
		t.Error("params accepted")
	}
}
