package llm

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gohands/gohands/event"
)

// completionLog is one call as written when log_completions is on: what
// was sent, what came back (or the error), cost, latency and usage.
type completionLog struct {
	Model        string          `json:"model"`
	Messages     []event.Message `json:"messages"`
	Tools        []toolLog       `json:"tools,omitempty"`
	Response     *responseLog    `json:"response,omitempty"`
	Error        *errorLog       `json:"error,omitempty"`
	Cost         float64         `json:"cost"`
	Timestamp    float64         `json:"timestamp"`
	LatencySec   float64         `json:"latency_sec"`
	UsageSummary *usageSummary   `json:"usage_summary,omitempty"`
}

type toolLog struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  any    `json:"parameters,omitempty"`
}

type responseLog struct {
	ID           string        `json:"id"`
	Model        string        `json:"model"`
	Message      event.Message `json:"message"`
	FinishReason string        `json:"finish_reason"`
}

type errorLog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type usageSummary struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens"`
}

// logCompletion writes one call to the config's log folder as
// <model>-<unix time>-<4 hex>.json (-error.json for a failure), the
// reference's layout. Logging is best effort: a failure to write is
// reported to the logger, never to the caller.
func (l *LLM) logCompletion(req *Request, resp *Response, callErr error, latency time.Duration) {
	if !l.cfg.LogCompletions {
		return
	}
	now := time.Now()
	rec := completionLog{Model: l.cfg.Model, Messages: req.Messages, Timestamp: unixSeconds(now), LatencySec: latency.Seconds()}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, toolLog{Name: t.Name, Description: t.Description, Parameters: rawOrNil(t.Parameters)})
	}
	suffix := ".json"
	if callErr != nil {
		rec.Error = &errorLog{Type: fmt.Sprintf("%T", callErr), Message: callErr.Error()}
		suffix = "-error.json"
	} else {
		rec.Response = &responseLog{ID: resp.ID, Model: resp.Model, Message: resp.Message, FinishReason: resp.FinishReason}
		rec.Cost = resp.Cost
		u := resp.Usage
		rec.UsageSummary = &usageSummary{u.PromptTokens, u.CompletionTokens, u.ReasoningTokens, u.CacheReadTokens}
	}
	var tag [2]byte
	_, _ = rand.Read(tag[:]) // never fails
	name := fmt.Sprintf("%s-%.3f-%s%s", strings.ReplaceAll(l.cfg.Model, "/", "__"), rec.Timestamp, hex.EncodeToString(tag[:]), suffix)
	err := func() error {
		data, err := event.MarshalJSON(rec)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(l.cfg.LogCompletionsFolder, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(l.cfg.LogCompletionsFolder, name), data, 0o644)
	}()
	if err != nil {
		l.log.Warn("llm: cannot log completion", "file", name, "error", err)
	}
}

func rawOrNil(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return jsonRaw(b)
}

// jsonRaw embeds JSON as is.
type jsonRaw []byte

func (r jsonRaw) MarshalJSON() ([]byte, error) { return r, nil }
