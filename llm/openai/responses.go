package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/sse"
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
	// Stream comes last, where the SDK this package once used appended it.
	Stream bool `json:"stream,omitempty"`
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

// easyMessage is an earlier assistant turn's text as the document's
// EasyInputMessage, what the official SDK sends: an output message would
// need the id and status the output had, which are not kept.
type easyMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
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

// functionOutputItem is a tool result. Output is a string, or a list of
// input parts for an image.
type functionOutputItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"`
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
			// A message's blocks are lines, messages are parts apart (the
			// reference's joins).
			var lines []string
			for _, c := range m.Content {
				if c.Type == event.ContentText && c.Text != "" {
					lines = append(lines, c.Text)
				}
			}
			if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
				sys = append(sys, s)
			}
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
			var texts []string
			for _, c := range m.Content {
				if c.Type != event.ContentImage && c.Text != "" {
					texts = append(texts, c.Text)
				}
			}
			if len(texts) > 0 {
				input = append(input, easyMessage{Type: "message", Role: "assistant", Content: strings.Join(texts, "\n")})
			}
			for _, tc := range m.ToolCalls {
				id := tc.ResponsesItemID
				if id == "" {
					id = "fc_" + tc.ID
				}
				input = append(input, functionCallItem{Type: "function_call", ID: id, CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			}
		case event.RoleTool:
			// One output per block, as the reference sends; an image is
			// an output of its own (the document takes input_image parts
			// there).
			for _, c := range clipTexts(m.Content) {
				if c.Type != event.ContentImage {
					input = append(input, functionOutputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: c.Text})
					continue
				}
				if !req.Features.Vision {
					continue
				}
				for _, u := range c.ImageURLs {
					input = append(input, functionOutputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: []inputPart{{Type: "input_image", ImageURL: u, Detail: "auto"}}})
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
	body := responsesRequest{Model: ep.Model, Stream: req.OnDelta != nil}
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
	httpResp, err := post(ctx, req, "responses", body{head: raw}, req.OnDelta != nil, nil)
	if err != nil {
		return nil, err
	}
	var resp *llm.Response
	if req.OnDelta == nil {
		var r responsesReply
		if err := decodeReply(ctx, httpResp, &r); err != nil {
			return nil, err
		}
		resp, err = responsesResponse(&r)
	} else {
		resp, err = streamResponses(ctx, req, httpResp)
	}
	if err != nil {
		return nil, err
	}
	resp.Cost = responseCost(httpResp)
	return resp, nil
}

// responsesReply is a Responses API reply: the fields gohands reads.
type responsesReply struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []outputItem `json:"output"`
	Usage  struct {
		InputTokens        count `json:"input_tokens"`
		OutputTokens       count `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens count `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens count `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
	Error *responsesError `json:"error"`
}

type responsesError struct {
	Code    text   `json:"code"`
	Message string `json:"message"`
}

// outputItem is one item of a reply's output: a message, a function call
// or a reasoning item.
type outputItem struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        text   `json:"arguments"`
	Status           string `json:"status"`
	EncryptedContent string `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// UnmarshalJSON decodes an item. An item of a kind gohands does not read
// (a web search call, say) whose fields have shapes other than those of
// the kinds it reads is kept by its type alone rather than failing the
// reply.
func (it *outputItem) UnmarshalJSON(b []byte) error {
	type plain outputItem
	err := json.Unmarshal(b, (*plain)(it))
	if err == nil {
		return nil
	}
	var head struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal(b, &head) != nil {
		return err
	}
	switch head.Type {
	case "message", "function_call", "reasoning":
		return err
	}
	*it = outputItem{Type: head.Type, ID: head.ID}
	return nil
}

// responsesEvent is one event of a streamed reply.
type responsesEvent struct {
	Type     string          `json:"type"`
	Delta    text            `json:"delta"`
	ItemID   string          `json:"item_id"`
	Item     *outputItem     `json:"item"`
	Response *responsesReply `json:"response"`
	// Code and Message are an error event's.
	Code    text   `json:"code"`
	Message string `json:"message"`
}

// streamResponses reads a streamed reply: text, refusal and reasoning
// deltas go to OnDelta, function calls as they start and grow, and the
// completed response is the result (patched with the streamed output items
// when it comes without them).
func streamResponses(ctx context.Context, req *llm.Request, httpResp *http.Response) (*llm.Response, error) {
	defer httpResp.Body.Close()
	var (
		items     []outputItem
		calls     = map[string]int{} // function_call item id -> call index
		completed *responsesReply
	)
	events := sse.NewReader(httpResp.Body)
	for {
		sev, err := events.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, ctxErr(ctx, fmt.Errorf("openai: reading the stream: %w", err))
		}
		var ev responsesEvent
		if err := json.Unmarshal(sev.Data, &ev); err != nil {
			return nil, malformedStream("event", sev.Data, err)
		}
		if ev.Type == "" {
			ev.Type = sev.Name
		}
		switch ev.Type {
		case "response.output_text.delta", "response.refusal.delta":
			err = req.OnDelta(llm.Delta{Text: string(ev.Delta)})
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			err = req.OnDelta(llm.Delta{Reasoning: string(ev.Delta)})
		case "response.output_item.added":
			if it := ev.Item; it != nil && it.Type == "function_call" {
				i := len(calls)
				calls[it.ID] = i
				err = req.OnDelta(llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ID: it.CallID, Name: it.Name, Arguments: string(it.Arguments)}})
			}
		case "response.function_call_arguments.delta":
			if i, ok := calls[ev.ItemID]; ok {
				err = req.OnDelta(llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, Arguments: string(ev.Delta)}})
			}
		case "response.output_item.done":
			if ev.Item != nil {
				items = append(items, *ev.Item)
			}
		case "response.completed", "response.incomplete":
			completed = ev.Response
			if completed == nil {
				return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: ev.Type + " without a response"}
			}
		case "response.failed":
			var e responsesError
			if ev.Response != nil && ev.Response.Error != nil {
				e = *ev.Response.Error
			}
			return nil, llm.NewAPIError(statusOfError(string(e.Code), ""), string(e.Code), e.Message, nil, nil)
		case "error":
			return nil, llm.NewAPIError(statusOfError(string(ev.Code), ""), string(ev.Code), ev.Message, nil, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	if completed == nil {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "stream ended before response.completed"}
	}
	if len(completed.Output) == 0 {
		completed.Output = items
	}
	return responsesResponse(completed)
}

// responsesResponse converts a Responses reply: output_text parts joined,
// function calls (call_id as the id), the reasoning item kept for replay.
func responsesResponse(r *responsesReply) (*llm.Response, error) {
	if len(r.Output) == 0 && r.Error != nil {
		return nil, llm.NewAPIError(statusOfError(string(r.Error.Code), ""), string(r.Error.Code), r.Error.Message, nil, nil)
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
			msg.ToolCalls = append(msg.ToolCalls, event.ToolCall{ID: id, ResponsesItemID: it.ID, Name: it.Name, Arguments: string(it.Arguments), Origin: event.OriginResponses})
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
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
			finish = "content_filter"
		}
	case len(msg.ToolCalls) > 0:
		finish = "tool_calls"
	}
	u := r.Usage
	return &llm.Response{
		ID:           r.ID,
		Model:        r.Model,
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
