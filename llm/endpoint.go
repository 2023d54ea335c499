package llm

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// API names a wire API. Provider packages register an implementation for
// the APIs they speak.
type API string

// Wire APIs.
const (
	APIChat      API = "openai-chat"      // OpenAI Chat Completions and compatible servers
	APIResponses API = "openai-responses" // OpenAI Responses
	APIAnthropic API = "anthropic"        // Anthropic Messages
	APIGemini    API = "gemini"           // Google Gemini API
	APIBedrock   API = "bedrock-converse" // AWS Bedrock Converse and ConverseStream
)

// Route says how models of one provider prefix are reached.
type Route struct {
	// Provider is the LiteLLM provider name ("openai", "openrouter", ...).
	Provider string
	// API is the wire API. Routes with APIChat switch to APIResponses for
	// the models the reference sends there when ResponsesCapable is set.
	API API
	// ResponsesCapable marks servers that also serve /responses.
	ResponsesCapable bool
	// BaseURL is the default base URL, with the version path
	// ("https://api.openai.com/v1"). Empty means the config must set one.
	BaseURL string
	// AuthHeader carries the API key; AuthPrefix is put before it
	// ("Bearer ").
	AuthHeader, AuthPrefix string
	// KeepPrefix sends the whole model string, prefix included, as the
	// model name.
	KeepPrefix bool
	// Cloud marks providers whose address the provider package works out
	// from the config and the environment (a region, a project) when no
	// base URL is set; their auth is theirs too (SigV4, OAuth).
	Cloud bool
}

const bearer = "Bearer "

func openAICompatible(provider, baseURL string) Route {
	return Route{Provider: provider, API: APIChat, BaseURL: baseURL, AuthHeader: "Authorization", AuthPrefix: bearer}
}

var (
	routesMu sync.RWMutex
	routes   = map[string]Route{
		"openai":         {Provider: "openai", API: APIChat, ResponsesCapable: true, BaseURL: "https://api.openai.com/v1", AuthHeader: "Authorization", AuthPrefix: bearer},
		"azure":          {Provider: "azure", API: APIChat, ResponsesCapable: true, AuthHeader: "api-key"},
		"litellm_proxy":  {Provider: "litellm_proxy", API: APIChat, ResponsesCapable: true, AuthHeader: "Authorization", AuthPrefix: bearer},
		"openhands":      {Provider: "openhands", API: APIChat, ResponsesCapable: true, BaseURL: "https://llm-proxy.app.all-hands.dev/v1", AuthHeader: "Authorization", AuthPrefix: bearer},
		"anthropic":      {Provider: "anthropic", API: APIAnthropic, BaseURL: "https://api.anthropic.com", AuthHeader: "x-api-key"},
		"gemini":         {Provider: "gemini", API: APIGemini, BaseURL: "https://generativelanguage.googleapis.com", AuthHeader: "x-goog-api-key"},
		"bedrock":        {Provider: "bedrock", API: APIBedrock, Cloud: true},
		"vertex_ai":      {Provider: "vertex_ai", API: APIGemini, Cloud: true},
		"vertex_ai_beta": {Provider: "vertex_ai", API: APIGemini, Cloud: true},
		"openrouter":     openAICompatible("openrouter", "https://openrouter.ai/api/v1"),
		"deepseek":       openAICompatible("deepseek", "https://api.deepseek.com/v1"),
		"groq":           openAICompatible("groq", "https://api.groq.com/openai/v1"),
		"mistral":        openAICompatible("mistral", "https://api.mistral.ai/v1"),
		"together_ai":    openAICompatible("together_ai", "https://api.together.xyz/v1"),
		"xai":            openAICompatible("xai", "https://api.x.ai/v1"),
		"ollama":         openAICompatible("ollama", "http://localhost:11434/v1"),
		"ollama_chat":    openAICompatible("ollama", "http://localhost:11434/v1"),
		"fireworks_ai":   openAICompatible("fireworks_ai", "https://api.fireworks.ai/inference/v1"),
		"moonshot":       openAICompatible("moonshot", "https://api.moonshot.ai/v1"),
		"cerebras":       openAICompatible("cerebras", "https://api.cerebras.ai/v1"),
		"deepinfra":      openAICompatible("deepinfra", "https://api.deepinfra.com/v1/openai"),
		"perplexity":     openAICompatible("perplexity", "https://api.perplexity.ai"),
		"lm_studio":      openAICompatible("lm_studio", "http://localhost:1234/v1"),
		"hosted_vllm":    openAICompatible("hosted_vllm", ""),
	}
)

// RegisterRoute adds or replaces the route of a model prefix (the text
// before the first "/"). It is meant to be called from init functions.
func RegisterRoute(prefix string, r Route) {
	routesMu.Lock()
	defer routesMu.Unlock()
	routes[prefix] = r
}

// CloudAuth reports whether model's provider authenticates with its
// cloud's own credentials (AWS keys, Google service accounts), so that no
// API key is needed.
func CloudAuth(model string) bool {
	prefix, _, ok := strings.Cut(strings.TrimSpace(model), "/")
	routesMu.RLock()
	defer routesMu.RUnlock()
	return ok && routes[prefix].Cloud
}

// Prefixes returns the registered model prefixes, sorted.
func Prefixes() []string {
	routesMu.RLock()
	defer routesMu.RUnlock()
	return slices.Sorted(maps.Keys(routes))
}

var (
	providersMu sync.RWMutex
	providers   = map[API]Provider{}
)

// RegisterProvider makes p the implementation of api. Provider packages
// call it from init, so an application picks its providers by importing
// them (llm/providers imports all).
func RegisterProvider(api API, p Provider) {
	providersMu.Lock()
	defer providersMu.Unlock()
	providers[api] = p
}

func providerFor(api API) (Provider, bool) {
	providersMu.RLock()
	defer providersMu.RUnlock()
	p, ok := providers[api]
	return p, ok
}

// Endpoint is a model string resolved to a concrete destination.
type Endpoint struct {
	Provider string // LiteLLM provider name
	API      API
	// Model is the model name sent on the wire.
	Model   string
	BaseURL string
	// APIVersion is the Azure api-version query parameter.
	APIVersion             string
	AuthHeader, AuthPrefix string
	// Headers are sent with every request: the config's extra headers and
	// those the provider asks for (OpenRouter's attribution headers).
	Headers map[string]string
}

// bareInference maps model-name prefixes to providers for models written
// without a provider prefix, as LiteLLM infers them.
var bareInference = []struct{ prefix, provider string }{
	{"gpt-", "openai"}, {"chatgpt-", "openai"}, {"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"},
	{"codex-", "openai"}, {"text-embedding", "openai"}, {"davinci", "openai"}, {"ft:gpt", "openai"},
	{"claude-", "anthropic"},
	{"gemini-", "gemini"},
	{"mistral-", "mistral"}, {"codestral", "mistral"}, {"magistral", "mistral"}, {"devstral", "mistral"}, {"pixtral", "mistral"},
	{"deepseek-", "deepseek"},
	{"grok-", "xai"},
}

// Resolve works out where a config's model is sent: the provider from the
// model prefix (or inferred from a bare name), the wire API, the model name
// on the wire, base URL and auth header. A model with a base URL and no
// known provider is taken as served by an OpenAI-compatible server.
func Resolve(c *Config) (Endpoint, error) {
	model := strings.TrimSpace(c.Model)
	if model == "" {
		return Endpoint{}, fmt.Errorf("llm: model must be specified")
	}
	routesMu.RLock()
	prefix, rest, hasPrefix := strings.Cut(model, "/")
	r, known := routes[prefix]
	if !known || !hasPrefix {
		known = false
		rest = model
		lower := strings.ToLower(model)
		for _, b := range bareInference {
			if !hasPrefix && strings.HasPrefix(lower, b.prefix) {
				r, known = routes[b.provider], true
				break
			}
		}
	}
	routesMu.RUnlock()
	if !known {
		switch {
		case c.BaseURL != "":
		case hasPrefix:
			return Endpoint{}, fmt.Errorf("llm: model %q: provider %q is not supported (known: %s); set base_url to reach it as an OpenAI-compatible server", model, prefix, strings.Join(Prefixes(), ", "))
		default:
			return Endpoint{}, fmt.Errorf("llm: cannot tell the provider of model %q: write it as provider/model (openai/, anthropic/, gemini/, ...) or set base_url for an OpenAI-compatible server", model)
		}
		r = openAICompatible("openai", "")
		rest = model
	}
	if r.KeepPrefix {
		rest = model
	}
	api := r.API
	switch r.Provider {
	case "bedrock":
		var err error
		if rest, err = bedrockModel(model, rest); err != nil {
			return Endpoint{}, err
		}
	case "vertex_ai":
		// Vertex AI publishes each family with its own API.
		switch {
		case matches(rest, "claude"):
			api = APIAnthropic
		case matches(rest, "gemini"):
			api = APIGemini
		default:
			return Endpoint{}, fmt.Errorf("llm: model %q: gohands speaks Gemini and Claude models on Vertex AI, not this one", model)
		}
	}
	ep := Endpoint{
		Provider:   r.Provider,
		API:        api,
		Model:      rest,
		BaseURL:    r.BaseURL,
		APIVersion: c.APIVersion,
		AuthHeader: r.AuthHeader,
		AuthPrefix: r.AuthPrefix,
	}
	switch {
	case c.BaseURL != "":
		ep.BaseURL = c.BaseURL
	case r.Provider == "ollama" && c.OllamaBaseURL != "":
		ep.BaseURL = strings.TrimSuffix(c.OllamaBaseURL, "/") + "/v1"
	}
	if ep.BaseURL == "" && !r.Cloud {
		return Endpoint{}, fmt.Errorf("llm: model %q: provider %s needs base_url", model, r.Provider)
	}
	if r.API == APIChat && r.ResponsesCapable && usesResponses(c) {
		ep.API = APIResponses
	}
	if c.APIMode == "chat" && r.API == APIChat {
		ep.API = APIChat
	}
	if r.Provider == "openrouter" {
		ep.Headers = map[string]string{}
		if c.OpenRouterSiteURL != "" {
			ep.Headers["HTTP-Referer"] = c.OpenRouterSiteURL
		}
		if c.OpenRouterAppName != "" {
			ep.Headers["X-Title"] = c.OpenRouterAppName
		}
	}
	if len(c.ExtraHeaders) > 0 {
		if ep.Headers == nil {
			ep.Headers = map[string]string{}
		}
		maps.Copy(ep.Headers, c.ExtraHeaders)
	}
	return ep, nil
}

// usesResponses is the reference's uses_responses_api: api_mode if not
// auto, else the capability override, else the model family.
func usesResponses(c *Config) bool {
	switch c.APIMode {
	case "responses":
		return true
	case "chat":
		return false
	}
	if v, ok := c.CapabilityOverrides["supports_responses_api"].(bool); ok {
		return v
	}
	return matches(c.Model, responsesModels...)
}

// bedrockRoutes are LiteLLM's Bedrock routes (bedrock/ROUTE/model): those
// gohands serves with Converse, and those it does not speak.
var (
	bedrockConverse = []string{"converse/", "invoke/"}
	bedrockOther    = []string{"agent/", "agentcore/", "async_invoke/", "openai/", "mantle/", "chat_completions/", "claude_platform/", "converse_like/"}
)

// bedrockModel returns the Bedrock model id of a bedrock/ model: LiteLLM's
// converse/ route prefix is dropped, and so is invoke/ (gohands speaks
// Converse to every model; the Invoke API's bodies differ per model
// family). Routes to other APIs are refused.
func bedrockModel(model, rest string) (string, error) {
	for _, p := range bedrockConverse {
		if id, ok := strings.CutPrefix(rest, p); ok {
			rest = id
			break
		}
	}
	for _, p := range bedrockOther {
		if strings.HasPrefix(rest, p) {
			return "", fmt.Errorf("llm: model %q: the Bedrock %s route is not supported; gohands speaks the Converse API (write bedrock/MODEL_ID or bedrock/converse/MODEL_ID)", model, strings.TrimSuffix(p, "/"))
		}
	}
	if rest == "" {
		return "", fmt.Errorf("llm: model %q: no Bedrock model id after bedrock/", model)
	}
	return rest, nil
}
