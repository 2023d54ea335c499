package preset

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/applypatch"
	"github.com/gohands/gohands/tools/browser"
	"github.com/gohands/gohands/tools/gemini"
	"github.com/gohands/gohands/tools/glob"
	"github.com/gohands/gohands/tools/grep"
	"github.com/gohands/gohands/tools/planning"
	"github.com/gohands/gohands/tools/task"
	"github.com/gohands/gohands/tools/tasktracker"
	"github.com/gohands/gohands/tools/terminal"
)

// BrowserToolSet is the registry name of the browser tool set, which
// Options.Browser adds. Without a Chromium installed the set resolves to
// no tools (the agent runs without them), as in the reference.
const BrowserToolSet = browser.Name

// SubAgentConcurrency is the tool_concurrency_limit of an agent with
// sub-agents, so that the task calls of one reply run at the same time.
const SubAgentConcurrency = 4

// A Preset is a ready-made agent, chosen by name: gohands run --preset NAME,
// or an agent server request naming it.
type Preset struct {
	// Name is what the preset is chosen by.
	Name string
	// Description says what the preset is for, in one line.
	Description string
	// Agent returns the preset's agent for the model cfg describes.
	Agent func(cfg llm.Config, opts *Options) *agent.Agent
}

// Names of the presets.
const (
	Default  = "default"
	GPT5     = "gpt5"
	Gemini   = "gemini"
	Planning = "planning"
)

var presets = []Preset{
	{Default, "terminal, file_editor and task_tracker (the reference's default agent)", DefaultAgent},
	{GPT5, "terminal, apply_patch and task_tracker, for models trained on the apply_patch format (GPT-5)", GPT5Agent},
	{Gemini, "terminal, the gemini-style read_file, write_file, edit and list_directory, and task_tracker", GeminiAgent},
	{Planning, "read-only exploration (glob, grep) writing a plan to PLAN.md with planning_file_editor", PlanningAgent},
}

// All returns every preset, the default first.
func All() []Preset { return slices.Clone(presets) }

// Names returns the presets' names, the default first.
func Names() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the preset called name; "" is the default one.
func Lookup(name string) (Preset, bool) {
	if name == "" {
		name = Default
	}
	for _, p := range presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// ErrUnknown is returned (wrapped) by New for a name no preset has.
var ErrUnknown = errors.New("preset: unknown preset")

// unknownError names the preset and the known ones; it matches ErrUnknown.
type unknownError struct{ name string }

func (e unknownError) Error() string {
	return fmt.Sprintf("unknown preset %q (known: %s)", e.name, strings.Join(Names(), ", "))
}

func (e unknownError) Unwrap() error { return ErrUnknown }

// New returns the agent of the preset called name ("" for the default)
// for the model cfg describes.
func New(name string, cfg llm.Config, opts *Options) (*agent.Agent, error) {
	p, ok := Lookup(name)
	if !ok {
		return nil, unknownError{name}
	}
	return p.Agent(cfg, opts), nil
}

// optionalTools are the specs Options adds after a preset's own tools.
func (o *Options) optionalTools() []tool.Spec {
	var specs []tool.Spec
	if o.Browser {
		specs = append(specs, tool.Spec{Name: BrowserToolSet})
	}
	if o.SubAgents {
		specs = append(specs, tool.Spec{Name: task.ToolSetName})
	}
	return append(specs, slices.Clone(o.ExtraTools)...)
}

// finishAgent applies what Options set on any preset's agent: the
// reference's cli_mode prompt argument (true without a browser), and
// parallel tool calls for sub-agents.
func (o *Options) finishAgent(a *agent.Agent) {
	kw := event.Map[string, any]{}
	maps.Copy(kw, a.SystemPromptKwargs)
	kw["cli_mode"] = !o.Browser
	a.SystemPromptKwargs = kw
	if o.SubAgents {
		a.ToolConcurrencyLimit = max(a.ToolConcurrencyLimit, SubAgentConcurrency)
	}
}

// workspaceContext is the agent context every preset has: the workspace's
// context files and skills, and the user's skills (see DefaultAgent).
func workspaceContext() json.RawMessage {
	b, err := json.Marshal(skill.AgentContext{LoadProjectSkills: true, LoadUserSkills: true})
	if err != nil {
		panic(fmt.Sprintf("preset: agent context: %v", err)) // a fixed, valid value
	}
	return b
}

// summarizing is the kind-tagged configuration of a summarizing condenser
// on the agent's model, under usageID.
func summarizing(cfg llm.Config, usageID string, maxSize, keepFirst int) []byte {
	cfg.UsageID = usageID
	c := condenser.NewLLMSummarizing(cfg, nil)
	c.MaxSize, c.KeepFirst = maxSize, keepFirst
	b, err := event.MarshalKinded(c)
	if err != nil {
		panic(fmt.Sprintf("preset: condenser: %v", err)) // fixed, valid values
	}
	return b
}

func options(opts *Options) Options {
	if opts == nil {
		return Options{}
	}
	return *opts
}

// GPT5Agent returns the reference's GPT-5 agent: apply_patch instead of
// file_editor, and the summarizing condenser (80 events, the first 4
// kept).
func GPT5Agent(cfg llm.Config, opts *Options) *agent.Agent {
	o := options(opts)
	specs := []tool.Spec{{Name: terminal.Name}, {Name: applypatch.Name}, {Name: tasktracker.Name}}
	a := agent.New(cfg, append(specs, o.optionalTools()...), nil)
	a.Condenser = summarizing(cfg, CondenserUsageID, 80, 4)
	a.AgentContext = workspaceContext()
	o.finishAgent(a)
	return a
}

// GeminiAgent returns the reference's Gemini agent: the gemini-style file
// tools instead of file_editor, and the summarizing condenser (80 events,
// the first 4 kept).
func GeminiAgent(cfg llm.Config, opts *Options) *agent.Agent {
	o := options(opts)
	specs := []tool.Spec{{Name: terminal.Name}}
	for _, n := range gemini.Names {
		specs = append(specs, tool.Spec{Name: n})
	}
	specs = append(specs, tool.Spec{Name: tasktracker.Name})
	a := agent.New(cfg, append(specs, o.optionalTools()...), nil)
	a.Condenser = summarizing(cfg, CondenserUsageID, 80, 4)
	a.AgentContext = workspaceContext()
	o.finishAgent(a)
	return a
}

// planningTemplate is the reference's system prompt template of its
// planning agent; gohands gives an agent that names it planningPrompt.
const planningTemplate = "system_prompt_planning.j2"

func init() {
	agent.RegisterSystemPrompt(planningTemplate, planningPrompt+planning.Structure())
}

// planningPrompt is the planning agent's system prompt.
const planningPrompt = `You are gohands' planning agent. You study a codebase and write a plan another agent will carry out; you change nothing else.

How to work:
- Find the relevant code with glob and grep, and read it with planning_file_editor's view command.
- Understand the task's context: the components involved, their constraints, what could break.
- Write the plan into the plan file with planning_file_editor (str_replace or insert under each header). Only the plan file can be edited.
- Be concrete: name the files, functions and tests each step touches, and how to check it worked.
- When the plan is complete, call finish with a short summary of it.

`

// PlanningAgent returns the reference's planning agent: read-only
// exploration with glob and grep, the plan written with
// planning_file_editor (at Options.PlanPath if set), and a summarizing
// condenser that keeps more (100 events, the first 6 kept) under usage id
// "planning_condenser". Browser and SubAgents do not apply to it.
func PlanningAgent(cfg llm.Config, opts *Options) *agent.Agent {
	o := options(opts)
	plan := tool.Spec{Name: planning.Name}
	if o.PlanPath != "" {
		plan.Params = event.Map[string, any]{"plan_path": o.PlanPath}
	}
	specs := []tool.Spec{{Name: glob.Name}, {Name: grep.Name}, plan}
	a := agent.New(cfg, append(specs, slices.Clone(o.ExtraTools)...), nil)
	// The reference's template name, not an inline prompt: the
	// reference 1.58.2 refuses an agent with both. The text is registered
	// for the name (init).
	a.SystemPromptFilename = planningTemplate
	kw := event.Map[string, any]{}
	maps.Copy(kw, a.SystemPromptKwargs)
	kw["plan_structure"] = planning.Structure()
	a.SystemPromptKwargs = kw
	a.Condenser = summarizing(cfg, "planning_condenser", 100, 6)
	a.AgentContext = workspaceContext()
	return a
}
