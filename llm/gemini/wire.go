package gemini

import (
	"bytes"
	"encoding/json"
)

// The JSON of the Gemini API's generateContent method (v1beta), as much
// of it as we send and read. Unknown response fields are ignored.

// generateRequest is the body of generateContent and
// streamGenerateContent.
type generateRequest struct {
	Contents          []*content        `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []*tool           `json:"tools,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string  `json:"role,omitempty"`
	Parts []*part `json:"parts"`
}

// part is one part of a content. Exactly one of its data fields is set.
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	// ThoughtSignature is opaque bytes, base64 on the wire.
	ThoughtSignature []byte `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

type fileData struct {
	FileURI  string `json:"fileUri"`
	MIMEType string `json:"mimeType,omitempty"`
}

type functionCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Args is a JSON object, kept as sent so that numbers and key order
	// survive.
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response resultResponse `json:"response"`
	// Parts are a result's images (Gemini 3's multimodal function
	// responses): inlineData or fileData parts only.
	Parts []*part `json:"parts,omitempty"`
}

// resultResponse is a tool result: Gemini takes an object, and the text
// goes under "content", as LiteLLM sends it for the reference.
type resultResponse struct {
	Content string `json:"content"`
}

type generationConfig struct {
	StopSequences   []string        `json:"stopSequences,omitempty"`
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	TopP            *float64        `json:"topP,omitempty"`
	TopK            *float64        `json:"topK,omitempty"`
	Seed            *int            `json:"seed,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// Thinking levels of Gemini 3.
const (
	levelLow  = "LOW"
	levelHigh = "HIGH"
)

type tool struct {
	FunctionDeclarations []*functionDeclaration `json:"functionDeclarations,omitempty"`
}

type functionDeclaration struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Parameters  *schema `json:"parameters,omitempty"`
}

// generateResponse is a reply, or one chunk of a streamed reply. A chunk
// may instead carry an error (a failure after the stream began).
type generateResponse struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ModelVersion   string          `json:"modelVersion"`
	ResponseID     string          `json:"responseId"`
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Content      *content `json:"content"`
	FinishReason string   `json:"finishReason"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
}

// apiError is the error object of Google APIs, {"error": {...}}, as much
// as we read here; package httpapi reads the rest.
type apiError struct {
	Code int `json:"code"`
}

// objectArgs returns raw as compact JSON if it is a non-empty object,
// or nil for an empty one (sent as no args). ok is false when raw is not
// an object at all.
func objectArgs(raw []byte) (args json.RawMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, false
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil, false
	}
	if b.Len() == 2 { // {}
		return nil, true
	}
	return b.Bytes(), true
}
