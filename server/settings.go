package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/agent/switchllm"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/tools/task"
)

// agentSettings is the reference's agent_settings of a start request
// (OpenHandsAgentSettings, agent_kind "openhands"), from which the server
// builds the agent (settings of agent_kind "acp", ACPAgentSettings, build
// an ACPAgent: acpSettingsAgent), plus one gohands key, preset, naming a tool preset
// (tools/preset: default, gpt5, gemini, planning). The reference ignores
// unknown keys here and builds its default agent, so a client may send
// preset to either server.
type agentSettings struct {
	AgentKind            string                     `json:"agent_kind,omitempty" enum:"openhands,llm,acp" description:"openhands (llm is its old name): the standard agent from these keys; acp: an ACPAgent from the reference's ACPAgentSettings keys (acp_server, acp_command, acp_args, acp_model, acp_session_mode, the timeouts, acp_file_secrets, mcp_config, agent_context)."`
	LLM                  json.RawMessage            `json:"llm" description:"The agent's LLM configuration (the reference's LLM object)."`
	Tools                []tool.Spec                `json:"tools,omitempty" description:"Tool specs; a built-in named here (switch_llm, think, ...) goes to include_default_tools. Absent or null: the preset's tools."`
	Preset               string                     `json:"preset,omitempty" description:"gohands: the tool preset (default, gpt5, gemini, planning) giving the tools, condenser and prompt; absent: the reference's default tools."`
	EnableSubAgents      bool                       `json:"enable_sub_agents,omitempty" description:"Add the task tool set (sub-agents)."`
	EnableBrowser        bool                       `json:"enable_browser,omitempty" description:"gohands: add the browser tool set."`
	EnableSwitchLLMTool  *bool                      `json:"enable_switch_llm_tool,omitempty" description:"Retired in the reference 1.58 (name switch_llm in tools): true or false adds or removes the switch_llm built-in."`
	ToolConcurrencyLimit *int                       `json:"tool_concurrency_limit,omitempty"`
	MCPConfig            map[string]json.RawMessage `json:"mcp_config,omitempty"`
	AgentContext         json.RawMessage            `json:"agent_context,omitempty"`
	Condenser            json.RawMessage            `json:"condenser,omitempty" description:"Condenser settings: condenser_kind llm_summarizing (max_size, keep_first, max_tokens, ...) or noop, enabled."`
	Verification         json.RawMessage            `json:"verification,omitempty"`
}

// condenserSettings are the keys of the reference's condenser settings
// that are not the condenser's own fields.
type condenserSettings struct {
	Kind    string `json:"condenser_kind"`
	Enabled *bool  `json:"enabled"`
}

// agentFromSettings builds the agent an agent_settings payload describes,
// as the reference's OpenHandsAgentSettings.create_agent does: tools
// absent mean the default ones, the built-in finish and think tools, the
// summarizing condenser of the settings (240 events, the first 2 kept,
// unless they say otherwise). Naming a preset takes its tools, condenser
// and prompt instead; explicit tools, condenser and agent_context in the
// settings still win.
func agentFromSettings(raw json.RawMessage) (*agent.Agent, error) {
	loc := func(path ...any) []any { return append([]any{"body", "agent_settings"}, path...) }
	var st agentSettings
	if err := json.Unmarshal(raw, &st); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, invalid(err.Error(), loc(strings.Split(te.Field, ".")[0])...)
		}
		return nil, &invalidError{loc: loc(), typ: "model_type", msg: "Input should be an agent settings object: " + err.Error()}
	}
	switch st.AgentKind {
	case "", "openhands", "llm":
	case "acp":
		return nil, invalid("agent_kind acp builds an ACPAgent (acpSettingsAgent), not an Agent", loc("agent_kind")...)
	default:
		return nil, invalid(fmt.Sprintf("unknown agent_kind %q (openhands, acp)", st.AgentKind), loc("agent_kind")...)
	}
	if isNull(st.LLM) {
		st.LLM = json.RawMessage(`{}`) // the reference's default LLM
	}
	var cfg llm.Config
	if err := json.Unmarshal(st.LLM, &cfg); err != nil {
		return nil, invalid(err.Error(), loc("llm")...)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, invalid("llm.model must not be empty", loc("llm", "model")...)
	}
	p, ok := preset.Lookup(st.Preset)
	if !ok {
		return nil, invalid(fmt.Sprintf("unknown preset %q (known: %s)", st.Preset, strings.Join(preset.Names(), ", ")), loc("preset")...)
	}
	var a *agent.Agent
	if st.Preset != "" {
		a = p.Agent(cfg, &preset.Options{Browser: st.EnableBrowser, SubAgents: st.EnableSubAgents})
	} else {
		// The reference's default_tool_specs and Agent defaults: no
		// workspace skills unless agent_context asks, the condenser of the
		// settings' defaults.
		specs := preset.DefaultTools()
		if st.EnableBrowser {
			specs = append(specs, tool.Spec{Name: preset.BrowserToolSet})
		}
		if st.EnableSubAgents {
			specs = append(specs, tool.Spec{Name: task.ToolSetName})
		}
		a = agent.New(cfg, specs, nil)
		if st.Condenser == nil {
			st.Condenser = json.RawMessage(`{}`)
		}
	}
	if st.Tools != nil {
		// As the reference 1.58's create_agent: a built-in named in tools
		// (switch_llm, think, ...) is asked for by class name in
		// include_default_tools; the other specs are kept as given.
		a.Tools = nil
		for _, s := range st.Tools {
			if kind, ok := agent.BuiltinKind(s.Name); ok && len(s.Params) == 0 {
				a.IncludeDefaultTools = appendNew(a.IncludeDefaultTools, kind)
				continue
			}
			a.Tools = append(a.Tools, s)
		}
		if a.Tools == nil {
			a.Tools = []tool.Spec{}
		}
	}
	// The reference 1.58 offers its switch_llm built-in with its default
	// tools (not with a named preset's) and otherwise when tools name it.
	// enable_switch_llm_tool, which it no longer takes in a request, still
	// turns it on or off here, as 1.58 folded a stored one into tools.
	switch {
	case st.EnableSwitchLLMTool != nil && !*st.EnableSwitchLLMTool:
		a.IncludeDefaultTools = slices.DeleteFunc(a.IncludeDefaultTools, func(k string) bool { return k == switchllm.KindName })
	case st.EnableSwitchLLMTool != nil || st.Preset == "" && st.Tools == nil:
		a.IncludeDefaultTools = appendNew(a.IncludeDefaultTools, switchllm.KindName)
	}
	if st.ToolConcurrencyLimit != nil {
		a.ToolConcurrencyLimit = *st.ToolConcurrencyLimit
	}
	if len(st.MCPConfig) > 0 {
		a.MCPConfig = st.MCPConfig
	}
	if !isNull(st.AgentContext) {
		a.AgentContext = st.AgentContext
	}
	if !isNull(st.Condenser) {
		c, err := condenserFromSettings(cfg, st.Condenser)
		if err != nil {
			return nil, invalid(err.Error(), loc("condenser")...)
		}
		a.Condenser = c
	}
	if !isNull(st.Verification) {
		var v struct {
			CriticEnabled bool `json:"critic_enabled"`
		}
		if err := json.Unmarshal(st.Verification, &v); err != nil {
			return nil, invalid(err.Error(), loc("verification")...)
		}
		if v.CriticEnabled {
			// The reference's critic is a hosted service; none runs here.
			return nil, invalid("critic_enabled: this server has no critic service", loc("verification", "critic_enabled")...)
		}
	}
	return a, nil
}

// condenserFromSettings turns the reference's condenser settings into a
// kind-tagged condenser configuration (nil when disabled or noop), the
// summarizing model being the agent's under usage id "condenser".
func condenserFromSettings(cfg llm.Config, raw json.RawMessage) (json.RawMessage, error) {
	var cs condenserSettings
	if err := json.Unmarshal(raw, &cs); err != nil {
		return nil, err
	}
	if cs.Enabled != nil && !*cs.Enabled {
		return nil, nil
	}
	switch cs.Kind {
	case "", "llm_summarizing":
	case "noop":
		return nil, nil
	default:
		return nil, fmt.Errorf("unknown condenser_kind %q (llm_summarizing, noop)", cs.Kind)
	}
	cfg.UsageID = preset.CondenserUsageID
	if !cfg.IsSubscription() {
		// As the reference's condenser: a summary is read whole, so it
		// does not stream unless the provider requires it.
		cfg.Stream = false
	}
	c := condenser.NewLLMSummarizing(cfg, nil)
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	c.LLM = cfg // the settings carry no model of their own
	if c.MaxSize < 20 {
		return nil, fmt.Errorf("max_size %d: must be at least 20", c.MaxSize)
	}
	if c.KeepFirst < 0 {
		return nil, fmt.Errorf("keep_first %d: must not be negative", c.KeepFirst)
	}
	return event.MarshalKinded(c)
}

// appendNew appends s to list unless it holds it.
func appendNew(list event.List[string], s string) event.List[string] {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
