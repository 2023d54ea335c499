package condenser

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// A condenser decoded without a key (as stored) that summarises with the
// agent's model borrows the agent's key and provider.
func TestSummarizerBorrowsAgentCredentials(t *testing.T) {
	p := llmtest.NewProvider(t, llmtest.Reply{Text: "USER_CONTEXT: summary"})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 1
	cfg.APIKey = secret.New("sk-agent")
	agentLLM, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	stored := cfg
	stored.UsageID = "condenser"
	c := NewLLMSummarizing(stored, nil)
	c.MaxSize, c.KeepFirst = 6, 1
	data, err := event.MarshalKinded(c) // the key is redacted here
	if err != nil {
		t.Fatal(err)
	}
	var probe struct {
		LLM struct {
			APIKey *string `json:"api_key"`
		} `json:"llm"`
	}
	if err := json.Unmarshal(data, &probe); err != nil || (probe.LLM.APIKey != nil && *probe.LLM.APIKey == "sk-agent") {
		t.Fatalf("the key is stored in the clear: %s", data)
	}
	decoded, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var b builder
	b.system().user("count to ten")
	for range 5 {
		b.batch(1, "ok", false)
	}
	cond, err := decoded.Condense(context.Background(), NewView(b.events), agentLLM)
	if err != nil || cond == nil {
		t.Fatalf("condense: %v %v", cond, err)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests to the agent's provider", len(reqs))
	}
	if got := reqs[0].Config.APIKey.Value(); got != "sk-agent" {
		t.Errorf("summary call made with key %q", got)
	}
	if reqs[0].Config.UsageID != "condenser" {
		t.Errorf("usage id %q", reqs[0].Config.UsageID)
	}
	if m := agentLLM.Metrics(); len(m.TokenUsages) != 0 {
		t.Errorf("the summary was counted in the agent's metrics: %+v", m.TokenUsages)
	}
}

// With KeepFirst 0 the leading system prompt is still kept (the condensed
// view must open with it, as in the reference), and the summary call
// carries the view's conversation id (the provider's prompt cache key).
func TestSummaryKeepsSystemPromptAndConversationID(t *testing.T) {
	model, p := scripted(t, llmtest.Reply{Text: "summary"})
	c := NewLLMSummarizing(llm.DefaultConfig("openai/gpt-4o"), model)
	c.MaxSize, c.KeepFirst = 6, 0
	var b builder
	b.system().user("count to ten")
	for range 5 {
		b.batch(1, "ok", false)
	}
	view := NewView(b.events)
	view.ConversationID = "conv-7"
	cond, err := c.Condense(context.Background(), view, nil)
	if err != nil || cond == nil {
		t.Fatalf("condense: %v %v", cond, err)
	}
	if cond.SummaryOffset == nil || *cond.SummaryOffset != 1 || cond.ForgottenEventIDs[0] != b.events[1].EventBase().ID {
		t.Errorf("offset %v, forgotten %v: the system prompt must stay first", cond.SummaryOffset, cond.ForgottenEventIDs)
	}
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0].ConversationID != "conv-7" {
		t.Errorf("summary requests %d, conversation id %q; want conv-7", len(reqs), reqs[0].ConversationID)
	}
}
