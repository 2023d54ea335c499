package llmtest

import (
	"encoding/base64"
	"fmt"
	"net/http"
)

type gemFunctionCall struct {
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

type gemPart struct {
	Text             *string          `json:"text,omitempty"`
	Thought          bool             `json:"thought,omitempty"`
	FunctionCall     *gemFunctionCall `json:"functionCall,omitempty"`
	ThoughtSignature string           `json:"thoughtSignature,omitempty"` // base64
}

type gemContent struct {
	Parts []gemPart `json:"parts"`
	Role  string    `json:"role"`
}

type gemCandidate struct {
	Content      gemContent `json:"content"`
	FinishReason string     `json:"finishReason,omitempty"`
	Index        int        `json:"index"`
}

type gemUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
}

type gemResponse struct {
	Candidates    []gemCandidate `json:"candidates"`
	UsageMetadata gemUsage       `json:"usageMetadata"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

// gemini converts u: Gemini counts thoughts apart from candidates.
func (u Usage) gemini() gemUsage {
	return gemUsage{
		PromptTokenCount:        u.PromptTokens,
		CandidatesTokenCount:    max(0, u.CompletionTokens-u.ReasoningTokens),
		TotalTokenCount:         u.PromptTokens + u.CompletionTokens,
		CachedContentTokenCount: u.CacheReadTokens,
		ThoughtsTokenCount:      u.ReasoningTokens,
	}
}

// geminiFinishReason translates a Chat finish reason. Gemini reports STOP
// for replies with function calls too.
func geminiFinishReason(finish string) string {
	switch finish {
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return "STOP"
}

// geminiParts returns the parts of the turn.
func (t *turn) geminiParts() ([]gemPart, error) {
	var out []gemPart
	if t.Reasoning != "" {
		th := t.Reasoning
		out = append(out, gemPart{Text: &th, Thought: true})
	}
	if t.Text != "" || len(t.ToolCalls) == 0 {
		text := t.Text
		out = append(out, gemPart{Text: &text})
	}
	for i, c := range t.ToolCalls {
		args, err := c.argsObject()
		if err != nil {
			return nil, fmt.Errorf("tool call %d (%s): Gemini needs arguments that are a JSON object: %w", i, c.Name, err)
		}
		out = append(out, gemPart{FunctionCall: &gemFunctionCall{ID: c.ID, Name: c.Name, Args: args}})
	}
	if t.Signature != "" {
		// The signature goes on the first function call, or else on the
		// last part.
		at := len(out) - 1
		if len(t.ToolCalls) > 0 {
			at = len(out) - len(t.ToolCalls)
		}
		out[at].ThoughtSignature = base64.StdEncoding.EncodeToString([]byte(t.Signature))
	}
	return out, nil
}

// writeGemini answers in the Gemini API format.
func (s *Server) writeGemini(rw http.ResponseWriter, t *turn) error {
	parts, err := t.geminiParts()
	if err != nil {
		writeFailure(rw, WireGemini, &Failure{Status: http.StatusInternalServerError, Message: "llmtest: " + err.Error()})
		return err
	}
	id := t.id("llmtest-")
	finish := geminiFinishReason(t.finishReason())
	if !t.req.Stream {
		return writeJSON(rw, http.StatusOK, gemResponse{
			Candidates:    []gemCandidate{{Content: gemContent{Parts: parts, Role: "model"}, FinishReason: finish}},
			UsageMetadata: t.Usage.gemini(),
			ModelVersion:  t.model,
			ResponseID:    id,
		})
	}
	if alt := t.req.Query.Get("alt"); alt != "sse" {
		err := fmt.Errorf("streamGenerateContent without alt=sse (alt=%q) is not supported", alt)
		writeFailure(rw, WireGemini, &Failure{Status: http.StatusBadRequest, Message: "llmtest: " + err.Error()})
		return err
	}

	// Gemini streams text in pieces and each function call whole. Every
	// chunk carries usage so far; only the last has the final counts.
	var pieces [][]gemPart
	for _, p := range parts {
		if p.Text == nil || p.ThoughtSignature != "" {
			pieces = append(pieces, []gemPart{p})
			continue
		}
		for _, c := range chunks(*p.Text, 16) {
			pieces = append(pieces, []gemPart{{Text: &c, Thought: p.Thought}})
		}
	}
	e := newSSE(rw, "\r\n\r\n", t)
	for i, ps := range pieces {
		c := gemCandidate{Content: gemContent{Parts: ps, Role: "model"}}
		u := gemUsage{PromptTokenCount: t.Usage.PromptTokens, TotalTokenCount: t.Usage.PromptTokens}
		if i == len(pieces)-1 && t.Fail != nil {
			e.event("", gemResponse{Candidates: []gemCandidate{c}, UsageMetadata: u, ModelVersion: t.model, ResponseID: id})
			streamFailure(e, WireGemini, t.Fail)
			return e.err
		}
		if i == len(pieces)-1 {
			c.FinishReason, u = finish, t.Usage.gemini()
		}
		e.event("", gemResponse{Candidates: []gemCandidate{c}, UsageMetadata: u, ModelVersion: t.model, ResponseID: id})
	}
	return e.err
}
