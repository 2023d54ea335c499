package conversation

import (
	"context"
	"maps"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Stats holds the LLM usage of a conversation, one Metrics per usage id
// ("agent", "condenser", ...). Its JSON is the reference's
// ConversationStats: {"usage_to_metrics":{id: Metrics}}.
type Stats struct {
	UsageToMetrics event.Map[string, *llm.Metrics] `json:"usage_to_metrics"`
}

// TotalCost is the accumulated cost over all usage ids.
func (s Stats) TotalCost() float64 {
	var c float64
	for _, m := range s.UsageToMetrics {
		if m != nil {
			c += m.AccumulatedCost
		}
	}
	return c
}

// Tokens returns the prompt and completion tokens over all usage ids.
func (s Stats) Tokens() (prompt, completion int) {
	for _, m := range s.UsageToMetrics {
		if m != nil && m.AccumulatedTokenUsage != nil {
			prompt += m.AccumulatedTokenUsage.PromptTokens
			completion += m.AccumulatedTokenUsage.CompletionTokens
		}
	}
	return prompt, completion
}

// AgentSteps counts the agent's replies in log from index from on: each
// message, and each model response however many actions it holds.
func AgentSteps(ctx context.Context, log *Log, from int) int {
	n, last := 0, ""
	for i := from; i < log.Len(); i++ {
		en, err := log.Entry(i)
		if err != nil || en.Source != event.SourceAgent {
			continue
		}
		switch en.Kind {
		case event.KindMessage:
			n++
			last = ""
		case event.KindAction:
			e, err := log.Event(ctx, i)
			if err != nil {
				continue
			}
			if a, ok := e.(*event.ActionEvent); ok {
				if a.LLMResponseID == "" || a.LLMResponseID != last {
					n++
				}
				last = a.LLMResponseID
			}
		}
	}
	return n
}

// clone returns a copy of s that shares the Metrics values. Metrics are
// replaced, not mutated, by updates.
func (s Stats) clone() Stats {
	if s.UsageToMetrics == nil {
		return s
	}
	m := make(event.Map[string, *llm.Metrics], len(s.UsageToMetrics))
	maps.Copy(m, s.UsageToMetrics)
	return Stats{UsageToMetrics: m}
}
