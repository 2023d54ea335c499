package llm

import (
	"errors"
	"fmt"

	"github.com/gohands/gohands/llm/prompttools"
)

// ErrFunctionCall means the model, calling tools through the prompt (native
// tool calling off), wrote a call that names an unknown tool or has bad
// arguments. The error's message is written for the model: show it to the
// model and let it try again.
var ErrFunctionCall = errors.New("llm: invalid function call")

// FunctionCallError is the error returned for an invalid prompt-based tool
// call. Response is the reply as the model wrote it (already accounted in
// the metrics).
type FunctionCallError struct {
	Msg      string
	Response *Response
}

func (e *FunctionCallError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrFunctionCall) true.
func (e *FunctionCallError) Is(target error) bool { return target == ErrFunctionCall }

// mockTools is the prompt-based tool calling of one call, used when native
// tool calling is off.
type mockTools struct {
	tools []prompttools.Tool
	calls int // tool calls already in the conversation
}

// prepareMockTools rewrites req for prompt-based tool calling when the
// config turns native tool calling off: tools move into the system prompt,
// the history is rewritten as text, and the stop word ends a reply after
// its call. It returns nil when not needed.
func (l *LLM) prepareMockTools(req *Request) (*mockTools, error) {
	if l.cfg.NativeToolCalling || len(req.Tools) == 0 {
		return nil, nil
	}
	m := &mockTools{calls: prompttools.CallsSoFar(req.Messages)}
	for _, t := range req.Tools {
		m.tools = append(m.tools, prompttools.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	msgs, err := prompttools.ToText(req.Messages, m.tools, &prompttools.Options{Example: prompttools.ExampleWanted(l.cfg.Model)})
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	req.Messages = msgs
	req.Tools = nil
	if l.features.StopWords && !l.cfg.DisableStopWord {
		req.Stop = append(req.Stop, prompttools.StopWords...)
	}
	return m, nil
}

// parse turns the call written in the reply's text into a tool call.
func (m *mockTools) parse(resp *Response) (*Response, error) {
	msg, err := prompttools.Parse(resp.Message, m.tools, m.calls+1)
	var perr *prompttools.Error
	if errors.As(err, &perr) {
		return nil, &FunctionCallError{Msg: perr.Msg, Response: resp}
	}
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	out := *resp
	out.Message = msg
	if len(msg.ToolCalls) > 0 {
		out.FinishReason = "tool_calls"
	}
	return &out, nil
}
