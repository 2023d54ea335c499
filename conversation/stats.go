package conversation

import (
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

// clone returns a copy of s that shares the Metrics values. Metrics are
// replaced, not mutated, by updates.
func (s Stats) clone() Stats {
	if s.UsageToMetrics == nil {
		return s
	}
	m := make(event.Map[string, *llm.Metrics], len(s.UsageToMetrics))
	for k, v := range s.UsageToMetrics {
		m[k] = v
	}
	return Stats{UsageToMetrics: m}
}
