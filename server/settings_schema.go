package server

import (
	"net/http"
	"strings"

	"github.com/gohands/gohands/server/userstore"
)

// settingsSchema is what the app renders its settings forms from (the
// reference's SettingsSchema): sections of fields with their type,
// default, choices, and the fields they depend on.
type settingsSchema struct {
	ModelName string          `json:"model_name"`
	Sections  []schemaSection `json:"sections"`
}

type schemaSection struct {
	Key     string        `json:"key"`
	Label   string        `json:"label"`
	Fields  []schemaField `json:"fields"`
	Variant *string       `json:"variant"`
}

type schemaField struct {
	Key          string         `json:"key"`
	Label        string         `json:"label"`
	Description  *string        `json:"description"`
	Section      string         `json:"section"`
	SectionLabel string         `json:"section_label"`
	ValueType    string         `json:"value_type"`
	Default      any            `json:"default"`
	Prominence   string         `json:"prominence"`
	DependsOn    []string       `json:"depends_on"`
	Secret       bool           `json:"secret"`
	Choices      []schemaChoice `json:"choices"`
	Variant      *string        `json:"variant"`
}

type schemaChoice struct {
	Value any    `json:"value"`
	Label string `json:"label"`
}

// The forms' fields, one per line: key, value type, prominence (c
// critical, M major, m minor), the fields it depends on and its choices
// (both |-separated). The keys, types and choices are the reference's, so
// the app's forms work with either server; defaults come from the
// settings' own defaults, so the two cannot disagree.
const (
	agentSchemaGeneral = `agent string M
tools array M
enable_classify_and_switch_llm_tool boolean m
active_meta_profile string m
tool_concurrency_limit integer M
mcp_config object m`
	agentSchemaLLM = `llm.model string c
llm.api_key string c
llm.provider_connection_id string M
llm.auth_type string c - api_key|subscription
llm.subscription_vendor string c llm.auth_type openai
llm.base_url string M
llm.api_version string m
llm.aws_access_key_id string m
llm.aws_secret_access_key string m
llm.aws_session_token string m
llm.aws_region_name string m
llm.aws_profile_name string m
llm.aws_role_name string m
llm.aws_session_name string m
llm.aws_bedrock_runtime_endpoint string m
llm.openrouter_site_url string m
llm.openrouter_app_name string m
llm.num_retries integer m
llm.retry_multiplier number m
llm.retry_min_wait integer m
llm.retry_max_wait integer m
llm.timeout integer m
llm.stream_idle_timeout number m
llm.max_message_chars integer m
llm.temperature number m
llm.top_p number m
llm.top_k number m
llm.max_input_tokens integer m
llm.max_output_tokens integer m
llm.model_canonical_name string m
llm.api_mode string m - auto|chat|responses
llm.capability_overrides object m
llm.extra_headers object m
llm.input_cost_per_token number m
llm.output_cost_per_token number m
llm.ollama_base_url string m
llm.stream boolean m
llm.drop_params boolean m
llm.disable_vision boolean m
llm.disable_stop_word boolean m
llm.caching_prompt boolean m
llm.log_completions boolean m
llm.log_completions_folder string m
llm.custom_tokenizer string m
llm.native_tool_calling boolean m
llm.force_string_serializer boolean m
llm.inline_image_urls boolean m
llm.reasoning_effort string m
llm.reasoning_summary string m - auto|concise|detailed
llm.enable_encrypted_reasoning boolean m
llm.prompt_cache_retention string m
llm.extended_thinking_budget integer m
llm.seed integer m
llm.usage_id string m
llm.litellm_extra_body object m`
	agentSchemaMemory    = `agent_context.load_memory boolean M`
	agentSchemaCondenser = `condenser.condenser_kind string m - llm_summarizing|no_op
condenser.enabled boolean c
condenser.max_size integer m condenser.enabled
condenser.max_tokens integer m condenser.enabled
condenser.keep_first integer m condenser.enabled
condenser.minimum_progress number m condenser.enabled
condenser.hard_context_reset_max_retries integer m condenser.enabled
condenser.hard_context_reset_context_scaling number m condenser.enabled`
	agentSchemaVerification = `verification.critic_enabled boolean c
verification.critic_mode string m verification.critic_enabled finish_and_message|all_actions
verification.enable_iterative_refinement boolean c verification.critic_enabled
verification.critic_threshold number m verification.critic_enabled|verification.enable_iterative_refinement
verification.max_refinement_iterations integer m verification.critic_enabled|verification.enable_iterative_refinement
verification.critic_server_url string m verification.critic_enabled
verification.critic_model_name string m verification.critic_enabled
verification.critic_api_key string c verification.critic_enabled`
	agentSchemaACP = `acp_server string c - claude-code|codex|gemini-cli|kimi-code|pi|opencode|custom
acp_command array m
acp_args array m
acp_model string c
acp_session_mode string m
acp_prompt_timeout number m
acp_startup_timeout number m`
	convSchemaGeneral      = `max_iterations integer M`
	convSchemaVerification = `confirmation_mode boolean c
security_analyzer string M confirmation_mode llm|none`
	convSchemaRuntime = `default_runtime string M - local|worktree|docker
worktree_base string M default_runtime=worktree default_branch|head|ref
worktree_base_ref string M default_runtime=worktree|worktree_base=ref
worktree_branch_prefix string M default_runtime=worktree
container_memory string M default_runtime=docker
container_cpus number M default_runtime=docker
container_browser boolean M default_runtime=docker`
)

// fieldHelp describes the fields a user most often sets.
var fieldHelp = map[string]string{
	"agent":                       "The agent the conversations run.",
	"tools":                       "The tools the agent is given; empty means the default ones.",
	"tool_concurrency_limit":      "How many tool calls of one step run at once.",
	"mcp_config":                  "MCP servers whose tools the agent may use, by name.",
	"llm.model":                   "The model, as provider/name (openai/gpt-4o, anthropic/claude-sonnet-4-5).",
	"llm.api_key":                 "The key of the model's provider.",
	"llm.base_url":                "The address of an OpenAI-compatible server, if not the provider's own.",
	"llm.num_retries":             "How many times a failed model call is retried.",
	"llm.timeout":                 "Seconds a model call may take.",
	"llm.reasoning_effort":        "How hard a reasoning model thinks: low, medium or high.",
	"condenser.enabled":           "Summarise old events when the history grows long.",
	"condenser.max_size":          "Events kept before the history is summarised.",
	"agent_context.load_memory":   "Load the project's memory files into the agent's context.",
	"verification.critic_enabled": "Rate the agent's work with a critic model.",
	"acp_server":                  "The ACP agent to run.",
	"max_iterations":              "Steps a conversation may take before it stops.",
	"confirmation_mode":           "Ask before running actions the security analyzer rates risky.",
	"security_analyzer":           "What rates each action's risk.",
	"default_runtime":             "Where new conversations run: the workspace itself, a new git worktree of it, or a Docker container.",
	"worktree_base":               "What a new worktree starts from.",
	"worktree_branch_prefix":      "The prefix of a new worktree's branch.",
}

var acronyms = map[string]string{"llm": "LLM", "api": "API", "url": "URL", "id": "ID", "aws": "AWS", "mcp": "MCP", "acp": "ACP", "llms": "LLMs", "cpus": "CPUs"}

// fieldLabel makes a label from a key: llm.base_url gives "Base URL".
func fieldLabel(key string) string {
	words := strings.Split(key[strings.LastIndexByte(key, '.')+1:], "_")
	for i, w := range words {
		if a, ok := acronyms[w]; ok {
			words[i] = a
		} else if i == 0 {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// schemaSectionOf builds a section from its field lines, taking each
// default from defs.
func schemaSectionOf(key, label string, variant *string, lines string, defs map[string]any) schemaSection {
	sec := schemaSection{Key: key, Label: label, Variant: variant, Fields: []schemaField{}}
	for line := range strings.SplitSeq(lines, "\n") {
		parts := strings.Fields(line)
		f := schemaField{
			Key: parts[0], Label: fieldLabel(parts[0]), Section: key, SectionLabel: label,
			ValueType: parts[1], Prominence: map[string]string{"c": "critical", "M": "major", "m": "minor"}[parts[2]],
			DependsOn: []string{}, Choices: []schemaChoice{}, Variant: variant,
			Secret: userstore.IsSecretPath(strings.Split(parts[0], ".")),
		}
		if h, ok := fieldHelp[parts[0]]; ok {
			f.Description = &h
		}
		if len(parts) > 3 && parts[3] != "-" {
			f.DependsOn = strings.Split(parts[3], "|")
		}
		if len(parts) > 4 {
			for c := range strings.SplitSeq(parts[4], "|") {
				f.Choices = append(f.Choices, schemaChoice{Value: c, Label: c})
			}
		}
		var v any = defs
		for k := range strings.SplitSeq(parts[0], ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		f.Default = v
		sec.Fields = append(sec.Fields, f)
	}
	return sec
}

func agentSettingsSchema() settingsSchema {
	oh, acp := "openhands", "acp"
	defs, acpDefs := userstore.DefaultAgentSettings(oh), userstore.DefaultAgentSettings(acp)
	return settingsSchema{ModelName: "AgentSettings", Sections: []schemaSection{
		schemaSectionOf("general", "General", nil, agentSchemaGeneral, defs),
		schemaSectionOf("llm", "LLM", &oh, agentSchemaLLM, defs),
		schemaSectionOf("agent_context", "Memory", &oh, agentSchemaMemory, defs),
		schemaSectionOf("condenser", "Condenser", &oh, agentSchemaCondenser, defs),
		schemaSectionOf("verification", "Verification", &oh, agentSchemaVerification, defs),
		schemaSectionOf("acp", "ACP (Agent Client Protocol)", &acp, agentSchemaACP, acpDefs),
	}}
}

func conversationSettingsSchema() settingsSchema {
	defs := userstore.DefaultConversationSettings()
	return settingsSchema{ModelName: "ConversationSettings", Sections: []schemaSection{
		schemaSectionOf("general", "General", nil, convSchemaGeneral, defs),
		schemaSectionOf("verification", "Verification", nil, convSchemaVerification, defs),
		schemaSectionOf("runtime", "Runtime", nil, convSchemaRuntime, defs),
	}}
}

func (s *Server) handleAgentSchema(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, agentSettingsSchema())
}

func (s *Server) handleConversationSchema(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, conversationSettingsSchema())
}
