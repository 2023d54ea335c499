package llm

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
)

// plainJSON encodes m without AppendJSON, as the codec encodes any struct.
func plainJSON(t *testing.T, m Metrics) string {
	t.Helper()
	type plain Metrics // the same fields, without AppendJSON
	p := plain(m)
	p.Costs = append([]Cost{}, m.Costs...)
	p.ResponseLatencies = append([]ResponseLatency{}, m.ResponseLatencies...)
	p.TokenUsages = append([]TokenUsage{}, m.TokenUsages...)
	b, err := event.MarshalJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMetricsEncodingReuse checks that metrics sharing an encoding cache
// (copies of one LLM's metrics) encode as they would without it: as the
// lists grow, for an older, shorter copy, and for a copy whose entries
// were changed.
func TestMetricsEncodingReuse(t *testing.T) {
	m := Metrics{ModelName: "m", enc: &metricsEnc{}}
	check := func(name string, m Metrics) {
		t.Helper()
		got, err := event.MarshalJSON(map[string]Metrics{"a": m})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"a":` + plainJSON(t, m) + `}`; string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	check("empty", m)
	at := time.Unix(1_790_000_000, 0)
	var snaps []Metrics
	for i := range 5 {
		m.AddCost("m", 0.5+float64(i), at)
		m.AddLatency("m", time.Duration(i)*time.Second, "r")
		m.AddTokenUsage(TokenUsage{Model: "m", PromptTokens: i, ResponseID: "r"})
		c := m.Clone()
		snaps = append(snaps, c)
		check("growing", c)
	}
	check("older copy", snaps[1])
	changed := m.Clone()
	changed.TokenUsages[2].PromptTokens = 99
	changed.Costs = changed.Costs[:1]
	check("changed copy", changed)
	check("latest again", m)
	other := Metrics{ModelName: "o", Costs: []Cost{{Model: "o", Cost: 1}}}
	check("no cache", other)
}

// BenchmarkMetricsJSONGrowing encodes an LLM's metrics after each of 1,000
// further calls, as the saves of a long conversation do: the entries
// encoded before are reused.
func BenchmarkMetricsJSONGrowing(b *testing.B) {
	m := Metrics{ModelName: "openai/gpt-5", enc: &metricsEnc{}}
	at := time.Unix(1_790_000_000, 123_456_789)
	add := func(i int) {
		m.AddCost("openai/gpt-5", 0.0125+float64(i)/1e6, at)
		m.AddLatency("openai/gpt-5", 1234567*time.Microsecond, "chatcmpl-abc")
		m.AddTokenUsage(TokenUsage{Model: "openai/gpt-5", PromptTokens: 12000 + i, CompletionTokens: 230, CacheReadTokens: 11000, ContextWindow: 400000, PerTurnToken: 12230, ResponseID: "chatcmpl-abc"})
	}
	for i := range 1000 {
		add(i)
	}
	b.ReportAllocs()
	i := 1000
	for b.Loop() {
		add(i)
		i++
		if _, err := event.MarshalJSON(map[string]*Metrics{"agent": &m}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRestoredMetricsShareEncoding checks that metrics decoded from a
// stored conversation (KeepEncodings) and the LLM they are restored into
// share one encoding cache, and that both still encode exactly as they
// would without it while the LLM's grow and the stored ones do not.
func TestRestoredMetricsShareEncoding(t *testing.T) {
	check := func(name string, m Metrics) {
		t.Helper()
		got, err := event.MarshalJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := plainJSON(t, m); string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	var stored Metrics
	if err := json.Unmarshal([]byte(`{"model_name":"m","accumulated_cost":1,"costs":[{"model":"m","cost":1,"timestamp":1}],"response_latencies":[{"model":"m","latency":0.5,"response_id":"r1"}],"token_usages":[]}`), &stored); err != nil {
		t.Fatal(err)
	}
	stored.KeepEncodings()
	check("stored", stored)
	var l LLM
	l.RestoreMetrics(stored)
	if l.metrics.enc != stored.enc {
		t.Fatal("the restored metrics do not share the stored ones' cache")
	}
	for i := range 3 {
		l.metrics.AddLatency("m", time.Duration(i)*time.Second, "r")
		check("llm", l.Metrics())
		check("stored, shorter", stored)
	}
	var fresh LLM
	fresh.RestoreMetrics(Metrics{ModelName: "m"})
	if fresh.metrics.enc == nil {
		t.Fatal("metrics restored without a cache got none")
	}
}
