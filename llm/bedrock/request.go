package bedrock

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// converseRequest is the body of Converse and ConverseStream (the model
// id is in the path).
type converseRequest struct {
	Messages                     []*message       `json:"messages"`
	System                       []*block         `json:"system,omitempty"`
	InferenceConfig              *inferenceConfig `json:"inferenceConfig,omitempty"`
	ToolConfig                   *toolConfig      `json:"toolConfig,omitempty"`
	AdditionalModelRequestFields map[string]any   `json:"additionalModelRequestFields,omitempty"`
}

type message struct {
	Role    string   `json:"role"`
	Content []*block `json:"content"`
}

// block is one member of the ContentBlock, SystemContentBlock and
// ToolResultContentBlock unions: exactly one field is set.
type block struct {
	Text             *string     `json:"text,omitempty"`
	Image            *imageBlock `json:"image,omitempty"`
	ToolUse          *toolUse    `json:"toolUse,omitempty"`
	ToolResult       *toolResult `json:"toolResult,omitempty"`
	ReasoningContent *reasoning  `json:"reasoningContent,omitempty"`
	CachePoint       *cachePoint `json:"cachePoint,omitempty"`
	ToolSpec         *toolSpec   `json:"toolSpec,omitempty"`
}

type imageBlock struct {
	Format string `json:"format"`
	Source struct {
		Bytes string `json:"bytes"` // base64
	} `json:"source"`
}

type toolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type toolResult struct {
	ToolUseID string   `json:"toolUseId"`
	Content   []*block `json:"content"`
}

type reasoning struct {
	ReasoningText   *reasoningText `json:"reasoningText,omitempty"`
	RedactedContent string         `json:"redactedContent,omitempty"` // base64
}

type reasoningText struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

type cachePoint struct {
	Type string `json:"type"`
}

type toolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema struct {
		JSON json.RawMessage `json:"json"`
	} `json:"inputSchema"`
}

type toolConfig struct {
	Tools []*block `json:"tools"`
}

type inferenceConfig struct {
	MaxTokens     int      `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// Claude's thinking on Bedrock, passed in additionalModelRequestFields as
// the Anthropic API takes it.
const (
	interleavedThinking = "interleaved-thinking-2025-05-14"
	minThinkingBudget   = 1024
)

// effortBudgets are the thinking budgets a reasoning effort buys (the
// values LiteLLM uses for the reference).
var effortBudgets = map[string]int{
	"minimal": minThinkingBudget, "low": minThinkingBudget, "medium": 2048, "high": 4096, "xhigh": 8192, "max": 16384,
}

// placeholderTool is declared when the history has tool calls but the
// call offers no tools (a condenser's summary, say): Converse refuses
// toolUse and toolResult blocks without a toolConfig. LiteLLM does the
// same.
const placeholderTool = "placeholder_tool"

func text(s string) *block { return &block{Text: &s} }

var defaultCachePoint = &block{CachePoint: &cachePoint{Type: "default"}}

// buildRequest turns a call into a Converse body.
func buildRequest(req *llm.Request) (*converseRequest, error) {
	cfg, f := req.Config, req.Features
	messages := req.Messages
	if f.Vision {
		messages = llm.ShrinkImages(messages, llm.AnthropicImageLimit(messages))
	}
	system, msgs, hasTools, err := convertMessages(messages, f.Vision)
	if err != nil {
		return nil, err
	}
	body := &converseRequest{Messages: msgs, System: system}
	for _, t := range req.Tools {
		spec, err := convertTool(t)
		if err != nil {
			return nil, err
		}
		if body.ToolConfig == nil {
			body.ToolConfig = &toolConfig{}
		}
		body.ToolConfig.Tools = append(body.ToolConfig.Tools, &block{ToolSpec: spec})
	}
	if body.ToolConfig == nil && hasTools {
		spec := &toolSpec{Name: placeholderTool, Description: "Not for use: declared because the conversation holds tool calls."}
		spec.InputSchema.JSON = json.RawMessage(`{"type":"object","properties":{}}`)
		body.ToolConfig = &toolConfig{Tools: []*block{{ToolSpec: spec}}}
	}

	ic := &inferenceConfig{MaxTokens: req.MaxOutputTokens, StopSequences: req.Stop}
	extra := map[string]any{}
	claude := strings.Contains(strings.ToLower(req.Endpoint.Model), "claude")
	thinking := false
	if claude {
		effort := cfg.ReasoningEffort != "" && cfg.ReasoningEffort != "none"
		budget := 0
		switch {
		case f.ThinkingMode == "manual" && cfg.ExtendedThinkingBudget > 0:
			budget = cfg.ExtendedThinkingBudget
			if ic.MaxTokens > 0 {
				budget = min(budget, ic.MaxTokens-1)
			}
			if budget >= minThinkingBudget {
				extra["anthropic_beta"] = []string{interleavedThinking}
			}
		case f.ReasoningEffort && effort:
			if b, ok := effortBudgets[cfg.ReasoningEffort]; ok && (ic.MaxTokens == 0 || b < ic.MaxTokens) {
				budget = b
			}
		}
		if budget >= minThinkingBudget {
			extra["thinking"] = map[string]any{"type": "enabled", "budget_tokens": budget}
			thinking = true
		}
	}
	// Claude refuses sampling parameters with thinking on, and temperature
	// with top_p.
	if f.SamplingParams && !thinking {
		ic.Temperature, ic.TopP = cfg.Temperature, cfg.TopP
		if claude && ic.Temperature != nil && ic.TopP != nil {
			ic.TopP = nil
		}
		if cfg.TopK != nil && claude {
			extra["top_k"] = int(*cfg.TopK)
		}
	}
	if ic.MaxTokens > 0 || ic.Temperature != nil || ic.TopP != nil || len(ic.StopSequences) > 0 {
		body.InferenceConfig = ic
	}
	if len(extra) > 0 {
		body.AdditionalModelRequestFields = extra
	}
	return body, nil
}

// convertMessages splits messages into the system blocks and the
// alternating user/assistant turns Converse wants. Tool results become
// toolResult blocks of a user turn, ahead of its other blocks; empty text
// is dropped (Converse refuses it), and images unless vision is on.
// hasTools reports tool calls or results in the history.
func convertMessages(messages []event.Message, vision bool) (system []*block, out []*message, hasTools bool, err error) {
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
					system = append(system, text(c.Text))
					if c.CachePrompt {
						system = append(system, defaultCachePoint)
					}
				}
			}
		case event.RoleUser:
			blocks, err := contentBlocks(m.Content, vision)
			if err != nil {
				return nil, nil, false, fmt.Errorf("bedrock: message %d: %w", i, err)
			}
			add(roleUser, blocks)
		case event.RoleTool:
			hasTools = true
			res, err := toolResultBlocks(m, vision)
			if err != nil {
				return nil, nil, false, fmt.Errorf("bedrock: message %d: %w", i, err)
			}
			add(roleUser, res)
		case event.RoleAssistant:
			hasTools = hasTools || len(m.ToolCalls) > 0
			add(roleAssistant, assistantBlocks(m))
		default:
			return nil, nil, false, fmt.Errorf("bedrock: message %d: unknown role %q", i, m.Role)
		}
	}
	for _, m := range out {
		if m.Role == roleUser {
			slices.SortStableFunc(m.Content, func(a, b *block) int { return cmp.Compare(rank(a), rank(b)) })
		}
	}
	return system, out, hasTools, nil
}

// rank puts tool results (and the cache point right after one) first.
func rank(b *block) int {
	if b.ToolResult != nil {
		return 0
	}
	return 1
}

// contentBlocks converts user content; a cache mark puts a cache point
// after its block.
func contentBlocks(content []event.Content, vision bool) ([]*block, error) {
	var out []*block
	for _, c := range content {
		switch c.Type {
		case event.ContentText:
			if c.Text == "" {
				continue
			}
			out = append(out, text(c.Text))
		case event.ContentImage:
			if !vision || len(c.ImageURLs) == 0 {
				continue
			}
			for _, u := range c.ImageURLs {
				img, err := image(u)
				if err != nil {
					return nil, err
				}
				out = append(out, &block{Image: img})
			}
		default:
			continue
		}
		if c.CachePrompt {
			out = append(out, defaultCachePoint)
		}
	}
	return out, nil
}

// image converts a base64 data URL; the LLM has already fetched http(s)
// images into data URLs, since Converse takes bytes only.
func image(u string) (*imageBlock, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return nil, fmt.Errorf("image %.40q: Bedrock takes image bytes only (a data: URL)", u)
	}
	meta, data, ok := strings.Cut(rest, ",")
	media, isB64 := strings.CutSuffix(meta, ";base64")
	format, known := strings.CutPrefix(media, "image/")
	if format == "jpg" {
		format = "jpeg"
	}
	if !ok || !isB64 || !known || !slices.Contains([]string{"png", "jpeg", "gif", "webp"}, format) {
		return nil, fmt.Errorf("image %.40q: want a base64 data URL of a PNG, JPEG, GIF or WebP image", u)
	}
	img := &imageBlock{Format: format}
	img.Source.Bytes = data
	return img, nil
}

// toolResultBlocks converts a tool message into its toolResult block, and
// a cache point after it when any of its content is marked. A result with
// no content at all says so (Converse wants content).
func toolResultBlocks(m event.Message, vision bool) ([]*block, error) {
	res := &toolResult{ToolUseID: wireID(m.ToolCallID)}
	mark := false
	for _, c := range m.Content {
		mark = mark || c.CachePrompt
		switch c.Type {
		case event.ContentText:
			if c.Text != "" {
				res.Content = append(res.Content, text(c.Text))
			}
		case event.ContentImage:
			if !vision {
				continue
			}
			for _, u := range c.ImageURLs {
				img, err := image(u)
				if err != nil {
					return nil, err
				}
				res.Content = append(res.Content, &block{Image: img})
			}
		}
	}
	if len(res.Content) == 0 {
		res.Content = []*block{text("(no output)")}
	}
	out := []*block{{ToolResult: res}}
	if mark {
		out = append(out, defaultCachePoint)
	}
	return out, nil
}

// assistantBlocks converts an assistant message: its signed thinking
// blocks first, as received, then text, then tool calls.
func assistantBlocks(m event.Message) []*block {
	var out []*block
	for _, b := range m.ThinkingBlocks {
		switch {
		case b.Redacted && b.Data != "":
			out = append(out, &block{ReasoningContent: &reasoning{RedactedContent: b.Data}})
		case b.Signature != nil && *b.Signature != "":
			out = append(out, &block{ReasoningContent: &reasoning{ReasoningText: &reasoningText{Text: b.Thinking, Signature: *b.Signature}}})
		}
		// Unsigned thinking (another provider's) cannot be verified by
		// the model and is left out.
	}
	mark := false
	for _, c := range m.Content {
		if c.Type == event.ContentText && c.Text != "" {
			out = append(out, text(c.Text))
			mark = mark || c.CachePrompt
		}
	}
	for _, tc := range m.ToolCalls {
		input := json.RawMessage(tc.Arguments)
		if !isObject(input) {
			// Converse takes an object; the model was already told its
			// arguments were malformed.
			input = json.RawMessage("{}")
		}
		out = append(out, &block{ToolUse: &toolUse{ToolUseID: wireID(tc.ID), Name: tc.Name, Input: input}})
	}
	if mark {
		out = append(out, defaultCachePoint)
	}
	return out
}

// wireID drops the thought signature a Gemini tool call id carries after
// "__thought__" (LiteLLM's convention): Converse's id pattern refuses it.
func wireID(id string) string {
	base, _, _ := strings.Cut(id, "__thought__")
	return base
}

func isObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// convertTool converts a tool spec; its schema is an object schema.
func convertTool(t llm.ToolSpec) (*toolSpec, error) {
	m := map[string]json.RawMessage{}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &m); err != nil {
			return nil, fmt.Errorf("bedrock: tool %s: parameters: %w", t.Name, err)
		}
		if m == nil {
			m = map[string]json.RawMessage{}
		}
	}
	m["type"] = json.RawMessage(`"object"`)
	if _, ok := m["properties"]; !ok {
		m["properties"] = json.RawMessage(`{}`)
	}
	schema, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("bedrock: tool %s: parameters: %w", t.Name, err)
	}
	s := &toolSpec{Name: t.Name, Description: t.Description}
	s.InputSchema.JSON = schema
	return s, nil
}
