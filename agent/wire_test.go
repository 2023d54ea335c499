package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	_ "github.com/gohands/gohands/llm/providers"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/terminal"
)

// The loop over real HTTP in each provider's wire format: one reply
// creates a file and runs it, the next one reads the results and ends.
func TestRealToolsOverEveryWire(t *testing.T) {
	for _, tc := range []struct {
		model string
		wire  llmtest.Wire
	}{
		{"openai/gpt-4o", llmtest.WireChat},
		{"openai/gpt-5-mini", llmtest.WireResponses},
		{"anthropic/claude-sonnet-4-5", llmtest.WireAnthropic},
		{"gemini/gemini-2.5-flash", llmtest.WireGemini},
		// A Bedrock API key (the bearer token) stands for AWS keys here;
		// llm/bedrock's tests sign.
		{"bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", llmtest.WireBedrock},
		{"vertex_ai/gemini-2.5-pro", llmtest.WireVertexGemini},
		{"vertex_ai/claude-sonnet-4-5@20250929", llmtest.WireVertexAnthropic},
	} {
		t.Run(string(tc.wire), func(t *testing.T) {
			if strings.HasPrefix(tc.model, "vertex_ai/") {
				// A service account key whose tokens come from a
				// scripted token endpoint.
				tok := llmtest.NewTokenServer(t)
				llmtest.UseGoogleCredentials(t, tok.ServiceAccount(t, "test-project"))
			}
			work := t.TempDir()
			script := filepath.Join(work, "hello.sh")
			srv := llmtest.New(t,
				llmtest.Reply{Text: "Creating and running it.", ToolCalls: []llmtest.ToolCall{
					{ID: "call_1", Name: "file_editor", Arguments: fmt.Sprintf(`{"command":"create","path":%q,"file_text":"echo hello from $0\n"}`, script)},
					{ID: "call_2", Name: "terminal", Arguments: `{"command":"bash hello.sh"}`},
				}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_3", Name: "finish", Arguments: `{"message":"It prints hello."}`}}},
			)
			cfg := llm.DefaultConfig(tc.model)
			cfg.APIKey = secret.New("test-key")
			cfg.BaseURL = srv.URL
			if tc.wire == llmtest.WireChat || tc.wire == llmtest.WireResponses {
				cfg.BaseURL += "/v1"
			}
			cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0
			l, err := llm.New(cfg, &llm.Options{HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			a := agent.New(cfg, []tool.Spec{{Name: terminal.Name}, {Name: fileeditor.Name}}, &agent.Options{Model: l})
			c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(t.TempDir(), nil)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SendMessage(ctx, event.UserMessage("write a hello script and run it"))
			if err := c.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if c.Status() != conversation.StatusFinished {
				t.Fatalf("status %s", c.Status())
			}
			if b, err := os.ReadFile(script); err != nil || !strings.Contains(string(b), "echo hello") {
				t.Fatalf("script: %q, %v", b, err)
			}
			// The second request carried both results, in order, in the
			// provider's format.
			reqs := srv.Requests()
			if len(reqs) != 2 || reqs[1].Wire != tc.wire {
				t.Fatalf("%d requests", len(reqs))
			}
			body := string(reqs[1].RawBody)
			// Gemini has no call ids on the wire: results go by order.
			first, second := "call_1", "call_2"
			if tc.wire == llmtest.WireGemini || tc.wire == llmtest.WireVertexGemini {
				first, second = `"functionResponse":{"name":"file_editor"`, `"functionResponse":{"name":"terminal"`
			}
			i1, i2 := strings.LastIndex(body, first), strings.LastIndex(body, second)
			if i1 < 0 || i2 < i1 || !strings.Contains(body, "hello from hello.sh") {
				t.Fatalf("second request lacks the results in order:\n%s", body)
			}
		})
	}
}

// An agent without a Model makes its LLM from its config; its metrics are
// saved in the conversation's stats and carried on after a resume.
func TestMetricsPersistAcrossResume(t *testing.T) {
	srv := llmtest.NewChat(t,
		llmtest.Reply{Text: "one", Usage: llmtest.Usage{PromptTokens: 100, CompletionTokens: 10}},
		llmtest.Reply{Text: "two", Usage: llmtest.Usage{PromptTokens: 200, CompletionTokens: 20}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.APIKey = secret.New("test-key")
	cfg.BaseURL = srv.URL + "/v1"
	dir, work := t.TempDir(), t.TempDir()
	open := func() *conversation.LocalConversation {
		c, err := conversation.New(ctx, agent.New(cfg, nil, nil), work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: "0b5e0c1e-7c6a-4f53-9d5e-2a7c1f3e8d90"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	c.SendMessage(ctx, event.UserMessage("first"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c = open()
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("second"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	stats := c.State().Fields().Stats.UsageToMetrics
	if len(stats) != 1 {
		t.Fatalf("stats %v", stats)
	}
	for id, m := range stats {
		if u := m.AccumulatedTokenUsage; u == nil || u.PromptTokens != 300 || u.CompletionTokens != 30 {
			t.Fatalf("%s: accumulated %+v", id, m.AccumulatedTokenUsage)
		}
	}
}
