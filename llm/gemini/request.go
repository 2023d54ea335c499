package gemini

import (
	"encoding/base64"
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// effortBudgets are the thinking budgets a reasoning effort buys on models
// with budgeted thinking (Gemini 2.5), the values LiteLLM uses for the
// reference.
var effortBudgets = map[string]int{
	"minimal": 128, "low": 1024, "medium": 2048, "high": 4096, "xhigh": 8192, "max": 24576,
}

// buildRequest turns a call into the body of a generateContent request.
func buildRequest(req *llm.Request) (*generateRequest, error) {
	c, f := req.Config, req.Features
	gemini3 := strings.Contains(strings.ToLower(req.Endpoint.Model), "gemini-3")
	system, contents, err := convertMessages(req.Messages, f.Vision, gemini3)
	if err != nil {
		return nil, err
	}
	cfg := &generationConfig{StopSequences: req.Stop}
	if req.MaxOutputTokens > 0 {
		cfg.MaxOutputTokens = req.MaxOutputTokens
	}
	if f.SamplingParams {
		if c.Temperature != nil {
			cfg.Temperature = c.Temperature
		} else if gemini3 {
			// Google advises 1.0 for Gemini 3: lower values make it loop.
			// The reference (through LiteLLM) sends it too.
			cfg.Temperature = new(1.0)
		}
		cfg.TopP, cfg.TopK = c.TopP, c.TopK
	}
	cfg.Seed = c.Seed
	if effort := c.ReasoningEffort; f.ReasoningEffort && effort != "" && effort != "none" {
		tc := &thinkingConfig{IncludeThoughts: true}
		if gemini3 {
			// Gemini 3 thinks in levels; Pro knows only low and high.
			tc.ThinkingLevel = levelHigh
			if effort == "minimal" || effort == "low" {
				tc.ThinkingLevel = levelLow
			}
		} else if b, ok := effortBudgets[effort]; ok {
			tc.ThinkingBudget = &b
		}
		cfg.ThinkingConfig = tc
	}
	body := &generateRequest{Contents: contents, SystemInstruction: system, GenerationConfig: cfg}
	if len(req.Tools) > 0 {
		t := &tool{}
		for _, ts := range req.Tools {
			params, err := toSchema(ts.Parameters)
			if err != nil {
				return nil, fmt.Errorf("gemini: tool %s: %w", ts.Name, err)
			}
			t.FunctionDeclarations = append(t.FunctionDeclarations, &functionDeclaration{
				Name: ts.Name, Description: ts.Description, Parameters: params,
			})
		}
		body.Tools = []*tool{t}
	}
	return body, nil
}

// Roles of contents.
const (
	roleUser  = "user"
	roleModel = "model"
)

// convertMessages splits messages into the system instruction and the
// user/model turns. Tool results become functionResponse parts of a user
// turn; consecutive turns of one role are merged, so the results of one
// model turn's calls arrive together, as Gemini requires.
func convertMessages(messages []event.Message, vision, gemini3 bool) (*content, []*content, error) {
	var system *content
	var out []*content
	add := func(role string, parts []*part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &content{Role: role, Parts: parts})
	}
	names := map[string]string{} // tool call id -> tool name
	if vision && !gemini3 {
		// Gemini 3 takes a result's images inside it; earlier models in
		// the user turn, after the turn's results.
		messages = llm.MoveToolImages(messages)
	}
	for i, m := range messages {
		switch m.Role {
		case event.RoleSystem:
			for _, c := range m.Content {
				if c.Type == event.ContentText && c.Text != "" {
					if system == nil {
						system = &content{Role: roleUser}
					}
					system.Parts = append(system.Parts, &part{Text: c.Text})
				}
			}
		case event.RoleUser:
			parts, err := contentParts(m.Content, vision)
			if err != nil {
				return nil, nil, fmt.Errorf("gemini: message %d: %w", i, err)
			}
			add(roleUser, parts)
		case event.RoleAssistant:
			var parts []*part
			if text := event.TextOf(m.Content); text != "" {
				parts = append(parts, &part{Text: text})
			}
			for j, tc := range m.ToolCalls {
				p, err := functionCallPart(tc, gemini3, j == 0)
				if err != nil {
					return nil, nil, fmt.Errorf("gemini: message %d: %w", i, err)
				}
				names[tc.ID] = tc.Name
				parts = append(parts, p)
			}
			add(roleModel, parts)
		case event.RoleTool:
			name := m.Name
			if name == "" {
				name = names[m.ToolCallID]
			}
			if name == "" {
				return nil, nil, fmt.Errorf("gemini: message %d: tool result %q names no tool and answers no earlier call", i, m.ToolCallID)
			}
			fr := &functionResponse{Name: name, Response: resultResponse{Content: event.TextOf(m.Content)}}
			if gemini3 {
				fr.ID, _, _ = strings.Cut(m.ToolCallID, ThoughtSeparator)
			}
			var images []*part
			if vision && gemini3 {
				for _, c := range m.Content {
					if c.Type != event.ContentImage {
						continue
					}
					for _, u := range c.ImageURLs {
						p, err := imagePart(u)
						if err != nil {
							return nil, nil, fmt.Errorf("gemini: message %d: %w", i, err)
						}
						images = append(images, p)
					}
				}
			}
			fr.Parts = images
			add(roleUser, []*part{{FunctionResponse: fr}})
		default:
			return nil, nil, fmt.Errorf("gemini: message %d: unknown role %q", i, m.Role)
		}
	}
	return system, out, nil
}

// functionCallPart converts a tool call, putting back a thought signature
// carried on its id. Gemini 3 gets the call ids (as the reference sends
// them), and the first call of a turn must have a signature there: calls
// made by another model get Google's placeholder.
func functionCallPart(tc event.ToolCall, gemini3, first bool) (*part, error) {
	// Gemini takes only an object; the model's malformed arguments were
	// already reported back to it as an error, and are sent as none.
	args, _ := objectArgs([]byte(tc.Arguments))
	p := &part{FunctionCall: &functionCall{Name: tc.Name, Args: args}}
	id, enc, hasSig := strings.Cut(tc.ID, ThoughtSeparator)
	if gemini3 {
		p.FunctionCall.ID = id
	}
	if hasSig {
		sig, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return nil, fmt.Errorf("tool call %s: thought signature in id: %w", tc.Name, err)
		}
		p.ThoughtSignature = sig
	} else if gemini3 && first {
		p.ThoughtSignature = []byte(skipSignature)
	}
	return p, nil
}

// contentParts converts user content. Data URLs are sent inline; other
// URLs by reference (Gemini fetches only the URLs it can: its own file
// URIs and public ones on some models).
func contentParts(cs []event.Content, vision bool) ([]*part, error) {
	var out []*part
	for _, c := range cs {
		switch c.Type {
		case event.ContentText:
			if c.Text != "" {
				out = append(out, &part{Text: c.Text})
			}
		case event.ContentImage:
			if !vision {
				continue
			}
			for _, u := range c.ImageURLs {
				p, err := imagePart(u)
				if err != nil {
					return nil, err
				}
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func imagePart(u string) (*part, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		media, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 {
			return nil, fmt.Errorf("image %.40q: want a base64 data URL", u)
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("image %.40q: %w", u, err)
		}
		return &part{InlineData: &blob{MIMEType: media, Data: b}}, nil
	}
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "gs://") {
		mt := mime.TypeByExtension(path.Ext(strings.SplitN(u, "?", 2)[0]))
		if mt == "" {
			mt = "image/jpeg"
		}
		return &part{FileData: &fileData{FileURI: u, MIMEType: mt}}, nil
	}
	return nil, fmt.Errorf("image %.40q: want an http(s), gs or data URL", u)
}
