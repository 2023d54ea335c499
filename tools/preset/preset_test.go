package preset_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/preset"
)

// runOnce runs a with a model that replies with text, and returns the
// request the model got.
func runOnce(t *testing.T, a conversation.Agent, p requester) llm.Request {
	t.Helper()
	ctx := context.Background()
	c, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	return reqs[0]
}

func toolNames(specs []llm.ToolSpec) []string {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// requester is what runOnce reads the model's requests from.
type requester interface{ Requests() []llm.Request }

func scriptedProvider(t *testing.T, cfg llm.Config) (llm.Model, requester) {
	return scripted(t, cfg)
}

func scripted(t *testing.T, cfg llm.Config) (llm.Model, *llmtest.Provider) {
	p := llmtest.NewProvider(t, llmtest.Reply{Text: "hello"})
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return l, p
}

func TestDefaultAgentTools(t *testing.T) {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	a := preset.DefaultAgent(cfg, nil)
	m, p := scripted(t, cfg)
	req := runOnce(t, a.WithOptions(&agent.Options{Model: m}), p)
	want := []string{"file_editor", "finish", "task_tracker", "terminal", "think"}
	if got := toolNames(req.Tools); !slices.Equal(got, want) {
		t.Errorf("tools offered to the model = %v, want %v", got, want)
	}
}

// The agent encodes as the reference's get_default_agent does: tools by
// spec name, the built-ins by class name.
func TestDefaultAgentJSON(t *testing.T) {
	a := preset.DefaultAgent(llm.DefaultConfig("anthropic/claude-sonnet-4-5"), nil)
	b, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Kind                string      `json:"kind"`
		Tools               []tool.Spec `json:"tools"`
		IncludeDefaultTools []string    `json:"include_default_tools"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "Agent" {
		t.Errorf("kind = %q, want Agent", got.Kind)
	}
	var names []string
	for _, s := range got.Tools {
		names = append(names, s.Name)
		if len(s.Params) != 0 {
			t.Errorf("tool %s has params %v, want none", s.Name, s.Params)
		}
	}
	if want := []string{"terminal", "file_editor", "task_tracker"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	if want := []string{"FinishTool", "ThinkTool"}; !slices.Equal(got.IncludeDefaultTools, want) {
		t.Errorf("include_default_tools = %v, want %v", got.IncludeDefaultTools, want)
	}
	// It decodes back into an agent that can run.
	if _, err := event.DecodeKinded[conversation.Agent](b); err != nil {
		t.Fatal(err)
	}
}

func TestFinishResponseSchema(t *testing.T) {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	schema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": map[string]any{"type": "integer", "description": "the answer"}},
		"required":   []any{"answer"},
	}
	a := preset.DefaultAgent(cfg, &preset.Options{FinishResponseSchema: schema})
	if slices.Contains(a.IncludeDefaultTools, "FinishTool") {
		t.Errorf("include_default_tools = %v still has FinishTool", a.IncludeDefaultTools)
	}
	m, p := scripted(t, cfg)
	req := runOnce(t, a.WithOptions(&agent.Options{Model: m}), p)
	if got, want := toolNames(req.Tools), []string{"file_editor", "finish", "task_tracker", "terminal", "think"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	for _, s := range req.Tools {
		if s.Name != "finish" {
			continue
		}
		params, _ := json.Marshal(s.Parameters)
		if !strings.Contains(string(params), `"answer"`) {
			t.Errorf("finish parameters lack the response field: %s", params)
		}
	}
}

func TestExtraTools(t *testing.T) {
	a := preset.DefaultAgent(llm.DefaultConfig("openai/gpt-4o"), &preset.Options{ExtraTools: []tool.Spec{{Name: "grep"}, {Name: "glob"}}})
	var names []string
	for _, s := range a.Tools {
		names = append(names, s.Name)
	}
	if want := []string{"terminal", "file_editor", "task_tracker", "grep", "glob"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
}

// Importing preset registers every built-in tool and every provider.
func TestRegistered(t *testing.T) {
	reg := tool.Registered()
	for _, n := range preset.BuiltinTools() {
		if !slices.Contains(reg, n) {
			t.Errorf("tool %q is not registered (registered: %v)", n, reg)
		}
	}
	for _, model := range []string{"openai/gpt-4o", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro", "openai/gpt-5.5"} {
		if _, err := llm.New(llm.DefaultConfig(model), nil); err != nil {
			t.Errorf("llm.New(%q): %v", model, err)
		}
	}
}
