// Package agent is gohands' default agent: the step of the agent loop
// that asks the model for its next move and carries it out with tools.
//
// An [Agent] is an immutable configuration, serialised as the reference's
// Agent object (kind "Agent") in a conversation's
// base_state.json. A conversation (package conversation) drives it: Start
// binds it to one conversation and materialises its tools, and each Step
//
//  1. executes the pending actions, if any (confirmed actions, or actions
//     left by a process that died);
//  2. lets the condenser, if any, shorten the model's view;
//  3. calls the model with every tool and turns its reply into events: a
//     text reply finishes the run; tool calls become ActionEvents, wait
//     for confirmation if the policy asks for it, and run (in parallel up
//     to ToolConcurrencyLimit, with per-resource locks), their results
//     committed in the order of the calls.
//
// Mistakes of the model (unknown tools, bad arguments) and failures of
// tools become events the model sees, so the run recovers; only a failing
// LLM ends a step with an error, except a context window overflow, which
// asks the condenser for a condensation when it handles requests.
//
// Start also wires the rest of the configuration: the condenser decoded
// from the agent's condenser field (package condenser); the agent context
// (package skill), whose skills are loaded once and shown in the system
// prompt's dynamic context, keyword skills going into the user messages
// that trigger them; the conversation's security analyzer, a
// security.RuleAnalyzer getting the workspace and secret names; and hooks
// (package hook) from the conversation's hook_config or the workspace's
// .openhands/hooks.json, run at session start and end, on user messages,
// around each tool call and before the agent finishes.
package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gohands/gohands/agent/switchllm"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"

	// The default tools are built in, as in the reference.
	_ "github.com/gohands/gohands/agent/finish"
	_ "github.com/gohands/gohands/agent/think"
	"github.com/gohands/gohands/agent/visioninspect"
)

// Default values of Agent fields (the reference's).
const (
	DefaultSystemPromptFilename   = "system_prompt.j2"
	DefaultSecurityPolicyFilename = "security_policy.j2"
)

// DefaultTools are the built-in tools every agent has unless
// IncludeDefaultTools says otherwise, by class name as the reference
// names them.
var DefaultTools = []string{"FinishTool", "ThinkTool"}

// FinishToolName is the tool that ends a run.
const FinishToolName = "finish"

// Agent is the default agent's configuration: every exported field is
// persisted. The parts that cannot be (a model value, tool values, a
// condenser) are [Options], given to New or WithOptions, and must be given
// again when a conversation is resumed.
//
// Make one with New, or decode one from JSON; the zero value lacks the
// reference's defaults.
type Agent struct {
	// LLM is the model configuration.
	LLM llm.Config `json:"llm"`
	// Tools are the tools to resolve from the tool registry.
	Tools event.List[tool.Spec] `json:"tools"`
	// MCPConfig is the MCP servers' configuration in the reference's
	// format: server name → server, or the {"mcpServers": {...}} wrapper.
	// Start connects these servers and offers their tools, unless
	// MCPConnected says the caller already did.
	MCPConfig event.Map[string, json.RawMessage] `json:"mcp_config"`
	// FilterToolsRegex, if set, keeps only the resolved tools whose name
	// matches it at the start (built-in tools are never filtered).
	FilterToolsRegex *string `json:"filter_tools_regex,omitempty"`
	// IncludeDefaultTools are the built-in tools, by class name
	// ("FinishTool", "ThinkTool").
	IncludeDefaultTools event.List[string] `json:"include_default_tools"`
	// AgentContext is the reference's AgentContext (skills, extra
	// prompt text), kept as JSON.
	AgentContext json.RawMessage `json:"agent_context,omitempty"`
	// SystemPrompt, if set, replaces gohands' system prompt.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Persona, if set, replaces the paragraph of gohands' system prompt
	// that says who the agent is (name, role, tone); how it works with
	// its tools stays. It has no effect with SystemPrompt. A gohands
	// extension: the reference's Agent has no such field, so it is left
	// out of the JSON when empty.
	Persona                string `json:"persona,omitempty"`
	SystemPromptFilename   string `json:"system_prompt_filename"`
	SecurityPolicyFilename string `json:"security_policy_filename"`
	// SystemPromptKwargs are the reference's template arguments, kept for
	// compatibility.
	SystemPromptKwargs event.Map[string, any] `json:"system_prompt_kwargs"`
	// Condenser and Critic are kind-tagged configurations, kept as JSON.
	Condenser json.RawMessage `json:"condenser,omitempty"`
	Critic    json.RawMessage `json:"critic,omitempty"`
	// ToolConcurrencyLimit is how many tool calls of one reply may run at
	// once (1: one after the other).
	ToolConcurrencyLimit int `json:"tool_concurrency_limit"`

	// opts are the runtime parts (WithOptions).
	opts Options
	// callerMCP are the servers the caller connected (Options.MCPConnected).
	callerMCP []string
	// subAgentFiles are the sub-agent definitions of the plugins added
	// (WithPlugins), for the task tool (tool.Context.SubAgentFiles).
	subAgentFiles []string
	// criticKey is the APIBasedCritic's api_key once MapSecrets has
	// mapped it (encrypted, exposed or decrypted); see MarshalJSON.
	criticKey secret.String
	// condenserKeys are the secrets of the condenser's LLM configurations
	// once MapSecrets has mapped them (see condsecrets.go).
	condenserKeys []secret.String
}

// Options are an agent's runtime parts: values that are not
// configuration and are not persisted. The zero value is ready to use.
type Options struct {
	// Model, if set, is used instead of an LLM made from the LLM config
	// (tests pass a scripted one; applications a Router or Fallback).
	Model llm.Model
	// ExtraTools are tools added as they are, without the registry.
	ExtraTools []tool.Tool
	// MCPConnected says the caller has connected the servers MCPConfig
	// holds when the options are set (New, WithOptions) itself, and passed
	// their tools in ExtraTools: Start does not connect them again. The
	// servers added after (WithPlugins: a start's, load_plugin's or an
	// ambient plugin's) are Start's to connect.
	MCPConnected bool
	// Condenser, if set, may condense the view before each LLM call, in
	// place of the one decoded from the Condenser field.
	Condenser condenser.Condenser
}

// New returns an agent with the reference's defaults using the model
// configured by cfg, the tools of specs and the runtime parts of opts
// (nil: none).
func New(cfg llm.Config, specs []tool.Spec, opts *Options) *Agent {
	a := &Agent{LLM: cfg, Tools: specs}
	a.SetDefaults()
	return a.WithOptions(opts)
}

// WithOptions returns a shallow copy of a with the runtime parts of opts
// (nil: none) in place of a's; a is not changed. Agents decoded from JSON
// get their runtime parts this way.
func (a *Agent) WithOptions(opts *Options) *Agent {
	b := *a
	b.opts, b.callerMCP = Options{}, nil
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.MCPConnected {
		b.callerMCP = mcpServerNames(b.MCPConfig)
	}
	return &b
}

// Options returns a's runtime parts.
func (a *Agent) Options() Options { return a.opts }

// SetDefaults implements event.Defaulter: decoded agents get the
// reference's defaults for absent fields.
func (a *Agent) SetDefaults() {
	a.IncludeDefaultTools = slices.Clone(DefaultTools)
	a.SystemPromptFilename = DefaultSystemPromptFilename
	a.SecurityPolicyFilename = DefaultSecurityPolicyFilename
	a.ToolConcurrencyLimit = 1
	// The reference always sets this template argument.
	a.SystemPromptKwargs = event.Map[string, any]{"llm_security_analyzer": true}
}

// MapSecrets implements secret.Holder: the LLM config holds the API key,
// and an APIBasedCritic's configuration its own.
func (a *Agent) MapSecrets(f func(secret.String) (secret.String, error)) (any, error) {
	c, err := a.LLM.MapSecrets(f)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	b := *a
	b.LLM = c.(llm.Config)
	if k := a.criticSecret(); !k.IsZero() {
		if b.criticKey, err = f(k); err != nil {
			return nil, fmt.Errorf("agent: critic api_key: %w", err)
		}
	}
	ks, err := a.condenserSecrets()
	if err != nil {
		return nil, err
	}
	if len(ks) > 0 {
		b.condenserKeys = make([]secret.String, len(ks))
		for i, k := range ks {
			if k.IsZero() {
				continue
			}
			if b.condenserKeys[i], err = f(k); err != nil {
				return nil, fmt.Errorf("agent: condenser llm: %w", err)
			}
		}
	}
	return &b, nil
}

// MarshalJSON implements json.Marshaler; see AppendJSON.
func (a *Agent) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil) }

// AppendJSON implements event.JSONAppender: the agent with its critic's
// api_key and its condenser's LLM secrets in their secret form, as the
// LLM's key is written: encrypted or exposed when MapSecrets made it so,
// redacted otherwise.
func (a *Agent) AppendJSON(b []byte) ([]byte, error) {
	type plain Agent // the same fields, without this method
	p := plain(*a)
	if k := a.criticSecret(); !k.IsZero() {
		crit, err := withCriticKey(a.Critic, k)
		if err != nil {
			return nil, err
		}
		p.Critic = crit
	}
	cond, err := a.condenserJSON(func(k secret.String) secret.String { return k })
	if err != nil {
		return nil, err
	}
	p.Condenser = cond
	out, err := event.MarshalJSON(&p)
	return append(b, out...), err
}

// Validate checks the configuration.
func (a *Agent) Validate() error {
	if a.ToolConcurrencyLimit < 1 {
		return fmt.Errorf("agent: tool_concurrency_limit %d: must be at least 1", a.ToolConcurrencyLimit)
	}
	for _, c := range a.IncludeDefaultTools {
		if _, ok := defaultToolNames[c]; !ok {
			return fmt.Errorf("agent: include_default_tools: unknown tool %q", c)
		}
	}
	// The condenser is decoded when the agent starts; a bad one is the
	// request's fault, said before anything is stored.
	if raw := bytes.TrimSpace(a.Condenser); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if _, err := condenser.Decode(raw); err != nil {
			return fmt.Errorf("agent: condenser: %w", err)
		}
	}
	// So is an agent context that cannot be read, explicit skills of one
	// name among them (the reference's validation refuses them too).
	if raw := bytes.TrimSpace(a.AgentContext); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		var ac skill.AgentContext
		if err := json.Unmarshal(raw, &ac); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	return nil
}

// defaultToolNames maps the built-in tools' class names to their registry
// names.
var defaultToolNames = map[string]string{
	"FinishTool":           "finish",
	"ThinkTool":            "think",
	"InvokeSkillTool":      "invoke_skill",
	switchllm.KindName:     switchllm.Name,
	visioninspect.KindName: visioninspect.Name,
}

// BuiltinKind returns the class name of the built-in tool that name names,
// by class name or tool name ("switch_llm", "SwitchLLMTool"), and whether
// there is one.
func BuiltinKind(name string) (string, bool) {
	if _, ok := defaultToolNames[name]; ok {
		return name, true
	}
	for kind, n := range defaultToolNames {
		if n == name {
			return kind, true
		}
	}
	return "", false
}

// BuiltinNames returns the tool names of the built-in tools, sorted.
func BuiltinNames() []string {
	return slices.Sorted(maps.Values(defaultToolNames))
}

// ToolNames returns the names of the tools the configuration asks for: the
// specs' names and the built-ins'. Extra tools are not included.
func (a *Agent) ToolNames() []string {
	var names []string
	for _, s := range a.Tools {
		names = append(names, s.Name)
	}
	for _, c := range a.IncludeDefaultTools {
		if n, ok := defaultToolNames[c]; ok {
			names = append(names, n)
		} else {
			names = append(names, tool.NameFromKind(c))
		}
	}
	return names
}

// Verify implements conversation.Agent: a resumed conversation may
// only be taken over by an Agent whose tools include every tool the
// persisted agent had. Everything else (model,
// condenser, prompt) may change.
func (a *Agent) Verify(persisted any) error {
	p, ok := persisted.(*Agent)
	if !ok {
		kind, _ := event.KindOf(persisted)
		return fmt.Errorf("agent: persisted agent is of kind %q, not Agent", kind)
	}
	have := a.ToolNames()
	for _, t := range a.opts.ExtraTools {
		have = append(have, t.Name())
	}
	var missing []string
	for _, n := range p.ToolNames() {
		if !slices.Contains(have, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("agent: tools %v of the persisted agent are missing: tools may be added on resume, not removed", missing)
	}
	return nil
}

// ResourceDeclarer is implemented by tools that say which resources an
// action uses, so that parallel calls on different resources run at once
// and calls on the same one wait for each other. Keys are strings such as
// "file:/abs/path" or "terminal:session"; no keys means no lock. Tools
// that do not implement it get one lock per tool name.
type ResourceDeclarer interface {
	Resources(action event.Action) []string
}

func init() {
	event.RegisterKind[Agent]("Agent")
}

// ForkAgent implements conversation.Agent: the copy runs a fork of
// the conversation, so a model given in Options is derived to keep metrics
// of its own (the fork's costs start apart from the source's).
func (a *Agent) ForkAgent() (conversation.Agent, error) {
	b := *a
	if l, ok := a.opts.Model.(*llm.LLM); ok {
		d, err := l.Derive(l.Config())
		if err != nil {
			return nil, fmt.Errorf("agent: fork: %w", err)
		}
		b.opts.Model = d
	}
	return &b, nil
}
