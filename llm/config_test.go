package llm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gohands/gohands/secret"
	"github.com/google/go-cmp/cmp"
)

// TestConfigReferenceRoundTrip decodes LLM objects written by the Python
// reference (testdata/reference_llm_*.json, made with its model_dump) and
// checks that re-encoding gives the same object, except for what we do
// differently on purpose.
func TestConfigReferenceRoundTrip(t *testing.T) {
	for _, name := range []string{"reference_llm_default.json", "reference_llm_custom.json",
		"reference158_llm_default.json", "reference158_llm_custom.json"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			var cfg Config
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			// modify_params is deprecated in the reference (a warning when
			// sent); we do not write it.
			delete(want, "modify_params")
			// The fixture's api_key is the redacted placeholder, which reads
			// as "no key", as in the reference.
			want["api_key"] = nil
			// 1.43.1 has no stream_idle_timeout; read without it, it takes
			// timeout's value, and is written (1.58.2's form).
			if _, ok := want["stream_idle_timeout"]; !ok {
				want["stream_idle_timeout"] = want["timeout"]
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("round trip differs (-reference +ours):\n%s", d)
			}
			if !strings.HasPrefix(string(out), `{"model":`) {
				t.Errorf("key order: output starts %.40s", out)
			}
		})
	}
}

func TestConfigDefaultsAndNormalisation(t *testing.T) {
	var cfg Config
	if err := json.Unmarshal([]byte(`{"model":"azure/gpt-4.1","unknown_key":1}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.APIVersion != "2024-12-01-preview" {
		t.Errorf("azure api_version = %q", cfg.APIVersion)
	}
	if cfg.NumRetries != 5 || !cfg.NativeToolCalling || !cfg.CachingPrompt || cfg.ReasoningEffort != "high" || cfg.UsageID != "default" {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if err := json.Unmarshal([]byte(`{"model":"openai/gpt-4o","base_url":"https://api.openai.com/"}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "" {
		t.Errorf("base_url not cleared: %q", cfg.BaseURL)
	}
	if err := json.Unmarshal([]byte(`{"model":""}`), &cfg); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("empty model: err = %v", err)
	}
	if err := json.Unmarshal([]byte(`{"model":"x","api_mode":"fast"}`), &cfg); err == nil {
		t.Error("bad api_mode accepted")
	}
	if err := json.Unmarshal([]byte(`{"model":"x","reasoning_effort":null,"is_subscription":true}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ReasoningEffort != "" || !cfg.IsSubscription() {
		t.Errorf("null reasoning_effort / is_subscription: %q %v", cfg.ReasoningEffort, cfg.IsSubscription())
	}
}

func TestConfigSecrets(t *testing.T) {
	cfg := DefaultConfig("openai/gpt-4o")
	cfg.APIKey = secret.New("sk-plain")
	cfg.AWSSecretAccessKey = secret.New("aws-plain")
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "plain") {
		t.Fatalf("secret leaked: %s", out)
	}
	if !strings.Contains(string(out), `"api_key":"**********"`) {
		t.Errorf("api_key not redacted: %s", out)
	}
	exposed, err := cfg.MapSecrets(func(s secret.String) (secret.String, error) { return s.Expose(), nil })
	if err != nil {
		t.Fatal(err)
	}
	out, err = json.Marshal(exposed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"api_key":"sk-plain"`) || !strings.Contains(string(out), `"aws_secret_access_key":"aws-plain"`) {
		t.Errorf("exposed secrets missing: %s", out)
	}
	var back Config
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.APIKey.Value() != "sk-plain" {
		t.Errorf("api key after round trip = %q", back.APIKey.Value())
	}
}

// stream_idle_timeout (1.58): absent, it is timeout's value; null means no
// limit. fallback_strategy is kept through a round trip.
func TestConfig158Fields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *float64
	}{
		{`{"model":"x"}`, new(300.0)},
		{`{"model":"x","timeout":120}`, new(120.0)},
		{`{"model":"x","timeout":null}`, nil},
		{`{"model":"x","stream_idle_timeout":null}`, nil},
		{`{"model":"x","timeout":10,"stream_idle_timeout":2.5}`, new(2.5)},
	} {
		var cfg Config
		if err := json.Unmarshal([]byte(tc.in), &cfg); err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(cfg.StreamIdleTimeout, tc.want) {
			t.Errorf("%s: stream_idle_timeout = %v, want %v", tc.in, cfg.StreamIdleTimeout, tc.want)
		}
	}
	in := `{"model":"x","fallback_strategy":{"fallback_llms":["cheap","local"],"profile_store_dir":"/p"}}`
	var cfg Config
	if err := json.Unmarshal([]byte(in), &cfg); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"fallback_strategy":{"fallback_llms":["cheap","local"],"profile_store_dir":"/p"}`) {
		t.Errorf("fallback_strategy lost: %s", out)
	}
	if out, _ := json.Marshal(DefaultConfig("x")); strings.Contains(string(out), "fallback_strategy") {
		t.Errorf("unset fallback_strategy written: %s", out)
	}
	for _, bad := range []string{
		`{"model":"x","stream_idle_timeout":-1}`,
		`{"model":"x","fallback_strategy":{"profile_store_dir":"/p"}}`,
	} {
		if err := json.Unmarshal([]byte(bad), &cfg); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
