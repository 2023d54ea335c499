package anthropic

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// interleavedThinking is the beta the reference turns on with manual
// extended thinking, so the model may think between tool calls.
const interleavedThinking = "interleaved-thinking-2025-05-14"

// defaultMaxTokens is sent when nothing else is known: the Messages API
// requires max_tokens.
const defaultMaxTokens = 4096

// minThinkingBudget is the smallest thinking budget the API accepts.
const minThinkingBudget = 1024

// effortBudgets are the thinking budgets a reasoning effort buys on models
// without their own effort control (the values LiteLLM uses for the
// reference).
var effortBudgets = map[string]int{
	"minimal": minThinkingBudget, "low": minThinkingBudget, "medium": 2048, "high": 4096, "xhigh": 8192, "max": 16384,
}

// adaptiveModels think adaptively: the API deprecates budgets for them.
var adaptiveModels = []string{"claude-opus-4-6", "claude-mythos"}

func llmModelMatches(model string, patterns []string) bool {
	m := strings.ToLower(model)
	for _, p := range patterns {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// buildRequest turns a call into the body of a Messages request, plus the
// headers that carry what the body cannot (betas, extra headers).
func buildRequest(req *llm.Request) (*messagesRequest, http.Header, error) {
	cfg, f := req.Config, req.Features
	p := &messagesRequest{Model: req.Endpoint.Model, MaxTokens: req.MaxOutputTokens}
	if p.MaxTokens <= 0 {
		p.MaxTokens = defaultMaxTokens
	}
	messages := req.Messages
	if f.Vision {
		// Larger images are refused; the reference shrinks them too.
		messages = llm.ShrinkImages(messages, llm.AnthropicImageLimit(messages))
	}
	system, msgs, err := convertMessages(messages, f.Vision)
	if err != nil {
		return nil, nil, err
	}
	p.System, p.Messages = system, msgs
	for _, t := range req.Tools {
		tp, err := convertTool(t)
		if err != nil {
			return nil, nil, err
		}
		p.Tools = append(p.Tools, tp)
	}
	if len(req.Stop) > 0 {
		p.StopSequences = req.Stop
	}

	header := http.Header{}
	var betas []string
	thinking := false
	effort := cfg.ReasoningEffort != "" && cfg.ReasoningEffort != "none"
	mode := f.ThinkingMode
	if (mode == "" || mode == "none") && llmModelMatches(req.Endpoint.Model, adaptiveModels) {
		mode = "adaptive"
	}
	switch {
	case mode == "manual" && cfg.ExtendedThinkingBudget > 0:
		budget := min(cfg.ExtendedThinkingBudget, p.MaxTokens-1)
		if budget >= minThinkingBudget {
			p.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: budget}
			betas = append(betas, interleavedThinking)
			thinking = true
		}
	case mode == "adaptive" && effort:
		p.Thinking = &thinkingConfig{Type: "adaptive", Display: "summarized"}
		p.OutputConfig = &outputConfig{Effort: adaptiveEffort(cfg.ReasoningEffort)}
		thinking = true
	case mode != "adaptive" && f.ReasoningEffort && effort:
		if budget, ok := effortBudgets[cfg.ReasoningEffort]; ok && budget < p.MaxTokens {
			p.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: budget}
			thinking = true
		}
	}
	// The API rejects sampling parameters with thinking on.
	if f.SamplingParams && !thinking {
		// Claude models since Opus 4.1 refuse temperature and top_p
		// together (invalid_request_error); temperature is kept, as the one
		// the reference sets.
		p.Temperature, p.TopP = cfg.Temperature, cfg.TopP
		if p.Temperature != nil && p.TopP != nil {
			p.TopP = nil
		}
		if cfg.TopK != nil {
			p.TopK = new(int(*cfg.TopK))
		}
	}

	for k, v := range req.Endpoint.Headers {
		if strings.EqualFold(k, "anthropic-beta") {
			betas = append(betas, v)
			continue
		}
		header.Set(k, v)
	}
	if len(betas) > 0 {
		header.Set("anthropic-beta", strings.Join(betas, ","))
	}
	return p, header, nil
}

// adaptiveEffort maps a reasoning effort to the API's effort levels.
func adaptiveEffort(e string) string {
	switch e {
	case "minimal", "low":
		return "low"
	case "medium", "xhigh", "max":
		return e
	}
	return "high"
}

// breakpoint returns an ephemeral cache breakpoint if mark is set.
func breakpoint(mark bool) *cacheControl {
	if mark {
		return ephemeral
	}
	return nil
}

// textBlock returns a text block, with a cache breakpoint if mark is set.
func textBlock(text string, mark bool) *block {
	return &block{Type: "text", Text: text, CacheControl: breakpoint(mark)}
}

// convertMessages splits messages into the system blocks and the
// user/assistant turns of the Messages API. Tool results become
// tool_result blocks of a user turn; consecutive turns of one role are
// merged, as the API wants them alternating. Empty text is dropped (the
// API rejects empty text blocks), and images unless vision is on.
func convertMessages(messages []event.Message, vision bool) ([]*block, []*message, error) {
	var system []*block
	var out []*message
	add := func(role string, blocks []*block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, &message{Role: role, Content: blocks})
	}
	for i, m := range messages {
		switch m.Role {
		case event.RoleSystem:
			for _, c := range m.Content {
				if c.Type == event.ContentText && c.Text != "" {
					system = append(system, textBlock(c.Text, c.CachePrompt))
				}
			}
		case event.RoleUser:
			blocks, err := contentBlocks(m.Content, vision)
			if err != nil {
				return nil, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
			}
			add(roleUser, blocks)
		case event.RoleTool:
			res, err := toolResult(m, vision)
			if err != nil {
				return nil, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
			}
			add(roleUser, []*block{res})
		case event.RoleAssistant:
			add(roleAssistant, assistantBlocks(m))
		default:
			return nil, nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
	}
	// The API wants a turn's tool results ahead of anything else in it (a
	// user message may have been merged in front of them).
	for _, m := range out {
		if m.Role == roleUser {
			slices.SortStableFunc(m.Content, func(a, b *block) int {
				return cmp.Compare(resultRank(a), resultRank(b))
			})
		}
	}
	return system, out, nil
}

func resultRank(b *block) int {
	if b.Type == "tool_result" {
		return 0
	}
	return 1
}

// contentBlocks converts user content.
func contentBlocks(content []event.Content, vision bool) ([]*block, error) {
	var out []*block
	for _, c := range content {
		switch c.Type {
		case event.ContentText:
			if c.Text != "" {
				out = append(out, textBlock(c.Text, c.CachePrompt))
			}
		case event.ContentImage:
			if !vision {
				continue
			}
			for j, u := range c.ImageURLs {
				img, err := imageBlock(u)
				if err != nil {
					return nil, err
				}
				// The breakpoint goes after the last image of the block.
				img.CacheControl = breakpoint(c.CachePrompt && j == len(c.ImageURLs)-1)
				out = append(out, img)
			}
		}
	}
	return out, nil
}

// imageBlock converts an image URL: data URLs are sent inline, http(s)
// URLs by reference.
func imageBlock(u string) (*block, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		media, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 {
			return nil, fmt.Errorf("image %.40q: want a base64 data URL", u)
		}
		return &block{Type: "image", Source: &imageSource{Type: "base64", MediaType: media, Data: data}}, nil
	}
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return &block{Type: "image", Source: &imageSource{Type: "url", URL: u}}, nil
	}
	return nil, fmt.Errorf("image %.40q: want an http(s) or data URL", u)
}

// toolResult converts a tool message. A cache breakpoint on any of its
// content is put on the tool_result block itself.
func toolResult(m event.Message, vision bool) (*block, error) {
	res := &block{Type: "tool_result", ToolUseID: wireID(m.ToolCallID)}
	mark := false
	for _, c := range m.Content {
		mark = mark || c.CachePrompt
		switch c.Type {
		case event.ContentText:
			if c.Text != "" {
				res.Content = append(res.Content, textBlock(c.Text, false))
			}
		case event.ContentImage:
			if !vision {
				continue
			}
			for _, u := range c.ImageURLs {
				img, err := imageBlock(u)
				if err != nil {
					return nil, err
				}
				res.Content = append(res.Content, img)
			}
		}
	}
	res.CacheControl = breakpoint(mark)
	return res, nil
}

// assistantBlocks converts an assistant message: its thinking blocks first,
// exactly as received (the API checks their signatures), then text, then
// tool calls.
func assistantBlocks(m event.Message) []*block {
	var out []*block
	for _, b := range m.ThinkingBlocks {
		switch {
		case b.Redacted:
			out = append(out, &block{Type: "redacted_thinking", Data: b.Data})
		case b.Signature != nil && *b.Signature != "":
			out = append(out, &block{Type: "thinking", Thinking: new(b.Thinking), Signature: new(*b.Signature)})
		}
		// Unsigned thinking (from another provider) cannot be verified by
		// the API, which would reject the request; it is left out.
	}
	for _, c := range m.Content {
		if c.Type == event.ContentText && c.Text != "" {
			out = append(out, textBlock(c.Text, c.CachePrompt))
		}
	}
	for _, tc := range m.ToolCalls {
		input := json.RawMessage(tc.Arguments)
		if !isObject(input) {
			// The API takes only an object; the model's malformed
			// arguments were already reported back to it as an error.
			slog.Debug("anthropic: tool call arguments are not a JSON object; sending {}", "tool", tc.Name, "id", tc.ID)
			input = json.RawMessage("{}")
		}
		out = append(out, &block{Type: "tool_use", ID: wireID(tc.ID), Name: tc.Name, Input: input})
	}
	return out
}

// wireID returns a tool call id as Anthropic accepts it: ids made by
// Gemini carry a thought signature after "__thought__" (LiteLLM's
// convention), in base64 the API's id pattern rejects, so it is cut off.
func wireID(id string) string {
	base, _, _ := strings.Cut(id, "__thought__")
	return base
}

func isObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// convertTool converts a tool spec. The input schema is always an object
// schema with properties (the API requires both); its other keywords are
// sent as they are.
func convertTool(t llm.ToolSpec) (*toolParam, error) {
	m := map[string]json.RawMessage{}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &m); err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: parameters: %w", t.Name, err)
		}
		if m == nil { // null
			m = map[string]json.RawMessage{}
		}
	}
	m["type"] = json.RawMessage(`"object"`)
	if p, ok := m["properties"]; !ok || isNull(p) {
		m["properties"] = json.RawMessage(`{}`)
	}
	if r, ok := m["required"]; ok {
		var names []string
		if err := json.Unmarshal(r, &names); err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: required: %w", t.Name, err)
		}
		if names == nil {
			delete(m, "required")
		}
	}
	schema, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("anthropic: tool %s: parameters: %w", t.Name, err)
	}
	return &toolParam{Type: "custom", Name: t.Name, Description: t.Description, InputSchema: schema}, nil
}

func isNull(b json.RawMessage) bool { return string(bytes.TrimSpace(b)) == "null" }
