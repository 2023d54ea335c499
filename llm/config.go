package llm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
)

// Config describes one LLM: which model, how to reach it and how to call it.
// It is an immutable value; its JSON is the reference's LLM object, field for
// field, so a config written by either side loads in the other.
//
// Start from DefaultConfig: the reference's defaults (five retries, native
// tool calling, prompt caching, reasoning effort "high", ...) are not Go zero
// values. Decoding JSON fills absent keys with those defaults too. Empty
// strings stand for JSON null.
type Config struct {
	Model                string        `json:"model"`
	APIKey               secret.String `json:"api_key"`
	ProviderConnectionID string        `json:"provider_connection_id" wire:"nullempty"`
	AuthType             string        `json:"auth_type"`                            // "api_key" or "subscription"
	SubscriptionVendor   string        `json:"subscription_vendor" wire:"nullempty"` // "openai" or ""
	BaseURL              string        `json:"base_url" wire:"nullempty"`
	APIVersion           string        `json:"api_version" wire:"nullempty"`

	AWSAccessKeyID            secret.String `json:"aws_access_key_id"`
	AWSSecretAccessKey        secret.String `json:"aws_secret_access_key"`
	AWSSessionToken           secret.String `json:"aws_session_token"`
	AWSRegionName             string        `json:"aws_region_name" wire:"nullempty"`
	AWSProfileName            string        `json:"aws_profile_name" wire:"nullempty"`
	AWSRoleName               string        `json:"aws_role_name" wire:"nullempty"`
	AWSSessionName            string        `json:"aws_session_name" wire:"nullempty"`
	AWSBedrockRuntimeEndpoint string        `json:"aws_bedrock_runtime_endpoint" wire:"nullempty"`

	OpenRouterSiteURL string `json:"openrouter_site_url"`
	OpenRouterAppName string `json:"openrouter_app_name"`

	// NumRetries is the total number of attempts per call (the reference's
	// stop_after_attempt), so 1 means no retry.
	NumRetries int `json:"num_retries"`
	// Waits between attempts grow as RetryMultiplier·2^(n-1) seconds,
	// clamped to [RetryMinWait, RetryMaxWait]; RetryMaxWait also caps the
	// wait a provider asks for (Retry-After). Fractions of a second are
	// allowed here (the reference takes whole seconds).
	RetryMultiplier float64 `json:"retry_multiplier"`
	RetryMinWait    float64 `json:"retry_min_wait"`
	RetryMaxWait    float64 `json:"retry_max_wait"`
	// Timeout is the limit of one HTTP call in seconds; 0 means none.
	Timeout float64 `json:"timeout" wire:"nullempty"`
	// StreamIdleTimeout is the longest wait in seconds between two chunks
	// of a streamed response (reference 1.58); nil means no limit. Absent
	// from the JSON, it takes Timeout's value, as in the reference.
	StreamIdleTimeout *float64 `json:"stream_idle_timeout"`
	MaxMessageChars   int      `json:"max_message_chars"`

	Temperature *float64 `json:"temperature"`
	TopP        *float64 `json:"top_p"`
	TopK        *float64 `json:"top_k"`
	// MaxInputTokens overrides the model's context window; 0 means unknown.
	MaxInputTokens int `json:"max_input_tokens" wire:"nullempty"`
	// MaxOutputTokens caps the reply; 0 means the model's default.
	MaxOutputTokens    int    `json:"max_output_tokens" wire:"nullempty"`
	ModelCanonicalName string `json:"model_canonical_name" wire:"nullempty"`
	// APIMode is "auto", "chat" or "responses" (OpenAI models only).
	APIMode string `json:"api_mode"`
	// CapabilityOverrides override feature detection, with the reference's
	// keys: supports_vision, supports_reasoning_effort, supports_stop_words,
	// supports_prompt_cache, supports_responses_api, supports_sampling_params,
	// thinking_mode, max_input_tokens, ...
	CapabilityOverrides map[string]any    `json:"capability_overrides" wire:"emitempty"`
	ExtraHeaders        map[string]string `json:"extra_headers"`
	// Per-token prices in USD; both must be set to take effect.
	InputCostPerToken  *float64 `json:"input_cost_per_token"`
	OutputCostPerToken *float64 `json:"output_cost_per_token"`
	OllamaBaseURL      string   `json:"ollama_base_url" wire:"nullempty"`

	Stream                bool   `json:"stream"`
	DropParams            bool   `json:"drop_params"`
	DisableVision         *bool  `json:"disable_vision"`
	DisableStopWord       bool   `json:"disable_stop_word"`
	CachingPrompt         bool   `json:"caching_prompt"`
	LogCompletions        bool   `json:"log_completions"`
	LogCompletionsFolder  string `json:"log_completions_folder"`
	CustomTokenizer       string `json:"custom_tokenizer" wire:"nullempty"`
	NativeToolCalling     bool   `json:"native_tool_calling"`
	ForceStringSerializer *bool  `json:"force_string_serializer"`
	InlineImageURLs       *bool  `json:"inline_image_urls"`

	// ReasoningEffort is none, minimal, low, medium, high, xhigh or max;
	// "" sends none.
	ReasoningEffort          string `json:"reasoning_effort" wire:"nullempty"`
	ReasoningSummary         string `json:"reasoning_summary" wire:"nullempty"` // auto, concise, detailed or ""
	EnableEncryptedReasoning bool   `json:"enable_encrypted_reasoning"`
	PromptCacheRetention     string `json:"prompt_cache_retention" wire:"nullempty"`
	ExtendedThinkingBudget   int    `json:"extended_thinking_budget" wire:"nullempty"`
	Seed                     *int   `json:"seed"`
	// UsageID names this LLM in metrics and registries ("default" for the
	// agent, "condenser", ...).
	UsageID string `json:"usage_id"`
	// ExtraBody is merged into every request body (litellm_extra_body).
	ExtraBody map[string]any `json:"litellm_extra_body" wire:"emitempty"`
	// FallbackStrategy names the LLM profiles to try, in order, when a
	// call still fails with a transient error after its retries (reference
	// 1.58). The reference leaves it out of what it writes and reads it
	// when given; gohands keeps it through a round trip so that a config
	// does not lose it, and writes it only when set.
	FallbackStrategy *FallbackStrategy `json:"fallback_strategy,omitempty"`

	// subscription is the reference's computed is_subscription, carried
	// through a JSON round trip.
	subscription bool
}

// FallbackStrategy is the reference's LLM fallback: profile names tried in
// order on a transient failure, and the directory of the profiles (the
// reference's default, .openhands/profiles, when empty).
type FallbackStrategy struct {
	FallbackLLMs    []string `json:"fallback_llms" required:"true"`
	ProfileStoreDir string   `json:"profile_store_dir,omitempty"`
}

// Reference defaults that are not Go zero values.
const (
	DefaultModel           = "gpt-5.5"
	DefaultUsageID         = "default"
	defaultAzureAPIVersion = "2024-12-01-preview"
)

// DefaultConfig returns the reference's default config for model.
func DefaultConfig(model string) Config {
	return Config{
		Model:                    model,
		AuthType:                 "api_key",
		OpenRouterSiteURL:        "https://docs.all-hands.dev/",
		OpenRouterAppName:        "OpenHands",
		NumRetries:               5,
		RetryMultiplier:          8,
		RetryMinWait:             8,
		RetryMaxWait:             64,
		Timeout:                  300,
		StreamIdleTimeout:        new(300.0),
		MaxMessageChars:          30000,
		APIMode:                  "auto",
		DropParams:               true,
		CachingPrompt:            true,
		LogCompletionsFolder:     "logs/completions",
		NativeToolCalling:        true,
		ReasoningEffort:          "high",
		EnableEncryptedReasoning: true,
		PromptCacheRetention:     "24h",
		ExtendedThinkingBudget:   200000,
		UsageID:                  DefaultUsageID,
	}
}

// IsSubscription reports whether the config authenticates with a ChatGPT
// subscription rather than an API key (the reference's is_subscription).
func (c Config) IsSubscription() bool { return c.subscription || c.AuthType == "subscription" }

// Normalize returns c with the reference's input normalisation applied:
// azure models get the default api_version, an openai/ model pointing at
// https://api.openai.com loses the base URL (the provider default has /v1),
// and empty enumerations read as their defaults.
func (c Config) Normalize() Config {
	if strings.HasPrefix(c.Model, "azure") && c.APIVersion == "" {
		c.APIVersion = defaultAzureAPIVersion
	}
	if strings.HasPrefix(c.Model, "openai/") && (c.BaseURL == "https://api.openai.com" || c.BaseURL == "https://api.openai.com/") {
		c.BaseURL = ""
	}
	if c.UsageID == "" {
		c.UsageID = DefaultUsageID
	}
	if c.APIMode == "" {
		c.APIMode = "auto"
	}
	if c.AuthType == "" {
		c.AuthType = "api_key"
	}
	return c
}

// Validate reports what is wrong with c, if anything.
func (c Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Model) == "" {
		errs = append(errs, errors.New("model must be specified"))
	}
	switch c.APIMode {
	case "", "auto", "chat", "responses":
	default:
		errs = append(errs, fmt.Errorf("api_mode %q: want auto, chat or responses", c.APIMode))
	}
	switch c.AuthType {
	case "", "api_key", "subscription":
	default:
		errs = append(errs, fmt.Errorf("auth_type %q: want api_key or subscription", c.AuthType))
	}
	if c.NumRetries < 0 || c.RetryMinWait < 0 || c.RetryMaxWait < 0 || c.RetryMultiplier < 0 {
		errs = append(errs, errors.New("retry settings must not be negative"))
	}
	if c.Timeout < 0 || (c.StreamIdleTimeout != nil && *c.StreamIdleTimeout < 0) {
		errs = append(errs, errors.New("timeout must not be negative"))
	}
	if c.FallbackStrategy != nil && c.FallbackStrategy.FallbackLLMs == nil {
		errs = append(errs, errors.New("fallback_strategy: fallback_llms is required"))
	}
	if c.MaxOutputTokens < 0 || c.MaxInputTokens < 0 {
		errs = append(errs, errors.New("token limits must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("llm config: %w", err)
	}
	return nil
}

// timeout returns the per-call HTTP timeout.
func (c Config) timeout() time.Duration {
	return time.Duration(c.Timeout * float64(time.Second))
}

// configFields is Config without its methods, so that the codec encodes
// and decodes it field by field, by the fields' tags.
type configFields Config

// configWire is Config on the wire: its fields, then the reference's
// computed is_subscription, which is read back into the unexported flag.
type configWire struct {
	configFields
	IsSubscription bool `json:"is_subscription"`
}

// MarshalJSON implements json.Marshaler. Secrets encode as the secret.String
// they hold (redacted unless exposed). The deprecated modify_params key is
// not written.
func (c Config) MarshalJSON() ([]byte, error) {
	return event.MarshalJSON(configWire{configFields(c), c.IsSubscription()})
}

// AppendJSON implements event.JSONAppender, sparing the codec a check of
// MarshalJSON's output when a config is encoded inside another value.
func (c Config) AppendJSON(b []byte) ([]byte, error) {
	return event.AppendJSON(b, configWire{configFields(c), c.IsSubscription()})
}

// UnmarshalJSON implements json.Unmarshaler. Absent keys take the
// reference's defaults, unknown keys are ignored, and the result is
// normalised and validated as the reference does on input.
func (c *Config) UnmarshalJSON(data []byte) error {
	w := configWire{configFields: configFields(DefaultConfig(DefaultModel))}
	// A NaN, which JSON cannot spell, tells an absent stream_idle_timeout
	// (Timeout's value) from a null one (no limit); a number is decoded
	// into it.
	w.StreamIdleTimeout = new(math.NaN())
	if err := event.UnmarshalJSON(data, &w); err != nil {
		return fmt.Errorf("llm config: %w", err)
	}
	if w.StreamIdleTimeout != nil && math.IsNaN(*w.StreamIdleTimeout) {
		w.StreamIdleTimeout = nil
		if w.Timeout != 0 {
			w.StreamIdleTimeout = new(w.Timeout)
		}
	}
	cfg := Config(w.configFields)
	cfg.subscription = w.IsSubscription
	cfg = cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return err
	}
	*c = cfg
	return nil
}

// MapSecrets implements secret.Holder: it returns a Config with f applied to
// the API key and the AWS credentials.
func (c Config) MapSecrets(f func(secret.String) (secret.String, error)) (any, error) {
	var err error
	for _, s := range []*secret.String{&c.APIKey, &c.AWSAccessKeyID, &c.AWSSecretAccessKey, &c.AWSSessionToken} {
		if s.IsZero() {
			continue
		}
		if *s, err = f(*s); err != nil {
			return nil, fmt.Errorf("llm config: %w", err)
		}
	}
	return c, nil
}

var _ secret.Holder = Config{}
