package condenser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	_ "github.com/gohands/gohands/llm/providers" // the Responses API provider
	"github.com/gohands/gohands/secret"
)

// On the Responses API the summary call is what the reference sends:
// the instructions as "instructions", the events as the input's one user
// message, and store false.
func TestSummaryOnResponsesWire(t *testing.T) {
	srv := llmtest.NewResponses(t, llmtest.Reply{ID: "resp-sum", Text: "SUMMARY"})
	cfg := llm.DefaultConfig("openai/gpt-5-mini")
	cfg.APIKey = secret.New("sk-test")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.NumRetries = 1
	cfg.UsageID = "condenser"
	l, err := llm.New(cfg, &llm.Options{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	c := NewLLMSummarizing(l.Config(), l)
	c.MaxSize, c.KeepFirst = 10, 2
	b := (&builder{}).system().user("task")
	for range 4 {
		b.batch(1, "output", false)
	}
	b.user("one more")
	cond, err := c.Condense(t.Context(), NewView(b.events), nil)
	if err != nil || cond == nil || *cond.Summary != "SUMMARY" {
		t.Fatalf("Condense = %v, %v", cond, err)
	}
	body := srv.LastRequest().Body
	if store, ok := body["store"].(bool); !ok || store {
		t.Fatalf("store = %v", body["store"])
	}
	if ins, _ := body["instructions"].(string); ins != summaryInstructions {
		t.Fatalf("instructions = %.200q", ins)
	}
	input, _ := body["input"].([]any)
	if len(input) != 1 {
		t.Fatalf("input has %d items: %v", len(input), input)
	}
	item, _ := input[0].(map[string]any)
	if item["role"] != "user" {
		t.Fatalf("input item %v", item)
	}
	// The item's text, whatever the content's shape (string or parts).
	text := fmt.Sprint(item["content"])
	if n := strings.Count(text, "<EVENT>"); n != 8 || strings.Contains(text, "TASK_TRACKING") {
		t.Fatalf("%d events in the user input: %.300q", n, text)
	}
}
