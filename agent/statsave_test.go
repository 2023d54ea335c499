package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// The cost of each model reply is on disk before the reply is stored: a
// process killed once an event of the reply is committed loses none of
// the calls it acted on.
func TestStatsSavedBeforeEachReply(t *testing.T) {
	think := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"hmm"}`}},
		Usage: llmtest.Usage{PromptTokens: 10, CompletionTokens: 2}}
	done := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}},
		Usage: llmtest.Usage{PromptTokens: 10, CompletionTokens: 2}}
	a, _ := newAgent(t, think, think, think, done)
	dir := t.TempDir()
	var (
		c    *conversation.LocalConversation
		seen []int // calls on disk at each ActionEvent
		errs []error
	)
	onEvent := func(e event.Event) {
		if _, ok := e.(*event.ActionEvent); !ok || c == nil {
			return
		}
		b, err := os.ReadFile(filepath.Join(c.Dir(), filestore.BaseStateFile))
		var st struct {
			Stats struct {
				UsageToMetrics map[string]struct {
					TokenUsages []json.RawMessage `json:"token_usages"`
				} `json:"usage_to_metrics"`
			} `json:"stats"`
		}
		if err == nil {
			err = json.Unmarshal(b, &st)
		}
		if err != nil {
			errs = append(errs, err)
			return
		}
		seen = append(seen, len(st.Stats.UsageToMetrics["default"].TokenUsages))
	}
	var err error
	c, err = conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SendMessage(ctx, event.UserMessage("think thrice")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if want := []int{1, 2, 3, 4}; !equalInts(seen, want) {
		t.Fatalf("calls saved when each reply's action was stored: %v, want %v", seen, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
