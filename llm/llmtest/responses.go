package llmtest

import (
	"fmt"
	"net/http"
)

type respSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type respContent struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

// respItem is a Responses output item: reasoning, message or
// function_call.
type respItem struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Status string `json:"status,omitempty"`
	// reasoning
	Summary          []respSummary `json:"summary,omitempty"`
	EncryptedContent *string       `json:"encrypted_content,omitempty"`
	// message
	Role    string        `json:"role,omitempty"`
	Content []respContent `json:"content,omitempty"`
	// function_call
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type respResponse struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	CreatedAt         int64      `json:"created_at"`
	Status            string     `json:"status"`
	Error             any        `json:"error"`
	IncompleteDetails any        `json:"incomplete_details"`
	Model             string     `json:"model"`
	Output            []respItem `json:"output"`
	ParallelToolCalls bool       `json:"parallel_tool_calls"`
	ToolChoice        any        `json:"tool_choice"`
	Tools             []any      `json:"tools"`
	Store             bool       `json:"store"`
	Usage             *respUsage `json:"usage"`
}

func (u Usage) responses() *respUsage {
	r := &respUsage{
		InputTokens:  u.PromptTokens,
		OutputTokens: u.CompletionTokens,
		TotalTokens:  u.PromptTokens + u.CompletionTokens,
	}
	r.InputTokensDetails.CachedTokens = u.CacheReadTokens
	r.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	return r
}

// responsesOutput returns the output items of the turn, complete.
func (t *turn) responsesOutput() []respItem {
	var out []respItem
	if t.Reasoning != "" || t.EncryptedReasoning != "" {
		it := respItem{Type: "reasoning", ID: fmt.Sprintf("rs_llmtest%d", t.n), Summary: []respSummary{}}
		if t.Reasoning != "" {
			it.Summary = append(it.Summary, respSummary{"summary_text", t.Reasoning})
		}
		if t.EncryptedReasoning != "" {
			enc := t.EncryptedReasoning
			it.EncryptedContent = &enc
		}
		out = append(out, it)
	}
	if t.Text != "" || len(t.ToolCalls) == 0 {
		out = append(out, respItem{
			Type: "message", ID: fmt.Sprintf("msg_llmtest%d", t.n), Status: "completed", Role: "assistant",
			Content: []respContent{{Type: "output_text", Text: t.Text, Annotations: []any{}, Logprobs: []any{}}},
		})
	}
	for i, c := range t.ToolCalls {
		args := c.Arguments
		out = append(out, respItem{
			Type: "function_call", ID: fmt.Sprintf("fc_llmtest%d_%d", t.n, i), Status: "completed",
			CallID: t.callID("call_", i), Name: c.Name, Arguments: &args,
		})
	}
	return out
}

// writeResponses answers in the Responses API format.
func (s *Server) writeResponses(rw http.ResponseWriter, t *turn) error {
	status := "completed"
	var incomplete any
	if t.finishReason() == "length" {
		status, incomplete = "incomplete", map[string]any{"reason": "max_output_tokens"}
	}
	full := respResponse{
		ID: t.id("resp_llmtest"), Object: "response", CreatedAt: created, Status: status,
		IncompleteDetails: incomplete, Model: t.model, Output: t.responsesOutput(),
		ParallelToolCalls: true, ToolChoice: "auto", Tools: []any{}, Usage: t.Usage.responses(),
	}
	if store, ok := t.req.Body["store"].(bool); ok {
		full.Store = store
	}
	if !t.req.Stream {
		return writeJSON(rw, http.StatusOK, full)
	}

	e := newSSE(rw, "\n\n", t)
	seq := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.event(typ, fields)
	}
	start := full
	start.Status, start.Output, start.Usage, start.IncompleteDetails = "in_progress", []respItem{}, nil, nil
	emit("response.created", map[string]any{"response": start})
	emit("response.in_progress", map[string]any{"response": start})
	for oi, item := range full.Output {
		added := item
		switch item.Type {
		case "reasoning":
			added.Summary = []respSummary{}
		case "message":
			added.Status, added.Content = "in_progress", []respContent{}
		case "function_call":
			empty := ""
			added.Status, added.Arguments = "in_progress", &empty
		}
		emit("response.output_item.added", map[string]any{"output_index": oi, "item": added})
		switch item.Type {
		case "reasoning":
			for si, sum := range item.Summary {
				base := func() map[string]any {
					return map[string]any{"item_id": item.ID, "output_index": oi, "summary_index": si}
				}
				m := base()
				m["part"] = respSummary{"summary_text", ""}
				emit("response.reasoning_summary_part.added", m)
				for _, p := range chunks(sum.Text, 16) {
					m := base()
					m["delta"] = p
					emit("response.reasoning_summary_text.delta", m)
				}
				m = base()
				m["text"] = sum.Text
				emit("response.reasoning_summary_text.done", m)
				m = base()
				m["part"] = sum
				emit("response.reasoning_summary_part.done", m)
			}
		case "message":
			for ci, part := range item.Content {
				base := func() map[string]any {
					return map[string]any{"item_id": item.ID, "output_index": oi, "content_index": ci}
				}
				m := base()
				m["part"] = respContent{Type: "output_text", Annotations: []any{}, Logprobs: []any{}}
				emit("response.content_part.added", m)
				for _, p := range chunks(part.Text, 16) {
					m := base()
					m["delta"], m["logprobs"] = p, []any{}
					emit("response.output_text.delta", m)
				}
				m = base()
				m["text"], m["logprobs"] = part.Text, []any{}
				emit("response.output_text.done", m)
				m = base()
				m["part"] = part
				emit("response.content_part.done", m)
			}
		case "function_call":
			for _, p := range chunks(*item.Arguments, 8) {
				emit("response.function_call_arguments.delta", map[string]any{"item_id": item.ID, "output_index": oi, "delta": p})
			}
			emit("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": oi, "name": item.Name, "arguments": *item.Arguments})
		}
		emit("response.output_item.done", map[string]any{"output_index": oi, "item": item})
	}
	if t.Fail != nil {
		streamFailure(e, WireResponses, t.Fail)
		return e.err
	}
	if status == "incomplete" {
		emit("response.incomplete", map[string]any{"response": full})
	} else {
		emit("response.completed", map[string]any{"response": full})
	}
	return e.err
}
