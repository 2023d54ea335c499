// Package acp is the ACPAgent: a conversation whose agent is an external
// program (Claude Code, Codex, Gemini CLI…) spoken to over the Agent
// Client Protocol, JSON-RPC on the program's stdin and stdout
// (https://agentclientprotocol.com). The wire layer is
// github.com/coder/acp-go-sdk.
//
// An [Agent] is the reference's ACPAgent configuration (kind "ACPAgent").
// A conversation drives it like any agent: each
// Step is one whole remote turn. The first Step starts the server in its
// own process group, runs initialize, authenticate when the server offers
// a method whose credential is in its environment, session/load of the
// session a previous run stored (session/new when there is none or the
// server forgot it), and selects the model and mode. Each turn sends the
// latest user message as session/prompt, turns the session/update stream
// into events (agent text and thoughts into the turn's FinishAction, tool
// calls into ACPToolCallEvents updated in place by id, plans, usage into
// the conversation's metrics), and ends with a FinishAction as the
// reference does.
//
// LocalConversation.SwitchAgentModel switches the server's model, as the
// reference's switch_acp_model does: in the live session after the turn
// in progress (the "model" config option when the session has one, else
// session/set_model), or, before the first turn, recorded for the session
// to select; acp_model in the stored agent names it, so a resumed
// session selects it again.
//
// Unlike the reference, which approves every permission request, a
// session/request_permission goes through the conversation's security
// analyzer and confirmation policy: an action the policy holds is logged as
// a pending ACPPermissionAction and the conversation waits for
// confirmation; running again approves it, rejecting the pending actions
// denies it. The fs/* and terminal/* client methods are served from the
// conversation's workspace.
//
// Failures are ConversationErrorEvents with the reference's codes:
// ACPSpawnError, ACPInitError, ACPAuthRequired, ACPStartupTimeout,
// ACPPromptError.
package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
)

// Kind is the agent's kind in JSON.
const Kind = "ACPAgent"

// Defaults of the reference.
const (
	DefaultPromptTimeout  = 1800.0 // seconds without activity
	DefaultStartupTimeout = 90.0   // seconds, hard
	// SentinelUsageID marks the placeholder LLM of an ACP agent; it is
	// also the usage id its metrics are kept under.
	SentinelUsageID = "acp-managed"
)

// defaultFileSecrets is the reference 1.58's default acp_file_secrets
// (Codex, Gemini CLI on Vertex, Kimi Code, pi), kept so
// that a configuration written by gohands reads the same in Python.
// gohands does not materialise file secrets.
var defaultFileSecrets = []json.RawMessage{
	json.RawMessage(`{"secret_name":"CODEX_AUTH_JSON","filename":"auth.json","env_var":"CODEX_HOME","subdir":"codex","env_points_to":"dir","warn_if_unset":[]}`),
	json.RawMessage(`{"secret_name":"GOOGLE_APPLICATION_CREDENTIALS_JSON","filename":"gcloud-credentials.json","env_var":"GOOGLE_APPLICATION_CREDENTIALS","subdir":"gemini-cli","env_points_to":"file","warn_if_unset":["GOOGLE_CLOUD_PROJECT","GOOGLE_CLOUD_LOCATION"]}`),
	json.RawMessage(`{"secret_name":"KIMI_CODE_CONFIG_TOML","filename":"config.toml","env_var":"KIMI_CODE_HOME","subdir":"kimi-code","env_points_to":"dir","warn_if_unset":[]}`),
	json.RawMessage(`{"secret_name":"PI_AUTH_JSON","filename":"auth.json","env_var":"PI_CODING_AGENT_DIR","subdir":"pi","env_points_to":"dir","warn_if_unset":[]}`),
}

// Agent is the ACPAgent configuration. The base fields are the reference's
// AgentBase fields, most of which an ACP agent cannot use (the server owns
// its tools, prompt and context); Validate rejects the ones set.
type Agent struct {
	// LLM is a placeholder: the ACP server runs its own model. Its usage
	// id is SentinelUsageID, its model acp_model when set.
	LLM                    llm.Config                         `json:"llm"`
	Tools                  event.List[tool.Spec]              `json:"tools"`
	MCPConfig              event.Map[string, json.RawMessage] `json:"mcp_config"`
	FilterToolsRegex       *string                            `json:"filter_tools_regex"`
	IncludeDefaultTools    event.List[string]                 `json:"include_default_tools"`
	AgentContext           json.RawMessage                    `json:"agent_context"`
	SystemPrompt           *string                            `json:"system_prompt"`
	SystemPromptFilename   string                             `json:"system_prompt_filename"`
	SecurityPolicyFilename string                             `json:"security_policy_filename"`
	SystemPromptKwargs     event.Map[string, any]             `json:"system_prompt_kwargs"`
	Condenser              json.RawMessage                    `json:"condenser"`
	Critic                 json.RawMessage                    `json:"critic"`
	ToolConcurrencyLimit   int                                `json:"tool_concurrency_limit"`

	// Command starts the server: the program and its first arguments.
	Command event.List[string] `json:"acp_command" required:"true"`
	// Server names the provider ("claude-code", "codex", "gemini-cli",
	// "custom"); informational.
	Server *string `json:"acp_server"`
	// Args are appended to Command.
	Args event.List[string] `json:"acp_args"`
	// SessionMode is the session mode set after the session is created
	// (session/set_mode), e.g. "bypassPermissions"; nil sets none.
	SessionMode *string `json:"acp_session_mode"`
	// PromptTimeout is how many seconds a turn may go without any update
	// from the server before it is abandoned.
	PromptTimeout float64 `json:"acp_prompt_timeout"`
	// StartupTimeout is the hard deadline, in seconds, for spawning the
	// server, the handshake and the session's creation.
	StartupTimeout float64 `json:"acp_startup_timeout"`
	// Model is the model the server should use; nil leaves its default.
	Model *string `json:"acp_model"`
	// ResumeSessionID is an ACP session to load, taking precedence over
	// the one the conversation stored. It is a bearer token, so it is a
	// secret.
	ResumeSessionID secret.String `json:"acp_resume_session_id"`
	// FileSecrets are the reference's file-credential specs, kept as they
	// are; gohands does not write them to disk.
	FileSecrets event.List[json.RawMessage] `json:"acp_file_secrets"`
	// IsolateDataDir is the reference's per-conversation data directory
	// switch; kept, not implemented.
	IsolateDataDir bool `json:"acp_isolate_data_dir"`
	// Env are variables added to the server's environment (gohands only:
	// the reference passes the conversation's secrets alone). Values may
	// hold credentials, so they are secrets and never shown.
	Env event.Map[string, secret.String] `json:"acp_env,omitempty"`
}

// New returns an agent running command (program and arguments) with the
// reference's defaults.
func New(command ...string) *Agent {
	a := &Agent{}
	a.SetDefaults()
	a.Command = slices.Clone(command)
	return a
}

// SetDefaults implements event.Defaulter.
func (a *Agent) SetDefaults() {
	a.LLM = llm.DefaultConfig("acp-managed")
	a.LLM.UsageID = SentinelUsageID
	a.SystemPromptFilename = "system_prompt.j2"
	a.SecurityPolicyFilename = "security_policy.j2"
	a.ToolConcurrencyLimit = 1
	a.PromptTimeout = DefaultPromptTimeout
	a.StartupTimeout = DefaultStartupTimeout
	a.FileSecrets = slices.Clone(defaultFileSecrets)
}

// DefaultFileSecrets returns the default acp_file_secrets, one JSON
// object per spec.
func DefaultFileSecrets() []json.RawMessage { return slices.Clone(defaultFileSecrets) }

// MapSecrets implements secret.Holder: the resume session id and acp_env
// values are secrets.
func (a *Agent) MapSecrets(f func(secret.String) (secret.String, error)) (any, error) {
	b := *a
	var err error
	if !b.ResumeSessionID.IsZero() {
		if b.ResumeSessionID, err = f(b.ResumeSessionID); err != nil {
			return nil, fmt.Errorf("acp agent: %w", err)
		}
	}
	if len(a.Env) > 0 {
		b.Env = maps.Clone(a.Env)
		for k, v := range b.Env {
			if v.IsZero() {
				continue
			}
			if b.Env[k], err = f(v); err != nil {
				return nil, fmt.Errorf("acp agent: acp_env %s: %w", k, err)
			}
		}
	}
	return &b, nil
}

// Validate checks the configuration: a command is required, and the
// features the ACP server owns (tools, condenser, critic, system prompt)
// must not be set. agent_context is checked when the agent starts.
func (a *Agent) Validate() error {
	var errs []error
	if len(a.Command) == 0 || a.Command[0] == "" {
		errs = append(errs, errors.New("acp_command is required"))
	}
	if len(a.Tools) > 0 {
		errs = append(errs, errors.New("tools: the ACP server manages its own tools"))
	}
	if len(a.IncludeDefaultTools) > 0 {
		errs = append(errs, errors.New("include_default_tools: the ACP server manages its own tools"))
	}
	if isSet(a.Condenser) {
		errs = append(errs, errors.New("condenser: the ACP server manages its own context"))
	}
	if isSet(a.Critic) {
		errs = append(errs, errors.New("critic is not supported by ACPAgent"))
	}
	if a.SystemPrompt != nil {
		errs = append(errs, errors.New("system_prompt: the ACP server owns its system prompt"))
	}
	if a.PromptTimeout <= 0 {
		errs = append(errs, fmt.Errorf("acp_prompt_timeout %v: must be positive", a.PromptTimeout))
	}
	if a.StartupTimeout <= 0 {
		errs = append(errs, fmt.Errorf("acp_startup_timeout %v: must be positive", a.StartupTimeout))
	}
	if _, err := parseContext(a.AgentContext); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("acp agent: %w", err)
	}
	return nil
}

func isSet(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// Verify implements conversation.Agent: a conversation persisted with
// an ACPAgent may be resumed by any ACPAgent.
func (a *Agent) Verify(persisted any) error {
	if _, ok := persisted.(*Agent); !ok {
		kind, _ := event.KindOf(persisted)
		return fmt.Errorf("acp agent: persisted agent is of kind %q, not %s", kind, Kind)
	}
	return nil
}

var _ conversation.Agent = (*Agent)(nil)

// ForkAgent implements conversation.Agent: the agent is configuration
// only, so a fork runs with it as it is.
func (a *Agent) ForkAgent() (conversation.Agent, error) { return a, nil }

// argv returns the program and its arguments.
func (a *Agent) argv() []string {
	return append(slices.Clone([]string(a.Command)), a.Args...)
}

func init() {
	event.RegisterKind[Agent](Kind)
	event.RegisterKind[PermissionAction]("ACPPermissionAction")
	event.RegisterKind[PermissionObservation]("ACPPermissionObservation")
}
