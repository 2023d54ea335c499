package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --profile takes the whole model configuration from the settings'
// llm_profiles, also on resume and over $LLM_MODEL; an unknown profile is
// a usage error naming the ones there are.
func TestRunProfile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gohands"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".gohands", "settings.json"),
		`{"model":"anthropic/claude-sonnet-4-5","llm_profiles":{"cheap":{"model":"openai/gpt-4o-mini","base_url":"http://cheap","api_key":"k-cheap","temperature":0.5}}}`)
	a := &app{getenv: func(k string) string {
		return map[string]string{"HOME": home, "LLM_MODEL": "openai/gpt-5"}[k]
	}}
	cfg, _, err := a.llmConfig(&runFlags{profile: "cheap"}, settings{Model: "anthropic/claude-sonnet-4-5"}, convInfo{Model: "gemini/gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "openai/gpt-4o-mini" || cfg.BaseURL != "http://cheap" || cfg.APIKey.Value() != "k-cheap" || cfg.UsageID != "profile:cheap" {
		t.Errorf("config: model %q base %q key %q usage %q", cfg.Model, cfg.BaseURL, cfg.APIKey.Value(), cfg.UsageID)
	}
	if cfg.Temperature == nil || *cfg.Temperature != 0.5 {
		t.Errorf("temperature %v", cfg.Temperature)
	}
	_, _, err = a.llmConfig(&runFlags{profile: "nope"}, settings{}, convInfo{})
	if err == nil || !strings.Contains(err.Error(), "cheap") {
		t.Errorf("unknown profile: %v", err)
	}
}
