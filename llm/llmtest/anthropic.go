package llmtest

import (
	"fmt"
	"net/http"
)

type antBlock struct {
	Type string `json:"type"`
	// text
	Text *string `json:"text,omitempty"`
	// thinking
	Thinking  *string `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
	// redacted_thinking
	Data string `json:"data,omitempty"`
	// tool_use
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Input any    `json:"input,omitempty"` // a map, kept even when empty

	args string // the tool call's arguments text, for streaming
}

type antUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type antMessage struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []antBlock `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        antUsage   `json:"usage"`
}

// anthropic converts u: Anthropic reports uncached input tokens apart
// from cache reads and writes.
func (u Usage) anthropic() antUsage {
	return antUsage{
		InputTokens:              max(0, u.PromptTokens-u.CacheReadTokens-u.CacheWriteTokens),
		CacheCreationInputTokens: u.CacheWriteTokens,
		CacheReadInputTokens:     u.CacheReadTokens,
		OutputTokens:             u.CompletionTokens,
	}
}

// anthropicStopReason translates a Chat finish reason.
func anthropicStopReason(finish string) string {
	switch finish {
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	}
	return "end_turn"
}

// anthropicContent returns the content blocks of the turn.
func (t *turn) anthropicContent() ([]antBlock, error) {
	var out []antBlock
	if t.Reasoning != "" || t.Signature != "" {
		th, sig := t.Reasoning, t.Signature
		out = append(out, antBlock{Type: "thinking", Thinking: &th, Signature: &sig})
	}
	for _, d := range t.RedactedThinking {
		out = append(out, antBlock{Type: "redacted_thinking", Data: d})
	}
	if t.Text != "" || len(t.ToolCalls) == 0 {
		text := t.Text
		out = append(out, antBlock{Type: "text", Text: &text})
	}
	for i, c := range t.ToolCalls {
		in, err := c.argsObject()
		if err != nil {
			return nil, fmt.Errorf("tool call %d (%s): Anthropic needs arguments that are a JSON object: %w", i, c.Name, err)
		}
		out = append(out, antBlock{Type: "tool_use", ID: t.callID("toolu_llmtest", i), Name: c.Name, Input: in, args: c.Arguments})
	}
	return out, nil
}

// writeAnthropic answers in the Anthropic Messages format.
func (s *Server) writeAnthropic(rw http.ResponseWriter, t *turn) error {
	content, err := t.anthropicContent()
	if err != nil {
		writeFailure(rw, WireAnthropic, &Failure{Status: http.StatusInternalServerError, Message: "llmtest: " + err.Error()})
		return err
	}
	stop := anthropicStopReason(t.finishReason())
	msg := antMessage{
		ID: t.id("msg_llmtest"), Type: "message", Role: "assistant", Model: t.model,
		Content: content, StopReason: &stop, Usage: t.Usage.anthropic(),
	}
	if !t.req.Stream {
		return writeJSON(rw, http.StatusOK, msg)
	}

	e := newSSE(rw, "\n\n", t)
	start := msg
	start.Content, start.StopReason = []antBlock{}, nil
	start.Usage.OutputTokens = 1
	e.event("message_start", map[string]any{"type": "message_start", "message": start})
	e.event("ping", map[string]any{"type": "ping"})
	for i, b := range content {
		first := b
		var deltas []map[string]any
		switch b.Type {
		case "thinking":
			empty := ""
			first.Thinking, first.Signature = &empty, &empty
			for _, p := range chunks(*b.Thinking, 16) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": p})
			}
			if *b.Signature != "" {
				deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": *b.Signature})
			}
		case "text":
			empty := ""
			first.Text = &empty
			for _, p := range chunks(*b.Text, 16) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
			}
		case "tool_use":
			first.Input = map[string]any{}
			for _, p := range chunks(b.args, 8) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		}
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": first})
		for _, d := range deltas {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	if t.Fail != nil {
		streamFailure(e, WireAnthropic, t.Fail)
		return e.err
	}
	u := msg.Usage
	e.event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"cache_creation_input_tokens": u.CacheCreationInputTokens, "cache_read_input_tokens": u.CacheReadInputTokens,
		},
	})
	e.event("message_stop", map[string]any{"type": "message_stop"})
	return e.err
}
