package anthropic

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

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

// buildParams turns a call into Messages API parameters, plus the request
// options that carry what the parameters cannot (beta headers, extra body
// keys).
func buildParams(req *llm.Request) (sdk.MessageNewParams, []option.RequestOption, error) {
	cfg, f := req.Config, req.Features
	p := sdk.MessageNewParams{
		Model:     sdk.Model(req.Endpoint.Model),
		MaxTokens: int64(req.MaxOutputTokens),
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = defaultMaxTokens
	}
	system, msgs, err := convertMessages(req.Messages, f.Vision)
	if err != nil {
		return p, nil, err
	}
	p.System, p.Messages = system, msgs
	for _, t := range req.Tools {
		tp, err := convertTool(t)
		if err != nil {
			return p, nil, err
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	if len(req.Stop) > 0 {
		p.StopSequences = req.Stop
	}

	var opts []option.RequestOption
	var betas []string
	thinking := false
	effort := cfg.ReasoningEffort != "" && cfg.ReasoningEffort != "none"
	mode := f.ThinkingMode
	if (mode == "" || mode == "none") && llmModelMatches(req.Endpoint.Model, adaptiveModels) {
		mode = "adaptive"
	}
	switch {
	case mode == "manual" && cfg.ExtendedThinkingBudget > 0:
		budget := min(int64(cfg.ExtendedThinkingBudget), p.MaxTokens-1)
		if budget >= minThinkingBudget {
			p.Thinking = sdk.ThinkingConfigParamOfEnabled(budget)
			betas = append(betas, interleavedThinking)
			thinking = true
		}
	case mode == "adaptive" && effort:
		p.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{
			Display: sdk.ThinkingConfigAdaptiveDisplaySummarized,
		}}
		p.OutputConfig.Effort = adaptiveEffort(cfg.ReasoningEffort)
		thinking = true
	case mode != "adaptive" && f.ReasoningEffort && effort:
		if budget, ok := effortBudgets[cfg.ReasoningEffort]; ok && int64(budget) < p.MaxTokens {
			p.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(budget))
			thinking = true
		}
	}
	// The API rejects sampling parameters with thinking on.
	if f.SamplingParams && !thinking {
		if cfg.Temperature != nil {
			p.Temperature = sdk.Float(*cfg.Temperature)
		}
		if cfg.TopP != nil {
			p.TopP = sdk.Float(*cfg.TopP)
		}
		if cfg.TopK != nil {
			p.TopK = sdk.Int(int64(*cfg.TopK))
		}
	}

	for k, v := range req.Endpoint.Headers {
		if strings.EqualFold(k, "anthropic-beta") {
			betas = append(betas, v)
			continue
		}
		opts = append(opts, option.WithHeader(k, v))
	}
	if len(betas) > 0 {
		opts = append(opts, option.WithHeader("anthropic-beta", strings.Join(betas, ",")))
	}
	for k, v := range cfg.ExtraBody {
		opts = append(opts, option.WithJSONSet(k, v))
	}
	return p, opts, nil
}

// adaptiveEffort maps a reasoning effort to the API's effort levels.
func adaptiveEffort(e string) sdk.OutputConfigEffort {
	switch e {
	case "minimal", "low":
		return sdk.OutputConfigEffortLow
	case "medium":
		return sdk.OutputConfigEffortMedium
	case "xhigh":
		return sdk.OutputConfigEffortXhigh
	case "max":
		return sdk.OutputConfigEffortMax
	}
	return sdk.OutputConfigEffortHigh
}

// cacheControl returns an ephemeral cache breakpoint if mark is set.
func cacheControl(mark bool) sdk.CacheControlEphemeralParam {
	if mark {
		return sdk.NewCacheControlEphemeralParam()
	}
	return sdk.CacheControlEphemeralParam{}
}

// convertMessages splits messages into the system blocks and the
// user/assistant turns of the Messages API. Tool results become
// tool_result blocks of a user turn; consecutive turns of one role are
// merged, as the API wants them alternating. Empty text is dropped (the
// API rejects empty text blocks), and images unless vision is on.
func convertMessages(messages []event.Message, vision bool) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var system []sdk.TextBlockParam
	var out []sdk.MessageParam
	add := func(role sdk.MessageParamRole, blocks []sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	for i, m := range messages {
		switch m.Role {
		case event.RoleSystem:
			for _, c := range m.Content {
				if c.Type == event.ContentText && c.Text != "" {
					system = append(system, sdk.TextBlockParam{Text: c.Text, CacheControl: cacheControl(c.CachePrompt)})
				}
			}
		case event.RoleUser:
			blocks, err := contentBlocks(m.Content, vision)
			if err != nil {
				return nil, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
			}
			add(sdk.MessageParamRoleUser, blocks)
		case event.RoleTool:
			res, err := toolResult(m, vision)
			if err != nil {
				return nil, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
			}
			add(sdk.MessageParamRoleUser, []sdk.ContentBlockParamUnion{{OfToolResult: res}})
		case event.RoleAssistant:
			add(sdk.MessageParamRoleAssistant, assistantBlocks(m))
		default:
			return nil, nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
	}
	// The API wants a turn's tool results ahead of anything else in it (a
	// user message may have been merged in front of them).
	for i := range out {
		if out[i].Role == sdk.MessageParamRoleUser {
			slices.SortStableFunc(out[i].Content, func(a, b sdk.ContentBlockParamUnion) int {
				return cmp.Compare(resultRank(a), resultRank(b))
			})
		}
	}
	return system, out, nil
}

func resultRank(b sdk.ContentBlockParamUnion) int {
	if b.OfToolResult != nil {
		return 0
	}
	return 1
}

// contentBlocks converts user content.
func contentBlocks(content []event.Content, vision bool) ([]sdk.ContentBlockParamUnion, error) {
	var out []sdk.ContentBlockParamUnion
	for _, c := range content {
		switch c.Type {
		case event.ContentText:
			if c.Text != "" {
				out = append(out, sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: c.Text, CacheControl: cacheControl(c.CachePrompt)}})
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
				img.CacheControl = cacheControl(c.CachePrompt && j == len(c.ImageURLs)-1)
				out = append(out, sdk.ContentBlockParamUnion{OfImage: img})
			}
		}
	}
	return out, nil
}

// imageBlock converts an image URL: data URLs are sent inline, http(s)
// URLs by reference.
func imageBlock(u string) (*sdk.ImageBlockParam, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		media, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 {
			return nil, fmt.Errorf("image %.40q: want a base64 data URL", u)
		}
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
			Data: data, MediaType: sdk.Base64ImageSourceMediaType(media),
		}}}, nil
	}
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfURL: &sdk.URLImageSourceParam{URL: u}}}, nil
	}
	return nil, fmt.Errorf("image %.40q: want an http(s) or data URL", u)
}

// toolResult converts a tool message. A cache breakpoint on any of its
// content is put on the tool_result block itself.
func toolResult(m event.Message, vision bool) (*sdk.ToolResultBlockParam, error) {
	res := &sdk.ToolResultBlockParam{ToolUseID: wireID(m.ToolCallID)}
	mark := false
	for _, c := range m.Content {
		mark = mark || c.CachePrompt
		switch c.Type {
		case event.ContentText:
			if c.Text != "" {
				res.Content = append(res.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
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
				res.Content = append(res.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img})
			}
		}
	}
	res.CacheControl = cacheControl(mark)
	return res, nil
}

// assistantBlocks converts an assistant message: its thinking blocks first,
// exactly as received (the API checks their signatures), then text, then
// tool calls.
func assistantBlocks(m event.Message) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, b := range m.ThinkingBlocks {
		switch {
		case b.Redacted:
			out = append(out, sdk.NewRedactedThinkingBlock(b.Data))
		case b.Signature != nil && *b.Signature != "":
			out = append(out, sdk.NewThinkingBlock(*b.Signature, b.Thinking))
		}
		// Unsigned thinking (from another provider) cannot be verified by
		// the API, which would reject the request; it is left out.
	}
	for _, c := range m.Content {
		if c.Type == event.ContentText && c.Text != "" {
			out = append(out, sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: c.Text, CacheControl: cacheControl(c.CachePrompt)}})
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
		out = append(out, sdk.NewToolUseBlock(wireID(tc.ID), input, tc.Name))
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

// convertTool converts a tool spec. The schema's properties and required
// list go in their own fields; any other keywords ride along.
func convertTool(t llm.ToolSpec) (*sdk.ToolParam, error) {
	schema := sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	if len(t.Parameters) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(t.Parameters, &m); err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: parameters: %w", t.Name, err)
		}
		for k, v := range m {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				if err := json.Unmarshal(v, &schema.Required); err != nil {
					return nil, fmt.Errorf("anthropic: tool %s: required: %w", t.Name, err)
				}
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
		}
	}
	tp := &sdk.ToolParam{Name: t.Name, InputSchema: schema, Type: sdk.ToolTypeCustom}
	if t.Description != "" {
		tp.Description = sdk.String(t.Description)
	}
	return tp, nil
}
