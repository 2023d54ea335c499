package llm

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// Price is what a model costs, in USD per token, and its limits.
type Price struct {
	Input      float64 // per prompt token not read from or written to the cache
	Output     float64 // per completion token (reasoning included)
	CacheRead  float64 // per prompt token read from the cache; 0 means Input
	CacheWrite float64 // per prompt token written to the cache; 0 means Input

	ContextWindow   int // input tokens
	MaxOutputTokens int
}

const perM = 1e-6 // prices below are written per million tokens

// prices is our own table for the major models, keyed by the model name
// without provider prefix. A name also matches when followed by a "-"
// suffix (a date or variant), so "gpt-4o-2024-08-06" is priced as "gpt-4o"
// but "gpt-5.5" is not priced as "gpt-5".
var (
	pricesMu sync.RWMutex
	prices   = map[string]Price{
		"gpt-4o":             {2.5 * perM, 10 * perM, 1.25 * perM, 0, 128000, 16384},
		"gpt-4o-mini":        {0.15 * perM, 0.6 * perM, 0.075 * perM, 0, 128000, 16384},
		"gpt-4.1":            {2 * perM, 8 * perM, 0.5 * perM, 0, 1047576, 32768},
		"gpt-4.1-mini":       {0.4 * perM, 1.6 * perM, 0.1 * perM, 0, 1047576, 32768},
		"gpt-4.1-nano":       {0.1 * perM, 0.4 * perM, 0.025 * perM, 0, 1047576, 32768},
		"gpt-5":              {1.25 * perM, 10 * perM, 0.125 * perM, 0, 272000, 128000},
		"gpt-5-mini":         {0.25 * perM, 2 * perM, 0.025 * perM, 0, 272000, 128000},
		"gpt-5-nano":         {0.05 * perM, 0.4 * perM, 0.005 * perM, 0, 272000, 128000},
		"gpt-5-codex":        {1.25 * perM, 10 * perM, 0.125 * perM, 0, 272000, 128000},
		"gpt-5.1":            {1.25 * perM, 10 * perM, 0.125 * perM, 0, 272000, 128000},
		"gpt-5.1-codex":      {1.25 * perM, 10 * perM, 0.125 * perM, 0, 272000, 128000},
		"gpt-5.1-codex-mini": {0.25 * perM, 2 * perM, 0.025 * perM, 0, 272000, 128000},
		"gpt-5.2":            {1.75 * perM, 14 * perM, 0.175 * perM, 0, 272000, 128000},
		"o1":                 {15 * perM, 60 * perM, 7.5 * perM, 0, 200000, 100000},
		"o3":                 {2 * perM, 8 * perM, 0.5 * perM, 0, 200000, 100000},
		"o3-mini":            {1.1 * perM, 4.4 * perM, 0.55 * perM, 0, 200000, 100000},
		"o4-mini":            {1.1 * perM, 4.4 * perM, 0.275 * perM, 0, 200000, 100000},
		"codex-mini-latest":  {1.5 * perM, 6 * perM, 0.375 * perM, 0, 200000, 100000},

		"claude-3-5-haiku":  {0.8 * perM, 4 * perM, 0.08 * perM, 1 * perM, 200000, 8192},
		"claude-3-7-sonnet": {3 * perM, 15 * perM, 0.3 * perM, 3.75 * perM, 200000, 64000},
		"claude-sonnet-4":   {3 * perM, 15 * perM, 0.3 * perM, 3.75 * perM, 200000, 64000},
		"claude-sonnet-4-5": {3 * perM, 15 * perM, 0.3 * perM, 3.75 * perM, 200000, 64000},
		"claude-sonnet-4-6": {3 * perM, 15 * perM, 0.3 * perM, 3.75 * perM, 200000, 64000},
		"claude-haiku-4-5":  {1 * perM, 5 * perM, 0.1 * perM, 1.25 * perM, 200000, 64000},
		"claude-opus-4":     {15 * perM, 75 * perM, 1.5 * perM, 18.75 * perM, 200000, 32000},
		"claude-opus-4-1":   {15 * perM, 75 * perM, 1.5 * perM, 18.75 * perM, 200000, 32000},
		"claude-opus-4-5":   {5 * perM, 25 * perM, 0.5 * perM, 6.25 * perM, 200000, 64000},

		"gemini-2.0-flash": {0.1 * perM, 0.4 * perM, 0.025 * perM, 0, 1048576, 8192},
		"gemini-2.5-flash": {0.3 * perM, 2.5 * perM, 0.075 * perM, 0, 1048576, 65535},
		"gemini-2.5-pro":   {1.25 * perM, 10 * perM, 0.31 * perM, 0, 1048576, 65535},

		"deepseek-chat":     {0.28 * perM, 0.42 * perM, 0.028 * perM, 0, 128000, 8192},
		"deepseek-reasoner": {0.28 * perM, 0.42 * perM, 0.028 * perM, 0, 128000, 65536},
		"grok-4":            {3 * perM, 15 * perM, 0.75 * perM, 0, 256000, 256000},
		"grok-code-fast-1":  {0.2 * perM, 1.5 * perM, 0.02 * perM, 0, 256000, 10000},
		"mistral-large":     {2 * perM, 6 * perM, 0, 0, 128000, 128000},
		"devstral-medium":   {0.4 * perM, 2 * perM, 0, 0, 128000, 128000},
		"kimi-k2-thinking":  {0.6 * perM, 2.5 * perM, 0.15 * perM, 0, 262144, 262144},
	}
)

// PricedModels returns the names (without provider prefix) of the models
// with a price, sorted: the models this package knows, for a list to
// choose from.
func PricedModels() []string {
	pricesMu.RLock()
	defer pricesMu.RUnlock()
	return slices.Sorted(maps.Keys(prices))
}

// SetPrice adds or replaces the price of a model name (without provider
// prefix) in the table used by every LLM.
func SetPrice(model string, p Price) {
	pricesMu.Lock()
	defer pricesMu.Unlock()
	prices[strings.ToLower(model)] = p
}

// lookupPrice finds the price of model: the name after the last "/",
// matched exactly or as the longest table name followed by "-".
func lookupPrice(model string) (Price, bool) {
	name := strings.ToLower(model)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	pricesMu.RLock()
	defer pricesMu.RUnlock()
	if p, ok := prices[name]; ok {
		return p, true
	}
	best, found := "", false
	for k := range prices {
		if strings.HasPrefix(name, k+"-") && len(k) > len(best) {
			best, found = k, true
		}
	}
	return prices[best], found
}

// PriceOf returns the price of the model in c: the config's per-token
// overrides when both are set, else the table.
func PriceOf(c *Config) (Price, bool) {
	if c.InputCostPerToken != nil && c.OutputCostPerToken != nil {
		return Price{Input: *c.InputCostPerToken, Output: *c.OutputCostPerToken}, true
	}
	if c.ModelCanonicalName != "" {
		return lookupPrice(c.ModelCanonicalName)
	}
	return lookupPrice(c.Model)
}

// Cost is the price of usage u. PromptTokens counts every input token,
// cached ones included.
func (p Price) Cost(u TokenUsage) float64 {
	cr, cw := p.CacheRead, p.CacheWrite
	if cr == 0 {
		cr = p.Input
	}
	if cw == 0 {
		cw = p.Input
	}
	fresh := max(u.PromptTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return float64(fresh)*p.Input + float64(u.CacheReadTokens)*cr + float64(u.CacheWriteTokens)*cw + float64(u.CompletionTokens)*p.Output
}
