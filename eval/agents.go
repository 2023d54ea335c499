package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/preset"
)

// AgentSpec is an agent configuration as a file declares it (gohands eval
// --agents): the model, the tool preset and the condenser. Confirmation is
// always off: nobody is there to confirm.
type AgentSpec struct {
	// Name identifies the configuration (default: the model's name with
	// '/' replaced by '_').
	Name    string `json:"name,omitempty"`
	Model   string `json:"model"`
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the model's key
	// (default LLM_API_KEY); a key is never written in the file.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Preset is the tool preset (default "default"; see preset.Names).
	Preset string `json:"preset,omitempty"`
	// CondenserMaxSize and CondenserKeepFirst change the preset's
	// summarizing condenser; a negative CondenserMaxSize removes it.
	CondenserMaxSize   int `json:"condenser_max_size,omitempty"`
	CondenserKeepFirst int `json:"condenser_keep_first,omitempty"`
	// Temperature, if set, is the model's sampling temperature.
	Temperature *float64 `json:"temperature,omitempty"`
}

// ReadAgentSpecs reads a JSON list of AgentSpecs from a file.
func ReadAgentSpecs(name string) ([]AgentSpec, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("eval: agents: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var specs []AgentSpec
	if err := d.Decode(&specs); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", name, err)
	}
	return specs, nil
}

// Config returns the configuration s describes, its key read from the
// environment.
func (s AgentSpec) Config() (Config, error) {
	cfg, err := s.LLMConfig()
	if err != nil {
		return Config{}, err
	}
	return s.ConfigWith(cfg)
}

// LLMConfig returns the model configuration s describes, its key read from
// the environment, for a caller to change (its retries, say) before
// ConfigWith.
func (s AgentSpec) LLMConfig() (llm.Config, error) {
	if s.Model == "" {
		return llm.Config{}, fmt.Errorf("eval: agent configuration %q without a model", s.Name)
	}
	keyEnv := s.APIKeyEnv
	if keyEnv == "" {
		keyEnv = "LLM_API_KEY"
	}
	cfg := llm.DefaultConfig(s.Model)
	cfg.BaseURL = s.BaseURL
	cfg.APIKey = secret.New(os.Getenv(keyEnv))
	if s.Temperature != nil {
		cfg.Temperature = s.Temperature
	}
	return cfg, nil
}

// ConfigWith returns the configuration of s's preset and condenser on the
// model cfg describes (s's model fields are not used).
func (s AgentSpec) ConfigWith(cfg llm.Config) (Config, error) {
	name := s.Name
	if name == "" {
		name = fileSafe(cfg.Model)
	}
	p := s.Preset
	if p == "" {
		p = preset.Default
	}
	if _, ok := preset.Lookup(p); !ok {
		return Config{}, fmt.Errorf("eval: agent configuration %q: unknown preset %q (have %v)", name, p, preset.Names())
	}
	return Config{
		Name:  name,
		Model: cfg.Model,
		NewAgent: func(t *Task) (conversation.Agent, error) {
			a, err := preset.New(p, cfg, nil)
			if err != nil {
				return nil, err
			}
			if t.Kind == KindIntegration {
				a.Tools = nil
				for _, n := range t.Tools {
					a.Tools = append(a.Tools, tool.Spec{Name: n})
				}
			}
			switch {
			case s.CondenserMaxSize < 0:
				a.Condenser = nil
			case s.CondenserMaxSize > 0 || s.CondenserKeepFirst > 0:
				if a.Condenser, err = resize(a.Condenser, s.CondenserMaxSize, s.CondenserKeepFirst); err != nil {
					return nil, fmt.Errorf("eval: agent configuration %q: %w", name, err)
				}
			}
			return a, nil
		},
	}, nil
}

// resize changes the sizes of a summarizing condenser's configuration.
func resize(raw []byte, maxSize, keepFirst int) ([]byte, error) {
	c, err := event.DecodeKinded[*condenser.LLMSummarizing](raw)
	if err != nil {
		return nil, fmt.Errorf("the preset's condenser cannot be resized: %w", err)
	}
	if maxSize > 0 {
		c.MaxSize = maxSize
	}
	if keepFirst > 0 {
		c.KeepFirst = keepFirst
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return event.MarshalKinded(c)
}

func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
