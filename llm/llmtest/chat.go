package llmtest

import (
	"net/http"
)

// created is the fixed creation time of every response, so recorded
// outputs are stable.
const created = 1767225600 // 2026-01-01T00:00:00Z

type chatFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chatToolCall struct {
	Index    *int         `json:"index,omitempty"` // streaming only
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function chatFunction `json:"function"`
}

type chatMessage struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatDelta   `json:"delta,omitempty"`
	FinishReason *string      `json:"finish_reason"`
	Logprobs     any          `json:"logprobs"`
}

type chatDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

type chatUsage struct {
	PromptTokens             int `json:"prompt_tokens"`
	CompletionTokens         int `json:"completion_tokens"`
	TotalTokens              int `json:"total_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"` // LiteLLM, for Anthropic models
	PromptTokensDetails      struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []chatChoice `json:"choices"`
	Usage             *chatUsage   `json:"usage,omitempty"`
	SystemFingerprint string       `json:"system_fingerprint"`
}

func (u Usage) chat() *chatUsage {
	c := &chatUsage{
		PromptTokens:             u.PromptTokens,
		CompletionTokens:         u.CompletionTokens,
		TotalTokens:              u.PromptTokens + u.CompletionTokens,
		CacheCreationInputTokens: u.CacheWriteTokens,
	}
	c.PromptTokensDetails.CachedTokens = u.CacheReadTokens
	c.CompletionTokensDetails.ReasoningTokens = u.ReasoningTokens
	return c
}

// writeChat answers in the Chat Completions format.
func (s *Server) writeChat(rw http.ResponseWriter, t *turn) error {
	id := t.id("chatcmpl-llmtest-")
	finish := t.finishReason()
	if !t.req.Stream {
		msg := &chatMessage{Role: "assistant", ReasoningContent: t.Reasoning}
		if t.Text != "" || len(t.ToolCalls) == 0 {
			msg.Content = &t.Text
		}
		for i, c := range t.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, chatToolCall{
				ID: t.callID("call_", i), Type: "function",
				Function: chatFunction{Name: c.Name, Arguments: c.Arguments},
			})
		}
		return writeJSON(rw, http.StatusOK, chatCompletion{
			ID: id, Object: "chat.completion", Created: created, Model: t.model,
			Choices:           []chatChoice{{Message: msg, FinishReason: &finish}},
			Usage:             t.Usage.chat(),
			SystemFingerprint: "fp_llmtest",
		})
	}

	e := newSSE(rw, "\n\n", t)
	chunk := func(d chatDelta, finish *string) {
		e.event("", chatCompletion{
			ID: id, Object: "chat.completion.chunk", Created: created, Model: t.model,
			Choices:           []chatChoice{{Delta: &d, FinishReason: finish}},
			SystemFingerprint: "fp_llmtest",
		})
	}
	empty := ""
	chunk(chatDelta{Role: "assistant", Content: &empty}, nil)
	for _, p := range chunks(t.Reasoning, 16) {
		chunk(chatDelta{ReasoningContent: p}, nil)
	}
	for _, p := range chunks(t.Text, 16) {
		chunk(chatDelta{Content: &p}, nil)
	}
	for i, c := range t.ToolCalls {
		idx := i
		chunk(chatDelta{ToolCalls: []chatToolCall{{
			Index: &idx, ID: t.callID("call_", i), Type: "function",
			Function: chatFunction{Name: c.Name},
		}}}, nil)
		for _, p := range chunks(c.Arguments, 8) {
			chunk(chatDelta{ToolCalls: []chatToolCall{{
				Index: &idx, Function: chatFunction{Arguments: p},
			}}}, nil)
		}
	}
	if t.Fail != nil {
		streamFailure(e, WireChat, t.Fail)
		return e.err
	}
	chunk(chatDelta{}, &finish)
	if opts, _ := t.req.Body["stream_options"].(map[string]any); opts["include_usage"] == true {
		e.event("", chatCompletion{
			ID: id, Object: "chat.completion.chunk", Created: created, Model: t.model,
			Choices: []chatChoice{}, Usage: t.Usage.chat(), SystemFingerprint: "fp_llmtest",
		})
	}
	e.event("", "[DONE]")
	return e.err
}
