package llm_test

import (
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// BenchmarkMetricsJSON encodes the metrics of 1,000 calls, as each save
// of a long conversation's base state does.
func BenchmarkMetricsJSON(b *testing.B) {
	m := metricsOf(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := event.MarshalJSON(map[string]*llm.Metrics{"agent": &m}); err != nil {
			b.Fatal(err)
		}
	}
}

func metricsOf(calls int) llm.Metrics {
	m := llm.Metrics{ModelName: "openai/gpt-5"}
	at := time.Unix(1_790_000_000, 123_456_789)
	for i := range calls {
		m.AddCost("openai/gpt-5", 0.0125+float64(i)/1e6, at)
		m.AddLatency("openai/gpt-5", 1234567*time.Microsecond, "chatcmpl-abc")
		m.AddTokenUsage(llm.TokenUsage{Model: "openai/gpt-5", PromptTokens: 12000 + i, CompletionTokens: 230, CacheReadTokens: 11000, ContextWindow: 400000, PerTurnToken: 12230, ResponseID: "chatcmpl-abc"})
	}
	return m
}
