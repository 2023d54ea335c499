// Package preset builds gohands' ready-made agents and registers everything
// an application needs to run them.
//
// The presets are the reference's: default, gpt5, gemini and planning (see
// Presets), each with the reference's tools and condenser settings, chosen
// by name with Lookup or New (the CLI's --preset flag, an agent server
// request).
//
// Importing preset registers every built-in tool (terminal, file_editor,
// task_tracker, glob, grep, think, finish, apply_patch, the gemini-style
// file tools, planning_file_editor, the task tool set and the browser
// tool set) with package tool and every LLM provider (OpenAI, Anthropic,
// Gemini) with package llm, so that an agent configuration read from JSON
// (a resumed conversation, a request to the agent server) can be
// materialised whatever tools and model it names. Libraries that know which tools they use import only
// those packages.
package preset

import (
	"maps"
	"slices"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/agent/finish"
	"github.com/gohands/gohands/agent/think"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/applypatch"
	"github.com/gohands/gohands/tools/browser"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/gemini"
	"github.com/gohands/gohands/tools/glob"
	"github.com/gohands/gohands/tools/grep"
	"github.com/gohands/gohands/tools/planning"
	"github.com/gohands/gohands/tools/task"
	"github.com/gohands/gohands/tools/tasktracker"
	"github.com/gohands/gohands/tools/terminal"

	// Tools no preset lists, registered for agents that name them.
	_ "github.com/gohands/gohands/tools/askoracle"
	_ "github.com/gohands/gohands/tools/childconversation"
	_ "github.com/gohands/gohands/tools/routetask"
	_ "github.com/gohands/gohands/tools/workflow"

	// Every wire API, for models chosen at run time.
	_ "github.com/gohands/gohands/llm/providers"
)

// Options configure DefaultAgent. A nil *Options is the default.
type Options struct {
	// FinishResponseSchema, if set, is a JSON schema (an object) the
	// finish tool's arguments must also carry: the model then ends its run
	// with a structured result. The finish tool moves from the built-ins
	// to the agent's tool specs, with the schema as its response_schema
	// param, as in the reference.
	FinishResponseSchema map[string]any
	// ExtraTools are further tool specs, added after the default ones.
	ExtraTools []tool.Spec
	// Browser adds the browser tool set (BrowserToolSet): one headless
	// Chromium per conversation, started on the first browser action. It
	// is the reference's cli_mode=False: its default agent has the browser
	// except in its CLI, and so does gohands (gohands run adds it with
	// --browser).
	Browser bool
	// SubAgents adds the task tool set, so the agent can hand work to
	// sub-agents, several at once (tool_concurrency_limit becomes
	// SubAgentConcurrency).
	SubAgents bool
	// PlanPath is where the planning preset keeps its plan (an absolute
	// path); empty means its default.
	PlanPath string
}

// DefaultTools returns the specs of the default tools: a terminal, the
// file editor and the task tracker. The built-in think and finish tools
// come with every agent and are not listed.
func DefaultTools() []tool.Spec {
	return []tool.Spec{
		{Name: terminal.Name},
		{Name: fileeditor.Name},
		{Name: tasktracker.Name},
	}
}

// CondenserUsageID is the usage id of the default condenser's model, as in
// the reference.
const CondenserUsageID = "condenser"

// DefaultAgent returns the default agent for the model cfg describes: the
// default tools plus the built-in think and finish tools, and the
// summarizing condenser of the reference's default agent (summarising with
// the same model under usage id "condenser", over 80 events keeping the
// first 4), like the reference's get_default_agent in CLI mode (no
// browser). Unlike the reference, it also loads the workspace's context
// files and skills (AGENTS.md, CLAUDE.md, GEMINI.md, .cursorrules,
// .openhands/skills, …) and the user's skills, as the agents developers
// use every day do; every preset does.
//
// With opts it can also have the browser and sub-agents.
func DefaultAgent(cfg llm.Config, opts *Options) *agent.Agent {
	var o Options
	if opts != nil {
		o = *opts
	}
	specs := append(DefaultTools(), o.optionalTools()...)
	a := agent.New(cfg, specs, nil)
	a.Condenser = summarizing(cfg, CondenserUsageID, 80, 4)
	a.AgentContext = workspaceContext()
	o.finishAgent(a)
	if o.FinishResponseSchema != nil {
		a.Tools = append(a.Tools, tool.Spec{
			Name:   finish.Name,
			Params: event.Map[string, any]{tool.ResponseSchemaParam: maps.Clone(o.FinishResponseSchema)},
		})
		a.IncludeDefaultTools = slices.DeleteFunc(a.IncludeDefaultTools, func(c string) bool { return c == "FinishTool" })
	}
	return a
}

// BuiltinTools returns the names of the built-in tools this package
// registers, sorted.
func BuiltinTools() []string {
	names := []string{
		terminal.Name, fileeditor.Name, tasktracker.Name,
		glob.Name, grep.Name, think.Name, finish.Name,
		applypatch.Name, planning.Name, task.ToolSetName, browser.Name,
	}
	names = append(names, gemini.Names...)
	slices.Sort(names)
	return names
}
