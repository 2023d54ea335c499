package llm

import (
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		model, baseURL, apiMode string
		provider                string
		api                     API
		wireModel, url, auth    string
	}{
		{"openai/gpt-4o", "", "", "openai", APIChat, "gpt-4o", "https://api.openai.com/v1", "Authorization"},
		{"openai/gpt-5-mini", "", "", "openai", APIResponses, "gpt-5-mini", "https://api.openai.com/v1", "Authorization"},
		{"openai/codex-mini-latest", "", "", "openai", APIResponses, "codex-mini-latest", "https://api.openai.com/v1", "Authorization"},
		{"openai/gpt-5", "", "chat", "openai", APIChat, "gpt-5", "https://api.openai.com/v1", "Authorization"},
		{"openai/gpt-4o", "", "responses", "openai", APIResponses, "gpt-4o", "https://api.openai.com/v1", "Authorization"},
		{"gpt-4o", "", "", "openai", APIChat, "gpt-4o", "https://api.openai.com/v1", "Authorization"},
		{"o3-mini", "", "", "openai", APIChat, "o3-mini", "https://api.openai.com/v1", "Authorization"},
		{"gpt-5.1-codex", "", "", "openai", APIResponses, "gpt-5.1-codex", "https://api.openai.com/v1", "Authorization"},
		{"anthropic/claude-sonnet-4-5", "", "", "anthropic", APIAnthropic, "claude-sonnet-4-5", "https://api.anthropic.com", "x-api-key"},
		{"claude-3-5-haiku-20241022", "", "", "anthropic", APIAnthropic, "claude-3-5-haiku-20241022", "https://api.anthropic.com", "x-api-key"},
		{"gemini/gemini-2.5-pro", "", "", "gemini", APIGemini, "gemini-2.5-pro", "https://generativelanguage.googleapis.com", "x-goog-api-key"},
		{"gemini-2.5-flash", "", "", "gemini", APIGemini, "gemini-2.5-flash", "https://generativelanguage.googleapis.com", "x-goog-api-key"},
		{"azure/my-gpt4o", "https://r.openai.azure.com", "", "azure", APIChat, "my-gpt4o", "https://r.openai.azure.com", "api-key"},
		{"openrouter/anthropic/claude-sonnet-4", "", "", "openrouter", APIChat, "anthropic/claude-sonnet-4", "https://openrouter.ai/api/v1", "Authorization"},
		{"openrouter/openai/gpt-5", "", "", "openrouter", APIChat, "openai/gpt-5", "https://openrouter.ai/api/v1", "Authorization"},
		{"deepseek/deepseek-chat", "", "", "deepseek", APIChat, "deepseek-chat", "https://api.deepseek.com/v1", "Authorization"},
		{"deepseek-reasoner", "", "", "deepseek", APIChat, "deepseek-reasoner", "https://api.deepseek.com/v1", "Authorization"},
		{"groq/llama-3.3-70b-versatile", "", "", "groq", APIChat, "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1", "Authorization"},
		{"mistral/devstral-medium-2507", "", "", "mistral", APIChat, "devstral-medium-2507", "https://api.mistral.ai/v1", "Authorization"},
		{"together_ai/Qwen/Qwen3-Coder", "", "", "together_ai", APIChat, "Qwen/Qwen3-Coder", "https://api.together.xyz/v1", "Authorization"},
		{"xai/grok-4", "", "", "xai", APIChat, "grok-4", "https://api.x.ai/v1", "Authorization"},
		{"grok-code-fast-1", "", "", "xai", APIChat, "grok-code-fast-1", "https://api.x.ai/v1", "Authorization"},
		{"ollama/qwen3:8b", "", "", "ollama", APIChat, "qwen3:8b", "http://localhost:11434/v1", "Authorization"},
		{"litellm_proxy/claude-sonnet-4-5", "https://proxy.example", "", "litellm_proxy", APIChat, "claude-sonnet-4-5", "https://proxy.example", "Authorization"},
		{"litellm_proxy/gpt-5", "https://proxy.example", "", "litellm_proxy", APIResponses, "gpt-5", "https://proxy.example", "Authorization"},
		{"openhands/claude-sonnet-4-5", "", "", "openhands", APIChat, "claude-sonnet-4-5", "https://llm-proxy.app.all-hands.dev/v1", "Authorization"},
		{"Qwen/Qwen3-8B", "http://vllm:8000/v1", "", "openai", APIChat, "Qwen/Qwen3-8B", "http://vllm:8000/v1", "Authorization"},
		{"my-local-model", "http://localhost:8080/v1", "", "openai", APIChat, "my-local-model", "http://localhost:8080/v1", "Authorization"},
		{"openai/local", "http://localhost:8080/v1", "", "openai", APIChat, "local", "http://localhost:8080/v1", "Authorization"},
		{"hosted_vllm/qwen", "http://vllm:8000/v1", "", "hosted_vllm", APIChat, "qwen", "http://vllm:8000/v1", "Authorization"},
		{"anthropic/claude-sonnet-4-5", "http://proxy:4000", "", "anthropic", APIAnthropic, "claude-sonnet-4-5", "http://proxy:4000", "x-api-key"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig(tt.model)
		cfg.BaseURL = tt.baseURL
		if tt.apiMode != "" {
			cfg.APIMode = tt.apiMode
		}
		cfg = cfg.Normalize()
		ep, err := Resolve(&cfg)
		if err != nil {
			t.Errorf("%s: %v", tt.model, err)
			continue
		}
		if ep.Provider != tt.provider || ep.API != tt.api || ep.Model != tt.wireModel || ep.BaseURL != tt.url || ep.AuthHeader != tt.auth {
			t.Errorf("%s (base %q, mode %q):\n got %s %s %s %s %s\nwant %s %s %s %s %s", tt.model, tt.baseURL, tt.apiMode,
				ep.Provider, ep.API, ep.Model, ep.BaseURL, ep.AuthHeader,
				tt.provider, tt.api, tt.wireModel, tt.url, tt.auth)
		}
	}
	// Every registered prefix is covered by the table above or is an alias.
	covered := map[string]bool{}
	for _, tt := range tests {
		if p, _, ok := strings.Cut(tt.model, "/"); ok {
			covered[p] = true
		}
	}
	for _, p := range []string{"openai", "anthropic", "gemini", "azure", "openrouter", "deepseek", "groq", "mistral", "together_ai", "xai", "ollama", "litellm_proxy"} {
		if !covered[p] {
			t.Errorf("prefix %s/ not tested", p)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	for _, model := range []string{"some-unknown-model", "azure/deployment", "litellm_proxy/x", "hosted_vllm/x"} {
		cfg := DefaultConfig(model).Normalize()
		if _, err := Resolve(&cfg); err == nil {
			t.Errorf("%s without base_url: no error", model)
		}
	}
}

func TestResolveUnknownPrefix(t *testing.T) {
	cfg := DefaultConfig("sagemaker/my-endpoint").Normalize()
	_, err := Resolve(&cfg)
	if err == nil || !strings.Contains(err.Error(), `provider "sagemaker" is not supported`) || !strings.Contains(err.Error(), "openrouter") {
		t.Errorf("err = %v", err)
	}
}

func TestResolveHeaders(t *testing.T) {
	cfg := DefaultConfig("openrouter/openai/gpt-4o")
	cfg.ExtraHeaders = map[string]string{"X-Extra": "1"}
	ep, err := Resolve(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Headers["HTTP-Referer"] != "https://docs.all-hands.dev/" || ep.Headers["X-Title"] != "OpenHands" || ep.Headers["X-Extra"] != "1" {
		t.Errorf("headers = %v", ep.Headers)
	}
	cfg = DefaultConfig("azure/gpt-4.1").Normalize()
	cfg.BaseURL = "https://r.openai.azure.com"
	if ep, _ = Resolve(&cfg); ep.APIVersion != "2024-12-01-preview" {
		t.Errorf("azure api version = %q", ep.APIVersion)
	}
}
