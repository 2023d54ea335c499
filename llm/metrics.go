package llm

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
}
