package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// Responses is the OpenAI Responses API provider. Calls are stateless
// (store=false): the whole history is sent each time, with the encrypted
// reasoning items of earlier turns, as the reference does.
type Responses struct{}

type responsesRequest struct {
	Model                string          `json:"model"`
	Input                []any           `json:"input"`
	Include              []string        `json:"include,omitempty"`
	Instructions         string          `json:"instructions,omitempty"`
	MaxOutputTokens      int             `json:"max_output_tokens,omitempty"`
	Reasoning            *reasoningParam `json:"reasoning,omitempty"`
	Store                bool            `json:"store"`
	Temperature          *float64        `json:"temperature,omitempty"`
	ToolChoice           string          `json:"tool_choice,omitempty"`
	Tools                []responsesTool `json:"tools,omitempty"`
	PromptCacheKey       string          `json:"prompt_cache_key,omitempty"`
	PromptCacheRetention string          `json:"prompt_cache_retention,omitempty"`
}

type reasoningParam struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict"`
}

type inputMessage struct {
	Type    string      `json:"type"`
	Role    string      `json:"role"`
	Content []inputPart `json:"content"`
}

type inputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

type reasoningItem struct {
	ID               string        `json:"id"`
	Summary          []summaryPart `json:"summary"`
	Content          []summaryPart `json:"content,omitempty"`
	Type             string        `json:"type"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
	Status           string        `json:"status,omitempty"`
}

type summaryPart struct {
	Text string `json:"text"`
	Type string `json:"type"`
}

type functionCallItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionOutputItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// responsesInput maps messages to Responses input items: system messages
// become the instructions, assistant turns are replayed as their reasoning
// item, text and function calls, tool results as function_call_output
// items.
func responsesInput(req *llm.Request) (instructions string, input []any) {
	var sys []string
	subscription := req.Config.IsSubscription()
	for _, m := range req.Messages {
		switch m.Role {
		case event.RoleSystem:
			sys = append(sys, event.TextOf(m.Content))
		case event.RoleUser:
			im := inputMessage{Type: "message", Role: "user", Content: []inputPart{}}
			for _, c := range m.Content {
				if c.Type == event.ContentImage {
					if !req.Features.Vision {
						continue
					}
					for _, u := range c.ImageURLs {
						im.Content = append(im.Content, inputPart{Type: "input_image", ImageURL: u, Detail: "auto"})
					}
					continue
				}
				im.Content = append(im.Content, inputPart{Type: "input_text", Text: c.Text})
			}
			input = append(input, im)
		case event.RoleAssistant:
			if r := m.ResponsesItem; r != nil && r.ID != "" && !subscription {
				it := reasoningItem{ID: r.ID, Summary: []summaryPart{}, Type: "reasoning", EncryptedContent: r.EncryptedContent, Status: r.Status}
				for _, s := range r.Summary {
					it.Summary = append(it.Summary, summaryPart{Text: s, Type: "summary_text"})
				}
				for _, c := range r.Content {
					it.Content = append(it.Content, summaryPart{Text: c, Type: "reasoning_text"})
				}
				input = append(input, it)
			}
			var parts []inputPart
			for _, c := range m.Content {
				if c.Type != event.ContentImage && c.Text != "" {
					parts = append(parts, inputPart{Type: "output_text", Text: c.Text})
				}
			}
			if len(parts) > 0 {
				input = append(input, inputMessage{Type: "message", Role: "assistant", Content: parts})
			}
			for _, tc := range m.ToolCalls {
				id := tc.ResponsesItemID
				if id == "" {
					id = "fc_" + tc.ID
				}
				input = append(input, functionCallItem{Type: "function_call", ID: id, CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			}
		case event.RoleTool:
			for _, c := range clipTexts(m.Content) {
				if c.Type != event.ContentImage {
					input = append(input, functionOutputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: c.Text})
				}
			}
		}
	}
	if input == nil {
		input = []any{}
	}
	return strings.Join(sys, "\n\n---\n\n"), input
}

func responsesBody(req *llm.Request) responsesRequest {
	cfg, f, ep := req.Config, req.Features, req.Endpoint
	body := responsesRequest{Model: ep.Model}
	body.Instructions, body.Input = responsesInput(req)
	subscription := cfg.IsSubscription()
	if !subscription {
		body.MaxOutputTokens = req.MaxOutputTokens
		if f.ReasoningEffort && cfg.ReasoningEffort != "" {
			body.Reasoning = &reasoningParam{Effort: cfg.ReasoningEffort, Summary: cfg.ReasoningSummary}
			if cfg.EnableEncryptedReasoning {
				body.Include = []string{"reasoning.encrypted_content"}
			}
		}
	}
	if cfg.Temperature != nil && f.SamplingParams {
		body.Temperature = cfg.Temperature
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	if len(body.Tools) > 0 {
		body.ToolChoice = "auto"
	}
	if cacheKeyAware(ep.Provider) {
		body.PromptCacheKey = req.ConversationID
		if f.PromptCacheRetain && cfg.PromptCacheRetention != "" {
			body.PromptCacheRetention = cfg.PromptCacheRetention
		}
	}
	return body
}

// Complete implements llm.Provider.
func (Responses) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	raw, err := marshalBody(responsesBody(req), req.Config.ExtraBody)
	if err != nil {
		return nil, err
	}
	opts, err := requestOptions(req, raw, "responses")
	if err != nil {
		return nil, err
	}
	var httpResp *http.Response
	opts = append(opts, option.WithResponseInto(&httpResp))
	svc := responses.NewResponseService(opts...)
	if req.OnDelta == nil {
		r, err := svc.New(ctx, responses.ResponseNewParams{})
		if err != nil {
			return nil, mapError(ctxErr(ctx, err))
		}
		resp, err := responsesResponse(r)
		if err != nil {
			return nil, err
		}
		resp.Cost = responseCost(httpResp)
		return resp, nil
	}
	return streamResponses(ctx, svc, req, &httpResp)
}

// streamResponses runs a streaming call: text, refusal and reasoning
// deltas go to OnDelta, function calls as they start and grow, and the
// completed response is the result (patched with the streamed output items
// when it comes without them).
func streamResponses(ctx context.Context, svc responses.ResponseService, req *llm.Request, httpResp **http.Response) (*llm.Response, error) {
	stream := svc.NewStreaming(ctx, responses.ResponseNewParams{})
	defer stream.Close()
	var (
		items     []responses.ResponseOutputItemUnion
		calls     = map[string]int{} // function_call item id -> call index
		completed *responses.Response
	)
	send := func(d llm.Delta) error { return req.OnDelta(d) }
	for stream.Next() {
		ev := stream.Current()
		var err error
		switch ev.Type {
		case "response.output_text.delta", "response.refusal.delta":
			err = send(llm.Delta{Text: ev.Delta})
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			err = send(llm.Delta{Reasoning: ev.Delta})
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				i := len(calls)
				calls[ev.Item.ID] = i
				err = send(llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ID: ev.Item.CallID, Name: ev.Item.Name, Arguments: ev.Item.Arguments.OfString}})
			}
		case "response.function_call_arguments.delta":
			if i, ok := calls[ev.ItemID]; ok {
				err = send(llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, Arguments: ev.Delta}})
			}
		case "response.output_item.done":
			items = append(items, ev.Item)
		case "response.completed", "response.incomplete":
			r := ev.Response
			completed = &r
		case "response.failed":
			e := ev.Response.Error
			return nil, llm.NewAPIError(0, string(e.Code), e.Message, nil, nil)
		case "error":
			return nil, llm.NewAPIError(0, ev.Code, ev.Message, nil, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := stream.Err(); err != nil {
		return nil, mapError(ctxErr(ctx, err))
	}
	if completed == nil {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "stream ended before response.completed"}
	}
	if len(completed.Output) == 0 {
		completed.Output = items
	}
	resp, err := responsesResponse(completed)
	if err != nil {
		return nil, err
	}
	resp.Cost = responseCost(*httpResp)
	return resp, nil
}

// responsesResponse converts a Responses reply: output_text parts joined,
// function calls (call_id as the id), the reasoning item kept for replay.
func responsesResponse(r *responses.Response) (*llm.Response, error) {
	if r == nil {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse}
	}
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}}
	var texts []string
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				if c.Type == "output_text" {
					texts = append(texts, c.Text)
				}
			}
		case "function_call":
			id := it.CallID
			if id == "" {
				id = it.ID
			}
			msg.ToolCalls = append(msg.ToolCalls, event.ToolCall{ID: id, ResponsesItemID: it.ID, Name: it.Name, Arguments: it.Arguments.OfString, Origin: event.OriginResponses})
		case "reasoning":
			ri := &event.ReasoningItem{ID: it.ID, EncryptedContent: it.EncryptedContent, Status: it.Status}
			for _, s := range it.Summary {
				ri.Summary = append(ri.Summary, s.Text)
			}
			for _, c := range it.Content {
				ri.Content = append(ri.Content, c.Text)
			}
			msg.ResponsesItem = ri
		}
	}
	if t := strings.TrimSpace(strings.Join(texts, "\n")); t != "" {
		msg.Content = append(msg.Content, event.Text(t))
	}
	if len(r.Output) == 0 {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "the response has no output"}
	}
	finish := "stop"
	switch {
	case r.Status == "incomplete":
		finish = "length"
		if r.IncompleteDetails.Reason == "content_filter" {
			finish = "content_filter"
		}
	case len(msg.ToolCalls) > 0:
		finish = "tool_calls"
	}
	u := r.Usage
	return &llm.Response{
		ID:           r.ID,
		Model:        string(r.Model),
		Message:      msg,
		FinishReason: finish,
		Usage: llm.TokenUsage{
			PromptTokens:     int(u.InputTokens),
			CompletionTokens: int(u.OutputTokens),
			CacheReadTokens:  int(u.InputTokensDetails.CachedTokens),
			ReasoningTokens:  int(u.OutputTokensDetails.ReasoningTokens),
		},
	}, nil
}
