package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

const vertexClaude = "vertex_ai/claude-sonnet-4-5@20250929"

func vertexLLM(t *testing.T, srv *llmtest.Server, model string, edit func(*llm.Config)) *llm.LLM {
	t.Helper()
	cfg := llm.DefaultConfig(model)
	cfg.BaseURL = srv.URL
	cfg.RetryMultiplier, cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0, 0
	if edit != nil {
		edit(&cfg)
	}
	l, err := llm.New(cfg, &llm.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestVertexClaude: a vertex_ai/claude model is called with rawPredict
// (streamRawPredict when streamed) at the project's aiplatform path, the
// Messages body without its model and with anthropic_version
// vertex-2023-10-16, authorized with the service account's token; the
// reply reads as on Anthropic's API.
func TestVertexClaude(t *testing.T) {
	tok := llmtest.NewTokenServer(t)
	llmtest.UseGoogleCredentials(t, tok.ServiceAccount(t, "test-project"))
	t.Setenv("VERTEXAI_LOCATION", "us-east5")
	srv := llmtest.NewVertex(t,
		llmtest.Reply{Text: "plain", Reasoning: "think", Signature: "sig"},
		llmtest.Reply{Text: "streamed", ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"ls"}`}}})
	// Under the output a plain call may ask for (longer ones stream).
	l := vertexLLM(t, srv, vertexClaude, func(c *llm.Config) { c.MaxOutputTokens = 8000 })
	r, err := l.Completion(context.Background(), conversation(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	r2, err := l.Completion(context.Background(), conversation(), nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error { text.WriteString(d.Text); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(r.Message.Content) != "plain" || len(r.Message.ThinkingBlocks) != 1 || text.String() != "streamed" || len(r2.Message.ToolCalls) != 1 {
		t.Errorf("replies %+v / %+v", r.Message, r2.Message)
	}
	base := "/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929"
	for i, q := range srv.Requests() {
		want := base + map[bool]string{false: ":rawPredict", true: ":streamRawPredict"}[i == 1]
		token, _ := strings.CutPrefix(q.Header.Get("Authorization"), "Bearer ")
		if q.Path != want || q.Wire != llmtest.WireVertexAnthropic || !tok.Issued(token) || q.Header.Get("x-api-key") != "" {
			t.Errorf("request %d: %s (%s), auth %q", i, q.Path, q.Wire, q.Header.Get("Authorization"))
		}
		if _, ok := q.Body["model"]; ok || q.Body["anthropic_version"] != "vertex-2023-10-16" || q.Body["max_tokens"] == nil {
			t.Errorf("request %d body: model %v, anthropic_version %v", i, q.Body["model"], q.Body["anthropic_version"])
		}
		if i == 0 && (q.Header.Get("anthropic-beta") == "" || q.Body["thinking"] == nil) {
			t.Errorf("thinking not asked for: beta %q, %v", q.Header.Get("anthropic-beta"), q.Body["thinking"])
		}
	}
}

// TestVertexMatchesAnthropicSDK: the official SDK's Vertex client
// (anthropic.AnthropicVertex, from the reference venv) calls the same path,
// with the same authorization and the same vertex-specific body, as
// gohands does for the same call, streamed and not.
func TestVertexMatchesAnthropicSDK(t *testing.T) {
	py := testenv.Reference158Python(t)
	tok := llmtest.NewTokenServer(t)
	llmtest.UseGoogleCredentials(t, tok.ServiceAccount(t, "test-project"))
	t.Setenv("VERTEXAI_LOCATION", "us-east5")
	srv := llmtest.NewVertex(t, llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"}, llmtest.Reply{Text: "c"}, llmtest.Reply{Text: "d"})
	script := `
import sys, anthropic
c = anthropic.AnthropicVertex(region="us-east5", project_id="test-project", access_token="sdk-token", base_url=sys.argv[1] + "/v1")
kw = dict(model="claude-sonnet-4-5@20250929", max_tokens=1000, system="You are a careful agent.", messages=[{"role": "user", "content": "List the files."}])
print(c.messages.create(**kw).content[0].text)
with c.messages.stream(**kw) as s:
    print(s.get_final_message().content[0].text)
`
	path := filepath.Join(t.TempDir(), "sdk.py")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(py, path, srv.URL)
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || string(out) != "a\nb\n" {
		t.Fatalf("the SDK: %q, %v\n%s", out, err, stderr.Bytes())
	}
	l := vertexLLM(t, srv, vertexClaude, func(c *llm.Config) { c.MaxOutputTokens = 1000; c.ReasoningEffort = "none" })
	msgs := []event.Message{{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("You are a careful agent.")}}, event.UserMessage("List the files.")}
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), msgs, nil, &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	for i, sdk := range reqs[:2] {
		ours := reqs[i+2]
		if ours.Path != sdk.Path || ours.Stream != sdk.Stream {
			t.Errorf("call %d: path %s stream %v, the SDK's %s %v", i, ours.Path, ours.Stream, sdk.Path, sdk.Stream)
		}
		if sdk.Header.Get("Authorization") != "Bearer sdk-token" || !strings.HasPrefix(ours.Header.Get("Authorization"), "Bearer ya29.") {
			t.Errorf("call %d: authorization %q, the SDK's %q", i, ours.Header.Get("Authorization"), sdk.Header.Get("Authorization"))
		}
		for _, k := range []string{"anthropic_version", "model", "stream", "max_tokens"} {
			a, _ := json.Marshal(ours.Body[k])
			b, _ := json.Marshal(sdk.Body[k])
			if k == "stream" && !sdk.Stream {
				continue // the SDK leaves it out, gohands sends false
			}
			if !bytes.Equal(a, b) {
				t.Errorf("call %d: %s = %s, the SDK's %s", i, k, a, b)
			}
		}
		// The SDK sends no anthropic-version header on Vertex; neither
		// does gohands.
		if v := ours.Header.Get("anthropic-version"); v != sdk.Header.Get("anthropic-version") {
			t.Errorf("call %d: anthropic-version header %q, the SDK's %q", i, v, sdk.Header.Get("anthropic-version"))
		}
		keys := func(m map[string]any) []string {
			var ks []string
			for k := range m {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			return ks
		}
		t.Logf("call %d: gohands body keys %v, the SDK's %v", i, keys(ours.Body), keys(sdk.Body))
	}
}
