package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
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

// stopConv is a conversation that records runs and pauses, for the
// session's stop: onSend runs while the message is being stored.
type stopConv struct {
	conversation.Conversation
	onSend func()

	mu     sync.Mutex
	runs   int
	status conversation.ExecutionStatus
}

func (c *stopConv) SendMessage(context.Context, event.Message) error {
	if c.onSend != nil {
		c.onSend()
	}
	return nil
}

func (c *stopConv) Run(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs++
	if ctx.Err() != nil {
		c.status = conversation.StatusPaused
		return ctx.Err()
	}
	c.status = conversation.StatusFinished
	return nil
}

// Pause is the conversation's: with no run in progress it pauses an idle
// conversation, and the next Run runs all the same.
func (c *stopConv) Pause(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status == conversation.StatusIdle {
		c.status = conversation.StatusPaused
	}
	return nil
}

func (c *stopConv) Status() conversation.ExecutionStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// TestStopBeforeRun: Esc pressed after a message is sent but before its
// run has begun (the window lasts seconds under load) stops the run that
// was about to start, and the next message runs.
func TestStopBeforeRun(t *testing.T) {
	conv := &stopConv{status: conversation.StatusIdle}
	s := &session{p: &prepared{}, conv: conv}
	conv.onSend = s.Pause
	o := s.Send(t.Context(), "hello")
	if o.Err != nil || o.Status != "paused" {
		t.Fatalf("outcome %+v; want paused, no error", o)
	}
	if conv.runs != 0 {
		t.Fatalf("%d runs after the stop; want none", conv.runs)
	}

	conv.onSend = nil
	o = s.Send(t.Context(), "go on")
	if o.Err != nil || o.Status != "finished" || conv.runs != 1 {
		t.Fatalf("next message: outcome %+v after %d runs; want finished after one (the stop must not outlive its exchange)", o, conv.runs)
	}
}
