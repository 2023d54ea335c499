package preset_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tools/preset"
)

type presetSummary struct {
	Tools []struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	} `json:"tools"`
	IncludeDefaultTools  []string `json:"include_default_tools"`
	SystemPromptFilename string   `json:"system_prompt_filename"`
	SystemPromptKwargs   []string `json:"system_prompt_kwargs"`
	CLIMode              *bool    `json:"cli_mode"`
	Condenser            struct {
		Kind      string `json:"kind"`
		MaxSize   int    `json:"max_size"`
		KeepFirst int    `json:"keep_first"`
		UsageID   string `json:"usage_id"`
		Model     string `json:"model"`
	} `json:"condenser"`
}

func summarize(t *testing.T, a *agent.Agent) presetSummary {
	t.Helper()
	b, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Tools                json.RawMessage `json:"tools"`
		IncludeDefaultTools  []string        `json:"include_default_tools"`
		SystemPromptFilename string          `json:"system_prompt_filename"`
		SystemPromptKwargs   map[string]any  `json:"system_prompt_kwargs"`
		Condenser            struct {
			Kind      string `json:"kind"`
			MaxSize   int    `json:"max_size"`
			KeepFirst int    `json:"keep_first"`
			LLM       struct {
				UsageID string `json:"usage_id"`
				Model   string `json:"model"`
			} `json:"llm"`
		} `json:"condenser"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var s presetSummary
	if err := json.Unmarshal(raw.Tools, &s.Tools); err != nil {
		t.Fatal(err)
	}
	s.IncludeDefaultTools, s.SystemPromptFilename = raw.IncludeDefaultTools, raw.SystemPromptFilename
	for k := range raw.SystemPromptKwargs {
		s.SystemPromptKwargs = append(s.SystemPromptKwargs, k)
	}
	slices.Sort(s.SystemPromptKwargs)
	if v, ok := raw.SystemPromptKwargs["cli_mode"].(bool); ok {
		s.CLIMode = &v
	}
	c := raw.Condenser
	s.Condenser.Kind, s.Condenser.MaxSize, s.Condenser.KeepFirst = c.Kind, c.MaxSize, c.KeepFirst
	s.Condenser.UsageID, s.Condenser.Model = c.LLM.UsageID, c.LLM.Model
	return s
}

// Each preset has the reference's tools, built-ins, prompt arguments and
// condenser settings (testdata/reference_presets.json, written by
// testdata/gen_reference_presets.py from the reference's presets).
func TestPresetsMatchReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "reference_presets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]presetSummary
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cases := map[string]struct {
		preset string
		opts   *preset.Options
	}{
		"default":         {preset.Default, nil},
		"default_browser": {preset.Default, &preset.Options{Browser: true}},
		"gpt5":            {preset.GPT5, nil},
		"gpt5_browser":    {preset.GPT5, &preset.Options{Browser: true}},
		"gemini":          {preset.Gemini, nil},
		"gemini_browser":  {preset.Gemini, &preset.Options{Browser: true}},
		"planning":        {preset.Planning, nil},
	}
	if len(ref) != len(cases) {
		t.Errorf("the recording has %d presets, the test %d", len(ref), len(cases))
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := preset.New(c.preset, cfg, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ref[name], summarize(t, a)); diff != "" {
				t.Errorf("(-reference +gohands):\n%s", diff)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	if got := preset.Names(); !slices.Equal(got, []string{"default", "gpt5", "gemini", "planning"}) {
		t.Errorf("names %v", got)
	}
	if p, ok := preset.Lookup(""); !ok || p.Name != preset.Default {
		t.Errorf("empty name: %v %v", p.Name, ok)
	}
	for _, p := range preset.All() {
		if p.Description == "" || p.Agent == nil {
			t.Errorf("%+v", p)
		}
	}
	_, err := preset.New("gpt6", llm.DefaultConfig("openai/gpt-4o"), nil)
	if !errors.Is(err, preset.ErrUnknown) || err.Error() != `unknown preset "gpt6" (known: default, gpt5, gemini, planning)` {
		t.Errorf("err = %v", err)
	}
}

// Every preset's agent starts: its tools are registered and resolve, and
// the model is offered them.
func TestPresetsRun(t *testing.T) {
	want := map[string][]string{
		preset.Default:  {"file_editor", "finish", "task", "task_tracker", "terminal", "think"},
		preset.GPT5:     {"apply_patch", "finish", "task", "task_tracker", "terminal", "think"},
		preset.Gemini:   {"edit", "finish", "list_directory", "read_file", "task", "task_tracker", "terminal", "think", "write_file"},
		preset.Planning: {"finish", "glob", "grep", "planning_file_editor", "think"},
	}
	for _, name := range preset.Names() {
		t.Run(name, func(t *testing.T) {
			cfg := llm.DefaultConfig("openai/gpt-4o")
			a, err := preset.New(name, cfg, &preset.Options{SubAgents: true})
			if err != nil {
				t.Fatal(err)
			}
			m, p := scriptedProvider(t, cfg)
			req := runOnce(t, a.WithOptions(&agent.Options{Model: m}), p)
			if got := toolNames(req.Tools); !slices.Equal(got, want[name]) {
				t.Errorf("tools %v, want %v", got, want[name])
			}
			if slices.Contains(want[name], "task") != (a.ToolConcurrencyLimit == preset.SubAgentConcurrency) {
				t.Errorf("tool_concurrency_limit %d", a.ToolConcurrencyLimit)
			}
			// The planning agent's prompt comes from its template name:
			// the reference 1.58.2 refuses an agent that has both an
			// inline system_prompt and a non-default file name.
			system := event.TextOf(req.Messages[0].Content)
			if planning := strings.Contains(system, "planning agent") && strings.Contains(system, "OBJECTIVE"); planning != (name == preset.Planning) {
				t.Errorf("system prompt (planning %v):\n%.300s", planning, system)
			}
			b, err := event.MarshalKinded(a)
			if err != nil {
				t.Fatal(err)
			}
			var wire struct {
				SystemPrompt *string `json:"system_prompt"`
			}
			if err := json.Unmarshal(b, &wire); err != nil || wire.SystemPrompt != nil {
				t.Errorf("the agent's JSON has a system_prompt (%v): the reference 1.58.2 refuses it beside system_prompt_filename", err)
			}
		})
	}
}
