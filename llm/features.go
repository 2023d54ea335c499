package llm

import "strings"

// Features are what a model supports, resolved from our own model tables
// and the config's capability_overrides (which always win). The reference
// asks LiteLLM's model metadata; we keep small tables of the families that
// matter instead.
type Features struct {
	Vision            bool
	ReasoningEffort   bool
	StopWords         bool
	PromptCache       bool   // explicit Anthropic-style cache_control markers
	PromptCacheRetain bool   // OpenAI prompt_cache_retention
	ResponsesAPI      bool   // OpenAI Responses API preferred
	ThinkingMode      string // "manual" (budgeted thinking), "adaptive", "none"
	// SamplingParams is false when temperature/top_p/top_k must not be sent.
	SamplingParams bool
	// SendReasoningContent is true for models that want reasoning_content
	// sent back on assistant messages (kimi thinking, deepseek reasoner, ...).
	SendReasoningContent bool
	// ForceStringContent is true for models that only take string message
	// content.
	ForceStringContent bool
	// ContextWindow is the model's input limit in tokens, 0 if unknown.
	ContextWindow int
	// MaxOutputTokens is the model's output limit, 0 if unknown.
	MaxOutputTokens int
}

// matches reports whether any pattern is a case-insensitive substring of
// model, the reference's model_matches.
func matches(model string, patterns ...string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	for _, p := range patterns {
		if strings.Contains(m, strings.ToLower(p)) {
			return true
		}
	}
	return false
}

var (
	responsesModels       = []string{"gpt-5", "codex-mini-latest"}
	extendedThinkingModel = []string{"claude-sonnet-4-5", "claude-sonnet-4-6", "claude-haiku-4-5"}
	promptCacheModels     = []string{
		"claude-3-7-sonnet", "claude-sonnet-3-7-latest", "claude-3-5-sonnet", "claude-3-5-haiku",
		"claude-3-haiku-20240307", "claude-3-opus-20240229", "claude-sonnet-4", "claude-opus-4",
		"claude-haiku-4-5", "claude-opus-5", "claude-fable-5",
	}
	noStopWordModels     = []string{"o1", "o3", "grok-4-0709", "grok-code-fast-1", "deepseek-r1-0528"}
	forceStringModels    = []string{"deepseek", "glm", "groq/kimi-k2-instruct", "openrouter/minimax"}
	sendReasoningModels  = []string{"kimi-k3", "kimi-k2-thinking", "kimi-k2.5", "kimi-k2.6", "openrouter/minimax-m2", "deepseek/deepseek-reasoner", "deepseek/deepseek-v4-pro", "deepseek/deepseek-v4-flash"}
	reasoningEffortModel = []string{"gpt-5", "o1", "o3", "o4-mini", "codex", "claude-3-7-sonnet", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4-5", "gemini-2.5", "gemini-3", "grok-3-mini", "kimi-k3", "gpt-oss"}
	visionModels         = []string{"gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o1", "o3", "o4", "claude-3", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4", "claude-opus-5", "gemini", "grok-4", "pixtral", "llava", "qwen-vl", "qwen2.5-vl", "kimi-k2.6", "kimi-k3", "llama-4"}
)

// retainRules are ordered include/exclude rules for prompt_cache_retention
// (the last matching rule wins; "!" excludes).
var retainRules = []string{"gpt-5", "gpt-4.1", "!mini", "gpt-5.1-codex-mini", "!azure/"}

func orderedRules(model string, rules []string) bool {
	ok := false
	for _, r := range rules {
		if neg, found := strings.CutPrefix(r, "!"); found {
			if matches(model, neg) {
				ok = false
			}
		} else if matches(model, r) {
			ok = true
		}
	}
	return ok
}

// FeaturesOf resolves the features of the model in c.
func FeaturesOf(c *Config) Features {
	// A canonical name tells what model hides behind a proxy alias.
	m := c.Model
	if c.ModelCanonicalName != "" {
		m = c.ModelCanonicalName
	}
	f := Features{
		Vision:               matches(m, visionModels...),
		ReasoningEffort:      matches(m, reasoningEffortModel...),
		StopWords:            !matches(m, noStopWordModels...),
		PromptCache:          matches(m, promptCacheModels...),
		PromptCacheRetain:    orderedRules(m, retainRules),
		ResponsesAPI:         matches(m, responsesModels...),
		SendReasoningContent: matches(m, sendReasoningModels...),
		ForceStringContent:   matches(m, forceStringModels...),
		ThinkingMode:         "none",
	}
	if matches(m, extendedThinkingModel...) {
		f.ThinkingMode = "manual"
	}
	// Unknown sampling support: reasoning models reject temperature and
	// friends, except Gemini (as in the reference).
	f.SamplingParams = !(f.ReasoningEffort && !matches(m, "gemini"))
	if p, ok := lookupPrice(m); ok {
		f.ContextWindow, f.MaxOutputTokens = p.ContextWindow, p.MaxOutputTokens
	}
	o := c.CapabilityOverrides
	boolOverride(o, "supports_vision", &f.Vision)
	boolOverride(o, "supports_reasoning_effort", &f.ReasoningEffort)
	boolOverride(o, "supports_stop_words", &f.StopWords)
	boolOverride(o, "supports_prompt_cache", &f.PromptCache)
	boolOverride(o, "supports_prompt_cache_retention", &f.PromptCacheRetain)
	boolOverride(o, "supports_responses_api", &f.ResponsesAPI)
	boolOverride(o, "supports_sampling_params", &f.SamplingParams)
	if v, ok := o["thinking_mode"].(string); ok {
		f.ThinkingMode = v
	}
	if n, ok := o["max_input_tokens"].(float64); ok && n > 0 {
		f.ContextWindow = int(n)
	}
	if n, ok := o["max_output_tokens"].(float64); ok && n > 0 {
		f.MaxOutputTokens = int(n)
	}
	if c.MaxInputTokens > 0 {
		f.ContextWindow = c.MaxInputTokens
	}
	if c.ForceStringSerializer != nil {
		f.ForceStringContent = *c.ForceStringSerializer
	}
	if c.DisableVision != nil && *c.DisableVision {
		f.Vision = false
	}
	return f
}

func boolOverride(o map[string]any, key string, dst *bool) {
	if v, ok := o[key].(bool); ok {
		*dst = v
	}
}

// EffectiveMaxOutputTokens is the output limit sent with a request, derived
// as the reference does: the configured value wins; else 64000 for the
// Claude and Kimi families known to need long outputs; else the model's
// limit (halved when it is not below the context window, capped at 16384
// behind a custom base URL); 0 when nothing is known. Models named o3 are
// clamped to 100000.
func EffectiveMaxOutputTokens(c *Config, f Features) int {
	n := c.MaxOutputTokens
	switch {
	case n > 0:
	case matches(c.Model, "claude-3-7-sonnet", "claude-sonnet-4", "kimi-k2-thinking"):
		n = 64000
	case f.MaxOutputTokens > 0:
		n = f.MaxOutputTokens
		if f.ContextWindow > 0 && n >= f.ContextWindow {
			n /= 2
		}
		if c.BaseURL != "" && !strings.HasPrefix(c.Model, "litellm_proxy/") {
			n = min(n, 16384)
		}
	}
	if n > 100000 && matches(c.Model, "o3") {
		n = 100000
	}
	return n
}
