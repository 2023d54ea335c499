package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gohands/gohands/llm/internal/eventstream"
)

// bedrockStopReason translates a Chat finish reason.
func bedrockStopReason(finish string) string {
	switch finish {
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "content_filtered"
	}
	return "end_turn"
}

// bedrockUsage converts u: Bedrock reports uncached input apart from
// cache reads and writes, as Anthropic does.
func (u Usage) bedrock() map[string]any {
	in := max(0, u.PromptTokens-u.CacheReadTokens-u.CacheWriteTokens)
	return map[string]any{
		"inputTokens": in, "outputTokens": u.CompletionTokens, "totalTokens": in + u.CompletionTokens,
		"cacheReadInputTokens": u.CacheReadTokens, "cacheWriteInputTokens": u.CacheWriteTokens,
	}
}

// bedrockContent returns the content blocks of the turn.
func (t *turn) bedrockContent() ([]map[string]any, error) {
	var out []map[string]any
	if t.Reasoning != "" || t.Signature != "" {
		rt := map[string]any{"text": t.Reasoning}
		if t.Signature != "" {
			rt["signature"] = t.Signature
		}
		out = append(out, map[string]any{"reasoningContent": map[string]any{"reasoningText": rt}})
	}
	for _, d := range t.RedactedThinking {
		out = append(out, map[string]any{"reasoningContent": map[string]any{"redactedContent": base64.StdEncoding.EncodeToString([]byte(d))}})
	}
	if t.Text != "" || len(t.ToolCalls) == 0 {
		out = append(out, map[string]any{"text": t.Text})
	}
	for i, c := range t.ToolCalls {
		in, err := c.argsObject()
		if err != nil {
			return nil, fmt.Errorf("tool call %d (%s): Bedrock needs arguments that are a JSON object: %w", i, c.Name, err)
		}
		out = append(out, map[string]any{"toolUse": map[string]any{"toolUseId": t.callID("tooluse_llmtest", i), "name": c.Name, "input": in}})
	}
	return out, nil
}

// writeBedrock answers in the Converse format; ConverseStream as an AWS
// event stream, each event's JSON padded with a "p" field as Bedrock pads
// them.
func (s *Server) writeBedrock(rw http.ResponseWriter, t *turn) error {
	content, err := t.bedrockContent()
	if err != nil {
		writeFailure(rw, WireBedrock, &Failure{Status: http.StatusInternalServerError, Message: "llmtest: " + err.Error()})
		return err
	}
	rw.Header().Set("X-Amzn-Requestid", t.id("llmtest-request-"))
	stop := bedrockStopReason(t.finishReason())
	if !t.req.Stream {
		return writeJSON(rw, http.StatusOK, map[string]any{
			"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
			"stopReason": stop,
			"usage":      t.Usage.bedrock(),
			"metrics":    map[string]any{"latencyMs": 42},
		})
	}

	rw.Header().Set("Content-Type", eventstream.ContentType)
	rw.WriteHeader(http.StatusOK)
	e := newStream(rw, "", t)
	send := func(typ string, payload map[string]any) {
		if e.err != nil || !e.pace() {
			return
		}
		payload["p"] = "abcdefghijklmnopqrstuvwxyz"[:1+e.sent%26]
		data, err := json.Marshal(payload)
		if err != nil {
			e.err = err
			return
		}
		if e.malformed && e.sent == 1 {
			data = []byte(`{"role": "assist`)
		}
		msg := eventstream.Encode(data, ":event-type", typ, ":content-type", "application/json", ":message-type", "event")
		if _, err := rw.Write(msg); err != nil {
			e.err = clientWriteError{err}
			return
		}
		if err := e.rc.Flush(); err != nil {
			e.err = clientWriteError{err}
		}
	}
	send("messageStart", map[string]any{"role": "assistant"})
	for i, b := range content {
		switch {
		case b["reasoningContent"] != nil:
			rc := b["reasoningContent"].(map[string]any)
			if red, ok := rc["redactedContent"]; ok {
				send("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"reasoningContent": map[string]any{"redactedContent": red}}})
				break
			}
			rt := rc["reasoningText"].(map[string]any)
			for _, p := range chunks(rt["text"].(string), 16) {
				send("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"reasoningContent": map[string]any{"text": p}}})
			}
			if sig, ok := rt["signature"]; ok {
				send("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"reasoningContent": map[string]any{"signature": sig}}})
			}
		case b["text"] != nil:
			for _, p := range chunks(b["text"].(string), 16) {
				send("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"text": p}})
			}
		case b["toolUse"] != nil:
			tu := b["toolUse"].(map[string]any)
			send("contentBlockStart", map[string]any{"contentBlockIndex": i, "start": map[string]any{"toolUse": map[string]any{"toolUseId": tu["toolUseId"], "name": tu["name"]}}})
			args, _ := json.Marshal(tu["input"])
			for _, p := range chunks(string(args), 8) {
				send("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"toolUse": map[string]any{"input": p}}})
			}
		}
		send("contentBlockStop", map[string]any{"contentBlockIndex": i})
	}
	if t.Fail != nil {
		if e.err == nil && e.pace() {
			typ := bedrockException(t.Fail.Status, t.Fail.ContextWindow)
			_, body := failureBody(WireBedrock, t.Fail)
			data, _ := json.Marshal(body)
			// In a stream the exception's name starts in lower case.
			name := strings.ToLower(typ[:1]) + typ[1:]
			if _, err := rw.Write(eventstream.Encode(data, ":exception-type", name, ":content-type", "application/json", ":message-type", "exception")); err != nil {
				e.err = clientWriteError{err}
			}
		}
		return e.err
	}
	send("messageStop", map[string]any{"stopReason": stop})
	send("metadata", map[string]any{"usage": t.Usage.bedrock(), "metrics": map[string]any{"latencyMs": 42}})
	return e.err
}
