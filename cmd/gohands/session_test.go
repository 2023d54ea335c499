package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// TestSwitchConfig: where /model finds the base URL and the key of the
// model it switches to.
func TestSwitchConfig(t *testing.T) {
	cfgHome := t.TempDir()
	path := filepath.Join(cfgHome, "gohands", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	st := `{"model": "gemini/gemini-2.5-pro", "base_url": "http://gemini.test", "api_key": "sk-gem-file",
		"api_keys": {"mistral": "sk-mistral-file"}}`
	if err := os.WriteFile(path, []byte(st), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &app{getenv: func(k string) string { return map[string]string{"XDG_CONFIG_HOME": cfgHome}[k] }}
	s := &session{a: a, p: &prepared{
		cfg:       llm.Config{Model: "openai/gpt-4o", BaseURL: "http://local.test/v1", APIKey: secret.New("sk-openai")},
		keySource: "$LLM_API_KEY",
		keyEnv:    map[string]secret.String{"ANTHROPIC_API_KEY": secret.New("sk-ant-env"), "LLM_API_KEY": secret.New("sk-openai")},
	}}
	for _, c := range []struct {
		model, base, key, source string
		ask                      bool
	}{
		// The same provider, or a model of no known provider (a server of
		// one's own): key and base URL stay.
		{"openai/gpt-4o-mini", "http://local.test/v1", "sk-openai", "$LLM_API_KEY", false},
		{"qwen3-coder", "http://local.test/v1", "sk-openai", "$LLM_API_KEY", false},
		// Another provider: its variable, at its own API.
		{"anthropic/claude-sonnet-4-5", "", "sk-ant-env", "$ANTHROPIC_API_KEY", false},
		{"claude-opus-4", "", "sk-ant-env", "$ANTHROPIC_API_KEY", false},
		// The settings' provider: its base URL and key.
		{"gemini/gemini-2.5-flash", "http://gemini.test", "sk-gem-file", "the settings file", false},
		// A key saved for the provider by an earlier /model.
		{"mistral/mistral-large", "", "sk-mistral-file", "the settings file (api_keys)", false},
		// No key anywhere, and the provider's own API: ask.
		{"deepseek/deepseek-chat", "", "", "", true},
	} {
		cfg, source, ask, err := s.switchConfig(c.model)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		if cfg.Model != c.model || cfg.BaseURL != c.base || cfg.APIKey.Value() != c.key || source != c.source || ask != c.ask || !cfg.Stream {
			t.Errorf("%s: base %q key %q from %q ask %v stream %v; want %q %q from %q ask %v",
				c.model, cfg.BaseURL, cfg.APIKey.Value(), source, ask, cfg.Stream, c.base, c.key, c.source, c.ask)
		}
	}
}
