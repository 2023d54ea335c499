package server_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/preset"
)

// referenceAgents reads testdata/reference_agents.json: the agents the
// reference builds for its presets and from agent_settings
// (testdata/gen_reference_agents.py).
func referenceAgents(t *testing.T) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/reference_agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// agentShape is what decides an agent's tools and memory: tool names,
// built-in tools, prompt file, condenser size, parallel tool calls.
type agentShape struct {
	Tools                []string
	Builtins             []string
	PromptFile           string
	MaxSize, KeepFirst   float64
	CondenserUsage       string
	ToolConcurrencyLimit float64
}

func shapeOf(a map[string]any) agentShape {
	var s agentShape
	for _, t := range a["tools"].([]any) {
		s.Tools = append(s.Tools, t.(map[string]any)["name"].(string))
	}
	for _, b := range a["include_default_tools"].([]any) {
		s.Builtins = append(s.Builtins, b.(string))
	}
	s.PromptFile, _ = a["system_prompt_filename"].(string)
	if c, ok := a["condenser"].(map[string]any); ok {
		s.MaxSize, _ = c["max_size"].(float64)
		s.KeepFirst, _ = c["keep_first"].(float64)
		s.CondenserUsage, _ = c["llm"].(map[string]any)["usage_id"].(string)
	}
	s.ToolConcurrencyLimit, _ = a["tool_concurrency_limit"].(float64)
	return s
}

// finishModel answers every request with a finish call.
func finishModel(t *testing.T) *llmtest.Server {
	return llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, nil)
}

// offeredTools returns the tool names of the model's requests for the
// conversation whose first user message is task.
func offeredTools(model *llmtest.Server, task string) []string {
	for _, r := range model.Requests() {
		if !strings.Contains(string(r.RawBody), task) {
			continue
		}
		var body struct {
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		if r.Decode(&body) != nil {
			continue
		}
		var names []string
		for _, t := range body.Tools {
			names = append(names, t.Function.Name)
		}
		slices.Sort(names)
		return names
	}
	return nil
}

func runMessage(task string) map[string]any {
	return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": task}}, "run": true}
}

// TestPresetAgents: the agents of the reference's presets, as its client
// sends them, run here; agent_settings builds the agent the reference's
// server builds, and a gohands preset named in it gives the same agent as
// the reference's preset of that name.
func TestPresetAgents(t *testing.T) {
	ref := referenceAgents(t)
	model := finishModel(t)
	ts := newTestServer(t, nil)
	llmJSON := pythonAgent(t, model.URL+"/v1")["llm"]

	start := func(t *testing.T, body map[string]any, task string) map[string]any {
		t.Helper()
		ts := ts.on(t)
		body["workspace"] = map[string]any{"working_dir": t.TempDir(), "kind": "LocalWorkspace"}
		body["initial_message"] = runMessage(task)
		var info map[string]any
		ts.must(201, "POST", "/api/conversations", body, &info)
		ts.waitStatus(info["id"].(string), "finished")
		return info
	}

	// The reference's preset agents, sent whole as its client does.
	for _, name := range []string{"default", "gpt5", "gemini", "planning"} {
		t.Run("agent/"+name, func(t *testing.T) {
			a := ref[name]
			a["llm"] = llmJSON
			task := "reference agent " + name
			info := start(t, map[string]any{"agent": a}, task)
			if got, want := shapeOf(info["agent"].(map[string]any)), shapeOf(ref[name]); !equalShape(got, want) {
				t.Errorf("stored agent %+v, want %+v", got, want)
			}
			offered := offeredTools(model, task)
			for _, n := range shapeOf(a).Tools {
				if n == preset.BrowserToolSet {
					continue
				}
				if n == "task_tool_set" {
					n = "task"
				}
				if !slices.Contains(offered, n) {
					t.Errorf("model was offered %v, not %s", offered, n)
				}
			}
		})
	}

	// agent_settings without a preset: the reference server's agent.
	t.Run("settings", func(t *testing.T) {
		info := start(t, map[string]any{"agent_settings": map[string]any{"llm": llmJSON}}, "settings plain")
		if got, want := shapeOf(info["agent"].(map[string]any)), shapeOf(ref["settings"]); !equalShape(got, want) {
			t.Errorf("agent %+v, want the reference's %+v", got, want)
		}
		info = start(t, map[string]any{"agent_settings": map[string]any{"llm": llmJSON, "enable_sub_agents": true}}, "settings sub-agents")
		if got, want := shapeOf(info["agent"].(map[string]any)), shapeOf(ref["settings_sub_agents"]); !equalShape(got, want) {
			t.Errorf("agent %+v, want the reference's %+v", got, want)
		}
	})

	// A preset by name: the reference's preset agent of that name.
	for _, name := range preset.Names() {
		t.Run("preset/"+name, func(t *testing.T) {
			task := "preset " + name
			info := start(t, map[string]any{"agent_settings": map[string]any{"llm": llmJSON, "preset": name}}, task)
			got := shapeOf(info["agent"].(map[string]any))
			if want := shapeOf(ref[name]); !equalShape(got, want) {
				t.Errorf("agent %+v, want the reference's %s preset %+v", got, name, want)
			}
			offered := offeredTools(model, task)
			for _, n := range got.Tools {
				if !slices.Contains(offered, n) {
					t.Errorf("model was offered %v, not %s", offered, n)
				}
			}
		})
	}

	// Settings given beside the preset win over it.
	t.Run("overrides", func(t *testing.T) {
		info := start(t, map[string]any{"agent_settings": map[string]any{
			"llm": llmJSON, "preset": "gpt5",
			"tools":                  []any{map[string]any{"name": "terminal"}},
			"condenser":              map[string]any{"max_size": 50, "keep_first": 3},
			"tool_concurrency_limit": 2,
		}}, "overrides")
		got := shapeOf(info["agent"].(map[string]any))
		want := agentShape{Tools: []string{"terminal"}, Builtins: []string{"FinishTool", "ThinkTool"}, PromptFile: "system_prompt.j2",
			MaxSize: 50, KeepFirst: 3, CondenserUsage: "condenser", ToolConcurrencyLimit: 2}
		if !equalShape(got, want) {
			t.Errorf("agent %+v, want %+v", got, want)
		}
		info = start(t, map[string]any{"agent_settings": map[string]any{
			"llm": llmJSON, "preset": "gpt5", "condenser": map[string]any{"enabled": false},
		}}, "no condenser")
		if c := info["agent"].(map[string]any)["condenser"]; c != nil {
			t.Errorf("condenser %v, want none", c)
		}
	})

	t.Run("errors", func(t *testing.T) {
		ws := map[string]any{"working_dir": t.TempDir(), "kind": "LocalWorkspace"}
		for _, c := range []struct {
			name string
			body map[string]any
			want string
		}{
			{"unknown preset", map[string]any{"agent_settings": map[string]any{"llm": llmJSON, "preset": "gpt9"}}, "gpt5"},
			{"unknown tool", map[string]any{"agent_settings": map[string]any{"llm": llmJSON, "tools": []any{map[string]any{"name": "nope"}}}}, "nope"},
			{"small condenser", map[string]any{"agent_settings": map[string]any{"llm": llmJSON, "condenser": map[string]any{"max_size": 5}}}, "max_size"},
			{"unknown condenser", map[string]any{"agent_settings": map[string]any{"llm": llmJSON, "condenser": map[string]any{"condenser_kind": "magic"}}}, "magic"},
			{"acp settings without a command", map[string]any{"agent_settings": map[string]any{"agent_kind": "acp"}}, "acp_command is required"},
			{"critic", map[string]any{"agent_settings": map[string]any{"llm": llmJSON, "verification": map[string]any{"critic_enabled": true}}}, "critic"},
			{"bad settings", map[string]any{"agent_settings": []any{1}}, "agent_settings"},
			{"bad llm", map[string]any{"agent_settings": map[string]any{"llm": "gpt"}}, "llm"},
			{"profile and agent", map[string]any{"agent_profile_id": "3fa85f64-5717-4562-b3fc-2c963f66afa6", "agent_settings": map[string]any{"llm": llmJSON}}, "mutually exclusive"},
		} {
			c.body["workspace"] = ws
			status, data := ts.do("POST", "/api/conversations", c.body)
			if status != 422 || !strings.Contains(string(data), c.want) {
				t.Errorf("%s: %d %s, want 422 naming %q", c.name, status, data, c.want)
			}
		}
	})
}

func equalShape(a, b agentShape) bool {
	return slices.Equal(a.Tools, b.Tools) && slices.Equal(a.Builtins, b.Builtins) && a.PromptFile == b.PromptFile &&
		a.MaxSize == b.MaxSize && a.KeepFirst == b.KeepFirst && a.CondenserUsage == b.CondenserUsage &&
		a.ToolConcurrencyLimit == b.ToolConcurrencyLimit
}
