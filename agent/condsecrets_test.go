package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// A condenser's LLM keys are secrets like the agent's: redacted in the
// agent's JSON (what responses and events carry), written in the form
// MapSecrets gives them (encrypted on disk, exposed for a client that
// sends them), and in clear only to the condenser that uses them.
func TestCondenserSecrets(t *testing.T) {
	for _, tc := range []struct{ name, cond string }{
		{"summarizing", `{"kind":"LLMSummarizingCondenser","llm":{"model":"openai/gpt-4o","api_key":"sk-cond-1","base_url":"http://x","aws_secret_access_key":"aws-cond-2","usage_id":"condenser"},"max_size":120,"keep_first":4}`},
		{"pipeline", `{"kind":"PipelineCondenser","condensers":[{"kind":"NoOpCondenser"},{"kind":"LLMSummarizingCondenser","llm":{"model":"openai/gpt-4o","api_key":"sk-cond-1","aws_secret_access_key":"aws-cond-2","usage_id":"condenser"},"max_size":120,"keep_first":4}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(llm.DefaultConfig("openai/gpt-4o"), nil, nil)
			a.Condenser = json.RawMessage(tc.cond)
			b, err := event.MarshalJSON(a)
			if err != nil {
				t.Fatal(err)
			}
			if s := string(b); strings.Contains(s, "sk-cond-1") || strings.Contains(s, "aws-cond-2") ||
				strings.Count(s, `"**********"`) < 2 || !strings.Contains(s, `"max_size":120,"keep_first":4`) {
				t.Fatalf("agent JSON leaks or loses the condenser: %s", s)
			}

			// Encrypted for the disk, then read back and decrypted.
			enc, err := a.MapSecrets(func(s secret.String) (secret.String, error) {
				return secret.New("enc:" + s.Value()).Expose(), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			b, err = event.MarshalJSON(enc)
			if err != nil {
				t.Fatal(err)
			}
			if s := string(b); !strings.Contains(s, `"api_key":"enc:sk-cond-1"`) || !strings.Contains(s, `"aws_secret_access_key":"enc:aws-cond-2"`) {
				t.Fatalf("encrypted agent JSON: %s", s)
			}
			var back Agent
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			dec, err := back.MapSecrets(func(s secret.String) (secret.String, error) {
				v, ok := strings.CutPrefix(s.Value(), "enc:")
				if !ok {
					t.Errorf("decrypting %q: not encrypted", s.Value())
				}
				return secret.New(v), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			da := dec.(*Agent)
			if b, _ := event.MarshalJSON(da); strings.Contains(string(b), "sk-cond-1") {
				t.Fatalf("decrypted agent JSON leaks the key: %s", b)
			}
			// The condenser the runner builds has the key in clear.
			raw, err := da.condenserJSON(secret.String.Expose)
			if err != nil {
				t.Fatal(err)
			}
			c, err := condenser.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := c.(*condenser.LLMSummarizing)
			if !ok {
				s = c.(*condenser.Pipeline).Condensers[1].(*condenser.LLMSummarizing)
			}
			if s.LLM.APIKey.Value() != "sk-cond-1" || s.LLM.AWSSecretAccessKey.Value() != "aws-cond-2" {
				t.Fatalf("condenser keys %q %q", s.LLM.APIKey.Value(), s.LLM.AWSSecretAccessKey.Value())
			}
		})
	}
}
