package llm

import (
	"slices"
	"sync"
	"time"

	"github.com/gohands/gohands/event"
)

// TokenUsage counts the tokens of one call, or of many added together. Its
// JSON is the reference's TokenUsage.
type TokenUsage struct {
	Model            string `json:"model"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	CacheReadTokens  int    `json:"cache_read_tokens"`
	CacheWriteTokens int    `json:"cache_write_tokens"`
	ReasoningTokens  int    `json:"reasoning_tokens"`
	ContextWindow    int    `json:"context_window"`
	PerTurnToken     int    `json:"per_turn_token"`
	ResponseID       string `json:"response_id"`
}

// Cost is the cost of one call.
type Cost struct {
	Model     string  `json:"model"`
	Cost      float64 `json:"cost"`
	Timestamp float64 `json:"timestamp"` // Unix seconds
}

// ResponseLatency is the latency of one call, in seconds.
type ResponseLatency struct {
	Model      string  `json:"model"`
	Latency    float64 `json:"latency"`
	ResponseID string  `json:"response_id"`
}

// Metrics accumulates the cost and token usage of one LLM (one usage id).
// Its JSON is the reference's Metrics.
type Metrics struct {
	ModelName             string            `json:"model_name"`
	AccumulatedCost       float64           `json:"accumulated_cost"`
	MaxBudgetPerTask      *float64          `json:"max_budget_per_task,omitempty"`
	AccumulatedTokenUsage *TokenUsage       `json:"accumulated_token_usage,omitempty"`
	Costs                 []Cost            `json:"costs"`
	ResponseLatencies     []ResponseLatency `json:"response_latencies"`
	TokenUsages           []TokenUsage      `json:"token_usages"`
	// enc, shared by copies, keeps the encodings of the lists' elements
	// for AppendJSON: an LLM's lists grow by one entry per call, and its
	// metrics are saved with the conversation's state all along.
	enc *metricsEnc
}

// MetricsSnapshot is the short form of Metrics sent in WebSocket stats
// updates: the first four fields.
type MetricsSnapshot struct {
	ModelName             string      `json:"model_name"`
	AccumulatedCost       float64     `json:"accumulated_cost"`
	MaxBudgetPerTask      *float64    `json:"max_budget_per_task"`
	AccumulatedTokenUsage *TokenUsage `json:"accumulated_token_usage"`
}

// Add adds the counts of u to t, keeps the larger context window and takes
// u's per-turn total and response id (the reference's TokenUsage.__add__).
func (t *TokenUsage) Add(u TokenUsage) {
	t.PromptTokens += u.PromptTokens
	t.CompletionTokens += u.CompletionTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
	t.ReasoningTokens += u.ReasoningTokens
	t.ContextWindow = max(t.ContextWindow, u.ContextWindow)
	t.PerTurnToken = u.PerTurnToken
	t.ResponseID = u.ResponseID
}

// CacheHitRate is the share of prompt tokens read from the provider's
// cache. Providers that count cached tokens outside the prompt are handled
// by widening the denominator.
func (t TokenUsage) CacheHitRate() float64 {
	den := t.PromptTokens
	if t.CacheReadTokens > t.PromptTokens {
		den += t.CacheReadTokens
	}
	if den == 0 {
		return 0
	}
	return float64(t.CacheReadTokens) / float64(den)
}

// AddCost records the cost of one call; costs that are not positive are
// not recorded.
func (m *Metrics) AddCost(model string, cost float64, at time.Time) {
	if cost <= 0 {
		return
	}
	m.AccumulatedCost += cost
	m.Costs = append(m.Costs, Cost{Model: model, Cost: cost, Timestamp: unixSeconds(at)})
}

// AddLatency records the latency of one call.
func (m *Metrics) AddLatency(model string, latency time.Duration, responseID string) {
	m.ResponseLatencies = append(m.ResponseLatencies, ResponseLatency{Model: model, Latency: latency.Seconds(), ResponseID: responseID})
}

// AddTokenUsage records the usage of one call and adds it to the total.
func (m *Metrics) AddTokenUsage(u TokenUsage) {
	m.TokenUsages = append(m.TokenUsages, u)
	if m.AccumulatedTokenUsage == nil {
		m.AccumulatedTokenUsage = &TokenUsage{Model: m.ModelName}
	}
	m.AccumulatedTokenUsage.Add(u)
}

// Merge adds everything recorded in o to m.
func (m *Metrics) Merge(o Metrics) {
	m.AccumulatedCost += o.AccumulatedCost
	if o.MaxBudgetPerTask != nil && m.MaxBudgetPerTask == nil {
		b := *o.MaxBudgetPerTask
		m.MaxBudgetPerTask = &b
	}
	m.Costs = append(m.Costs, o.Costs...)
	m.ResponseLatencies = append(m.ResponseLatencies, o.ResponseLatencies...)
	m.TokenUsages = append(m.TokenUsages, o.TokenUsages...)
	if o.AccumulatedTokenUsage != nil {
		if m.AccumulatedTokenUsage == nil {
			m.AccumulatedTokenUsage = &TokenUsage{Model: m.ModelName}
		}
		m.AccumulatedTokenUsage.Add(*o.AccumulatedTokenUsage)
	}
}

// Clone returns a deep copy of m.
func (m Metrics) Clone() Metrics {
	c := m
	if m.MaxBudgetPerTask != nil {
		b := *m.MaxBudgetPerTask
		c.MaxBudgetPerTask = &b
	}
	if m.AccumulatedTokenUsage != nil {
		u := *m.AccumulatedTokenUsage
		c.AccumulatedTokenUsage = &u
	}
	c.Costs = slices.Clone(m.Costs)
	c.ResponseLatencies = slices.Clone(m.ResponseLatencies)
	c.TokenUsages = slices.Clone(m.TokenUsages)
	return c
}

// KeepEncodings makes m, and the copies made of it from now on, reuse
// the JSON of the entries they had when last encoded, as an LLM's own
// metrics do: for metrics decoded from a stored conversation, which are
// encoded again at every save. It is not safe to call while m is in use
// elsewhere.
func (m *Metrics) KeepEncodings() {
	if m.enc == nil {
		m.enc = &metricsEnc{}
	}
}

// Snapshot returns the short form of m.
func (m Metrics) Snapshot() MetricsSnapshot {
	c := m.Clone()
	return MetricsSnapshot{c.ModelName, c.AccumulatedCost, c.MaxBudgetPerTask, c.AccumulatedTokenUsage}
}

// MarshalJSON implements json.Marshaler: lists encode as [] when empty, as
// the reference writes them.
func (m Metrics) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil) }

// AppendJSON implements event.JSONAppender: a conversation's base state
// holds one entry per LLM call in these lists, and event's encoder would
// validate MarshalJSON's output again at every save. The metrics of an
// LLM also reuse the encodings of the entries they had when last encoded.
func (m Metrics) AppendJSON(b []byte) ([]byte, error) {
	var costs, lats, uses encoded
	var err error
	if m.enc == nil {
		if costs, err = appendArray(m.Costs); err != nil {
			return nil, err
		}
		if lats, err = appendArray(m.ResponseLatencies); err != nil {
			return nil, err
		}
		if uses, err = appendArray(m.TokenUsages); err != nil {
			return nil, err
		}
	} else {
		m.enc.mu.Lock()
		defer m.enc.mu.Unlock()
		if costs, err = m.enc.costs.encode(m.Costs); err != nil {
			return nil, err
		}
		if lats, err = m.enc.lats.encode(m.ResponseLatencies); err != nil {
			return nil, err
		}
		if uses, err = m.enc.uses.encode(m.TokenUsages); err != nil {
			return nil, err
		}
	}
	type plain Metrics // the same fields, without these methods
	// The lists, already encoded, take the place of plain's: Metrics
	// declares them last, so the keys keep their order.
	return event.AppendJSON(b, struct {
		plain
		Costs             encoded `json:"costs"`
		ResponseLatencies encoded `json:"response_latencies"`
		TokenUsages       encoded `json:"token_usages"`
	}{plain(m), costs, lats, uses})
}

// encoded is a JSON array encoded by AppendJSON, appended as it is, but
// for its closing bracket when open: then it is a listEnc's buffer, used
// in place under its lock.
type encoded struct {
	b    []byte
	open bool
}

func (e encoded) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, e.b...)
	if e.open {
		b = append(b, ']')
	}
	return b, nil
}

type metricsEnc struct {
	mu    sync.Mutex
	costs listEnc[Cost]
	lats  listEnc[ResponseLatency]
	uses  listEnc[TokenUsage]
}

// listEnc keeps the elements of a list and the JSON array of them.
type listEnc[T comparable] struct {
	elems []T
	ends  []int // ends[i]: where elems[i]'s encoding ends in buf
	buf   []byte
}

// encode returns the JSON array of list, reusing the encodings of its
// longest prefix equal to the kept elements, and keeps list's elements
// when it extends them. The result may share c's buffer: it is valid
// until c is used again.
func (c *listEnc[T]) encode(list []T) (encoded, error) {
	k := 0
	for k < len(list) && k < len(c.elems) && list[k] == c.elems[k] {
		k++
	}
	if k < len(c.elems) { // list differs from, or is shorter than, what is kept
		if k < len(list) || len(list) == 0 {
			return appendArray(list)
		}
		return encoded{c.buf[:c.ends[k-1]], true}, nil
	}
	if len(c.buf) == 0 {
		c.buf = append(c.buf, '[')
	}
	for _, e := range list[k:] {
		if len(c.elems) > 0 {
			c.buf = append(c.buf, ',')
		}
		var err error
		if c.buf, err = event.AppendJSON(c.buf, e); err != nil {
			*c = listEnc[T]{}
			return encoded{}, err
		}
		c.elems = append(c.elems, e)
		c.ends = append(c.ends, len(c.buf))
	}
	return encoded{c.buf, true}, nil
}

func appendArray[T any](list []T) (encoded, error) {
	if list == nil {
		list = []T{}
	}
	b, err := event.AppendJSON(nil, list)
	return encoded{b: b}, err
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
