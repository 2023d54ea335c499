package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// The finishing event carries the critic's verdict (critic_result), as the
// reference 1.58 writes it: the finish action in finish_and_message mode,
// every action in all_actions mode, and a final text reply.
func TestCriticResultOnFinishingEvent(t *testing.T) {
	finish := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	think := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"hmm"}`}}}
	for _, tc := range []struct {
		name, critic string
		replies      []llmtest.Reply
		want         map[string]float64 // tool name (or "message") → score; absent: no critic_result
	}{
		{"finish", `{"kind":"PassCritic"}`, []llmtest.Reply{think, finish}, map[string]float64{"finish": 1}},
		{"all actions", `{"kind":"AgentFinishedCritic","mode":"all_actions"}`, []llmtest.Reply{think, finish}, map[string]float64{"think": 0, "finish": 0}},
		{"text reply", `{"kind":"PassCritic"}`, []llmtest.Reply{{Text: "All done."}}, map[string]float64{"message": 1}},
		{"no critic", ``, []llmtest.Reply{think, finish}, map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newAgent(t, tc.replies...)
			if tc.critic != "" {
				a.Critic = json.RawMessage(tc.critic)
			}
			c, _ := newConv(t, a, nil)
			turn(t, c, "go")
			got := map[string]float64{}
			for _, e := range logEvents(t, c) {
				switch e := e.(type) {
				case *event.ActionEvent:
					if e.CriticResult != nil {
						got[e.ToolName] = e.CriticResult.Score
					}
				case *event.MessageEvent:
					if e.Source == event.SourceAgent && e.CriticResult != nil {
						got["message"] = e.CriticResult.Score
						if e.CriticResult.Message == nil || *e.CriticResult.Message == "" {
							t.Error("critic_result without a message")
						}
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("critic results %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if s, ok := got[k]; !ok || s != v {
					t.Errorf("critic results %v, want %v", got, tc.want)
				}
			}
		})
	}
}
